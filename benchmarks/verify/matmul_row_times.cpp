// Times the fingerprint arithmetic's matmuls (reference::matmul over FieldArithmetic, whose
// matmul_rows kernel takes most of a fingerprint check's time) on one thread for the shapes the
// benchmark graphs give it, and prints nanoseconds per multiply-add, the best of 7 runs.
// Usage: matmul_row_times
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "reference/operators.hpp"
#include "verify/field_arithmetic.hpp"

int main() {
  using yirage::verify::FieldArithmetic;
  using yirage::verify::FieldValue;
  const FieldArithmetic f(1);
  uint64_t drawn = 0;  // values of the random stream 2 used so far
  struct Shape {
    const char *what;
    int64_t rows, k, n;
  };
  const Shape shapes[] = {{"attention's Q·K (gqa at scale 4)", 64, 64, 4096},
                          {"attention's E·V", 64, 4096, 64},
                          {"a vector times a weight (gated_mlp)", 2, 4096, 4096},
                          {"lora's X·W", 8, 256, 4096}};
  std::printf("| shape | rows × k × n | ns per multiply-add |\n|---|---|---|\n");
  for (const Shape &s : shapes) {
    std::vector<FieldValue> a(static_cast<size_t>(s.rows * s.k)), b(static_cast<size_t>(s.k * s.n));
    for (auto &v : a) v = f.random(2, drawn++);
    for (auto &v : b) v = f.random(2, drawn++);
    double best = 1e30;
    for (int run = 0; run < 7; ++run) {
      const auto started = std::chrono::steady_clock::now();
      const auto out = yirage::reference::matmul(f, a, {s.rows, s.k}, b, {s.k, s.n}, {s.rows, s.n}, 1);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      if (out.empty()) return 1;
    }
    std::printf("| %s | %ld × %ld × %ld | %.2f |\n", s.what, static_cast<long>(s.rows), static_cast<long>(s.k),
                static_cast<long>(s.n), best * 1e9 / static_cast<double>(s.rows * s.k * s.n));
  }
}
