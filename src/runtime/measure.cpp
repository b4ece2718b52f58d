#include "runtime/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>

#include "runtime/host_tensor.hpp"
#include "serialize/graph_file.hpp"
#include "util/counter_random.hpp"

namespace yirage::runtime {

double relative_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 1e-4;
    case DType::kFloat16: return 5e-3;
    case DType::kBFloat16: return 4e-2;
  }
  return 1e-4;
}

// A range check's inputs: the inputs as drawn, those it scales (by `factor`) in buffers of their own.
struct Measurer::Scaled {
  double factor = 1;
  std::vector<size_t> scaled;               // which inputs
  std::vector<Buffer> buffers;              // per input; null where it is not scaled
  std::vector<std::vector<uint8_t>> bytes;  // per input; empty where it is not scaled
  std::vector<reference::Values> expected;
  std::vector<double> storage_errors;  // per output, once needed (output_error)
};

// The device copies of the inputs and the reference's outputs.
struct Measurer::Inputs {
  std::vector<Buffer> buffers;
  std::vector<std::vector<uint8_t>> bytes;  // what the buffers hold
  std::vector<reference::Values> expected;
  std::vector<double> largest;         // the reference's largest magnitude per tensor (overflow_note)
  double range = 1;                    // the inputs are in [-range, range]
  std::vector<Scaled> scaled;          // the range checks'
  std::vector<double> storage_errors;  // per output, once needed (output_error)
};
// A numeric check's tolerance where storage alone moves the reference (measure.hpp): this many
// times that error, at most kMaxTolerance.
constexpr double kStorageFactor = 2;
constexpr double kMaxTolerance = 0.1;
constexpr int kMaxHalvings = 6;
// The range checks' factors: rows of up to 1.8e19, whose squares overflow float32, and of up to
// 1.3e-23, whose squares underflow it (measure.hpp).
constexpr double kRangeFactors[] = {0x1p64, 0x1p-76};

// y = a + b, a float32 [rows, 1] and b [1, kFlushColumns] broadcast to flush_bytes of output:
// the kernel writes flush_bytes and reads almost nothing, so L2 ends up holding its dirty lines
// alone, as after the memset with which triton.testing.do_bench flushes. A flush that reads as
// much as it writes leaves part of L2 clean, and a kernel streaming weights then skips writing
// those lines back: the search would time weight products faster than the benchmark does and
// rank them wrongly. What a and b hold does not matter.
struct Measurer::Flush {
  std::unique_ptr<CompiledGraph> compiled;
  Buffer a, b, out;
};
constexpr int64_t kFlushColumns = 1024;

