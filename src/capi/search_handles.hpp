// What the search's C functions share (search.cpp, search_shards.cpp): the result handle, the
// options' translation and how a result is handed out.
#pragma once

#include "capi/handles.hpp"
#include "search/superoptimizer.hpp"
#include "yirage.h"

struct yirage_search_result_s {
  static constexpr auto kKind = yirage::capi::HandleKind::kSearchResult;
  yirage::search::SearchResult result;
};

namespace yirage::capi {

// `in` as the search takes it, for `function`'s messages. With a device, candidates are measured
// against `reference`, which must outlive the options.
search::SearchOptions search_options_from_c(const char *function, const yirage_search_options &in,
                                            const KernelGraph &reference);

// Registers `result` as a new handle in *out; then, where the search did not complete, throws
// Error(kTimeout or kCancelled) saying how many candidates the result holds.
void hand_out_result(const char *function, search::SearchResult &&result, yirage_search_result **out);

}  // namespace yirage::capi
