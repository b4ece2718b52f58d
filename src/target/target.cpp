#include "target/target.hpp"

#include <flatbuffers/idl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "util/error.hpp"
#include "util/file_cache.hpp"
#include "yirage_builtin_targets.hpp"
#include "yirage_schema_text.hpp"
#include "yirage_target_generated.h"

namespace yirage::targets {

namespace {

namespace fbt = yirage::fb::target;

[[noreturn]] void bad(const TargetProperties &t, const std::string &what) {
  invalid_argument("target '" + t.name + "': " + what);
}

// A size in which memory moves (a cache line, an access unit): a power of two from 4 to 4096.
bool plausible_unit(int64_t bytes) {
  return bytes >= 4 && bytes <= 4096 && (bytes & (bytes - 1)) == 0;
}

// Bytes per second of a single-threaded copy of 64 MiB (read + write), best of three.
double measure_copy_bandwidth() {
  const size_t bytes = size_t{64} << 20;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds);
    from[static_cast<size_t>(i)] = to[bytes - 1];  // keep the copies observable
  }
  return best;
}

// The value of the first line of /proc/cpuinfo that starts with `key` ("" when there is none).
std::string cpuinfo_value(const std::string &key) {
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind(key, 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 1);
    }
  }
  return "";
}

// The first "cpu MHz" of /proc/cpuinfo in Hz, or 2.5 GHz when it is not there.
double cpu_frequency() {
  const std::string mhz = cpuinfo_value("cpu MHz");
  try {
    if (!mhz.empty()) return std::stod(mhz) * 1e6;
  } catch (const std::exception &) {
  }
  return 2.5e9;
}

int64_t cache_bytes(int name, int64_t fallback) {
  const long value = sysconf(name);
  return value > 0 ? value : fallback;
}

// What varies from one look to the next on the same machine: the copy's bandwidth and the clock
// (scaled by the OS). They are measured once per machine and kept (host_cpu_target_in).
struct HostFigures {
  double memory_bandwidth = 0;  // bytes per second
  double frequency = 0;         // Hz
};

constexpr const char *kFiguresHeader = "yirage host figures 1";

std::string figures_text(const HostFigures &f) {
  std::ostringstream s;
  s.precision(17);
  s << kFiguresHeader << "\nmemory_bandwidth " << f.memory_bandwidth << "\nfrequency " << f.frequency << '\n';
  return s.str();
}

// The figures of a kept file; nothing unless it is exactly figures_text's form with plausible
// values (a file is only ever a cache: anything else is measured again).
std::optional<HostFigures> figures_from(const std::string &text) {
  std::istringstream s(text);
  std::string header, bandwidth_key, frequency_key;
  HostFigures f;
  if (!std::getline(s, header) || header != kFiguresHeader) return std::nullopt;
  if (!(s >> bandwidth_key >> f.memory_bandwidth >> frequency_key >> f.frequency)) return std::nullopt;
  s >> std::ws;
  if (!s.eof() || bandwidth_key != "memory_bandwidth" || frequency_key != "frequency") return std::nullopt;
  const bool plausible = f.memory_bandwidth >= 1e8 && f.memory_bandwidth <= 1e14 && f.frequency >= 1e8 &&
                         f.frequency <= 1e11;  // also false for NaN
  if (!plausible) return std::nullopt;
  return f;
}

}  // namespace

TargetProperties host_cpu_target_in(const std::string &folder) {
  TargetProperties t;
  t.name = "cpu";
  t.kind = TargetKind::kCpu;
  t.compute_units = std::max(1u, std::thread::hardware_concurrency());
  // A block is a task on one core; its "threads" are a logical count the backend maps onto SIMD
  // lanes, so the GPU-style limit is kept for compatible µGraphs.
  t.max_threads_per_block = 1024;
  t.max_blocks_per_compute_unit = 1;
  t.threads_per_compute_unit = 1024;
  const int64_t l2 = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 1 << 20);
  t.shared_memory_per_block = l2;  // a block's tiles should stay in its core's L2
  t.shared_memory_per_compute_unit = l2;
  t.warp_width = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") ? 8 : 4;
  t.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  t.l2_bytes = cache_bytes(_SC_LEVEL3_CACHE_SIZE, l2);
  const int64_t line = cache_bytes(_SC_LEVEL1_DCACHE_LINESIZE, 64);
  t.cache_line_bytes = plausible_unit(line) ? line : 64;

  // The measured figures are kept per machine: the file's name hashes what identifies it, so
  // that machines sharing a home folder keep their own.
  const std::string identity = cpuinfo_value("model name") + '\n' + std::to_string(t.compute_units) + ' ' +
                               std::to_string(t.warp_width) + ' ' + std::to_string(l2) + ' ' +
                               std::to_string(t.l2_bytes) + ' ' + std::to_string(t.memory_bytes);
  const std::string path = folder.empty() ? "" : folder + "/cpu-" + util::hash_hex(identity) + ".txt";
  std::optional<HostFigures> figures;
  if (!path.empty()) {
    if (const std::optional<std::string> kept = util::read_cached(path)) figures = figures_from(*kept);
  }
  if (!figures) {
    figures = HostFigures{measure_copy_bandwidth(), cpu_frequency()};
    if (!path.empty()) {
      try {
        util::store_cached(path, figures_text(*figures));
      } catch (const Error &) {
        // An unwritable cache only costs the next process the measurement.
      }
    }
  }

  t.memory_bandwidth = figures->memory_bandwidth;
  t.l2_bandwidth = 4 * t.memory_bandwidth;
  // Two FMA units, two FLOPs per FMA lane; float16 and bfloat16 are computed in float32.
  t.peak_flops_float32 =
      static_cast<double>(t.compute_units) * figures->frequency * static_cast<double>(t.warp_width) * 2 * 2;
  t.peak_flops_float16 = t.peak_flops_bfloat16 = t.vector_flops_float32 = t.peak_flops_float32;
  t.launch_overhead_seconds = 5e-6;
  t.description = "this host: " + std::to_string(t.compute_units) + " cores, " + std::to_string(t.warp_width) +
                  " float32 SIMD lanes";
  t.sources =
      "detected: cores, caches, cache line and memory from sysconf, SIMD width from cpuid; measured once per "
      "machine and kept in the cache folder: memory bandwidth (single-thread 64 MiB copy) and "
      "frequency (/proc/cpuinfo); peak FLOP/s estimated as cores x frequency x lanes x 4; L2 "
      "bandwidth estimated as 4x memory bandwidth";
  validate(t);
  return t;
}