namespace {

// A compact host tensor over `bytes`.
DLTensor host_view(std::vector<uint8_t> &bytes, std::vector<int64_t> &shape, DType dtype) {
  DLTensor t{};
  t.data = bytes.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype_to_dlpack(dtype);
  t.shape = shape.data();
  return t;
}

// Output `o` of `g`, read back from `buffer` on the plugin's device, in float64.
reference::Values read_output(const Plugin &plugin, const KernelGraph &g, size_t o, yirage_backend_buffer *buffer) {
  const Tensor &t = g.tensor(g.outputs()[o]);
  std::vector<uint8_t> bytes(tensor_bytes(t));
  plugin.call("buffer_read", plugin.api().buffer_read, buffer, size_t{0}, static_cast<void *>(bytes.data()),
              bytes.size());
  std::vector<int64_t> shape = t.dims;
  return read_host_tensor(host_view(bytes, shape, t.dtype), t.dtype);
}

// Whether a range check scales inputs of `dtype`: float32 and bfloat16 ones.
bool scalable(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kBFloat16;
}

// The inputs of `g` (by position) that the range checks scale: float32 and bfloat16 inputs that
// reach the normalized operand of an rms_norm some output depends on, through operators whose
// result scales with their operands, and whose every use scales with them on its way to a norm
// or an output (sums, products, views, maxima). An input that also feeds exp, a softmax, a root
// or a square is left alone: scaled by 2^64 it would ask another question there, one a 16-bit
// dtype cannot answer (a softmax of scores near 2^64 is one-hot on whichever rounds largest).
std::vector<size_t> norm_inputs(const KernelGraph &g) {
  std::vector<bool> reaches(g.num_tensors(), false), scales_along(g.num_tensors(), true);
  const std::vector<Operator> &ops = g.operators();
  const std::vector<bool> live = live_operators(g);
  for (size_t i = ops.size(); i-- > 0;) {  // consumers come after their producers
    const Operator &op = ops[i];
    if (!live[i] || op.kind == OpKind::kInput) continue;
    const bool norm = op.kind == OpKind::kRmsNorm;
    if (norm) reaches[static_cast<size_t>(op.inputs[0])] = true;
    const bool linear = op.kind == OpKind::kAdd || op.kind == OpKind::kSub || op.kind == OpKind::kNeg ||
                        op.kind == OpKind::kMulScalar || op.kind == OpKind::kConcat || op.kind == OpKind::kSplit;
    const bool homogeneous = linear || norm || op.kind == OpKind::kMatmul || op.kind == OpKind::kMul ||
                             op.kind == OpKind::kDiv || op.kind == OpKind::kReduction ||
                             op.kind == OpKind::kReductionMax || op.kind == OpKind::kRelu ||
                             op.kind == OpKind::kReshape || op.kind == OpKind::kPermute;
    bool outputs_reach = false, outputs_scale = true;
    for (TensorId out : op.outputs) {
      outputs_reach = outputs_reach || reaches[static_cast<size_t>(out)];
      outputs_scale = outputs_scale && scales_along[static_cast<size_t>(out)];
    }
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const auto in = static_cast<size_t>(op.inputs[k]);
      if (linear && outputs_reach) reaches[in] = true;
      // A norm's operand does not scale its result; a divisor scales it the other way.
      const bool scales = (norm && k == 0) || (homogeneous && !(op.kind == OpKind::kDiv && k == 1) && outputs_scale);
      scales_along[in] = scales_along[in] && scales;
    }
  }
  std::vector<size_t> inputs;
  for (size_t k = 0; k < g.inputs().size(); ++k) {
    const auto t = static_cast<size_t>(g.inputs()[k]);
    if (reaches[t] && scales_along[t] && scalable(g.tensor(g.inputs()[k]).dtype)) inputs.push_back(k);
  }
  return inputs;
}

// Whether some tensor of `g` is nonzero but so small in its dtype (its largest magnitude below the
// smallest normal number times 2^(significand bits)) that it cannot be stored to the dtype's
// precision: a range check is unfair there.
bool has_underflow(const KernelGraph &g, const std::vector<double> &largest) {
  for (size_t t = 0; t < g.num_tensors() && t < largest.size(); ++t) {
    const DType dtype = g.tensor(static_cast<TensorId>(t)).dtype;
    const double limit = dtype == DType::kFloat16    ? std::ldexp(1.0, -14 + 11)
                         : dtype == DType::kBFloat16 ? std::ldexp(1.0, -126 + 8)
                                                     : std::ldexp(1.0, -126 + 24);
    if (largest[t] > 0 && largest[t] < limit) return true;
  }
  return false;
}

// "2^64" for a power of two, else the number.
std::string factor_text(double factor) {
  int exponent = 0;
  if (std::frexp(factor, &exponent) == 0.5) return "2^" + std::to_string(exponent - 1);
  char text[32];
  std::snprintf(text, sizeof text, "%g", factor);
  return text;
}

}  // namespace

double relative_error(const reference::Values &got, const reference::Values &want, std::string &why) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      if (!std::isnan(got[i])) {
        why = "element " + std::to_string(i) + " should be NaN";
        return INFINITY;
      }
      continue;
    }
    if (!std::isfinite(got[i]) && got[i] != want[i]) {
      why = "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
      return INFINITY;
    }
    if (std::isinf(want[i])) continue;
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

