// The search's own form of a graph whose weighted RMS norms feed products: rms_norm(x, w)
// becomes rms_norm(x) ⊙ w, with w viewed at x's rank ([K] as [1, K]). The norm's weight is then
// an elementwise product the search can move into a fused kernel's loop over the normalized dim,
// where each tile of x meets its tile of w: (x ⊙ w)·W / rms(x). A weighted norm operator keeps
// its weight inside the norm, and µGraph tiles of different ranks do not meet, so without this
// the norm stayed a kernel of its own before every fused product.
#pragma once

#include "ir/kernel_graph.hpp"

namespace yirage::search {

// `graph` with each weighted rms_norm whose result a matmul reads split as above (same inputs in
// the same order, same outputs); `graph` itself where there is none.
KernelGraph weights_apart(const KernelGraph &graph);

}  // namespace yirage::search
