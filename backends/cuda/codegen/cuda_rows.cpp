#include "cuda/codegen/cuda_rows.hpp"

#include <functional>
#include <string>

#include "codegen/lower_operator.hpp"
#include "cuda/codegen/cuda_loops.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {
namespace {

// A thread's elements of a tile come in chunks of 8 consecutive ones (one 16-byte load of a
// 16-bit tensor, two of a float32 one), chunk q of the tile at thread q mod threads.
constexpr int64_t kChunk = 8;
// Chunks per thread a tile may take: the loops over them unroll fully, so that the chunks are
// registers (a partly unrolled loop would index the arrays at run time, from local memory).
constexpr int64_t kMaxChunksPerThread = 8;
// The input tiles' values a thread holds at once, all loaded before any is used (of a sum over
// the loop, every iteration's: a split loop's sum of 16 parts of 8 floats and a row statistic).
constexpr int64_t kMaxLoadedFloats = 144;
// A warp's 32 chunks, 256 elements, must lie in one row for its partial sum to be that row's.
constexpr int64_t kWarpElements = 32 * kChunk;

enum class Kind { kFull, kRowStat };

class RowsEmitter {
 public:
  RowsEmitter(Printer &p, const BlockGraph &bg, int64_t threads, const std::vector<DType> &output_dtypes)
      : p_(p), bg_(bg), threads_(threads), output_dtypes_(output_dtypes) {}

  bool plan() {
    const auto &ops = bg_.operators();
    const std::vector<int> savers = bg_.operator_indices(OpKind::kOutputSaver);
    if (savers.empty()) return false;
    // The tiles are the outputs' (those of a sum's inputs are row statistics, [..., 1], or those).
    full_ = bg_.tensor(ops[static_cast<size_t>(savers[0])].inputs[0]).dims;
    if (full_.empty() || full_.back() % kChunk != 0) return false;
    stat_ = full_;
    stat_.back() = 1;
    range_ = bg_.config().forloop_range;
    chunks_ = num_elements(full_) / kChunk;
    per_thread_ = per_thread(groups(), threads_);
    if (per_thread_ > kMaxChunksPerThread) return false;
    int64_t loaded = 0;
    for (const Operator &op : ops) {
      if (!supported(op)) return false;
      if (op.kind == OpKind::kInputIterator) {
        loaded += per_thread_ * (kind(op.outputs[0]) == Kind::kFull ? kChunk : 1) * range_;
        inputs_.push_back(&op);
      }
      summing_ = summing_ || op.kind == OpKind::kAccumSum;
      reductions_ += op.kind == OpKind::kRmsNorm || op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax;
    }
    if (loaded > kMaxLoadedFloats || (reductions_ > 0 && full_.back() % kWarpElements != 0)) return false;
    if (!summing_) {
      if (range_ != 1) return false;
      for (const Operator *in : inputs_) {
        if (kind(in->outputs[0]) != Kind::kFull) return false;
      }
    } else if (!bg_.loop_only_sums_inputs()) {
      return false;
    }
    return true;
  }

  int64_t emit(const BodyPlacement &placement) {
    p_.line("// Rows in registers (cuda_rows.cpp): " + std::to_string(per_thread_) + " chunk(s) of " +
            std::to_string(kChunk) + " elements per thread and tile.");
    emit_block_prologue(p_, placement, false);
    p_.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
    p_.line("(void)lane; (void)warp;");
    for (const Operator &op : bg_.operators()) {
      for (TensorId t : op.outputs) {
        p_.line("float " + value(t) + "[" + std::to_string(per_thread_) + "]" +
                (kind(t) == Kind::kFull ? "[" + std::to_string(kChunk) + "]" : "") + ";");
      }
    }
    if (summing_) {
      sum_inputs();
    } else {
      load_inputs();
    }
    size_t output = 0;
    for (const Operator &op : bg_.operators()) {
      if (op.kind == OpKind::kInputIterator || op.kind == OpKind::kAccumSum) continue;
      if (op.kind == OpKind::kOutputSaver) {
        store(op, output++);
      } else if (op.kind == OpKind::kRmsNorm || op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax) {
        row_reduction(op);
      } else {
        elementwise(op);
      }
    }
    return slot_bytes();
  }

