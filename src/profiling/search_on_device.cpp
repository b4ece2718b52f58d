#include "profiling/search_on_device.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "ir/block_graph.hpp"
#include "runtime/compiled_graph.hpp"
#include "search/padded_form.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace yirage::profiling {

std::optional<int64_t> checked_loop_waits(const std::string &source, int64_t answer, int64_t range,
                                          int64_t beyond_range) {
  if (answer == -1) return std::nullopt;
  if (answer < 1 || answer > range + beyond_range) {
    throw Error(ErrorCode::kBackend, source + " estimate: loop_waits " + std::to_string(answer) +
                                         " for a for-loop of " + std::to_string(range) +
                                         " iterations (want -1, or 1 to " + std::to_string(range + beyond_range) + ")");
  }
  return answer;
}

std::optional<double> checked_seconds(const std::string &source, const char *field, double answer) {
  if (answer == -1) return std::nullopt;
  if (!(answer >= 0 && answer <= 1)) {
    throw Error(ErrorCode::kBackend,
                source + " estimate: " + field + " " + std::to_string(answer) + " (want -1, or 0 to 1)");
  }
  return answer;
}

std::optional<int64_t> checked_resident_blocks(const std::string &source, int64_t answer) {
  if (answer == -1) return std::nullopt;
  if (answer < 1 || answer > kMaxResidentBlocks) {
    throw Error(ErrorCode::kBackend, source + " estimate: max_resident_blocks " + std::to_string(answer) +
                                         " (want -1, or 1 to " + std::to_string(kMaxResidentBlocks) + ")");
  }
  return answer;
}

std::optional<bool> checked_whole_product(const std::string &source, int64_t answer) {
  if (answer == -1) return std::nullopt;
  if (answer != 0 && answer != 1) {
    throw Error(ErrorCode::kBackend,
                source + " estimate: whole_product " + std::to_string(answer) + " (want -1, 0 or 1)");
  }
  return answer == 1;
}

search::BackendEstimates estimates_from(const std::string &source, ProgramEstimate estimate, int64_t beyond_range) {
  return [source, estimate = std::move(estimate), beyond_range](const KernelGraph &graph,
                                                                size_t op) -> search::BackendKernelEstimate {
    yirage_backend_kernel_estimate answer{};
    try {
      answer = estimate(serialize::make_kernel_program(graph, op));
    } catch (const Error &e) {
      if (e.code() == ErrorCode::kUnsupported) return {};
      throw;
    }
    const Operator &customized = graph.operators().at(op);
    const int64_t range = customized.block_graph ? customized.block_graph->config().forloop_range : 1;
    return {checked_loop_waits(source, answer.loop_waits, range, beyond_range),
            checked_seconds(source, "shared_memory_seconds", answer.shared_memory_seconds),
            checked_seconds(source, "dependent_launch_seconds", answer.dependent_launch_seconds),
            checked_resident_blocks(source, answer.max_resident_blocks),
            checked_whole_product(source, answer.whole_product)};
  };
}

int64_t launches_saved(const KernelGraph &grouped) {
  int64_t saved = 0;
  for (size_t i : serialize::kernel_operators(grouped)) saved += grouped.operators()[i].attributes.launch_with_next;
  return saved;
}

bool worth_grouping(size_t kernels, double apart_seconds, double launch_overhead_seconds, double fastest_seconds) {
  const double saved = kernels > 0 ? static_cast<double>(kernels - 1) * launch_overhead_seconds : 0.0;
  return saved > 0 && apart_seconds <= kGroupingWorth * saved && apart_seconds - saved < fastest_seconds;
}

std::string measured_by(const runtime::Plugin &plugin, int32_t device) {
  // The plugin file's size and time: a rebuilt plugin generates other code, so its answers are
  // not this one's.
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(plugin.path(), ec);
  const auto written = std::filesystem::last_write_time(plugin.path(), ec);
  return plugin.name() + " " + plugin.version() + " " + plugin.path() + " " + std::to_string(ec ? 0 : size) + " " +
         std::to_string(ec ? 0 : written.time_since_epoch().count()) + " device " + std::to_string(device) + " " +
         plugin.device(device).name;
}

