// Superoptimizes one benchmark graph and prints one line of results (benchmarks/search/run.sh
// runs it per graph and target and collects the table in benchmarks/search/README.md).
//
//   search_benchmark NAME [--target cpu|h100|…] [--b N] [--scale S] [--budget SECONDS]
//                         [--threads N] [--no-pruning] [--max-block-ops N] [--max-kernel-ops N]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "benchmark_ugraphs.hpp"
#include "search/superoptimizer.hpp"
#include "util/error.hpp"

using namespace yirage;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s NAME [--target T] [--b N] [--scale S] [--budget SEC] "
                         "[--threads N] [--no-pruning] [--max-block-ops N] [--max-kernel-ops N]\n",
                 argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  std::string target = "cpu";
  int64_t b = 1, scale = 1;
  search::SearchOptions options;
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
    if (arg == "--target") target = value();
    else if (arg == "--b") b = std::atoll(value());
    else if (arg == "--scale") scale = std::atoll(value());
    else if (arg == "--budget") options.time_budget_seconds = std::atof(value());
    else if (arg == "--threads") options.threads = std::atoi(value());
    else if (arg == "--no-pruning") options.abstract_pruning = false;
    else if (arg == "--z3-rlimit") options.z3_rlimit = std::atoi(value());
    else if (arg == "--max-block-ops") options.max_block_ops = std::atoi(value());
    else if (arg == "--max-kernel-ops") options.max_kernel_ops = std::atoi(value());
    else {
      std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  try {
    options.target = search::builtin_target(target);
    const KernelGraph graph = bench::build_unfused(name, b, DType::kFloat16, scale);
    const search::SearchResult r = search::superoptimize(graph, options);
    const search::SearchStats &s = r.stats;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const char *end = r.end == search::SearchEnd::kComplete  ? "complete"
                      : r.end == search::SearchEnd::kTimeout ? "timeout"
                                                             : "cancelled";
    std::printf("%s target=%s b=%lld scale=%lld pruning=%s end=%s first_fused_s=%.2f total_s=%.2f "
                "states=%lld structures=%lld candidates=%lld verified=%zu peak_mib=%.0f "
                "pruned_shape=%lld pruned_abstract=%lld pruned_canonical=%lld pruned_dead=%lld "
                "oracle=%lld index=%lld z3=%lld z3_proved=%lld z3_unknown=%lld z3_s=%.2f "
                "fingerprints=%lld rejected=%lld fingerprint_s=%.2f\n",
                name.c_str(), target.c_str(), static_cast<long long>(b),
                static_cast<long long>(scale), options.abstract_pruning ? "on" : "off", end,
                s.first_fused_seconds, s.seconds, static_cast<long long>(s.states),
                static_cast<long long>(s.structures), static_cast<long long>(s.candidates),
                r.candidates.size(), static_cast<double>(usage.ru_maxrss) / 1024.0,
                static_cast<long long>(s.pruned_shape), static_cast<long long>(s.pruned_abstract),
                static_cast<long long>(s.pruned_canonical), static_cast<long long>(s.pruned_dead),
                static_cast<long long>(s.oracle_queries),
                static_cast<long long>(s.oracle_index_answers), static_cast<long long>(s.z3_queries),
                static_cast<long long>(s.z3_proved), static_cast<long long>(s.z3_unknown),
                s.z3_seconds, static_cast<long long>(s.fingerprint_checks),
                static_cast<long long>(s.fingerprint_rejected), s.fingerprint_seconds);
    for (const auto &c : r.candidates) {
      std::printf("  %.2f us  %s  (%d trials)\n", c.estimated_seconds * 1e6, c.description.c_str(),
                  c.verified_trials);
    }
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 1;
  }
}
