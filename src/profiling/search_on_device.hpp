// The search on a device (docs/backends.md, "Profiling in the search"): the callbacks of
// search::SearchOptions that a loaded backend plugin answers. The search ranks with the backend's
// own count of loop waits, skips candidates the backend cannot build, and measures its cheapest
// verified candidates on the device against the reference executor. The C API's
// yirage_superoptimize and the search benchmark set their options up through this layer, which
// sits above both runtime/ and search/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "runtime/measure.hpp"
#include "search/superoptimizer.hpp"
#include "serialize/kernel_program.hpp"
#include "yirage_backend.h"

namespace yirage::profiling {

// A code generator's estimate of one kernel program (yirage_backend_kernel_estimate): -1 in each
// field it has no opinion on; throws Error(kUnsupported) where it refuses the program.
using ProgramEstimate = std::function<yirage_backend_kernel_estimate(const serialize::KernelProgram &program)>;

// The search's backend estimates from `estimate`, called on the kernel program of each
// candidate's operator: no opinion where it has none or refuses the program (supports() then
// says why before the candidate takes a place). A loop_waits other than -1 or 1 to the loop's
// range plus `beyond_range` (the waits for tiles read once before the loop:
// YIRAGE_BACKEND_MAX_READ_ONCE_WAITS from a plugin of ABI 1.5 or newer, 0 before), seconds
// other than -1 or 0 to 1, or resident blocks other than -1 or 1 to kMaxResidentBlocks, is the
// generator's fault: Error(kBackend) naming `source`.
search::BackendEstimates estimates_from(const std::string &source, ProgramEstimate estimate, int64_t beyond_range = 0);

// `answer` for a loop of `range` iterations as estimates_from reads it. Exposed for tests.
std::optional<int64_t> checked_loop_waits(const std::string &source, int64_t answer, int64_t range,
                                          int64_t beyond_range = 0);
// `answer` for the estimate's field `field` in seconds (shared_memory_seconds,
// dependent_launch_seconds) as estimates_from reads it. Exposed for tests.
std::optional<double> checked_seconds(const std::string &source, const char *field, double answer);
// `answer` (whole_product) as estimates_from reads it: -1 (nullopt), 0 or 1.
std::optional<bool> checked_whole_product(const std::string &source, int64_t answer);
// `answer` (max_resident_blocks) as estimates_from reads it: -1, or 1 to kMaxResidentBlocks.
// Exposed for tests.
inline constexpr int64_t kMaxResidentBlocks = 1024;
std::optional<int64_t> checked_resident_blocks(const std::string &source, int64_t answer);

// Whether the profiler measures a candidate's grouped form (runtime::with_operator_groups) too:
// running `kernels` kernels as one program saves at most kernels − 1 launches (the target's launch
// overhead each), so it is measured only where those launches are at least 1 / kGroupingWorth of
// the time the candidate took apart, and where taking them off could make it faster than
// `fastest_seconds`, the fastest correct candidate measured before it (apart or grouped).
// Elsewhere its best case is lost in the noise or cannot change the answer, and each form
// measured costs a compile. Asked first of all the candidate's kernels, then of the launches its
// grouped form saves (launches_saved + 1).
inline constexpr double kGroupingWorth = 20;
bool worth_grouping(size_t kernels, double apart_seconds, double launch_overhead_seconds, double fastest_seconds);
// The operators of `grouped` marked to run with the next kernel.
int64_t launches_saved(const KernelGraph &grouped);

// Who measures on device `device` of `plugin`: its name, version, file (path, size, time) and the
// device's index and name; names the search cache's profiled answers (SearchOptions::measured_by).
std::string measured_by(const runtime::Plugin &plugin, int32_t device);

// Sets options.measure, buildable, measured_by, backend_estimates and its source so that the search runs
// against device `device` of `plugin` (which must outlive the search), checking every measured
// candidate against `reference` (which must outlive it too). On a GPU each timed run starts
// from a flushed L2 (measure.flush_bytes is set to the L2's size).
void profile_on_device(search::SearchOptions &options, const runtime::Plugin &plugin, int32_t device,
                       const KernelGraph &reference, runtime::MeasureOptions measure);

}  // namespace yirage::profiling
