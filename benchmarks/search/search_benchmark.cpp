// Superoptimizes one benchmark graph and prints one line of results (benchmarks/search/run.sh
// runs it per graph and target and collects the table in benchmarks/search/README.md).
//
//   search_benchmark NAME|GRAPH_FILE [--target cpu|h100|…] [--b N] [--scale S] [--budget SECONDS]
//                         [--threads N] [--no-pruning] [--compare-pruning] [--max-block-ops N] [--max-kernel-ops N]
//                         [--as-cuda-plugin] [--max-candidates N]
//
// A GRAPH_FILE (.json or .yrg, e.g. one of benchmarks/models/suite.py's graphs) is searched as
// it is (--b and --scale do not apply). --as-cuda-plugin ranks candidates as a search through the
// CUDA plugin on an H100 does, without the device: the plugin's loop_iteration_seconds (1 µs) and
// its code generator's loop waits (yirage_backend_kernel_estimate), the target otherwise h100's
// description.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "benchmark_ugraphs.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "profiling/search_on_device.hpp"
#include "serialize/graph_file.hpp"
#include "util/error.hpp"

using namespace yirage;

namespace {

// Runs the search with and without abstract-expression pruning, keeping every verified
// candidate, and checks that pruning lost none of the unpruned search's candidates.
int compare_pruning(const std::string &name, const KernelGraph &graph, search::SearchOptions options) {
  options.max_candidates = 1 << 30;
  std::set<std::vector<uint8_t>> found[2];
  search::SearchResult results[2];
  for (int pruned = 0; pruned < 2; ++pruned) {
    options.abstract_pruning = pruned == 1;
    results[pruned] = search::superoptimize(graph, options);
    for (const auto &c : results[pruned].candidates) {
      found[pruned].insert(serialize::graph_to_bytes(c.graph, serialize::GraphFormat::kBinary));
    }
  }
  size_t lost = 0;
  for (const auto &g : found[0]) lost += found[1].count(g) == 0;
  const bool complete =
      results[0].end == search::SearchEnd::kComplete && results[1].end == search::SearchEnd::kComplete;
  std::printf(
      "%s compare-pruning states_unpruned=%lld states_pruned=%lld candidates_unpruned=%zu "
      "candidates_pruned=%zu lost=%zu seconds_unpruned=%.2f seconds_pruned=%.2f %s\n",
      name.c_str(), static_cast<long long>(results[0].stats.states), static_cast<long long>(results[1].stats.states),
      found[0].size(), found[1].size(), lost, results[0].stats.seconds, results[1].stats.seconds,
      complete ? "both complete" : "a search hit the budget");
  return lost == 0 && complete ? 0 : 1;
}

KernelGraph read_graph_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) invalid_argument("cannot open " + path);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return serialize::graph_from_bytes(bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s NAME [--target T] [--b N] [--scale S] [--budget SEC] "
                 "[--threads N] [--no-pruning] [--compare-pruning] [--max-block-ops N] [--max-kernel-ops N]\n",
                 argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  std::string target = "cpu";
  int64_t b = 1, scale = 1;
  search::SearchOptions options;
  bool compare = false, as_cuda_plugin = false;
  options.time_budget_seconds = 120;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--target")
      target = value();
    else if (arg == "--b")
      b = std::atoll(value());
    else if (arg == "--scale")
      scale = std::atoll(value());
    else if (arg == "--budget")
      options.time_budget_seconds = std::atof(value());
    else if (arg == "--threads")
      options.threads = std::atoi(value());
    else if (arg == "--no-pruning")
      options.abstract_pruning = false;
    else if (arg == "--compare-pruning")
      compare = true;
    else if (arg == "--z3-rlimit")
      options.z3_rlimit = std::atoi(value());
    else if (arg == "--max-block-ops")
      options.max_block_ops = std::atoi(value());
    else if (arg == "--max-kernel-ops")
      options.max_kernel_ops = std::atoi(value());
    else if (arg == "--max-candidates")
      options.max_candidates = std::atoi(value());
    else if (arg == "--as-cuda-plugin")
      as_cuda_plugin = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  try {
    options.target = targets::builtin_target(target);
    if (as_cuda_plugin) {
      options.target.loop_iteration_seconds = codegen::kCudaLoopIterationSeconds;
      const codegen::CudaTarget h100{90, options.target.shared_memory_per_block, options.target.compute_units,
                                     options.target.shared_memory_per_compute_unit};
      options.backend_estimates = profiling::estimates_from(
          "cuda code generator",
          [h100, launch = options.target.launch_overhead_seconds](const serialize::KernelProgram &p) {
            return codegen::cuda_source(p, h100).estimate(launch);
          },
          YIRAGE_BACKEND_MAX_READ_ONCE_WAITS);
      options.backend_estimates_source = "cuda code generator";
    }
    const bool is_file = name.ends_with(".json") || name.ends_with(".yrg");
    const KernelGraph graph = is_file ? read_graph_file(name) : bench::build_unfused(name, b, DType::kFloat16, scale);
    if (compare) return compare_pruning(name, graph, options);
    const search::SearchResult r = search::superoptimize(graph, options);
    const search::SearchStats &s = r.stats;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const char *end = r.end == search::SearchEnd::kComplete  ? "complete"
                      : r.end == search::SearchEnd::kTimeout ? "timeout"
                                                             : "cancelled";
    std::printf(
        "%s target=%s b=%lld scale=%lld pruning=%s end=%s first_fused_s=%.2f total_s=%.2f "
        "states=%lld structures=%lld candidates=%lld verified=%zu peak_mib=%.0f "
        "pruned_shape=%lld pruned_abstract=%lld pruned_canonical=%lld pruned_dead=%lld "
        "oracle=%lld index=%lld z3=%lld z3_proved=%lld z3_unknown=%lld z3_s=%.2f "
        "fingerprints=%lld rejected=%lld fingerprint_s=%.2f\n",
        name.c_str(), target.c_str(), static_cast<long long>(b), static_cast<long long>(scale),
        options.abstract_pruning ? "on" : "off", end, s.first_fused_seconds, s.seconds,
        static_cast<long long>(s.states), static_cast<long long>(s.structures), static_cast<long long>(s.candidates),
        r.candidates.size(), static_cast<double>(usage.ru_maxrss) / 1024.0, static_cast<long long>(s.pruned_shape),
        static_cast<long long>(s.pruned_abstract), static_cast<long long>(s.pruned_canonical),
        static_cast<long long>(s.pruned_dead), static_cast<long long>(s.oracle_queries),
        static_cast<long long>(s.oracle_index_answers), static_cast<long long>(s.z3_queries),
        static_cast<long long>(s.z3_proved), static_cast<long long>(s.z3_unknown), s.z3_seconds,
        static_cast<long long>(s.fingerprint_checks), static_cast<long long>(s.fingerprint_rejected),
        s.fingerprint_seconds);
    for (const auto &c : r.candidates) {
      std::printf("  %.2f us  %s  (%d trials)\n", c.estimated_seconds * 1e6, c.description.c_str(), c.verified_trials);
    }
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 1;
  }
}