TargetProperties cpu_target_on_threads(TargetProperties host, int64_t threads) {
  if (threads <= 0 || threads == host.compute_units) return host;
  const double share = static_cast<double>(threads) / static_cast<double>(host.compute_units);
  for (double *flops :
       {&host.peak_flops_float32, &host.peak_flops_float16, &host.peak_flops_bfloat16, &host.vector_flops_float32}) {
    *flops *= share;
  }
  host.compute_units = threads;
  return host;
}

double TargetProperties::peak_flops(DType dtype) const {
  switch (dtype) {
    case DType::kFloat16: return peak_flops_float16;
    case DType::kBFloat16: return peak_flops_bfloat16;
    case DType::kFloat32: return peak_flops_float32;
  }
  return 0;
}

void validate(const TargetProperties &t) {
  if (t.name.empty()) invalid_argument("target: the name is empty");
  if (t.kind != TargetKind::kCpu && t.kind != TargetKind::kGpu) bad(t, "kind must be Cpu or Gpu");
  const std::pair<const char *, int64_t> positive[] = {
      {"compute_units", t.compute_units},
      {"max_threads_per_block", t.max_threads_per_block},
      {"max_blocks_per_compute_unit", t.max_blocks_per_compute_unit},
      {"threads_per_compute_unit", t.threads_per_compute_unit},
      {"shared_memory_per_block", t.shared_memory_per_block},
      {"shared_memory_per_compute_unit", t.shared_memory_per_compute_unit},
      {"warp_width", t.warp_width},
      {"memory_bytes", t.memory_bytes},
      {"l2_bytes", t.l2_bytes}};
  for (const auto &[field, value] : positive) {
    if (value <= 0) bad(t, std::string(field) + " must be positive (is " + std::to_string(value) + ")");
  }
  const std::pair<const char *, double> rates[] = {{"memory_bandwidth", t.memory_bandwidth},
                                                   {"l2_bandwidth", t.l2_bandwidth},
                                                   {"vector_flops_float32", t.vector_flops_float32},
                                                   {"launch_overhead_seconds", t.launch_overhead_seconds}};
  for (const auto &[field, value] : rates) {
    if (!(value > 0) || value > 1e18) bad(t, std::string(field) + " must be positive and finite");
  }
  if (!(t.loop_iteration_seconds >= 0) || t.loop_iteration_seconds > 1) {
    bad(t, "loop_iteration_seconds must be in [0, 1]");
  }
  for (const auto &[field, bytes] : {std::pair<const char *, int64_t>{"cache_line_bytes", t.cache_line_bytes},
                                     {"memory_access_bytes", t.memory_access_bytes}}) {
    if (bytes != 0 && !plausible_unit(bytes)) {
      bad(t, std::string(field) + " must be 0 or a power of two from 4 to 4096 (is " + std::to_string(bytes) + ")");
    }
  }
  if (!t.supports(DType::kFloat16) && !t.supports(DType::kBFloat16) && !t.supports(DType::kFloat32)) {
    bad(t, "no dtype has a positive peak_flops");
  }
  for (double f : {t.peak_flops_float16, t.peak_flops_bfloat16, t.peak_flops_float32}) {
    if (!(f >= 0) || f > 1e18) bad(t, "peak_flops values must be >= 0 and finite");
  }
  const bool none = t.matrix_unit == std::array<int64_t, 3>{0, 0, 0};
  const bool all = t.matrix_unit[0] > 0 && t.matrix_unit[1] > 0 && t.matrix_unit[2] > 0;
  if (!none && !all) bad(t, "matrix_unit must be three positive sizes, or absent");
  if (t.shared_memory_per_block > t.shared_memory_per_compute_unit) {
    bad(t, "shared_memory_per_block exceeds shared_memory_per_compute_unit");
  }
}

