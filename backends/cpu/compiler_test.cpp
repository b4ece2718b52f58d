// The CPU compiler's kernel cache (compiler.hpp) when it is not the happy case: a read-only cache
// of another user serves its hits and builds its misses privately, a cache that cannot be created
// does the same, a bad entry (a link to /dev/zero, a checksum file of gigabytes) is rebuilt and
// replaced, and a write into the cache that fails costs no kernel and leaves no temporary.
#include "compiler.hpp"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/codegen/cpu_prelude.hpp"
#include "cpu/codegen/cpu_source.hpp"
#include "serialize/kernel_program.hpp"
#include "testing/bounded_child.hpp"

namespace yirage::cpu {
namespace {

namespace fs = std::filesystem;
using yirage::testing::run_in_child;

// A kernel that writes `value` to its one output.
std::string kernel_source(int value) {
  return "extern \"C\" __attribute__((visibility(\"default\"))) int kernel(const void *const *, void *const *out, "
         "const void *) { *static_cast<int *>(out[0]) = " +
         std::to_string(value) + "; return 0; }\n";
}

// What a kernel compiled from kernel_source writes.
int run(const CompileOutcome &outcome) {
  int value = -1;
  void *outputs[] = {&value};
  outcome.kernel->function()(nullptr, outputs, nullptr);
  return value;
}

// Log lines a compiler gave.
struct Lines {
  std::vector<std::string> warnings, others;
  CompilerLog log() {
    return [this](yirage_backend_log_level level, const std::string &message) {
      (level == YIRAGE_BACKEND_LOG_WARNING ? warnings : others).push_back(message);
    };
  }
};

// Every name under `folder`, relative to it, sorted.
std::vector<std::string> names(const std::string &folder) {
  std::vector<std::string> found;
  for (const auto &e : fs::recursive_directory_iterator(folder))
    found.push_back(fs::relative(e.path(), folder).string());
  std::sort(found.begin(), found.end());
  return found;
}

// How many entries `folder` holds (not counting what is inside them).
size_t entry_count(const std::string &folder) {
  size_t n = 0;
  for (const auto &e : fs::directory_iterator(folder)) n += !e.path().empty();
  return n;
}

// The one kernel object in the cache.
std::string only_object(const std::string &cache) {
  std::vector<std::string> objects;
  for (const auto &e : fs::directory_iterator(cache)) {
    if (e.path().extension() == ".so") objects.push_back(e.path().string());
  }
  return objects.size() == 1 ? objects[0] : "";
}

class CompilerCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = (fs::temp_directory_path() / "yirage-compiler-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(name.data()), nullptr);
    root_ = name;
    cache_ = root_ + "/cpu";
    // The private folders go here, so that the test sees them come and go; anyone may write.
    tmp_ = root_ + "/tmp";
    fs::create_directories(tmp_);
    fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(tmp_, fs::perms::all | fs::perms::sticky_bit);
    const char *tmpdir = std::getenv("TMPDIR");
    saved_tmpdir_ = tmpdir ? std::optional<std::string>(tmpdir) : std::nullopt;
    setenv("TMPDIR", tmp_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_tmpdir_) {
      setenv("TMPDIR", saved_tmpdir_->c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
    std::error_code ec;
    fs::permissions(cache_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_);
  }

  std::string root_, cache_, tmp_;
  std::optional<std::string> saved_tmpdir_;
};

// A populated cache that another user owns and nobody else may write (as in a shared install):
// its kernels are served without writing anything (naming the compiler included: its --version
// used to be written into the cache, and failing that read as "no C++ compiler"); a miss is built
// in a private folder, with one warning for all of them, and that folder goes with the compiler.
TEST_F(CompilerCache, AReadOnlyCacheServesItsHitsAndBuildsMissesPrivately) {
  {
    Compiler owner(cache_);
    ASSERT_EQ(run(owner.compile(kernel_source(1), "kernel", 1)), 1);
  }
  const std::vector<std::string> populated = names(cache_);
  fs::permissions(cache_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const auto body = [&]() -> std::string {
    if (access(cache_.c_str(), W_OK) == 0) _exit(77);  // this user writes it all the same
    Lines lines;
    {
      Compiler reader(cache_, lines.log());
      const CompileOutcome hit = reader.compile(kernel_source(1), "kernel", 1);
      if (!hit.cache_hit || run(hit) != 1) return "the cached kernel was not served";
      if (!lines.warnings.empty()) return "a hit warned: " + lines.warnings[0];
      for (int value : {2, 3}) {
        const CompileOutcome miss = reader.compile(kernel_source(value), "kernel", 1);
        if (miss.cache_hit || run(miss) != value) return "kernel " + std::to_string(value) + " was not built";
      }
      if (lines.warnings.size() != 1) return std::to_string(lines.warnings.size()) + " warnings, not 1";
      if (lines.warnings[0].find("cannot be written") == std::string::npos) return "warned: " + lines.warnings[0];
      const CompileOutcome again = reader.compile(kernel_source(2), "kernel", 1);
      if (!again.cache_hit || run(again) != 2) return "the privately built kernel was not served again";
      if (entry_count(tmp_) != 1) return "not one private folder";
    }
    if (entry_count(tmp_) != 0) return "the private folder was left behind";
    return "";
  };
  // As root, whom permissions do not stop, as user nobody (another user, as in the issue).
  const bool root = geteuid() == 0;
  if (!run_in_child(body, root)) {
    GTEST_SKIP() << "the cache cannot be made read-only here (root unable to become user nobody, or a user whom "
                    "permissions do not stop)";
  }
  EXPECT_EQ(names(cache_), populated) << "the read-only cache changed";
}

// A cache that cannot be created (its parent is a file): kernels are built privately, one
// warning says so, and nothing stays behind. Works as root too.
TEST_F(CompilerCache, ACacheThatCannotBeCreatedBuildsPrivately) {
  std::ofstream(root_ + "/file") << "a file, not a folder";
  Lines lines;
  {
    Compiler compiler(root_ + "/file/cpu", lines.log());
    for (int value : {4, 5}) {
      const CompileOutcome built = compiler.compile(kernel_source(value), "kernel", 1);
      EXPECT_FALSE(built.cache_hit);
      EXPECT_EQ(run(built), value);
    }
    ASSERT_EQ(lines.warnings.size(), 1u);
    EXPECT_NE(lines.warnings[0].find("cpu: the kernel cache " + root_ + "/file/cpu cannot be written"),
              std::string::npos)
        << lines.warnings[0];
    EXPECT_EQ(entry_count(tmp_), 1u);
  }
  EXPECT_EQ(entry_count(tmp_), 0u) << "the private folder was left behind";
}

// An entry linked to /dev/zero, a checksum file of 3 GiB (sparse) and a folder in an entry's
// place are each a miss with a warning: the kernel is rebuilt and, where the name is free to
// take, replaces the entry; where it is not (the folder), the kernel is used without being kept
// and no temporary stays.
TEST_F(CompilerCache, ABadEntryIsRebuiltAndReplaced) {
  std::string object;
  {
    Compiler compiler(cache_);
    ASSERT_EQ(run(compiler.compile(kernel_source(6), "kernel", 1)), 6);
    object = only_object(cache_);
    ASSERT_NE(object, "");
  }
  const std::vector<std::string> populated = names(cache_);
  const auto rebuilt = [&](const std::string &expected_warning) {
    return [&, expected_warning]() -> std::string {
      Lines lines;
      Compiler compiler(cache_, lines.log());
      const CompileOutcome outcome = compiler.compile(kernel_source(6), "kernel", 1);
      if (outcome.cache_hit || run(outcome) != 6) return "not rebuilt";
      if (lines.warnings.empty() || lines.warnings[0].find(expected_warning) == std::string::npos) {
        return "no warning saying '" + expected_warning + "': " + (lines.warnings.empty() ? "" : lines.warnings[0]);
      }
      return "";
    };
  };
  fs::remove(object);
  fs::create_symlink("/dev/zero", object);
  run_in_child(rebuilt("symbolic link"));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(object)));
  EXPECT_EQ(names(cache_), populated);

  fs::resize_file(object + ".sum", uintmax_t{3} << 30);
  run_in_child(rebuilt("3 GiB"));
  EXPECT_LT(fs::file_size(object + ".sum"), 64u);
  EXPECT_EQ(names(cache_), populated);

  fs::remove(object);
  fs::create_directories(object + "/taken");
  Lines lines;
  Compiler compiler(cache_, lines.log());
  const CompileOutcome outcome = compiler.compile(kernel_source(6), "kernel", 1);
  EXPECT_FALSE(outcome.cache_hit);
  EXPECT_EQ(run(outcome), 6);
  ASSERT_EQ(lines.warnings.size(), 2u);
  EXPECT_NE(lines.warnings[0].find("not a regular file"), std::string::npos) << lines.warnings[0];
  EXPECT_NE(lines.warnings[1].find("cannot be written"), std::string::npos) << lines.warnings[1];
  std::vector<std::string> expected = populated;
  expected.push_back(fs::path(object).filename().string() + "/taken");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names(cache_), expected) << "a temporary was left behind";
}

// The kernels' float16 loads and stores are integer arithmetic written so that GCC vectorizes
// loops of them (cpu_prelude.cpp; GCC 12 vectorizes no loop of _Float16 casts, and small
// rewrites of the same arithmetic, or a store through memcpy, leave the loops scalar): with the
// kernels' own flags, GCC reports each of these loops vectorized.
TEST(CpuCompiler, Float16LoopsVectorize) {
  const std::string cxx = std::getenv("YIRAGE_CPU_CXX") ? std::getenv("YIRAGE_CPU_CXX") : "c++";
  std::string version;
  if (FILE *pipe = popen((cxx + " --version 2>&1").c_str(), "r")) {
    char buffer[256];
    while (fgets(buffer, sizeof buffer, pipe) != nullptr) version += buffer;
    pclose(pipe);
  }
  if (version.find("Free Software Foundation") == std::string::npos || version.find("clang") != std::string::npos)
    GTEST_SKIP() << "the check reads GCC's -fopt-info; the kernels' compiler is: " << version;
  const std::string folder = fs::temp_directory_path() / ("yirage-vec-" + std::to_string(getpid()));
  fs::create_directories(folder);
  {
    std::ofstream out(folder + "/loops.cpp");
    out << codegen::kCpuPrelude << "\n#line 1 \"loops\"\n"
        << "void widen(const yr_f16 *in, float *out, int64_t n) { for (int64_t i = 0; i < n; ++i) out[i] = "
           "yr_ld(in + i); }\n"
        << "void narrow(const float *in, yr_f16 *out, int64_t n) { for (int64_t i = 0; i < n; ++i) yr_st(out + i, "
           "in[i]); }\n"
        << "void both(const yr_f16 *const *in, yr_f16 *const *out, int64_t n) { for (int64_t i = 0; i < n; ++i) "
           "yr_st(out[0] + i, yr_exp(yr_ld(in[0] + i)) / yr_ld(in[1] + i)); }\n";
  }
  std::string command = cxx;
  for (const std::string &flag : Compiler::kernel_flags(3)) command += " " + flag;
  command += " -fopt-info-vec-optimized " + folder + "/loops.cpp -o " + folder + "/loops.so 2>&1";
  std::string report;
  if (FILE *pipe = popen(command.c_str(), "r")) {
    char buffer[512];
    while (fgets(buffer, sizeof buffer, pipe) != nullptr) report += buffer;
    pclose(pipe);
  }
  fs::remove_all(folder);
  for (const std::string line : {"loops:1:", "loops:2:", "loops:3:"}) {
    bool vectorized = false;
    std::istringstream lines(report);
    for (std::string l; std::getline(lines, l);)
      vectorized = vectorized || (l.rfind(line, 0) == 0 && l.find("loop vectorized") != std::string::npos);
    EXPECT_TRUE(vectorized) << line << " not vectorized:\n" << report;
  }
}

// What the kernels' runtime lends them, counted: a serial loop, a gemm that is a plain loop, and
// a scratch buffer.
int gemm_calls = 0, scratch_calls = 0;
void serial_for(void *, int64_t count, int64_t, void (*task)(void *, int64_t, int64_t), void *context) {
  task(context, 0, count);
}
int counting_gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                  int64_t ldc) {
  ++gemm_calls;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = sum;
    }
  }
  return 1;
}
void *counting_scratch(int64_t bytes) {
  ++scratch_calls;
  static std::vector<float> buffer;
  buffer.resize(static_cast<size_t>(bytes / 4 + 16));
  return buffer.data();
}

