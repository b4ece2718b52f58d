// The interpreter that defines what a graph computes: kernel graphs operator by operator, and
// customized operators block by block, iteration by iteration, exactly as ARCHITECTURE.md §3
// describes µGraphs. It is written once over an arithmetic `A` (Float64Arithmetic for the
// reference executor, FieldArithmetic for fingerprints), so the two can never disagree about
// the meaning of an operator, an iterator map or an accumulator.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"
#include "ir/ragged_tiles.hpp"
#include "reference/operators.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace yirage::reference {

template <class A>
class Interpreter {
 public:
  using V = typename A::Value;

  // `threads`: how many threads may run the blocks of a customized operator at once. `stop`
  // (may be null) is asked before every operator and block; true ends the run with
  // Error(kTimeout).
  Interpreter(const A &arith, int threads, std::function<bool()> stop = nullptr)
      : arith_(arith), threads_(threads), stop_(std::move(stop)) {}

  // Evaluates `graph` on `inputs` (one compact row-major buffer per graph input) and returns one
  // buffer per graph output. Only operators that feed an output run. Where `every` is given, it
  // receives every computed tensor's buffer, indexed by TensorId (empty for the graph's inputs,
  // which are read where they are, never copied, and for tensors that did not run). Where `store`
  // is given, it is called on each kernel-level operator's outputs as soon as they are computed
  // (it may change them: the reference executor's "stored" evaluation rounds them to their dtype).
  std::vector<Buffer<V>> run(const KernelGraph &graph, const std::vector<Buffer<V>> &inputs,
                             std::vector<Buffer<V>> *every = nullptr,
                             const std::function<void(const Tensor &, Buffer<V> &)> &store = {}) const {
    if (inputs.size() != graph.inputs().size()) {
      invalid_argument("interpreter: the graph has " + std::to_string(graph.inputs().size()) + " inputs, " +
                       std::to_string(inputs.size()) + " were given");
    }
    std::vector<Buffer<V>> values(graph.num_tensors());
    std::vector<const Buffer<V> *> reads = addresses(values);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorId id = graph.inputs()[i];
      if (static_cast<int64_t>(inputs[i].size()) != num_elements(graph.tensor(id).dims)) {
        invalid_argument("interpreter: input " + std::to_string(i) + " has " + std::to_string(inputs[i].size()) +
                         " elements, expected " + std::to_string(num_elements(graph.tensor(id).dims)));
      }
      reads[static_cast<size_t>(id)] = &inputs[i];
    }
    const std::vector<bool> live = live_operators(graph);
    const auto &ops = graph.operators();
    for (size_t index = 0; index < ops.size(); ++index) {
      const Operator &op = ops[index];
      if (!live[index] || op.kind == OpKind::kInput) continue;
      check_stop();
      if (op.kind == OpKind::kCustomized) {
        run_customized(graph, op, reads, values);
      } else {
        compute(graph, op, reads, values, threads_);
      }
      for (TensorId t : op.outputs) {
        if (store && !values[static_cast<size_t>(t)].empty()) store(graph.tensor(t), values[static_cast<size_t>(t)]);
      }
    }
    std::vector<Buffer<V>> outputs;
    outputs.reserve(graph.outputs().size());
    for (TensorId id : graph.outputs()) outputs.push_back(*reads[static_cast<size_t>(id)]);
    if (every) *every = std::move(values);
    return outputs;
  }

 private:
  // Per accumulator: the running value and, for accum_rescale, the running max of m.
  struct Accumulator {
    Buffer<V> value;
    Buffer<V> running_max;
  };

  // Where each tensor's buffer is read: values[id], or the caller's buffer for a graph input.
  static std::vector<const Buffer<V> *> addresses(const std::vector<Buffer<V>> &values) {
    std::vector<const Buffer<V> *> reads;
    reads.reserve(values.size());
    for (const Buffer<V> &v : values) reads.push_back(&v);
    return reads;
  }

  // Evaluates a compute operator (the same at kernel and block level) with up to `threads`
  // threads (blocks of a customized operator already run concurrently, so they pass 1). Reads
  // its inputs through `reads`, writes its outputs into `values`.
  void compute(const OperatorGraph &graph, const Operator &op, const std::vector<const Buffer<V> *> &reads,
               std::vector<Buffer<V>> &values, int threads = 1) const {
    auto in = [&](size_t k) -> const Buffer<V> & { return *reads[static_cast<size_t>(op.inputs[k])]; };
    auto dims = [&](size_t k) -> const Dims & { return graph.tensor(op.inputs[k]).dims; };
    Buffer<V> &out = values[static_cast<size_t>(op.outputs.at(0))];
    const Dims &out_dims = graph.tensor(op.outputs[0]).dims;
    if (is_unary(op.kind)) {
      out = unary(arith_, op.kind, op.attributes, in(0));
      return;
    }
    if (is_binary(op.kind)) {
      out = broadcast_binary(arith_, op.kind, in(0), dims(0), in(1), dims(1), out_dims);
      return;
    }
    switch (op.kind) {
      case OpKind::kMatmul: out = matmul(arith_, in(0), dims(0), in(1), dims(1), out_dims, threads); return;
      case OpKind::kReduction:
      case OpKind::kReductionMax: out = reduce(arith_, op.kind, in(0), dims(0), op.attributes.dim); return;
      case OpKind::kRmsNorm:
        out = rms_norm(arith_, in(0), dims(0), op.attributes.sizes.size(), op.attributes.eps,
                       op.attributes.has_weight ? &in(1) : nullptr);
        return;
      case OpKind::kConcat: out = concat(in(0), dims(0), in(1), dims(1), op.attributes.dim); return;
      case OpKind::kReshape: out = in(0); return;  // row-major order is kept
      case OpKind::kPermute: out = permute(in(0), dims(0), op.attributes.sizes); return;
      case OpKind::kSplit: {
        std::vector<Buffer<V>> parts = split(in(0), dims(0), op.attributes.dim, op.attributes.sizes);
        for (size_t p = 0; p < parts.size(); ++p) {
          values[static_cast<size_t>(op.outputs[p])] = std::move(parts[p]);
        }
        return;
      }
      default: throw Error(ErrorCode::kInternal, std::string("interpreter: no implementation for ") + op_name(op.kind));
    }
  }

  void run_customized(const KernelGraph &graph, const Operator &op, const std::vector<const Buffer<V> *> &reads,
                      std::vector<Buffer<V>> &values) const {
    const BlockGraph &bg = *op.block_graph;
    std::vector<const Buffer<V> *> inputs;
    for (TensorId id : op.inputs) inputs.push_back(reads[static_cast<size_t>(id)]);
    std::vector<Buffer<V> *> outputs;
    for (TensorId id : op.outputs) {
      Buffer<V> &out = values[static_cast<size_t>(id)];
      out.assign(static_cast<size_t>(num_elements(graph.tensor(id).dims)), arith_.zero());
      outputs.push_back(&out);
    }
    const auto &grid = bg.config().grid;
    const std::vector<RaggedDims> ragged = has_ragged_tiles(bg) ? ragged_dims(bg) : std::vector<RaggedDims>{};
    // Blocks write disjoint tiles of the outputs, so they can run concurrently.
    parallel_for(grid[0] * grid[1] * grid[2], threads_, [&](int64_t b) {
      const std::array<int64_t, 3> block = {b % grid[0], (b / grid[0]) % grid[1], b / (grid[0] * grid[1])};
      check_stop();
      run_block(bg, ragged, block, inputs, outputs);
    });
  }

  // Offsets of a block's (and iteration's) tile inside the kernel-level tensor.
  static Dims tile_offsets(const BlockGraph &bg, const Operator &op, const Dims &tile_dims,
                           const std::array<int64_t, 3> &block, int64_t iteration) {
    Dims offsets(tile_dims.size(), 0);
    for (size_t a = 0; a < 3; ++a) {
      const int32_t d = op.attributes.grid_map[a];
      if (d < 0) continue;
      offsets[static_cast<size_t>(d)] += block[a] * block_stride(bg, op, static_cast<size_t>(d));
    }
    if (op.attributes.forloop_dim >= 0) {
      const auto f = static_cast<size_t>(op.attributes.forloop_dim);
      offsets[f] += iteration * tile_dims[f];
    }
    return offsets;
  }

  // Whether a tile at `offsets` lies wholly inside a kernel tensor of `full` dims (every tile but
  // the ragged ones: ragged_tiles.hpp), and the part of it that does.
  static bool whole(const Dims &full, const Dims &offsets, const Dims &tile_dims) {
    for (size_t d = 0; d < tile_dims.size(); ++d) {
      if (offsets[d] + tile_dims[d] > full[d]) return false;
    }
    return true;
  }
  static Dims present_dims(const Dims &full, const Dims &offsets, const Dims &tile_dims) {
    Dims present(tile_dims.size());
    for (size_t d = 0; d < tile_dims.size(); ++d) present[d] = std::min(tile_dims[d], full[d] - offsets[d]);
    return present;
  }

  // A tile of a kernel input, its absent elements (past the tensor) zero.
  Buffer<V> load(const Buffer<V> &x, const Dims &full, const Dims &offsets, const Dims &tile_dims) const {
    if (whole(full, offsets, tile_dims)) return read_tile(x, full, offsets, tile_dims);
    const Dims present = present_dims(full, offsets, tile_dims);
    Buffer<V> tile(static_cast<size_t>(num_elements(tile_dims)), arith_.zero());
    write_tile(tile, tile_dims, Dims(tile_dims.size(), 0), read_tile(x, full, offsets, present), present);
    return tile;
  }

  // Sets the absent elements `op` reads to its identity (ragged_tiles.hpp): no other reader of
  // a tile looks at them, so the tile is changed in place.
  void fill_absent(const BlockGraph &bg, const std::vector<RaggedDims> &ragged, const Operator &op,
                   const std::array<int64_t, 3> &block, int64_t iteration, std::vector<Buffer<V>> &values) const {
    if (ragged.empty()) return;
    for (const AbsentFill &f : absent_fills(bg, op, ragged)) {
      const TensorId t = op.inputs[f.input];
      const Dims &dims = bg.tensor(t).dims;
      const Dims strides = row_major_strides(dims);
      const V value = f.value == 0 ? arith_.zero() : arith_.max_identity();
      Buffer<V> &x = values[static_cast<size_t>(t)];
      for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
        for (size_t d : f.dims) {
          const int64_t at = (i / strides[d]) % dims[d];
          if (at >= present_length(*ragged[static_cast<size_t>(t)][d], block, iteration)) {
            x[static_cast<size_t>(i)] = value;
            break;
          }
        }
      }
    }
  }

  void run_block(const BlockGraph &bg, const std::vector<RaggedDims> &ragged, const std::array<int64_t, 3> &block,
                 const std::vector<const Buffer<V> *> &inputs, const std::vector<Buffer<V> *> &outputs) const {
    const auto &ops = bg.operators();
    std::vector<Buffer<V>> values(bg.num_tensors());
    const std::vector<const Buffer<V> *> reads = addresses(values);  // a block's tensors are all its own
    std::vector<Accumulator> accumulators(ops.size());
    const int64_t iterations = bg.config().forloop_range;
    size_t input_index = 0, output_index = 0;
    std::vector<size_t> io_index(ops.size(), 0);  // which kernel input / output an op touches
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == OpKind::kInputIterator) io_index[i] = input_index++;
      if (ops[i].kind == OpKind::kOutputSaver) io_index[i] = output_index++;
      if (is_accumulator(ops[i].kind)) start_accumulator(bg, ops[i], accumulators[i]);
    }
    auto phase_of = [&](TensorId id) { return bg.tensor(id).phase; };

    for (int64_t it = 0; it < iterations; ++it) {
      for (size_t i = 0; i < ops.size(); ++i) {
        const Operator &op = ops[i];
        if (op.kind == OpKind::kInputIterator) {
          if (it > 0 && phase_of(op.outputs[0]) == LoopPhase::kInvariant) continue;
          const Dims &tile_dims = bg.tensor(op.outputs[0]).dims;
          values[static_cast<size_t>(op.outputs[0])] =
              load(*inputs[io_index[i]], op.attributes.sizes, tile_offsets(bg, op, tile_dims, block, it), tile_dims);
        } else if (is_accumulator(op.kind)) {
          fill_absent(bg, ragged, op, block, it, values);
          update_accumulator(bg, op, values, accumulators[i]);
        } else if (op.kind == OpKind::kOutputSaver) {
          if (phase_of(op.inputs[0]) == LoopPhase::kPerIteration)
            save(bg, op, values, block, it, *outputs[io_index[i]]);
        } else {
          const LoopPhase phase = phase_of(op.outputs[0]);
          if (phase == LoopPhase::kPerIteration || (phase == LoopPhase::kInvariant && it == 0)) {
            fill_absent(bg, ragged, op, block, it, values);
            compute(bg, op, reads, values);
          }
        }
      }
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (is_accumulator(op.kind)) {
        values[static_cast<size_t>(op.outputs[0])] = finish_accumulator(bg, ragged, op, accumulators[i]);
      } else if (op.kind == OpKind::kOutputSaver) {
        if (phase_of(op.inputs[0]) != LoopPhase::kPerIteration) save(bg, op, values, block, 0, *outputs[io_index[i]]);
      } else if (op.kind != OpKind::kInputIterator && phase_of(op.outputs[0]) == LoopPhase::kAfterLoop) {
        fill_absent(bg, ragged, op, block, 0, values);
        compute(bg, op, reads, values);
      }
    }
  }

  void save(const BlockGraph &bg, const Operator &op, const std::vector<Buffer<V>> &values,
            const std::array<int64_t, 3> &block, int64_t iteration, Buffer<V> &out) const {
    const Dims &tile_dims = bg.tensor(op.inputs[0]).dims;
    const Dims offsets = tile_offsets(bg, op, tile_dims, block, iteration);
    const Buffer<V> &tile = values[static_cast<size_t>(op.inputs[0])];
    if (whole(op.attributes.sizes, offsets, tile_dims)) {
      write_tile(out, op.attributes.sizes, offsets, tile, tile_dims);
    } else {  // absent elements are not saved
      const Dims present = present_dims(op.attributes.sizes, offsets, tile_dims);
      write_tile(out, op.attributes.sizes, offsets, read_tile(tile, tile_dims, Dims(tile_dims.size(), 0), present),
                 present);
    }
  }

  void start_accumulator(const BlockGraph &bg, const Operator &op, Accumulator &acc) const {
    const auto x_count = static_cast<size_t>(num_elements(bg.tensor(op.inputs[0]).dims));
    acc.value.assign(x_count, op.kind == OpKind::kAccumMax ? arith_.max_identity() : arith_.zero());
    if (op.kind == OpKind::kAccumRescale) {
      acc.running_max.assign(static_cast<size_t>(num_elements(bg.tensor(op.inputs[1]).dims)), arith_.max_identity());
    }
  }

  void update_accumulator(const BlockGraph &bg, const Operator &op, const std::vector<Buffer<V>> &values,
                          Accumulator &acc) const {
    const Buffer<V> &x = values[static_cast<size_t>(op.inputs[0])];
    switch (op.kind) {
      case OpKind::kAccumSum:
      case OpKind::kAccumReduceSum:
      case OpKind::kAccumReduceMean:
      case OpKind::kAccumSumToDimx:
        for (size_t i = 0; i < x.size(); ++i) acc.value[i] = arith_.add(acc.value[i], x[i]);
        return;
      case OpKind::kAccumReduceRms:
        for (size_t i = 0; i < x.size(); ++i) {
          acc.value[i] = arith_.add(acc.value[i], arith_.mul(x[i], x[i]));
        }
        return;
      case OpKind::kAccumMax:
        for (size_t i = 0; i < x.size(); ++i) acc.value[i] = arith_.max(acc.value[i], x[i]);
        return;
      case OpKind::kAccumRescale: {
        // Streaming form of Σ_i x_i·exp(m_i − M): with M' = max(M, m_i),
        // acc' = acc·exp(M − M') + x_i·exp(m_i − M'); the exps telescope exactly.
        const Buffer<V> &m = values[static_cast<size_t>(op.inputs[1])];
        const Dims &x_dims = bg.tensor(op.inputs[0]).dims;
        const Dims &m_dims = bg.tensor(op.inputs[1]).dims;
        Buffer<V> new_max(m.size());
        for (size_t j = 0; j < m.size(); ++j) new_max[j] = arith_.max(acc.running_max[j], m[j]);
        for_each_broadcast(
            x_dims, row_major_strides(x_dims), detail::broadcast_strides(m_dims), [&](int64_t i, int64_t, int64_t mj) {
              const auto xi = static_cast<size_t>(i);
              const auto j = static_cast<size_t>(mj);
              acc.value[xi] =
                  arith_.add(arith_.mul(acc.value[xi], arith_.exp(arith_.sub(acc.running_max[j], new_max[j]))),
                             arith_.mul(x[xi], arith_.exp(arith_.sub(m[j], new_max[j]))));
            });
        acc.running_max = std::move(new_max);
        return;
      }
      default: throw Error(ErrorCode::kInternal, std::string("interpreter: not an accumulator: ") + op_name(op.kind));
    }
  }

  Buffer<V> finish_accumulator(const BlockGraph &bg, const std::vector<RaggedDims> &ragged, const Operator &op,
                               Accumulator &acc) const {
    if (op.kind == OpKind::kAccumSum || op.kind == OpKind::kAccumMax || op.kind == OpKind::kAccumRescale) {
      return std::move(acc.value);
    }
    const Dims &x_dims = bg.tensor(op.inputs[0]).dims;
    if (op.kind == OpKind::kAccumSumToDimx) return fold_last_dim(acc.value, x_dims.back(), op.attributes.sizes.at(0));
    Buffer<V> sums = reduce(arith_, OpKind::kReduction, acc.value, x_dims, static_cast<int>(x_dims.size()) - 1);
    if (op.kind == OpKind::kAccumReduceSum) return sums;
    const int64_t n = ragged.empty() ? x_dims.back() * bg.config().forloop_range : accumulated_count(bg, op, ragged);
    const V count = arith_.constant(static_cast<double>(n));
    for (V &s : sums) {
      s = arith_.div(s, count);
      if (op.kind == OpKind::kAccumReduceRms) s = arith_.sqrt(arith_.add(s, arith_.constant(op.attributes.eps)));
    }
    return sums;
  }

  // Each row of `n` values folded to `dimx` by adding its n / dimx slices: out[j] = Σ_k x[k·dimx + j].
  Buffer<V> fold_last_dim(const Buffer<V> &x, int64_t n, int64_t dimx) const {
    const auto rows = static_cast<int64_t>(x.size()) / n;
    Buffer<V> out(static_cast<size_t>(rows * dimx), arith_.zero());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        V &o = out[static_cast<size_t>(r * dimx + c % dimx)];
        o = arith_.add(o, x[static_cast<size_t>(r * n + c)]);
      }
    }
    return out;
  }

  void check_stop() const {
    if (stop_ && stop_()) throw Error(ErrorCode::kTimeout, "interpreter: stopped before the end");
  }

  const A &arith_;
  int threads_;
  std::function<bool()> stop_;
};

}  // namespace yirage::reference