namespace {

constexpr uint8_t kGuardByte = 0xA5;

// Throws unless the buffer's bytes [offset, offset + expected.size()) equal `expected`.
void expect_bytes(const Plugin &plugin, yirage_backend_buffer *buffer, size_t offset,
                  const std::vector<uint8_t> &expected, const std::string &what) {
  std::vector<uint8_t> got(expected.size());
  plugin.call("buffer_read", plugin.api().buffer_read, buffer, offset, static_cast<void *>(got.data()), got.size());
  const auto mismatch = std::mismatch(got.begin(), got.end(), expected.begin());
  if (mismatch.first != got.end()) {
    throw Error(ErrorCode::kBackend,
                what + ": byte " + std::to_string(offset + (mismatch.first - got.begin())) + " was overwritten");
  }
}

// Per output of `g`, the relative error that storing every tensor in its dtype alone gives on
// these inputs (`bytes`, per input, as the device holds them): reference::evaluate_stored
// against `expected`. Computed once, into `cache`.
const std::vector<double> &storage_errors(std::vector<double> &cache, const KernelGraph &g,
                                          const std::vector<const std::vector<uint8_t> *> &bytes,
                                          const std::vector<reference::Values> &expected, int threads) {
  if (!cache.empty()) return cache;
  std::vector<reference::Values> values;
  for (size_t k = 0; k < bytes.size(); ++k) {
    const DType dtype = g.tensor(g.inputs()[k]).dtype;
    const size_t size = dtype_size(dtype);
    reference::Values v(bytes[k]->size() / size);
    for (size_t e = 0; e < v.size(); ++e) v[e] = load_element(dtype, bytes[k]->data() + e * size);
    values.push_back(std::move(v));
  }
  const std::vector<reference::Values> stored = reference::evaluate_stored(g, values, threads);
  for (size_t o = 0; o < stored.size(); ++o) {
    std::string why;
    cache.push_back(relative_error(stored[o], expected[o], why));
  }
  return cache;
}

// "" where output `o` (`got`, of `t`'s dtype) is within its tolerance of `want`, else why not;
// `worst` keeps the largest error. The tolerance is relative_tolerance(dtype), or where that is
// missed, kStorageFactor times the output's storage error (`storage()`, computed on first use),
// up to kMaxTolerance.
std::string output_error(const Tensor &t, size_t o, const reference::Values &got, const reference::Values &want,
                         double &worst, const std::function<const std::vector<double> &()> &storage) {
  std::string why;
  const double error = relative_error(got, want, why);
  worst = std::max(worst, error);
  const double base = relative_tolerance(t.dtype);
  if (error <= base) return "";
  char text[400];
  const double stored = std::isfinite(error) ? storage().at(o) : 0;
  const double widened = kStorageFactor * stored;
  // No allowance where storage alone stays within the dtype's tolerance, or where it is not
  // finite (the stored graph overflows its dtype: how far a kernel may be then is unknown).
  if (!(widened > base) || !std::isfinite(widened)) {
    std::snprintf(text, sizeof text, "output %zu: relative error %.3g exceeds %.1g (%s)", o, error, base,
                  dtype_name(t.dtype));
  } else if (widened <= kMaxTolerance) {
    if (error <= widened) return "";
    std::snprintf(text, sizeof text,
                  "output %zu: relative error %.3g exceeds %.3g (%s: %g x %.3g, the error that storing the reference "
                  "graph's tensors in %s alone gives on these inputs)",
                  o, error, widened, dtype_name(t.dtype), kStorageFactor, stored, dtype_name(t.dtype));
  } else {
    if (error <= kMaxTolerance) return "";
    std::snprintf(text, sizeof text,
                  "output %zu: relative error %.3g exceeds %.1g (%s; storing the reference graph's tensors in %s "
                  "alone gives an error of %.3g on these inputs: its result is mostly rounding there)",
                  o, error, kMaxTolerance, dtype_name(t.dtype), dtype_name(t.dtype), stored);
  }
  return why.empty() ? text : std::string(text) + ": " + why;
}

}  // namespace

Measurer::Measurer(const Plugin &plugin, int32_t device, const KernelGraph &reference, const MeasureOptions &options)
    : plugin_(plugin), device_(device), reference_(reference), options_(options) {}

Measurer::~Measurer() = default;