std::vector<std::string> builtin_target_names() {
  std::vector<std::string> names = {"cpu"};
  for (const BuiltinTargetText &t : kBuiltinTargets) names.push_back(t.name);
  return names;
}

TargetProperties target_from_json(const std::string &text) {
  flatbuffers::Parser parser;
  if (!parser.Parse(serialize::kTargetSchemaText)) {
    throw Error(ErrorCode::kInternal, "target schema does not parse: " + parser.error_);
  }
  if (text.find('\0') != std::string::npos || !parser.ParseJson(text.c_str())) {
    throw Error(ErrorCode::kCorruptData, "target description: " + (parser.error_.empty() ? "NUL byte" : parser.error_));
  }
  // The parser's output is aligned for its own reads; verify it like any other buffer.
  flatbuffers::Verifier verifier(parser.builder_.GetBufferPointer(), parser.builder_.GetSize());
  if (!fbt::VerifyTargetBuffer(verifier)) {
    throw Error(ErrorCode::kCorruptData, "target description: failed verification");
  }
  const fbt::Target &in = *fbt::GetTarget(parser.builder_.GetBufferPointer());
  if (in.schema_version() > 1) {
    throw Error(ErrorCode::kVersionMismatch, "target description: schema version " +
                                                 std::to_string(in.schema_version()) +
                                                 " is newer than this library's 1");
  }
  TargetProperties t;
  t.name = in.name() ? in.name()->str() : "";
  t.description = in.description() ? in.description()->str() : "";
  t.kind = static_cast<TargetKind>(in.kind());
  t.compute_units = in.compute_units();
  t.max_threads_per_block = in.max_threads_per_block();
  t.max_blocks_per_compute_unit = in.max_blocks_per_compute_unit();
  t.threads_per_compute_unit = in.threads_per_compute_unit();
  t.shared_memory_per_block = in.shared_memory_per_block();
  t.shared_memory_per_compute_unit = in.shared_memory_per_compute_unit();
  t.warp_width = in.warp_width();
  t.memory_bytes = in.memory_bytes();
  t.memory_bandwidth = in.memory_bandwidth();
  t.l2_bytes = in.l2_bytes();
  t.l2_bandwidth = in.l2_bandwidth();
  t.peak_flops_float16 = in.peak_flops_float16();
  t.peak_flops_bfloat16 = in.peak_flops_bfloat16();
  t.peak_flops_float32 = in.peak_flops_float32();
  t.vector_flops_float32 = in.vector_flops_float32();
  if (in.matrix_unit() != nullptr) {
    if (in.matrix_unit()->size() != 3) bad(t, "matrix_unit must have 3 entries");
    for (flatbuffers::uoffset_t i = 0; i < 3; ++i) t.matrix_unit[i] = in.matrix_unit()->Get(i);
  }
  t.launch_overhead_seconds = in.launch_overhead_seconds();
  t.loop_iteration_seconds = in.loop_iteration_seconds();
  t.sources = in.sources() ? in.sources()->str() : "";
  t.cuda_compute_capability = in.cuda_compute_capability();
  t.cache_line_bytes = in.cache_line_bytes();
  t.memory_access_bytes = in.memory_access_bytes();
  validate(t);
  return t;
}

const TargetProperties &host_cpu_target() {
  // Thread-safe initialization, once per process.
  static const TargetProperties host = host_cpu_target_in(util::default_cache_dir("host"));
  return host;
}

std::optional<TargetProperties> builtin_cuda_target(int cc, int64_t memory_bytes) {
  std::optional<TargetProperties> chosen;
  double chosen_distance = INFINITY;
  for (const BuiltinTargetText &t : kBuiltinTargets) {
    TargetProperties target = target_from_json(t.json);
    if (target.cuda_compute_capability != cc) continue;
    // How far the memory sizes are apart, as a ratio (0 for an unknown size: the first).
    const double distance =
        memory_bytes > 0
            ? std::abs(std::log(static_cast<double>(memory_bytes) / static_cast<double>(target.memory_bytes)))
            : 0;
    if (!chosen || distance < chosen_distance) {
      chosen = std::move(target);
      chosen_distance = distance;
    }
  }
  return chosen;
}

TargetProperties builtin_target(const std::string &name) {
  if (name == "cpu") return host_cpu_target();
  for (const BuiltinTargetText &t : kBuiltinTargets) {
    if (name == t.name) return target_from_json(t.json);
  }
  std::string names;
  for (const std::string &n : builtin_target_names()) names += (names.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::kNotFound, "no built-in target named '" + name + "' (have: " + names + ")");
}

}  // namespace yirage::targets
