// Dims that no power of two divides (a KV cache of 1,001 tokens, a hidden size of 3,583) leave
// the search no grid or loop to split them with. It then searches a twin of the graph whose
// such dims are rounded up to a multiple of a power of two, and builds each µGraph structure it
// finds on the graph itself: the same operators, their tiles ragged at the end of each rounded
// dim (ir/ragged_tiles.hpp), verified against the graph like every candidate (docs/search.md,
// "Dims that do not divide").
#pragma once

#include <optional>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"

namespace yirage::search {

// The twin, or nullopt where no dim needs rounding up (or the graph has a customized operator,
// or the dims that would need it pass through a reshape, split or concat, whose sizes are fixed).
std::optional<KernelGraph> padded_twin(const KernelGraph &graph);

// A small graph whose one customized operator has ragged tiles, in `dtype`: what a backend is
// asked to build to learn whether it builds ragged tiles (SearchOptions::ragged_tiles).
KernelGraph ragged_probe(DType dtype);

// `structure` (a µGraph found on the twin) rebuilt under `config`, its input iterators reading
// tensors of `input_dims` (one per iterator, in order): tiles ragged where the dims are not
// the twin's; block-level rms_norms normalize their tiles' trailing dims.
BlockGraph on_dims(const BlockGraph &structure, const BlockGraphConfig &config, const std::vector<Dims> &input_dims);

}  // namespace yirage::search