 private:
  bool supported(const Operator &op) const {
    auto is = [&](TensorId t, Kind k) { return classify(t) == k; };
    switch (op.kind) {
      case OpKind::kInputIterator:
        return (is(op.outputs[0], Kind::kFull) && chunk_aligned(op)) || is(op.outputs[0], Kind::kRowStat);
      case OpKind::kAccumSum: return classify(op.inputs[0]) && classify(op.inputs[0]) == classify(op.outputs[0]);
      case OpKind::kOutputSaver: return is(op.inputs[0], Kind::kFull) && chunk_aligned(op);
      case OpKind::kRmsNorm:
        return !op.attributes.has_weight && op.attributes.sizes.size() == 1 && is(op.inputs[0], Kind::kFull) &&
               is(op.outputs[0], Kind::kFull);
      case OpKind::kReduction:
      case OpKind::kReductionMax:
        return static_cast<size_t>(op.attributes.dim) + 1 == full_.size() && is(op.inputs[0], Kind::kFull) &&
               is(op.outputs[0], Kind::kRowStat);
      default: break;
    }
    if (is_unary(op.kind)) {
      const auto in = classify(op.inputs[0]);
      return in && in == classify(op.outputs[0]);
    }
    if (!is_binary(op.kind)) return false;
    const auto a = classify(op.inputs[0]), b = classify(op.inputs[1]), o = classify(op.outputs[0]);
    if (!a || !b || !o) return false;
    return *o == (*a == Kind::kFull || *b == Kind::kFull ? Kind::kFull : Kind::kRowStat);
  }
  std::optional<Kind> classify(TensorId t) const {
    const Dims &dims = bg_.tensor(t).dims;
    if (dims == full_) return Kind::kFull;
    if (dims == stat_) return Kind::kRowStat;
    return std::nullopt;
  }
  Kind kind(TensorId t) const { return classify(t).value_or(Kind::kFull); }
  static TensorId tile_of(const Operator &op) {
    return op.kind == OpKind::kInputIterator ? op.outputs[0] : op.inputs[0];
  }
  // Chunks start at multiples of 8 elements of the kernel-level tensor, whatever the block.
  bool chunk_aligned(const Operator &op) const {
    return op.attributes.sizes.back() % kChunk == 0 && tile_base_granule(bg_, op, full_) % kChunk == 0;
  }

  Dims groups() const {
    Dims g = full_;
    g.back() /= kChunk;
    return g;
  }
  int64_t warp_chunks() const { return chunks_ / 32; }
  // This thread's chunk u (an expression of u).
  std::string chunk(const std::string &u) const {
    return "(static_cast<int>(threadIdx.x) + " + u + " * " + std::to_string(threads_) + ")";
  }
  std::string value(TensorId t) const { return "v" + std::to_string(t); }
  std::string element(TensorId t) const { return value(t) + (kind(t) == Kind::kFull ? "[u][j]" : "[u]"); }

  // body() for each of the thread's chunks u, all unrolled; whole warps skip a missing chunk.
  void each_chunk(const std::function<void()> &body) {
    p_.line("#pragma unroll");
    p_.open("for (int u = 0; u < " + std::to_string(per_thread_) + "; ++u)");
    if (chunks_ % threads_ != 0) {
      p_.line("if (" + chunk("u") + " >= " + std::to_string(chunks_) + ") continue;");
    }
    body();
    p_.close();
  }
  void each_element(const std::string &statement) {
    p_.line("#pragma unroll");
    p_.line("for (int j = 0; j < " + std::to_string(kChunk) + "; ++j) " + statement);
  }

