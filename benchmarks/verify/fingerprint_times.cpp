// Times one fingerprint equivalence check (unfused graph vs its hand-fused µGraph) for each of
// the six benchmark graphs at the benchmark shapes (b = 1), and prints a Markdown table.
// Usage: fingerprint_times [trials] [threads]   (defaults: 3 trials, all cores)
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "benchmark_ugraphs.hpp"
#include "verify/equivalence.hpp"

int main(int argc, char **argv) {
  yirage::verify::EquivalenceOptions options;
  options.trials = argc > 1 ? std::atoi(argv[1]) : 3;
  options.threads = argc > 2 ? std::atoi(argv[2]) : 0;
  std::printf("| graph | shapes (b = 1) | equivalent | trials | seconds per check |\n");
  std::printf("|---|---|---|---|---|\n");
  int failures = 0;
  for (const std::string &name : yirage::bench::benchmark_names()) {
    const auto unfused = yirage::bench::build_unfused(name, 1, yirage::DType::kFloat16);
    const auto fused = yirage::bench::build_fused(name, 1, yirage::DType::kFloat16);
    const auto result = yirage::verify::check_equivalence(unfused, fused, options);
    std::string shapes;
    for (auto id : unfused.inputs()) shapes += yirage::to_string(unfused.tensor(id).dims) + " ";
    std::printf("| %s | %s| %s | %d | %.2f |\n", name.c_str(), shapes.c_str(), result.equivalent ? "yes" : "NO",
                result.trials, result.seconds);
    failures += result.equivalent ? 0 : 1;
  }
  std::printf("\n%u hardware threads\n", std::thread::hardware_concurrency());
  return failures == 0 ? 0 : 1;
}
