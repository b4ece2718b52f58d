// yirage.h: yirage_graph_equivalent, fingerprint equivalence of two kernel graphs.
#include <algorithm>
#include <cstring>
#include <string>

#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "verify/equivalence.hpp"

namespace {

constexpr size_t kOptionsSizeV1 = offsetof(yirage_equivalence_options, threads) + sizeof(uint32_t);
constexpr size_t kResultSizeV1 = offsetof(yirage_equivalence_result, reason) + 256;

}  // namespace

extern "C" {

void yirage_equivalence_options_init(yirage_equivalence_options *options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->trials = 3;
  options->seed = 1;
}

yirage_status yirage_graph_equivalent(const yirage_graph *a, const yirage_graph *b,
                                      const yirage_equivalence_options *options,
                                      yirage_equivalence_result *out_result) {
  const char *function = "yirage_graph_equivalent";
  return yirage::capi::guard([&] {
    const yirage_graph_s &ga = yirage::capi::checked_graph(function, a);
    const yirage_graph_s &gb = yirage::capi::checked_graph(function, b);
    yirage::capi::require_non_null(function, "out_result", out_result);
    yirage::capi::require_struct_size(function, "out_result", out_result->struct_size, kResultSizeV1);
    yirage::verify::EquivalenceOptions opts;
    if (options != nullptr) {
      if (options->struct_size < kOptionsSizeV1) {
        yirage::invalid_argument(std::string(function) + ": options->struct_size " +
                                 std::to_string(options->struct_size) + " is smaller than " +
                                 std::to_string(kOptionsSizeV1) + " (initialize with yirage_equivalence_options_init)");
      }
      opts.trials = static_cast<int>(options->trials);
      opts.seed = options->seed;
      opts.threads = static_cast<int>(options->threads);
    }
    const yirage::verify::EquivalenceResult r = yirage::verify::check_equivalence(ga.graph, gb.graph, opts);
    // Written field by field: a caller's struct may be larger (a newer header), never smaller.
    out_result->equivalent = r.equivalent ? 1 : 0;
    out_result->trials = static_cast<uint32_t>(r.trials);
    out_result->seconds = r.seconds;
    const size_t n = std::min(r.reason.size(), sizeof out_result->reason - 1);
    std::memcpy(out_result->reason, r.reason.data(), n);
    out_result->reason[n] = '\0';
  });
}

}  // extern "C"
