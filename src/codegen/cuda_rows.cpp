#include "codegen/cuda_rows.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "codegen/cuda_compute_emitter.hpp"

namespace yirage::codegen::cuda {
namespace {

// A thread's elements of a tile come in chunks of 8 consecutive ones (one 16-byte load of a
// 16-bit tensor, two of a float32 one), chunk q of the tile at thread q mod threads.
constexpr int64_t kChunk = 8;
// Chunks per thread a tile may take: the loops over them unroll fully, so that the chunks are
// registers (a partly unrolled loop would index the arrays at run time, from local memory).
constexpr int64_t kMaxChunksPerThread = 8;
// The input tiles' values a thread holds at once, all loaded before any is used.
constexpr int64_t kMaxLoadedFloats = 128;
// A warp's 32 chunks, 256 elements, must lie in one row for its partial sum to be that row's.
constexpr int64_t kWarpElements = 32 * kChunk;

enum class Kind { kFull, kRowStat };

class RowsEmitter {
 public:
  RowsEmitter(Printer &p, const BlockGraph &bg, int64_t threads, const std::vector<DType> &output_dtypes)
      : p_(p), bg_(bg), threads_(threads), output_dtypes_(output_dtypes) {}

  bool plan() {
    const auto &ops = bg_.operators();
    if (bg_.config().forloop_range != 1 || ops.empty() || ops[0].kind != OpKind::kInputIterator) return false;
    full_ = bg_.tensor(ops[0].outputs[0]).dims;
    if (full_.empty() || full_.back() % kWarpElements != 0) return false;
    stat_ = full_;
    stat_.back() = 1;
    chunks_ = num_elements(full_) / kChunk;
    per_thread_ = per_thread(groups(), threads_);
    if (per_thread_ > kMaxChunksPerThread) return false;
    int64_t loaded = 0;
    for (const Operator &op : ops) {
      if (!supported(op)) return false;
      if (op.kind == OpKind::kInputIterator) loaded += per_thread_ * kChunk;
      reductions_ += op.kind == OpKind::kRmsNorm || op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax;
    }
    return loaded <= kMaxLoadedFloats;
  }

  int64_t emit() {
    p_.line("// Rows in registers (cuda_rows.cpp): " + std::to_string(per_thread_) + " chunk(s) of " +
            std::to_string(kChunk) + " elements per thread and tile.");
    p_.line("extern __shared__ float smem[];");
    p_.line("const int64_t bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;");
    p_.line("(void)bx; (void)by; (void)bz;");
    p_.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
    p_.line("(void)lane; (void)warp;");
    for (const Operator &op : bg_.operators()) {
      for (TensorId t : op.outputs) {
        p_.line("float " + value(t) + "[" + std::to_string(per_thread_) + "]" +
                (kind(t) == Kind::kFull ? "[" + std::to_string(kChunk) + "]" : "") + ";");
      }
    }
    size_t input = 0, output = 0;
    // Every input's loads first: their latencies overlap.
    for (const Operator &op : bg_.operators()) {
      if (op.kind == OpKind::kInputIterator) load(op, input++);
    }
    for (const Operator &op : bg_.operators()) {
      if (op.kind == OpKind::kInputIterator) continue;
      if (op.kind == OpKind::kOutputSaver) {
        store(op, output++);
      } else if (op.kind == OpKind::kRmsNorm || op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax) {
        row_reduction(op);
      } else {
        elementwise(op);
      }
    }
    return reductions_ > 0 ? 2 * warp_chunks() * 4 : 0;
  }

