#include "util/counter_random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace yirage {
namespace {

// A stream filled in chunks on several threads holds what one thread writes, each index once.
TEST(CounterRandom, FilledInParallelAsInOneThread) {
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{65535}, int64_t{65536}, int64_t{300001}}) {
    const uint64_t key = random_key(7, 2);
    std::vector<uint64_t> one(static_cast<size_t>(n)), many(static_cast<size_t>(n));
    std::vector<int> writes(static_cast<size_t>(n), 0);
    fill_in_chunks(n, 1, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i)
        one[static_cast<size_t>(i)] = counter_random(key, static_cast<uint64_t>(i));
    });
    fill_in_chunks(n, 3, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        many[static_cast<size_t>(i)] = counter_random(key, static_cast<uint64_t>(i));
        ++writes[static_cast<size_t>(i)];
      }
    });
    EXPECT_EQ(one, many) << "n " << n;
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(writes[static_cast<size_t>(i)], 1) << "n " << n << " index " << i;
  }
}

// Streams of one seed differ, values map into their ranges, and their means are near the middle.
TEST(CounterRandom, StreamsDifferAndValuesFillTheirRanges) {
  EXPECT_NE(counter_random(random_key(1, 0), 0), counter_random(random_key(1, 1), 0));
  EXPECT_NE(counter_random(random_key(1, 0), 0), counter_random(random_key(2, 0), 0));
  const uint64_t key = random_key(3, 0), m = 2147481143;
  const int n = 100000;
  double below_sum = 0, unit_sum = 0, unit_lowest = 1, unit_highest = -1;
  for (int i = 0; i < n; ++i) {
    const uint64_t r = counter_random(key, static_cast<uint64_t>(i));
    const uint64_t b = below(r, m);
    ASSERT_LT(b, m);
    below_sum += static_cast<double>(b) / static_cast<double>(m);
    const double u = symmetric_unit(r);
    ASSERT_GE(u, -1.0);
    ASSERT_LT(u, 1.0);
    unit_sum += u;
    unit_lowest = std::min(unit_lowest, u);
    unit_highest = std::max(unit_highest, u);
  }
  // Standard errors: 0.29 / sqrt(n) and 0.58 / sqrt(n), about 0.001 and 0.002.
  EXPECT_NEAR(below_sum / n, 0.5, 0.01);
  EXPECT_NEAR(unit_sum / n, 0.0, 0.02);
  EXPECT_LT(unit_lowest, -0.999);
  EXPECT_GT(unit_highest, 0.999);
  EXPECT_EQ(below(~uint64_t{0}, m), m - 1);
  EXPECT_EQ(below(0, m), 0u);
  EXPECT_EQ(symmetric_unit(0), -1.0);
}

}  // namespace
}  // namespace yirage