// A kernel-level float16 product of 32 rows converts its blocks into the scratch and calls gemm
// (print_matmul), with the right result; without a gemm it runs its own loop, also right.
TEST(CpuCompiler, Float16ProductsConvertForTheSmallGemm) {
  KernelGraph g;
  g.mark_output(g.matmul(g.new_input({32, 48}, DType::kFloat16), g.new_input({48, 160}, DType::kFloat16)));
  const std::string source = codegen::cpu_source(serialize::make_kernel_program(g, 2));
  const std::string cache = fs::temp_directory_path() / ("yirage-convert-" + std::to_string(getpid()));
  Compiler compiler(cache);
  const CompileOutcome outcome = compiler.compile(source, codegen::kCpuKernelSymbol, 2);
  std::vector<_Float16> a(32 * 48), b(48 * 160), c(32 * 160);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<_Float16>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<_Float16>(static_cast<int>(i % 5) - 2);
  const void *inputs[] = {a.data(), b.data()};
  void *outputs[] = {c.data()};
  for (const bool with_gemm : {true, false}) {
    KernelRuntime runtime{serial_for, nullptr, with_gemm ? counting_gemm : nullptr, counting_scratch, nullptr, 0};
    gemm_calls = scratch_calls = 0;
    std::fill(c.begin(), c.end(), static_cast<_Float16>(-1000));
    ASSERT_EQ(outcome.kernel->function()(inputs, outputs, &runtime), 0);
    for (int64_t i = 0; i < 32; ++i) {
      for (int64_t j = 0; j < 160; ++j) {
        float want = 0;
        for (int64_t p = 0; p < 48; ++p) want += static_cast<float>(a[i * 48 + p]) * static_cast<float>(b[p * 160 + j]);
        ASSERT_EQ(static_cast<float>(c[i * 160 + j]), want) << i << "," << j << (with_gemm ? " gemm" : " loop");
      }
    }
    EXPECT_EQ(gemm_calls, with_gemm ? 2 * 2 : 0) << "2 row blocks of 16, 2 column blocks of 128";
    EXPECT_EQ(scratch_calls, with_gemm ? 1 : 0);
  }
  fs::remove_all(cache);
}

}  // namespace
}  // namespace yirage::cpu