void Measurer::prepare() {
  if (inputs_) return;
  auto inputs = std::make_unique<Inputs>();
  // Seeded values in [-range, range], rounded to their dtype: range 1, halved while the reference
  // leaves its dtype's range on them (an attention's exp of long dot products overflows float16
  // on U(-1, 1)), at most kMaxHalvings times; then the overflow note explains the failures.
  std::vector<reference::Values> values;
  for (int halvings = 0;; ++halvings) {
    const double range = std::ldexp(1.0, -halvings);
    values.clear();
    inputs->bytes.clear();
    for (size_t k = 0; k < reference_.inputs().size(); ++k) {
      const Tensor &t = reference_.tensor(reference_.inputs()[k]);
      const double factor = k < options_.input_scales.size() ? options_.input_scales[k] : 1.0;
      const int64_t n = num_elements(t.dims);
      reference::Values v(static_cast<size_t>(n));
      std::vector<uint8_t> bytes(tensor_bytes(t));
      const uint64_t key = random_key(options_.seed, k);
      const size_t size = dtype_size(t.dtype);
      // Each value rounded to the dtype, and read back: exactly what the kernel reads.
      fill_in_chunks(n, options_.reference_threads > 0 ? options_.reference_threads : default_thread_count(),
                     [&](int64_t first, int64_t last) {
                       for (auto e = static_cast<size_t>(first); e < static_cast<size_t>(last); ++e) {
                         const double x = symmetric_unit(counter_random(key, e)) * range * factor;
                         store_element(t.dtype, &bytes[e * size], x);
                         v[e] = load_element(t.dtype, &bytes[e * size]);
                       }
                     });
      values.push_back(std::move(v));
      inputs->bytes.push_back(std::move(bytes));
    }
    inputs->largest.clear();
    inputs->expected = reference::evaluate(reference_, values, options_.reference_threads, &inputs->largest);
    if (halvings == kMaxHalvings || !reference::first_out_of_range(reference_, inputs->largest)) {
      inputs->range = range;
      break;
    }
  }
  const yirage_backend_api &api = plugin_.api();
  for (const std::vector<uint8_t> &bytes : inputs->bytes) {
    Buffer buffer = allocate_buffer(plugin_, device_, bytes.size());
    plugin_.call("buffer_write", api.buffer_write, buffer.get(), size_t{0}, static_cast<const void *>(bytes.data()),
                 bytes.size());
    inputs->buffers.push_back(std::move(buffer));
  }
  inputs_ = std::move(inputs);
  if (options_.range_checks) prepare_range_checks(values);
}

void Measurer::prepare_range_checks(const std::vector<reference::Values> &values) {
  const std::vector<size_t> scaled = norm_inputs(reference_);
  if (scaled.empty()) return;
  for (double factor : kRangeFactors) {
    Scaled check;
    check.factor = factor;
    check.scaled = scaled;
    check.buffers.resize(values.size());
    check.bytes.resize(values.size());
    std::vector<reference::Values> v = values;
    for (size_t k : scaled) {
      const Tensor &t = reference_.tensor(reference_.inputs()[k]);
      for (double &x : v[k]) x *= factor;
      std::vector<uint8_t> bytes(tensor_bytes(t));
      std::vector<int64_t> shape = t.dims;
      const DLTensor view = host_view(bytes, shape, t.dtype);
      write_host_tensor(view, t.dtype, v[k]);
      v[k] = read_host_tensor(view, t.dtype);
      check.bytes[k] = std::move(bytes);
    }
    std::vector<double> largest;
    check.expected = reference::evaluate(reference_, v, options_.reference_threads, &largest);
    if (reference::first_out_of_range(reference_, largest) || has_underflow(reference_, largest)) continue;
    for (size_t k : scaled) {
      check.buffers[k] = allocate_buffer(plugin_, device_, check.bytes[k].size());
      plugin_.call("buffer_write", plugin_.api().buffer_write, check.buffers[k].get(), size_t{0},
                   static_cast<const void *>(check.bytes[k].data()), check.bytes[k].size());
    }
    inputs_->scaled.push_back(std::move(check));
  }
}