  // A chunk's place in the tensor: Σ tile coordinates × the tensor's strides, the last dim in
  // chunks (a row statistic's chunk is its row's one element); body(offset).
  void each_chunk_of_tensor(const Operator &op, const std::function<void(const std::string &)> &body) {
    Dims gg = row_major_strides(op.attributes.sizes);
    gg.back() = kind(tile_of(op)) == Kind::kRowStat ? 0 : kChunk;
    shared_loop(p_, block_wide(threads_), groups(), "t",
                [&](const std::vector<std::string> &v) { body(index_expr(v, gg)); });
  }

  int64_t slot_bytes() const { return reductions_ > 0 ? 2 * warp_chunks() * 4 : 0; }
  std::string input_name(size_t i) const { return "in" + std::to_string(i); }
  int64_t input_group(size_t i) const { return group_elements(inputs_[i]->attributes.dtype); }

  // Every input's chunks, all loads issued before any value is converted so that their latencies
  // overlap: by 16-byte loads into registers where every input is 16-byte aligned (checked at run
  // time: a caller's tensor may start anywhere), else element by element. Not by the TMA unit
  // into shared memory: after an L2 flush that leaves dirty lines, as timing harnesses do, its
  // bulk copies were slower on sm_90 than these loads.
  void load_inputs() {
    p_.line("const bool inputs_16 = " + vector_inputs_aligned() + ";");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      p_.line("const auto *src" + std::to_string(i) + " = " + input_name(i) + " + " +
              tile_base_text(bg_, *inputs_[i], full_, "0") + ";");
    }
    p_.open("if (inputs_16)");
    vector_loads();
    p_.close();
    p_.open("else");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const std::string v = value(inputs_[i]->outputs[0]), src = "src" + std::to_string(i);
      each_chunk_of_tensor(*inputs_[i], [&](const std::string &at) {
        each_element(v + "[u][j] = yr_ld(" + src + " + " + at + " + j);");
      });
    }
    p_.close();
  }

  // Σ over the loop's iterations of every input tile (a split loop's sum of parts): the loads of
  // all iterations are issued before any value is added up, so that their latencies overlap
  // (the generic code's shared-memory pipeline waits at a barrier per iteration, which grows with
  // the parts). A row statistic is one element per chunk.
  void sum_inputs() {
    const std::string F = std::to_string(range_), n = std::to_string(per_thread_);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      each_chunk([&] {
        if (stat(i)) {
          p_.line(sum_of(i) + "[u] = 0.0f;");
        } else {
          each_element(sum_of(i) + "[u][j] = 0.0f;");
        }
      });
    }
    p_.open("if (" + vector_inputs_aligned() + ")");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const std::string raw = "raw" + std::to_string(i);
      p_.line(stat(i) ? "float " + raw + "[" + F + "][" + n + "];"
                      : "uint4 " + raw + "[" + F + "][" + n + "][" + std::to_string(kChunk / input_group(i)) + "];");
    }
    each_iteration([&] {
      for (size_t i = 0; i < inputs_.size(); ++i) {
        const std::string raw = "raw" + std::to_string(i), src = "src" + std::to_string(i);
        each_chunk_of_tensor(*inputs_[i], [&](const std::string &at) {
          if (stat(i)) {
            p_.line(raw + "[it][u] = yr_ld(" + src + " + " + at + ");");
            return;
          }
          for (int64_t k = 0; k < kChunk; k += input_group(i)) {
            p_.line(raw + "[it][u][" + std::to_string(k / input_group(i)) + "] = yr_stream16(" + src + " + " + at +
                    " + " + std::to_string(k) + ");");
          }
        });
      }
    });
    p_.line("#pragma unroll");
    p_.open("for (int it = 0; it < " + F + "; ++it)");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const std::string raw = "raw" + std::to_string(i), sum = sum_of(i);
      each_chunk([&] {
        if (stat(i)) {
          p_.line(sum + "[u] += " + raw + "[it][u];");
          return;
        }
        const int64_t g = input_group(i);
        for (int64_t k = 0; k < kChunk; k += g) {
          const std::string f = "f" + std::to_string(k), K = std::to_string(k);
          p_.line("float " + f + "[" + std::to_string(g) + "];");
          p_.line("yr_cvt16(" + input_name(i) + ", " + raw + "[it][u][" + std::to_string(k / g) + "], " + f + ");");
          p_.line("#pragma unroll");
          p_.line("for (int j = 0; j < " + std::to_string(g) + "; ++j) " + sum + "[u][" + K + " + j] += " + f + "[j];");
        }
      });
    }
    p_.close();
    p_.close();
    p_.open("else");
    each_iteration([&] {
      for (size_t i = 0; i < inputs_.size(); ++i) {
        const std::string src = "src" + std::to_string(i), sum = sum_of(i);
        each_chunk_of_tensor(*inputs_[i], [&](const std::string &at) {
          if (stat(i)) {
            p_.line(sum + "[u] += yr_ld(" + src + " + " + at + ");");
          } else {
            each_element(sum + "[u][j] += yr_ld(" + src + " + " + at + " + j);");
          }
        });
      }
    });
    p_.close();
  }
  // Whether every input read 16 bytes at a time (all but row statistics) is 16-byte aligned, a
  // run-time test: a caller's tensor may start anywhere.
  std::string vector_inputs_aligned() const {
    std::string any_bits;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (stat(i)) continue;
      any_bits +=
          (any_bits.empty() ? "" : " | ") + std::string("reinterpret_cast<unsigned long long>(") + input_name(i) + ")";
    }
    return any_bits.empty() ? "true" : "((" + any_bits + ") & 15) == 0";
  }
  // body() inside the unrolled loop over iterations it, with src<i> at input i's tile.
  void each_iteration(const std::function<void()> &body) {
    p_.line("#pragma unroll");
    p_.open("for (int it = 0; it < " + std::to_string(range_) + "; ++it)");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      p_.line("const auto *src" + std::to_string(i) + " = " + input_name(i) + " + " +
              tile_base_text(bg_, *inputs_[i], bg_.tensor(inputs_[i]->outputs[0]).dims, "it") + ";");
    }
    body();
    p_.close();
  }
  bool stat(size_t i) const { return kind(inputs_[i]->outputs[0]) == Kind::kRowStat; }
  // The values of the accumulator that sums input i.
  std::string sum_of(size_t i) const {
    const TensorId in = inputs_[i]->outputs[0];
    for (const Operator &op : bg_.operators()) {
      if (op.kind == OpKind::kAccumSum && op.inputs[0] == in) return value(op.outputs[0]);
    }
    throw Error(ErrorCode::kInternal, "cuda codegen: input " + std::to_string(i) + " of a sum feeds no accumulator");
  }

  void vector_loads() {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const int64_t g = input_group(i);
      const std::string raw = "raw" + std::to_string(i), src = "src" + std::to_string(i);
      p_.line("uint4 " + raw + "[" + std::to_string(per_thread_) + "][" + std::to_string(kChunk / g) + "];");
      each_chunk_of_tensor(*inputs_[i], [&](const std::string &at) {
        for (int64_t k = 0; k < kChunk; k += g) {
          p_.line(raw + "[u][" + std::to_string(k / g) + "] = yr_stream16(" + src + " + " + at + " + " +
                  std::to_string(k) + ");");
        }
      });
    }
    // Then each chunk's 16-byte groups converted to the input's floats.
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const int64_t g = input_group(i);
      const std::string raw = "raw" + std::to_string(i), v = value(inputs_[i]->outputs[0]);
      each_chunk([&] {
        for (int64_t k = 0; k < kChunk; k += g) {
          p_.line("yr_cvt16(src" + std::to_string(i) + ", " + raw + "[u][" + std::to_string(k / g) + "], " + v +
                  "[u] + " + std::to_string(k) + ");");
        }
      });
    }
  }

  void store(const Operator &op, size_t output) {
    const std::string v = value(op.inputs[0]), dst = "out" + std::to_string(output);
    const int64_t g = group_elements(output_dtypes_[output]);
    p_.open("");
    p_.line("auto *dst = " + dst + " + " + tile_base_text(bg_, op, full_, "0") + ";");
    p_.open("if ((reinterpret_cast<unsigned long long>(" + dst + ") & 15) == 0)");
    each_chunk_of_tensor(op, [&](const std::string &at) {
      for (int64_t k = 0; k < kChunk; k += g) {
        const std::string kk = std::to_string(k);
        p_.line("*reinterpret_cast<uint4 *>(dst + " + at + " + " + kk + ") = yr_pack16(dst, " + v + "[u] + " + kk +
                ");");
      }
    });
    p_.close();
    p_.open("else");
    each_chunk_of_tensor(op,
                         [&](const std::string &at) { each_element("yr_st(dst + " + at + " + j, " + v + "[u][j]);"); });
    p_.close();
    p_.close();
  }

  void elementwise(const Operator &op) {
    std::string expr;
    if (is_unary(op.kind)) {
      expr = unary_expr(op.kind, op.attributes, element(op.inputs[0]));
    } else {
      expr = binary_expr(op.kind, element(op.inputs[0]), element(op.inputs[1]));
    }
    const std::string statement = element(op.outputs[0]) + " = " + expr + ";";
    each_chunk([&] {
      if (kind(op.outputs[0]) == Kind::kFull) {
        each_element(statement);
      } else {
        p_.line(statement);
      }
    });
  }

  // Chunks of a thread that lie in one row, consecutive in u: with R = C / 8 chunks per row a
  // multiple of the threads, chunk u of every thread lies in row u / (R / threads); otherwise a
  // thread's chunks are taken one by one.
  int64_t row_group() const {
    const int64_t row_chunks = full_.back() / kChunk;
    return row_chunks % threads_ == 0 ? row_chunks / threads_ : 1;
  }

  // Σ (or max) along each row, or rms_norm: each thread adds up its chunks of a row, each warp
  // those of its lanes with shuffles into a slot per row and warp; after a barrier each thread
  // adds up its rows' slots. The slots alternate between two arrays: a thread still reading the
  // one of the previous reduction has not passed the barrier that the writers of the next passed.
  // Where an rms_norm's row has a mean square out of float32's range (rms_mean_in_range: a row of
  // 1e19s or 1e-23s) the block, all of it since the choice must be the same in every thread,
  // reduces again: each row's largest magnitude, then its squares scaled by it (rms_scale). Where
  // every thread has chunks in every row (groups are rows) each finds the same answer; else
  // __syncthreads_or gathers it, a barrier more for ordinary rows.
  void row_reduction(const Operator &op) {
    const bool is_max = op.kind == OpKind::kReductionMax, squares = op.kind == OpKind::kRmsNorm;
    const double eps = op.attributes.eps;
    const int64_t cols = full_.back();
    const std::string xj = value(op.inputs[0]) + "[u][j]", out = value(op.outputs[0]) + "[u][j]";
    p_.open("");
    if (!squares) {
      reduce("total", xj, is_max);
      each_group([&] { each_chunk_of_group([&] { p_.line(value(op.outputs[0]) + "[u] = total[g];"); }); });
      p_.close();
      return;
    }
    reduce("total", xj + " * " + xj, false);
    p_.line("bool out_of_range = false;");
    each_group([&] {
      p_.line("const float mean = " + c_text(mean_square(var("total[g]"), eps, cols)) + ";");
      p_.line("out_of_range = out_of_range || !(" + c_text(rms_mean_in_range(var("mean"))) + ");");
    });
    p_.open(row_group() > 1 ? "if (out_of_range)" : "if (__syncthreads_or(out_of_range))");
    reduce("peak", "fabsf(" + xj + ")", true);
    reduce("total", "(" + xj + " * scale) * (" + xj + " * scale)", false, [&] { p_.line(rms_scale("peak[g]", eps)); });
    each_group([&] {
      p_.line(rms_scale("peak[g]", eps));
      p_.line(rms_inverse("total[g]", cols, eps, "scale"));
      each_chunk_of_group([&] { each_element(out + " = " + xj + " * scale * inv;"); });
    });
    p_.close();
    p_.open("else");
    each_group([&] {
      p_.line("const float inv = " + c_text(call("yr_rsqrt", {mean_square(var("total[g]"), eps, cols)})) + ";");
      each_chunk_of_group([&] { each_element(out + " = " + xj + " * inv;"); });
    });
    p_.close();
    p_.close();
  }

  // total / cols + eps.
  static Expr mean_square(const Expr &total, double eps, int64_t cols) {
    const Expr mean = total / float_const(static_cast<double>(cols));
    return eps != 0 ? mean + float_const(eps) : mean;
  }
  // Group g's chunks u; whole warps skip a missing chunk (only where groups are single chunks).
  void each_group(const std::function<void()> &body) {
    p_.line("#pragma unroll");
    p_.open("for (int g = 0; g < " + std::to_string(per_thread_ / row_group()) + "; ++g)");
    if (chunks_ % threads_ != 0) p_.line("if (" + chunk("g") + " >= " + std::to_string(chunks_) + ") continue;");
    body();
    p_.close();
  }
  void each_chunk_of_group(const std::function<void()> &body) {
    const std::string G = std::to_string(row_group());
    p_.line("#pragma unroll");
    p_.open("for (int u = g * " + G + "; u < g * " + G + " + " + G + "; ++u)");
    body();
    p_.close();
  }
  // float `into`[groups]: Σ (or max) of `element` over each group's row, in every thread of the
  // row, through the next slot array and a barrier; `before`, where given, first in each group.
  void reduce(const std::string &into, const std::string &element, bool max,
              const std::function<void()> &before = nullptr) {
    const std::string slots = "(smem + " + std::to_string(next_slots_ * warp_chunks()) + ")";
    next_slots_ ^= 1;
    const int64_t group = row_group(), warps = threads_ / 32;
    const std::string init = reduce_identity(max), at = into + "[g]";
    p_.line("float " + into + "[" + std::to_string(per_thread_ / group) + "];");
    each_group([&] {
      if (before) before();
      p_.line(at + " = " + init + ";");
      each_chunk_of_group([&] { each_element(reduce_into(at, element, max)); });
      p_.line(warp_reduce(at, max));
      p_.line("if (lane == 0) " + slots + "[g * " + std::to_string(warps) + " + warp] = " + at + ";");
    });
    p_.line("__syncthreads();");
    each_group([&] {
      // A row's slots: one per warp where groups are rows, else one per warp chunk of the row.
      const int64_t row_slots = group > 1 ? warps : full_.back() / kWarpElements;
      const std::string first = group > 1 ? "g * " + std::to_string(warps)
                                          : "(" + chunk("g") + " / " + std::to_string(full_.back() / kChunk) + ") * " +
                                                std::to_string(row_slots);
      p_.line("const float *row = " + slots + " + " + first + ";");
      p_.line(at + " = " + init + ";");
      p_.line("for (int k = 0; k < " + std::to_string(row_slots) + "; ++k) " + reduce_into(at, "row[k]", max));
    });
  }

  Printer &p_;
  const BlockGraph &bg_;
  const int64_t threads_;
  const std::vector<DType> &output_dtypes_;
  Dims full_, stat_;
  int64_t chunks_ = 0, per_thread_ = 0, reductions_ = 0, range_ = 1;
  bool summing_ = false;  // accumulators over the loop: inputs_only_summed, sum_inputs
  int next_slots_ = 0;
  std::vector<const Operator *> inputs_;  // the input iterators, in order (in0, in1, …)
};

}  // namespace

std::optional<int64_t> emit_rows_in_registers(Printer &p, const BlockGraph &bg, int64_t threads,
                                              const std::vector<DType> &output_dtypes, const BodyPlacement &placement) {
  RowsEmitter emitter(p, bg, threads, output_dtypes);
  if (!emitter.plan()) return std::nullopt;
  return emitter.emit(placement);
}

}  // namespace yirage::codegen::cuda