 private:
  bool supported(const Operator &op) const {
    auto is = [&](TensorId t, Kind k) { return classify(t) == k; };
    switch (op.kind) {
      case OpKind::kInputIterator:
        return is(op.outputs[0], Kind::kFull) && chunk_aligned(op);
      case OpKind::kOutputSaver:
        return is(op.inputs[0], Kind::kFull) && chunk_aligned(op);
      case OpKind::kRmsNorm:
        return !op.attributes.has_weight && op.attributes.sizes.size() == 1 && is(op.inputs[0], Kind::kFull) &&
               is(op.outputs[0], Kind::kFull);
      case OpKind::kReduction:
      case OpKind::kReductionMax:
        return static_cast<size_t>(op.attributes.dim) + 1 == full_.size() && is(op.inputs[0], Kind::kFull) &&
               is(op.outputs[0], Kind::kRowStat);
      default:
        break;
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
  // chunks; body(offset).
  void each_chunk_of_tensor(const Operator &op, const std::function<void(const std::string &)> &body) {
    Dims gg = row_major_strides(op.attributes.sizes);
    gg.back() = kChunk;
    shared_loop(p_, block_wide(threads_), groups(), "t", [&](const std::vector<std::string> &v) {
      body(index_expr(v, gg));
    });
  }

  void load(const Operator &op, size_t input) {
    const std::string v = value(op.outputs[0]);
    move_chunks(op, "in" + std::to_string(input), op.attributes.dtype, "const auto *src",
                [&](const std::string &at, const std::string &k) {
                  return "yr_cvt16(src, yr_stream16(src + " + at + " + " + k + "), " + v + "[u] + " + k + ");";
                },
                [&](const std::string &at) { return v + "[u][j] = yr_ld(src + " + at + " + j);"; });
  }

  void store(const Operator &op, size_t output) {
    const std::string v = value(op.inputs[0]);
    move_chunks(op, "out" + std::to_string(output), output_dtypes_[output], "auto *dst",
                [&](const std::string &at, const std::string &k) {
                  return "*reinterpret_cast<uint4 *>(dst + " + at + " + " + k + ") = yr_pack16(dst, " + v + "[u] + " +
                         k + ");";
                },
                [&](const std::string &at) { return "yr_st(dst + " + at + " + j, " + v + "[u][j]);"; });
  }

  // The thread's chunks of `tensor` (elements of `dtype`), through `pointer` (declared as the
  // tile's start): group(at, k) per 16 bytes at chunk offset at + k where the tensor is 16-byte
  // aligned, element(at) per element j of the chunk where it is not.
  void move_chunks(const Operator &op, const std::string &tensor, DType dtype, const std::string &pointer,
                   const std::function<std::string(const std::string &, const std::string &)> &group,
                   const std::function<std::string(const std::string &)> &element) {
    const int64_t elements_per_group = 16 / static_cast<int64_t>(dtype_size(dtype));
    p_.open("");
    p_.line(pointer + " = " + tensor + " + " + tile_base(bg_, op, full_, "0") + ";");
    p_.open("if ((reinterpret_cast<unsigned long long>(" + tensor + ") & 15) == 0)");
    each_chunk_of_tensor(op, [&](const std::string &at) {
      for (int64_t k = 0; k < kChunk; k += elements_per_group) p_.line(group(at, std::to_string(k)));
    });
    p_.close();
    p_.open("else");
    each_chunk_of_tensor(op, [&](const std::string &at) { each_element(element(at)); });
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

  // Σ (or max) along each row, or rms_norm: each warp adds up its chunks (32 of them, one row's)
  // with shuffles and leaves the sum in a slot per warp chunk; after a barrier each thread adds
  // up its rows' slots. The slots alternate between two arrays: a thread still reading the one
  // of the previous reduction has not passed the barrier that the writers of the next passed.
  void row_reduction(const Operator &op) {
    const bool is_max = op.kind == OpKind::kReductionMax, squares = op.kind == OpKind::kRmsNorm;
    const TensorId x = op.inputs[0];
    const std::string slots = "(smem + " + std::to_string(next_slots_ * warp_chunks()) + ")";
    next_slots_ ^= 1;
    const std::string row_slots = std::to_string(full_.back() / kWarpElements);
    const std::string init = reduce_identity(is_max);
    auto accumulate = [&](const std::string &into, const std::string &v) { return reduce_into(into, v, is_max); };
    const std::string xj = value(x) + "[u][j]";
    p_.open("");
    p_.line("float total[" + std::to_string(per_thread_) + "];");
    each_chunk([&] {
      p_.line("total[u] = " + init + ";");
      each_element(accumulate("total[u]", squares ? xj + " * " + xj : xj));
      p_.line(warp_reduce("total[u]", is_max));
      p_.line("if (lane == 0) " + slots + "[warp + u * " + std::to_string(threads_ / 32) + "] = total[u];");
    });
    p_.line("__syncthreads();");
    each_chunk([&] {
      const std::string row = "(" + chunk("u") + " / " + std::to_string(full_.back() / kChunk) + ")";
      p_.line("const float *row = " + slots + " + " + row + " * " + row_slots + ";");
      p_.line("total[u] = " + init + ";");
      p_.line("for (int k = 0; k < " + row_slots + "; ++k) " + accumulate("total[u]", "row[k]"));
      if (squares) {
        p_.line(rms_inverse("total[u]", full_.back(), op.attributes.eps));
        each_element(value(op.outputs[0]) + "[u][j] = " + xj + " * inv;");
      } else {
        p_.line(value(op.outputs[0]) + "[u] = total[u];");
      }
    });
    p_.close();
  }

  Printer &p_;
  const BlockGraph &bg_;
  const int64_t threads_;
  const std::vector<DType> &output_dtypes_;
  Dims full_, stat_;
  int64_t chunks_ = 0, per_thread_ = 0, reductions_ = 0;
  int next_slots_ = 0;
};

}  // namespace

std::optional<int64_t> emit_rows_in_registers(Printer &p, const BlockGraph &bg, int64_t threads,
                                              const std::vector<DType> &output_dtypes) {
  RowsEmitter emitter(p, bg, threads, output_dtypes);
  if (!emitter.plan()) return std::nullopt;
  return emitter.emit();
}

}  // namespace yirage::codegen::cuda
