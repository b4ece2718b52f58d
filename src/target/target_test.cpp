#include "target/target.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "testing/test_support.hpp"
#include "util/error.hpp"
#include "util/file_cache.hpp"

namespace yirage::targets {
namespace {

ErrorCode error_of(const std::string &json) {
  try {
    target_from_json(json);
  } catch (const Error &e) {
    return e.code();
  }
  return static_cast<ErrorCode>(0);
}

TEST(Target, BuiltinDescriptions) {
  EXPECT_EQ(builtin_target_names(), (std::vector<std::string>{"cpu", "h100", "h200", "a100", "mi300x"}));
  const TargetProperties h100 = builtin_target("h100");
  EXPECT_EQ(h100.kind, TargetKind::kGpu);
  EXPECT_EQ(h100.compute_units, 132);
  EXPECT_EQ(h100.shared_memory_per_block, 232448);
  EXPECT_EQ(h100.matrix_unit, (std::array<int64_t, 3>{16, 8, 16}));
  EXPECT_DOUBLE_EQ(h100.peak_flops(DType::kFloat16), 7.12e14);
  EXPECT_FALSE(h100.sources.empty());
  EXPECT_EQ(h100.cache_line(), 128);
  EXPECT_EQ(h100.memory_access(), 64);
  EXPECT_EQ(builtin_target("a100").compute_units, 108);
  EXPECT_EQ(builtin_target("mi300x").warp_width, 64);
  try {
    builtin_target("tpu");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_STREQ(e.what(), "no built-in target named 'tpu' (have: cpu, h100, h200, a100, mi300x)");
  }
}

TEST(Target, HostCpuIsDetected) {
  const TargetProperties &cpu = builtin_target("cpu");
  EXPECT_EQ(cpu.kind, TargetKind::kCpu);
  EXPECT_EQ(cpu.compute_units, static_cast<int64_t>(std::thread::hardware_concurrency()));
  EXPECT_GT(cpu.memory_bandwidth, 1e8);  // any machine copies faster than 100 MB/s
  EXPECT_GE(cpu.warp_width, 4);
  EXPECT_GT(cpu.shared_memory_per_block, 0);
  EXPECT_GE(cpu.cache_line_bytes, 32);                // sysconf's L1 line, or 64 where it says nothing
  EXPECT_EQ(&host_cpu_target(), &host_cpu_target());  // detected once
  EXPECT_NO_THROW(validate(cpu));
}

// The CPU plugin's device on fewer threads than cores: as many compute units, FLOP/s in proportion.
TEST(Target, CpuTargetOnThreads) {
  TargetProperties cpu = builtin_target("cpu");
  cpu.compute_units = 4;
  const TargetProperties two = cpu_target_on_threads(cpu, 2);
  EXPECT_EQ(two.compute_units, 2);
  EXPECT_DOUBLE_EQ(two.peak_flops_float32, cpu.peak_flops_float32 / 2);
  EXPECT_DOUBLE_EQ(two.vector_flops_float32, cpu.vector_flops_float32 / 2);
  EXPECT_DOUBLE_EQ(two.memory_bandwidth, cpu.memory_bandwidth);
  EXPECT_EQ(cpu_target_on_threads(cpu, 0).compute_units, 4);  // no count: the cores
}

// The one file a fresh folder gets from host_cpu_target_in.
std::string kept_figures(const std::string &folder) {
  std::vector<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(folder)) {
    if (e.path().extension() == ".txt") files.push_back(e.path().string());
  }
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? "" : files[0];
}

TEST(Target, HostFiguresAreMeasuredOncePerMachine) {
  const std::string folder =
      (std::filesystem::temp_directory_path() / ("yirage-host-figures-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(folder);
  const TargetProperties first = host_cpu_target_in(folder);
  const std::string path = kept_figures(folder);
  ASSERT_TRUE(util::read_cached(path));
  // A later process reads them back: the same target, to the bit (it is part of every search
  // cache key).
  const TargetProperties again = host_cpu_target_in(folder);
  EXPECT_EQ(again.memory_bandwidth, first.memory_bandwidth);
  EXPECT_EQ(again.peak_flops_float32, first.peak_flops_float32);
  EXPECT_EQ(again.l2_bandwidth, first.l2_bandwidth);

  // What is kept is what is used.
  util::store_cached(path, "yirage host figures 1\nmemory_bandwidth 12500000000\nfrequency 1000000000\n");
  const TargetProperties planted = host_cpu_target_in(folder);
  EXPECT_EQ(planted.memory_bandwidth, 12.5e9);
  EXPECT_EQ(planted.l2_bandwidth, 50e9);
  EXPECT_EQ(planted.peak_flops_float32, static_cast<double>(planted.compute_units) * 1e9 * planted.warp_width * 4);

  // A damaged file (its checksum no longer matches) is measured again and replaced.
  std::ofstream(path, std::ios::app) << "frequency 3\n";
  EXPECT_NE(host_cpu_target_in(folder).memory_bandwidth, 12.5e9);
  const std::optional<std::string> replaced = util::read_cached(path);
  ASSERT_TRUE(replaced);
  EXPECT_EQ(replaced->rfind("yirage host figures 1\n", 0), 0u) << *replaced;

  // Well-formed files with figures no machine has, or another form, are measured again too.
  for (const char *text : {"yirage host figures 1\nmemory_bandwidth nan\nfrequency 1e9\n",
                           "yirage host figures 1\nmemory_bandwidth -5e9\nfrequency 1e9\n",
                           "yirage host figures 1\nmemory_bandwidth 1e30\nfrequency 1e9\n",
                           "yirage host figures 1\nmemory_bandwidth 1e10\nfrequency 0\n",
                           "yirage host figures 1\nmemory_bandwidth 1e10\nfrequency 1e9\nmore 1\n",
                           "yirage host figures 1\nfrequency 1e9\nmemory_bandwidth 1e10\n",
                           "yirage host figures 2\nmemory_bandwidth 1e10\nfrequency 1e9\n", "", "\n"}) {
    util::store_cached(path, text);
    const TargetProperties t = host_cpu_target_in(folder);
    EXPECT_NE(t.memory_bandwidth, 1e10) << text;
    EXPECT_NO_THROW(validate(t)) << text;
    EXPECT_NE(util::read_cached(path), std::optional<std::string>(text)) << text;
  }

  // No folder, or one that cannot be written: measured each time, not an error.
  EXPECT_NO_THROW(validate(host_cpu_target_in("")));
  std::ofstream(folder + "/a-file") << "x";
  EXPECT_NO_THROW(validate(host_cpu_target_in(folder + "/a-file/below")));
  std::filesystem::remove_all(folder);
}

TEST(Target, JsonErrors) {
  const std::string minimal = R"({"name": "t", "compute_units": 1,
    "max_threads_per_block": 1, "max_blocks_per_compute_unit": 1, "threads_per_compute_unit": 1,
    "shared_memory_per_block": 1, "shared_memory_per_compute_unit": 1, "warp_width": 1,
    "memory_bytes": 1, "memory_bandwidth": 1, "l2_bytes": 1, "l2_bandwidth": 1,
    "vector_flops_float32": 1, "launch_overhead_seconds": 1)";
  const std::string gpu = R"(, "kind": "Gpu")", flops = R"(, "peak_flops_float32": 1)";
  EXPECT_NO_THROW(target_from_json(minimal + gpu + flops + "}"));
  EXPECT_EQ(error_of("not json"), ErrorCode::kCorruptData);
  EXPECT_EQ(error_of(R"({"name": 3, "bogus_field": 1})"), ErrorCode::kCorruptData);
  EXPECT_EQ(error_of(minimal + gpu + flops + R"(, "schema_version": 2})"), ErrorCode::kVersionMismatch);
  EXPECT_EQ(error_of(minimal + gpu + flops + R"(, "matrix_unit": [16, 8]})"), ErrorCode::kInvalidArgument);
  YIRAGE_EXPECT_INVALID(target_from_json(R"({"name": "t", "kind": "Gpu"})"),
                        "target 't': compute_units must be positive (is 0)");
  YIRAGE_EXPECT_INVALID(target_from_json(minimal + gpu + "}"), "no dtype has a positive peak_flops");
  YIRAGE_EXPECT_INVALID(target_from_json(minimal + flops + "}"), "kind must be Cpu or Gpu");
  // The cache line: absent means the kind's usual; given, a power of two from 4 to 4096.
  EXPECT_EQ(target_from_json(minimal + gpu + flops + "}").cache_line(), 128);
  EXPECT_EQ(target_from_json(minimal + R"(, "kind": "Cpu")" + flops + "}").cache_line(), 64);
  EXPECT_EQ(target_from_json(minimal + gpu + flops + R"(, "cache_line_bytes": 32})").cache_line(), 32);
  YIRAGE_EXPECT_INVALID(target_from_json(minimal + gpu + flops + R"(, "cache_line_bytes": 96})"),
                        "cache_line_bytes must be 0 or a power of two from 4 to 4096 (is 96)");
  // Device memory's access unit: absent means 64 on a GPU and the cache line on a CPU; never more
  // than the line; given, a power of two from 4 to 4096.
  EXPECT_EQ(target_from_json(minimal + gpu + flops + "}").memory_access(), 64);
  EXPECT_EQ(target_from_json(minimal + R"(, "kind": "Cpu", "cache_line_bytes": 128)" + flops + "}").memory_access(),
            128);
  EXPECT_EQ(target_from_json(minimal + gpu + flops + R"(, "memory_access_bytes": 32})").memory_access(), 32);
  EXPECT_EQ(target_from_json(minimal + gpu + flops + R"(, "memory_access_bytes": 256})").memory_access(), 128);
  YIRAGE_EXPECT_INVALID(target_from_json(minimal + gpu + flops + R"(, "memory_access_bytes": 48})"),
                        "memory_access_bytes must be 0 or a power of two from 4 to 4096 (is 48)");
}

}  // namespace
}  // namespace yirage::targets
