// The search's result cache when it cannot be written (result_cache.hpp): the search's answer is
// returned all the same, the failure is a warning, and no temporary is left behind. (Reading,
// damage and profiled answers: superoptimizer_test.cpp, "ResultCache".)
#include "search/result_cache.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "search/superoptimizer.hpp"

namespace yirage::search {
namespace {

namespace fs = std::filesystem;

class UnwritableResultCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = (fs::temp_directory_path() / "yirage-result-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(name.data()), nullptr);
    folder_ = name;
    const char *level = std::getenv("YIRAGE_LOG");
    saved_log_ = level ? std::optional<std::string>(level) : std::nullopt;
    setenv("YIRAGE_LOG", "warning", 1);
  }
  void TearDown() override {
    if (saved_log_) {
      setenv("YIRAGE_LOG", saved_log_->c_str(), 1);
    } else {
      unsetenv("YIRAGE_LOG");
    }
    fs::remove_all(folder_);
  }

  // Every name under the folder, relative to it, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto &e : fs::recursive_directory_iterator(folder_)) {
      found.push_back(fs::relative(e.path(), folder_).string());
    }
    std::sort(found.begin(), found.end());
    return found;
  }

  std::string folder_;
  std::optional<std::string> saved_log_;
};

KernelGraph exp_of_relu() {
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.unary(OpKind::kRelu, g.new_input({64, 64}, DType::kFloat16))));
  return g;
}

SearchOptions options_with_cache(const std::string &cache_dir) {
  SearchOptions o;
  o.target = targets::builtin_target("h100");
  o.time_budget_seconds = 120;
  o.threads = 2;
  o.cache_dir = cache_dir;
  return o;
}

// The cache folder cannot be created (its parent is a file), or the entry's name is taken by a
// folder (the rename fails after the temporaries were written): the search still answers, and
// says once on stderr that the answer was not stored.
TEST_F(UnwritableResultCache, TheSearchStillAnswersAndLeavesNoTemporaries) {
  std::ofstream(folder_ + "/file") << "a file, not a folder";
  const KernelGraph g = exp_of_relu();
  for (const std::string &cache : {folder_ + "/file/search", folder_ + "/search"}) {
    const SearchOptions o = options_with_cache(cache);
    if (cache == folder_ + "/search") fs::create_directories(cache_path(cache, cache_request(g, o)) + "/taken");
    const std::vector<std::string> before = names();
    testing::internal::CaptureStderr();
    SearchResult result;
    try {
      result = superoptimize(g, o);
    } catch (const std::exception &e) {
      ADD_FAILURE() << cache << ": the search threw: " << e.what();
    }
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_EQ(result.end, SearchEnd::kComplete) << cache;
    EXPECT_FALSE(result.candidates.empty()) << cache;
    EXPECT_FALSE(result.stats.from_cache) << cache;
    EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
    EXPECT_EQ(said.rfind("yirage [warning] search cache: the answer is returned but not stored: ", 0), 0u) << said;
    EXPECT_EQ(names(), before) << cache << ": a temporary was left behind";
  }
}

// A write that fails returns false and says so once per folder (a profiled search writes twice).
TEST_F(UnwritableResultCache, AWriteThatFailsSaysSoOnce) {
  std::ofstream(folder_ + "/file") << "a file, not a folder";
  const std::vector<uint8_t> request = {1, 2, 3};
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache_write(folder_ + "/file/search", request, {}, 1.0));
  EXPECT_FALSE(cache_write(folder_ + "/file/search", {4, 5}, {}, 1.0));
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  EXPECT_NE(said.find("not stored"), std::string::npos) << said;
  EXPECT_TRUE(cache_write(folder_ + "/search", request, {}, 1.0));
  EXPECT_TRUE(cache_read(folder_ + "/search", request));
}

}  // namespace
}  // namespace yirage::search