const Measurer::Flush *Measurer::flush() {
  if (options_.flush_bytes <= 0) return nullptr;
  if (!flush_ && flush_error_.empty()) {
    try {
      const int64_t rows = (options_.flush_bytes + kFlushColumns * 4 - 1) / (kFlushColumns * 4);
      KernelGraph graph;
      const TensorId a = graph.new_input({rows, 1}, DType::kFloat32);
      const TensorId b = graph.new_input({1, kFlushColumns}, DType::kFloat32);
      graph.mark_output(graph.binary(OpKind::kAdd, a, b));
      auto flush = std::make_unique<Flush>();
      flush->compiled = std::make_unique<CompiledGraph>(plugin_, device_, graph);
      flush->a = allocate_buffer(plugin_, device_, static_cast<size_t>(rows) * 4);
      flush->b = allocate_buffer(plugin_, device_, kFlushColumns * 4);
      flush->out = allocate_buffer(plugin_, device_, static_cast<size_t>(rows * kFlushColumns) * 4);
      flush_ = std::move(flush);
    } catch (const Error &e) {
      flush_error_ = std::string("cache flush: ") + e.what();
      flush_error_code_ = e.code();
    }
  }
  if (!flush_) throw Error(flush_error_code_, flush_error_);
  return flush_.get();
}

std::string Measurer::overflow_note(const KernelGraph &measured) const {
  // The reference's own tensors are the ones checked; a candidate's differ (a µGraph's tiles),
  // but where the reference overflows, a candidate computing the same in the same dtype is
  // likely to, and the note says whose tensor it is.
  const std::optional<reference::OutOfRange> out = reference::first_out_of_range(reference_, inputs_->largest);
  if (!out) return "";
  const auto bytes = [](const KernelGraph &g) { return serialize::graph_to_bytes(g, serialize::GraphFormat::kBinary); };
  const bool itself = bytes(measured) == bytes(reference_);
  const Tensor &t = reference_.tensor(out->tensor);
  const Operator &op = reference_.operators()[out->op];
  std::string operands;
  for (TensorId in : op.inputs) operands += (operands.empty() ? "t" : ", t") + std::to_string(in);
  char text[160];
  std::snprintf(text, sizeof text, " reaches %.3g (%s's largest is %.6g)", out->magnitude, dtype_name(t.dtype),
                out->largest);
  char inputs[64] = "these inputs";
  if (inputs_->range < 1) std::snprintf(inputs, sizeof inputs, "inputs in [-%g, %g]", inputs_->range, inputs_->range);
  const std::string where = std::string(dtype_name(t.dtype)) + " on " + inputs + ": t" + std::to_string(out->tensor) +
                            " = " + op_name(op.kind) + "(" + operands + ")" + text;
  if (!itself) return "; the graph it is checked against overflows " + where;
  return "; the graph itself overflows " + where +
         ", so on any backend it computes infinities there (and NaNs or zeros after them)";
}

std::string Measurer::range_check_error(const CompiledGraph &compiled, const std::vector<yirage_backend_buffer *> &out,
                                        Measurement &m) {
  const KernelGraph &g = compiled.graph();
  const yirage_backend_api &api = plugin_.api();
  for (Scaled &check : inputs_->scaled) {
    ++m.range_checks;
    std::string inputs;
    for (size_t k : check.scaled) inputs += (inputs.empty() ? "" : ", ") + std::to_string(k);
    const std::string what = " on inputs " + inputs + " scaled by " + factor_text(check.factor) +
                             " (rms_norm rows near the limits of float32; docs/verification.md)";
    std::vector<yirage_backend_buffer *> in;
    for (size_t k = 0; k < check.buffers.size(); ++k) {
      in.push_back(check.buffers[k] ? check.buffers[k].get() : inputs_->buffers[k].get());
    }
    for (size_t o = 0; o < out.size(); ++o) {
      const size_t bytes = tensor_bytes(g.tensor(g.outputs()[o]));
      std::vector<uint8_t> poison(bytes, 0xFF);
      poison.resize(bytes + options_.guard_bytes, kGuardByte);
      plugin_.call("buffer_write", api.buffer_write, out[o], size_t{0}, static_cast<const void *>(poison.data()),
                   poison.size());
    }
    compiled.run_buffers(in, out, nullptr);
    compiled.synchronize(nullptr);
    for (size_t o = 0; o < out.size() && options_.guard_bytes > 0; ++o) {
      expect_bytes(plugin_, out[o], tensor_bytes(g.tensor(g.outputs()[o])),
                   std::vector<uint8_t>(options_.guard_bytes, kGuardByte),
                   "output " + std::to_string(o) + "'s guard bytes" + what);
    }
    for (size_t k = 0; k < in.size() && options_.check_inputs_unchanged; ++k) {
      expect_bytes(plugin_, in[k], 0, check.buffers[k] ? check.bytes[k] : inputs_->bytes[k],
                   "input " + std::to_string(k) + what);
    }
    const auto storage = [&]() -> const std::vector<double> & {
      std::vector<const std::vector<uint8_t> *> bytes;
      for (size_t k = 0; k < check.bytes.size(); ++k)
        bytes.push_back(check.buffers[k] ? &check.bytes[k] : &inputs_->bytes[k]);
      return storage_errors(check.storage_errors, reference_, bytes, check.expected, options_.reference_threads);
    };
    for (size_t o = 0; o < out.size(); ++o) {
      const reference::Values got = read_output(plugin_, g, o, out[o]);
      std::string failed =
          output_error(g.tensor(g.outputs()[o]), o, got, check.expected[o], m.max_relative_error, storage);
      if (!failed.empty()) return failed + what;
    }
  }
  return "";
}

