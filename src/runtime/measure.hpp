// Running a compiled graph on a device to check and time it: the measurement behind profiling in
// the search (docs/backends.md, "Profiling in the search"), `yirage run` and `yirage bench`.
//
// Inputs are fresh seeded random values in [-1, 1], rounded to their dtype on the host; the
// reference executor evaluates the reference graph on exactly those rounded values in float64.
// Where the reference leaves its dtype's range on them (a float16 exp of long dot products), the
// range is halved until it does not, at most 6 times (then the overflow note explains).
// Output buffers are poisoned (every byte 0xFF, a NaN in every dtype) before the checked run,
// so an element the kernel never writes fails the check. The check is a relative norm per output,
// ‖got − want‖₂ / ‖want‖₂, against relative_tolerance(dtype); where the reference is NaN the
// kernel must be NaN too, and those elements leave the norm. Where an output misses that
// tolerance, the reference graph is evaluated again as a program that stores each tensor in its
// dtype (reference::evaluate_stored), and the output passes within twice the error that storage
// alone gives it on the same inputs, up to 0.1: a graph whose result rounding moves that much
// (a difference of nearly equal float16 values, then exp) is held to what running it operator by
// operator in its dtype can reach, not refused with its own unfused kernels.
//
// Range checks (docs/verification.md, "Numeric checks near the range limits"): where the
// reference normalizes rows (rms_norm), a candidate is checked again on the same inputs with
// those that reach a normalized operand (through add, sub, neg, mul_scalar, concat and split)
// multiplied by 2^64 and by 2^-76, where they are float32 or bfloat16: rows of up to 1.8e19 and
// 1.3e-23, whose squares leave float32's range. rms_norm's result does not depend on that
// factor, so the reference's output stays in range and a kernel must match it. A factor is left
// out where the reference itself leaves its dtypes' range on those inputs: any tensor beyond the
// largest finite value, or any nonzero tensor whose largest magnitude is below the smallest
// normal number times 2^(significand bits) (it would be stored imprecisely or flushed to zero, as
// the products of two scaled inputs are); exp, matmul and products of scaled inputs overflow or
// underflow there legitimately. float16 inputs are not scaled: the squares of every float16 fit
// float32.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reference/executor.hpp"
#include "runtime/compiled_graph.hpp"

namespace yirage::runtime {

// float32 1e-4, float16 5e-3, bfloat16 4e-2: a few roundings of the output dtype, since
// kernels store intermediates in the graph's dtype and accumulate in float32.
double relative_tolerance(DType dtype);

struct MeasureOptions {
  uint64_t seed = 1;
  int warmup = 2;
  int repeats = 10;
  int reference_threads = 0;  // 0: all cores
  // Conformance checks (conformance/): each output buffer gets this many extra bytes after its
  // tensor, filled with a pattern that must survive the run; and every input buffer is read
  // back after the run and must be unchanged.
  size_t guard_bytes = 0;
  bool check_inputs_unchanged = false;
  // Before each timed run, a kernel writes this many bytes (rounded up to 4 KiB) and reads
  // almost nothing, on the same stream, outside the timed span; 0: none. The search sets the GPU's L2
  // size, so that each run starts with the graph's inputs out of L2 and L2 full of dirty lines
  // (docs/backends.md, "Profiling in the search").
  int64_t flush_bytes = 0;
  // Per reference input, the factor its random values are multiplied by (empty or missing: 1),
  // for checks on inputs of a chosen magnitude (the conformance suite's rows near a dtype's
  // limits). The range halving above applies on top of it.
  std::vector<double> input_scales;
  // The range checks (see above); off, only the inputs as drawn are checked.
  bool range_checks = true;
};

// The relative-norm error of `got` against `want` (see above); INFINITY, with `why` set, when a
// NaN or infinity differs.
double relative_error(const reference::Values &got, const reference::Values &want, std::string &why);

struct Measurement {
  bool correct = false;
  double max_relative_error = -1;  // the worst output's; -1 if never compared
  double median_seconds = -1;      // -1 if not timed (it failed or was wrong)
  double min_seconds = -1;
  double max_seconds = -1;
  int samples = 0;       // timed runs (1 where the checked run's time stands for them)
  std::string error;     // why it failed or was wrong; "" when correct
  int range_checks = 0;  // the range checks that ran (each with its factor), passed or not
};

// Checks graphs equivalent to one reference graph, all on the same inputs: the reference runs
// once, on the first check.
class Measurer {
 public:
  using Deadline = std::chrono::steady_clock::time_point;
  Measurer(const Plugin &plugin, int32_t device, const KernelGraph &reference, const MeasureOptions &options);
  ~Measurer();

  // Compiles `candidate` (same inputs and outputs as the reference), runs it once and checks it,
  // then, when it is correct and `time` is set, times warmup + repeats runs with the plugin's
  // timers. Never throws for a failing candidate: the failure is the Measurement's error.
  // With a `deadline`, warm-up and timed runs stop once it has passed, so that a measurement ends
  // soon after it whatever `repeats` says; past it before the first timed run, the checked run's
  // time on the host clock (a slight overestimate) is the measurement.
  Measurement measure(const KernelGraph &candidate, bool time = true, std::optional<Deadline> deadline = {});
  // The same for an already compiled graph.
  Measurement measure(const CompiledGraph &compiled, bool time = true, std::optional<Deadline> deadline = {});
  // How many times the flush kernel ran (flush_bytes), for tests.
  int64_t flushes() const { return flushes_; }

 private:
  struct Inputs;
  struct Scaled;
  struct Flush;
  void prepare();
  // The range checks' inputs, from the inputs as drawn (values, rounded to their dtypes).
  void prepare_range_checks(const std::vector<reference::Values> &values);
  // Runs `compiled` on each range check's inputs into `out` (poisoned first, guards and inputs
  // checked as the first run's) and compares its outputs: "" when all match, else why not.
  std::string range_check_error(const CompiledGraph &compiled, const std::vector<yirage_backend_buffer *> &out,
                                Measurement &m);
  // The kernel run before each timed run (flush_bytes), or null: built on first use, kept for
  // the Measurer's life. Throws (every time) when it cannot be built.
  const Flush *flush();
  // Where `measured` is the reference graph itself (and its check failed): the note that says
  // which of its tensors leaves its dtype's range on these inputs (the reference executor
  // computes in float64, so such a graph cannot match it on any backend); "" otherwise.
  std::string overflow_note(const KernelGraph &measured) const;

  const Plugin &plugin_;
  int32_t device_;
  const KernelGraph &reference_;
  MeasureOptions options_;
  std::unique_ptr<Inputs> inputs_;
  std::unique_ptr<Flush> flush_;
  std::string flush_error_;  // why it cannot be built
  ErrorCode flush_error_code_ = ErrorCode::kBackend;
  int64_t flushes_ = 0;
};

}  // namespace yirage::runtime
