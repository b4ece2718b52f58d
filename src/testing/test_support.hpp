// Helpers shared by the C++ unit tests (header-only; not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/kernel_graph.hpp"
#include "reference/executor.hpp"
#include "util/error.hpp"

namespace yirage::testing {

// Expects `statement` to throw yirage::Error(kInvalidArgument) whose message contains `text`.
#define YIRAGE_EXPECT_INVALID(statement, text)                                  \
  try {                                                                         \
    statement;                                                                  \
    ADD_FAILURE() << "no error from " #statement;                               \
  } catch (const ::yirage::Error &e) {                                          \
    EXPECT_EQ(e.code(), ::yirage::ErrorCode::kInvalidArgument);                 \
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what(); \
  }

// One buffer per graph input, uniform in [lo, hi), from a seeded generator.
inline std::vector<reference::Values> random_inputs(const KernelGraph &g, uint64_t seed, double lo = -1,
                                                    double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<reference::Values> inputs;
  for (TensorId id : g.inputs()) {
    reference::Values v(static_cast<size_t>(num_elements(g.tensor(id).dims)));
    for (double &x : v) x = uniform(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

// ‖got − want‖₂ / ‖want‖₂
inline double relative_error(const reference::Values &got, const reference::Values &want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace yirage::testing