Measurement Measurer::measure(const KernelGraph &candidate, bool time, std::optional<Deadline> deadline) {
  try {
    const CompiledGraph compiled(plugin_, device_, candidate);
    return measure(compiled, time, deadline);
  } catch (const Error &e) {
    Measurement m;
    m.error = e.what();
    return m;
  }
}

Measurement Measurer::measure(const CompiledGraph &compiled, bool time, std::optional<Deadline> deadline) {
  Measurement m;
  try {
    prepare();
    const KernelGraph &g = compiled.graph();
    if (g.inputs().size() != reference_.inputs().size() || g.outputs().size() != reference_.outputs().size()) {
      invalid_argument("measure: the graph's inputs and outputs differ from the reference's");
    }
    const yirage_backend_api &api = plugin_.api();
    std::vector<Buffer> outputs;
    std::vector<yirage_backend_buffer *> in, out;
    for (const Buffer &b : inputs_->buffers) in.push_back(b.get());
    for (TensorId id : g.outputs()) {
      const size_t bytes = tensor_bytes(g.tensor(id));
      Buffer buffer = allocate_buffer(plugin_, device_, bytes + options_.guard_bytes);
      std::vector<uint8_t> poison(bytes, 0xFF);
      poison.resize(bytes + options_.guard_bytes, kGuardByte);
      plugin_.call("buffer_write", api.buffer_write, buffer.get(), size_t{0}, static_cast<const void *>(poison.data()),
                   poison.size());
      out.push_back(buffer.get());
      outputs.push_back(std::move(buffer));
    }
    const auto checked_start = std::chrono::steady_clock::now();
    compiled.run_buffers(in, out, nullptr);
    compiled.synchronize(nullptr);
    const double checked_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - checked_start).count();
    for (size_t o = 0; o < out.size() && options_.guard_bytes > 0; ++o) {
      expect_bytes(plugin_, out[o], tensor_bytes(g.tensor(g.outputs()[o])),
                   std::vector<uint8_t>(options_.guard_bytes, kGuardByte),
                   "output " + std::to_string(o) + "'s guard bytes");
    }
    for (size_t i = 0; i < in.size() && options_.check_inputs_unchanged; ++i) {
      expect_bytes(plugin_, in[i], 0, inputs_->bytes[i], "input " + std::to_string(i));
    }
    const auto storage = [&]() -> const std::vector<double> & {
      std::vector<const std::vector<uint8_t> *> bytes;
      for (const std::vector<uint8_t> &b : inputs_->bytes) bytes.push_back(&b);
      return storage_errors(inputs_->storage_errors, reference_, bytes, inputs_->expected, options_.reference_threads);
    };
    // The outputs against the reference: "" or why not; `run` names the run checked.
    const auto check_outputs = [&](const std::string &run) -> std::string {
      for (size_t o = 0; o < out.size(); ++o) {
        const Tensor &t = g.tensor(g.outputs()[o]);
        const reference::Values got = read_output(plugin_, g, o, out[o]);
        if (got.size() != inputs_->expected[o].size()) {
          invalid_argument("measure: output " + std::to_string(o) + " has " + std::to_string(got.size()) +
                           " elements, the reference's " + std::to_string(inputs_->expected[o].size()));
        }
        const std::string failed = output_error(t, o, got, inputs_->expected[o], m.max_relative_error, storage);
        // Any failed check, not only an infinite error: a sum that overflows float16 and then
        // divides gives zeros, a finite error (unfused attention's Σ exp).
        if (!failed.empty()) return run + failed + overflow_note(g);
      }
      return "";
    };
    m.max_relative_error = 0;
    if (std::string failed = check_outputs(""); !failed.empty()) {
      m.error = std::move(failed);
      return m;
    }
    if (std::string failed = range_check_error(compiled, out, m); !failed.empty()) {
      m.error = std::move(failed);
      return m;
    }
    m.correct = true;
    if (!time) return m;
    const auto out_of_time = [&] { return deadline && std::chrono::steady_clock::now() >= *deadline; };
    if (out_of_time()) {
      // No time for timed runs: the checked run's time on the host clock stands for them.
      m.median_seconds = m.min_seconds = m.max_seconds = checked_seconds;
      m.samples = 1;
      return m;
    }
    for (int w = 0; w < options_.warmup && !out_of_time(); ++w) compiled.run_buffers(in, out, nullptr);
    yirage_backend_timer *start_raw = nullptr, *stop_raw = nullptr;
    plugin_.call("timer_create", api.timer_create, plugin_.instance(), device_, &start_raw);
    std::unique_ptr<yirage_backend_timer, void (*)(yirage_backend_timer *)> start(start_raw, api.timer_release);
    plugin_.call("timer_create", api.timer_create, plugin_.instance(), device_, &stop_raw);
    std::unique_ptr<yirage_backend_timer, void (*)(yirage_backend_timer *)> stop(stop_raw, api.timer_release);
    const Flush *cache_flush = flush();
    std::vector<double> seconds;
    for (int r = 0; r < std::max(1, options_.repeats) && (r == 0 || !out_of_time()); ++r) {
      if (cache_flush != nullptr) {  // on the same stream, before the start event
        cache_flush->compiled->run_buffers({cache_flush->a.get(), cache_flush->b.get()}, {cache_flush->out.get()},
                                           nullptr);
        ++flushes_;
      }
      plugin_.call("timer_record", api.timer_record, start.get(), static_cast<void *>(nullptr));
      compiled.run_buffers(in, out, nullptr);
      plugin_.call("timer_record", api.timer_record, stop.get(), static_cast<void *>(nullptr));
      compiled.synchronize(nullptr);
      double s = 0;
      plugin_.call("timer_elapsed", api.timer_elapsed, start.get(), stop.get(), &s);
      seconds.push_back(s);
    }
    if (compiled.recordings() > 0) {
      // The timed runs replayed a recording of the kernels (CompiledGraph::run_buffers): one
      // more, on poisoned outputs, is checked like the first.
      for (size_t o = 0; o < out.size(); ++o) {
        const std::vector<uint8_t> poison(tensor_bytes(g.tensor(g.outputs()[o])), 0xFF);
        plugin_.call("buffer_write", api.buffer_write, out[o], size_t{0}, static_cast<const void *>(poison.data()),
                     poison.size());
      }
      compiled.run_buffers(in, out, nullptr);
      compiled.synchronize(nullptr);
      if (std::string failed = check_outputs("a replay of the recorded kernels: "); !failed.empty()) {
        throw Error(ErrorCode::kBackend, failed);
      }
    }
    std::sort(seconds.begin(), seconds.end());
    m.median_seconds = seconds[seconds.size() / 2];
    m.min_seconds = seconds.front();
    m.max_seconds = seconds.back();
    m.samples = static_cast<int>(seconds.size());
  } catch (const Error &e) {
    m.correct = false;
    m.median_seconds = m.min_seconds = m.max_seconds = -1;
    m.samples = 0;
    m.error = e.what();
  }
  return m;
}

}  // namespace yirage::runtime