void profile_on_device(search::SearchOptions &options, const runtime::Plugin &plugin, int32_t device,
                       const KernelGraph &reference, runtime::MeasureOptions measure) {
  const targets::TargetProperties &target = plugin.device(device).target;
  // On a GPU each timed run starts from a flushed L2, as the benchmarks time; a CPU's last-level
  // cache costs more to flush than most runs take.
  if (target.kind == targets::TargetKind::kGpu) measure.flush_bytes = target.l2_bytes;
  // One measurer per reference (the whole graph, or a segment of it searched on its own): its
  // reference runs once, on the first candidate.
  const runtime::Plugin *p = &plugin;
  const double launch_overhead = target.launch_overhead_seconds;
  options.measure_for = [p, device, measure,
                         launch_overhead](const KernelGraph &against) -> search::SearchOptions::Measure {
    auto measurer = std::make_shared<runtime::Measurer>(*p, device, against, measure);
    auto fastest = std::make_shared<std::atomic<double>>(INFINITY);  // of the correct ones measured
    return [measurer, p, device, launch_overhead, fastest](const KernelGraph &candidate,
                                                           runtime::Measurer::Deadline deadline) {
      auto measured = [&](const KernelGraph &graph) {
        const runtime::Measurement m = measurer->measure(graph, true, deadline);
        return search::Measured{m.correct,
                                m.median_seconds,
                                m.max_relative_error,
                                m.error,
                                search::Spread{m.min_seconds, m.max_seconds, m.samples},
                                nullptr};
      };
      search::Measured apart = measured(candidate);
      // Kernels the device takes as one program: that form is measured too, and kept if faster.
      if (!apart.correct) return apart;
      double before = fastest->load();
      while (apart.seconds < before && !fastest->compare_exchange_weak(before, apart.seconds)) {
      }
      // (Asked only where even one program for every kernel could be worth it.)
      const size_t kernels = serialize::kernel_operators(candidate).size();
      if (!worth_grouping(kernels, apart.seconds, launch_overhead, before)) return apart;
      std::optional<KernelGraph> grouped = runtime::with_operator_groups(*p, device, candidate);
      if (!grouped ||
          !worth_grouping(static_cast<size_t>(launches_saved(*grouped)) + 1, apart.seconds, launch_overhead, before)) {
        return apart;
      }
      search::Measured together = measured(*grouped);
      util::log_line(util::LogLevel::kDebug,
                     "profile: kernels apart " + std::to_string(apart.seconds * 1e6) + " us, as one program " +
                         (together.correct ? std::to_string(together.seconds * 1e6) + " us" : together.error));
      // Kept where faster beyond the noise, as a candidate must beat the input graph.
      if (!together.correct || together.seconds >= apart.spread.min_seconds) return apart;
      together.faster_form = std::make_shared<const KernelGraph>(std::move(*grouped));
      return together;
    };
  };
  options.measure = options.measure_for(reference);
  // Candidates the backend cannot build take no place (SearchOptions::buildable).
  options.buildable = [p, device](const KernelGraph &candidate) {
    try {
      runtime::check_buildable(*p, device, candidate);
      return true;
    } catch (const Error &) {  // the backend's refusal, or an error it would give again
      return false;
    }
  };
  // Whether it builds ragged tiles, asked once, in the graph's dtype.
  options.ragged_tiles = reference.inputs().empty() ||
                         options.buildable(search::ragged_probe(reference.tensor(reference.inputs()[0]).dtype));
  options.measured_by = measured_by(plugin, device);
  if (plugin.estimate_entry() != nullptr) {
    // The plugin's build, as measured_by names it: a rebuilt plugin may estimate otherwise, and a
    // ranking made with its estimates is then not reused.
    options.backend_estimates_source = options.measured_by;
    options.backend_estimates = estimates_from(
        plugin.name(),
        [p, device](const serialize::KernelProgram &program) { return runtime::backend_estimate(*p, device, program); },
        plugin.api().abi_minor >= 5 ? YIRAGE_BACKEND_MAX_READ_ONCE_WAITS : 0);
  }
}

}  // namespace yirage::profiling
