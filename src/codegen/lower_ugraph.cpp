#include "codegen/lower_ugraph.hpp"

#include <cmath>

#include "codegen/lower_operator.hpp"
#include "ir/ragged_tiles.hpp"
#include "util/error.hpp"

namespace yirage::codegen {
namespace {

bool is_elementwise(OpKind kind) {
  return is_unary(kind) || is_binary(kind);
}

const Operator &producer(const BlockGraph &bg, TensorId t) {
  return bg.operators()[static_cast<size_t>(bg.tensor(t).producer)];
}

bool inlined(const UGraphLowering &l, TensorId t) {
  return static_cast<size_t>(t) < l.inlined.size() && l.inlined[static_cast<size_t>(t)];
}

std::string input_name(size_t i) {
  return "in" + std::to_string(i);
}
std::string output_name(size_t i) {
  return "out" + std::to_string(i);
}

class Lowerer {
 public:
  Lowerer(const BlockGraph &bg, const UGraphLowering &l)
      : bg_(bg), l_(l), ragged_(has_ragged_tiles(bg) ? ragged_dims(bg) : std::vector<RaggedDims>{}) {}

  LoweredUGraph lower() {
    const auto &ops = bg_.operators();
    LoweredUGraph out;
    size_t input = 0, output = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (is_accumulator(op.kind)) {
        out.start.push_back(start_accumulator(i));
        fill_absent(i, out.loop);
        out.loop.push_back(update_accumulator(i));
        if (has_state(bg_, l_, i)) out.after.push_back(finish_accumulator(i));
      } else if (op.kind == OpKind::kInputIterator) {
        const bool invariant = phase(op.outputs[0]) == LoopPhase::kInvariant;
        (invariant ? out.invariant : out.loop).push_back(load_tile(i, input++, invariant));
      } else if (op.kind == OpKind::kOutputSaver) {
        const bool per_iteration = phase(op.inputs[0]) == LoopPhase::kPerIteration;
        (per_iteration ? out.loop : out.after).push_back(save_tile(i, output++, per_iteration));
      } else if (!inlined(l_, op.outputs[0])) {
        const LoopPhase p = phase(op.outputs[0]);
        std::vector<Step> &steps = p == LoopPhase::kInvariant      ? out.invariant
                                   : p == LoopPhase::kPerIteration ? out.loop
                                                                   : out.after;
        fill_absent(i, steps);
        steps.push_back(compute(i));
      }
    }
    return out;
  }

 private:
  LoopPhase phase(TensorId t) const { return bg_.tensor(t).phase; }
  const Dims &dims_of(TensorId t) const { return bg_.tensor(t).dims; }
  TensorRef tile(TensorId t) const { return tile_ref(bg_, l_, t); }
  BufferRef at(int64_t offset) const { return shared_buffer(offset); }

  Step load_tile(size_t i, size_t input, bool invariant) {
    const Operator &op = bg_.operators()[i];
    const TensorId t = op.outputs[0];
    TileCopy copy;
    copy.load = true;
    copy.tensor = {global_buffer(input_name(input), op.attributes.dtype), dims_of(t),
                   row_major_strides(op.attributes.sizes),
                   tile_base(bg_, op, dims_of(t), invariant ? int_const(0) : var("it"))};
    copy.tile = tile(t);
    copy.vector = vector_group(bg_, op, dims_of(t), op.attributes.dtype, l_.vector_bytes);
    bound(copy, t, invariant ? int_const(0) : var("it"));
    Step s{StepKind::kLoadTile, i, input, {Stmt{copy}}, {}, {{t, copy.vector == 1}}};
    return s;
  }

  Step save_tile(size_t i, size_t output, bool per_iteration) {
    const Operator &op = bg_.operators()[i];
    const TensorId t = op.inputs[0];
    const DType dtype = output < l_.output_dtypes.size() ? l_.output_dtypes[output] : op.attributes.dtype;
    TileCopy copy;
    copy.load = false;
    copy.tensor = {global_buffer(output_name(output), dtype), dims_of(t), row_major_strides(op.attributes.sizes),
                   tile_base(bg_, op, dims_of(t), per_iteration ? var("it") : int_const(0))};
    copy.tile = tile(t);
    copy.vector = vector_group(bg_, op, dims_of(t), dtype, l_.vector_bytes);
    bound(copy, t, per_iteration ? var("it") : int_const(0));
    return Step{StepKind::kSaveTile, i, output, {Stmt{copy}}, {{t, copy.vector == 1}}, {}};
  }

  // A copy of ragged tile `t`: its elements inside the tensor along each ragged dim. Its groups of
  // `vector` elements stay: vector_group takes them only where they divide the tensor's last dim,
  // so each is all in or all past the end.
  void bound(TileCopy &copy, TensorId t, const Expr &it) const {
    if (ragged_.empty()) return;
    const RaggedDims &dims = ragged_[static_cast<size_t>(t)];
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d]) copy.inside.push_back({d, ragged_inside(*dims[d], it)});
    }
  }

  // Steps setting the absent elements operator i reads to its identity (ragged_tiles.hpp). A
  // matmul stops its sums at k_inside instead (compute), unless the target asks for its
  // operands' fills. Zero fills of loaded tiles are left out where they are zeros (fill_needed).
  void fill_absent(size_t i, std::vector<Step> &steps) const {
    if (ragged_.empty()) return;
    const Operator &op = bg_.operators()[i];
    if (op.kind == OpKind::kMatmul && !l_.fill_matmul_operands) return;
    for (const AbsentFill &f : absent_fills(bg_, op, ragged_)) {
      const TensorId t = op.inputs[f.input];
      if (!fill_needed(bg_, ragged_, op, f)) continue;
      const TensorRef x = tile(t);
      const std::vector<std::string> names = numbered("z", x.dims.size());
      const std::vector<Expr> v = vars_of(names);
      Block body;
      for (size_t d : f.dims) {
        const RaggedSplit &r = *ragged_[static_cast<size_t>(t)][d];
        const Expr past = binary(">=", v[d], ragged_inside(r, var("it")));
        body.push_back(if_then(past, {store(x.buffer, x.index(v), float_const(f.value))}));
      }
      steps.push_back(Step{StepKind::kFillAbsent,
                           i,
                           0,
                           {loop(x.dims, names, Sharing::kThreads, std::move(body))},
                           {{t, true}},
                           {{t, true}}});
    }
  }

  // A matmul of ragged tiles: its sums stop at k's end, its rows and columns at theirs.
  void bound_matmul(const Operator &op, Matmul &m) const {
    if (ragged_.empty()) return;
    const RaggedDims &a = ragged_[static_cast<size_t>(op.inputs[0])], &b = ragged_[static_cast<size_t>(op.inputs[1])];
    auto inside = [](const std::optional<RaggedSplit> &r) -> std::optional<Expr> {
      if (!r) return std::nullopt;
      return ragged_inside(*r, var("it"));
    };
    m.k_inside = inside(a.back() ? a.back() : b[b.size() - 2]);
    m.m_inside = inside(a[a.size() - 2]);
    m.n_inside = inside(b.back());
  }

  Step compute(size_t i) {
    const Operator &op = bg_.operators()[i];
    Step s{StepKind::kCompute, i, 0, {}, compute_reads(bg_, l_, op), {}};
    bool same_index = true;
    if (std::any_of(op.inputs.begin(), op.inputs.end(), [&](TensorId t) { return inlined(l_, t); })) {
      s.body = chain(op);
    } else {
      std::vector<TensorRef> in, out;
      for (TensorId t : op.inputs) in.push_back(tile(t));
      for (TensorId t : op.outputs) out.push_back(tile(t));
      s.body = lower_operator(op, in, out, Sharing::kThreads);
      if (op.kind == OpKind::kMatmul) bound_matmul(op, std::get<Matmul>(s.body.at(0).node));
      // Row reductions hand a row to several threads.
      same_index = !(op.kind == OpKind::kRmsNorm || op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax);
    }
    for (TensorId t : op.outputs) s.writes.push_back({t, same_index});
    return s;
  }

  // An elementwise operator with inlined inputs: one loop over its output, the chain's values
  // in registers.
  Block chain(const Operator &op) {
    bool broadcast = false;
    for_each_leaf(op, [&](TensorId t) { broadcast = broadcast || dims_of(t) != dims_of(op.outputs[0]); });
    // Without broadcasts every tile is read at the output's linear index: one flat loop.
    const Dims out = broadcast ? dims_of(op.outputs[0]) : Dims{num_elements(dims_of(op.outputs[0]))};
    const std::vector<std::string> names = numbered("i", out.size());
    const std::vector<Expr> v = vars_of(names);
    Block body;
    int next = 0;
    const Expr value = chain_value(op, v, out, next, body);
    body.push_back(store(tile(op.outputs[0]).buffer, index_of(v, row_major_strides(out)), value));
    return {loop(out, names, Sharing::kThreads, std::move(body))};
  }
  void for_each_leaf(const Operator &op, const std::function<void(TensorId)> &f) const {
    for (TensorId t : op.inputs) {
      if (inlined(l_, t)) {
        for_each_leaf(producer(bg_, t), f);
      } else {
        f(t);
      }
    }
  }
  // Declares op's value at index `v` of `out` (and the values it needs first) in `body`.
  Expr chain_value(const Operator &op, const std::vector<Expr> &v, const Dims &out, int &next, Block &body) {
    std::vector<Expr> args;
    for (TensorId t : op.inputs) {
      if (inlined(l_, t)) {
        args.push_back(chain_value(producer(bg_, t), v, out, next, body));
        continue;
      }
      const std::string name = "c" + std::to_string(next++);
      const Dims strides = v.size() == dims_of(t).size() ? broadcast_strides(dims_of(t), out) : Dims{1};
      body.push_back(let(name, load(tile(t).buffer, index_of(v, strides))));
      args.push_back(var(name));
    }
    const std::string name = "c" + std::to_string(next++);
    body.push_back(let(name, is_unary(op.kind) ? unary_value(op.kind, op.attributes, args[0])
                                               : binary_value(op.kind, args[0], args[1])));
    return var(name);
  }

  // Runs `statement(e)` for every element e < n, shared by the block's threads.
  static Stmt each(int64_t n, const std::function<Stmt(const Expr &)> &statement) {
    return loop({n}, {"e"}, Sharing::kThreads, {statement(var("e"))}, 4);
  }

  BufferRef accumulator_target(size_t i) const {
    return has_state(bg_, l_, i) ? at(l_.layout.state[i]) : tile(bg_.operators()[i].outputs[0]).buffer;
  }

  Step start_accumulator(size_t i) {
    const Operator &op = bg_.operators()[i];
    const bool state = has_state(bg_, l_, i);
    const BufferRef target = accumulator_target(i);
    const double init = op.kind == OpKind::kAccumMax ? -INFINITY : 0.0;
    Step s{StepKind::kStartAccumulator, i, 0, {}, {}, {{accumulator_key(bg_, l_, i), true}}};
    s.body.push_back(each(num_elements(dims_of(state ? op.inputs[0] : op.outputs[0])),
                          [&](const Expr &e) { return store(target, e, float_const(init)); }));
    if (op.kind == OpKind::kAccumRescale) {
      const BufferRef running = at(l_.layout.running_max[i]);
      s.body.push_back(each(num_elements(dims_of(op.inputs[1])),
                            [&](const Expr &e) { return store(running, e, float_const(-INFINITY)); }));
      s.writes.push_back({max_key(i), true});
    }
    if (op.kind == OpKind::kAccumReduceRms) {  // 1 / each element's peak, the peak at rms_scale's floor
      const BufferRef scales = at(l_.layout.running_max[i]);
      s.body.push_back(each(num_elements(dims_of(op.inputs[0])),
                            [&](const Expr &e) { return store(scales, e, float_const(1 / kRmsPeakFloor)); }));
      s.writes.push_back({max_key(i), true});
    }
    return s;
  }

  Step update_accumulator(size_t i) {
    const Operator &op = bg_.operators()[i];
    const TensorRef x = tile(op.inputs[0]);
    const int64_t n = num_elements(dims_of(op.inputs[0]));
    const BufferRef acc = tile(op.outputs[0]).buffer;
    auto ld = [](const BufferRef &b, const Expr &e) { return load(b, e); };
    Step s{StepKind::kUpdateAccumulator, i, 0, {}, {{op.inputs[0], true}}, {{accumulator_key(bg_, l_, i), true}}};
    switch (op.kind) {
      case OpKind::kAccumSum:
        s.body.push_back(each(n, [&](const Expr &e) { return store(acc, e, ld(acc, e) + ld(x.buffer, e)); }));
        break;
      case OpKind::kAccumReduceSum:
      case OpKind::kAccumReduceMean:
      case OpKind::kAccumSumToDimx: {
        const BufferRef state = at(l_.layout.state[i]);
        s.body.push_back(each(n, [&](const Expr &e) { return store(state, e, ld(state, e) + ld(x.buffer, e)); }));
        break;
      }
      case OpKind::kAccumReduceRms: {
        // Per element, S = Σ (x · R)² so far, R = rms_scale of a magnitude the element had: the
        // first above 2^-78 (R starts at 2^126), then any 2^48 times larger than 1 / R. So every
        // term is at most 2^96 and the largest at least 2^-46 (never subnormal), and an ordinary
        // iteration costs a multiplication more than Σ x²; where R changes (rare after the first
        // iteration), S is rescaled to the new R first. The scaled values are Lets, each used
        // twice, so that no reassociation squares x itself.
        // (Names no target's loops use: CUDA's block loops count chunks in `u`.)
        const BufferRef sums = at(l_.layout.state[i]), scales = at(l_.layout.running_max[i]);
        const Expr e = var("e"), xr = var("rms_x"), a = var("rms_a"), b = var("rms_b"), q = var("rms_q");
        const Expr xe = ld(x.buffer, e);
        const Block raise = {let("rms_q", rms_scale(magnitude(xe), 0.0)), let("rms_a", xe * q),
                             let("rms_b", q / ld(scales, e)), store(sums, e, ld(sums, e) * (b * b) + a * a),
                             store(scales, e, q)};
        s.body.push_back(
            loop({n}, {"e"}, Sharing::kThreads,
                 {let("rms_x", xe * ld(scales, e)),
                  if_then(binary(">", xr * xr, float_const(0x1p96)), raise, {store(sums, e, ld(sums, e) + xr * xr)})},
                 4));
        s.writes.push_back({max_key(i), true});
        break;
      }
      case OpKind::kAccumMax:
        s.body.push_back(each(n, [&](const Expr &e) {
          return store(acc, e, call("yr_max", {ld(acc, e), ld(x.buffer, e)}));
        }));
        break;
      case OpKind::kAccumRescale: {
        // acc' = acc·exp(M − M') + x·exp(m − M') with M' = max(M, m), as the reference does.
        const Dims &x_dims = dims_of(op.inputs[0]), &m_dims = dims_of(op.inputs[1]);
        const BufferRef m = tile(op.inputs[1]).buffer, running = at(l_.layout.running_max[i]),
                        next = at(l_.layout.state[i]);
        const int64_t mn = num_elements(m_dims);
        const std::vector<std::string> names = numbered("a", x_dims.size());
        const std::vector<Expr> v = vars_of(names);
        const Expr xi = index_of(v, row_major_strides(x_dims)), mj = index_of(v, broadcast_strides(m_dims, x_dims));
        s.body.push_back(barrier());
        s.body.push_back(each(mn, [&](const Expr &e) {
          return store(next, e, call("yr_max", {ld(running, e), ld(m, e)}));
        }));
        s.body.push_back(barrier());
        s.body.push_back(loop(x_dims, names, Sharing::kThreads,
                              {store(acc, xi,
                                     ld(acc, xi) * call("yr_exp", {ld(running, mj) - ld(next, mj)}) +
                                         ld(x.buffer, xi) * call("yr_exp", {ld(m, mj) - ld(next, mj)}))}));
        s.body.push_back(barrier());
        s.body.push_back(each(mn, [&](const Expr &e) { return store(running, e, ld(next, e)); }));
        s.barrier_inside = true;
        s.reads.push_back({op.inputs[1], false});
        s.writes = {{max_key(i), true}, {state_key(i), true}, {op.outputs[0], true}};
        break;
      }
      default: throw Error(ErrorCode::kInternal, "codegen: not an accumulator");
    }
    return s;
  }

  // A reducing accumulator's result: each row of its running sums summed (and scaled).
  Step finish_accumulator(size_t i) {
    const Operator &op = bg_.operators()[i];
    if (op.kind == OpKind::kAccumSumToDimx) return finish_fold(i);
    const Dims &x_dims = dims_of(op.inputs[0]);
    const int64_t last = x_dims.back();
    const BufferRef state = at(l_.layout.state[i]);
    const Expr element = var("r") * int_const(last) + var("c");
    RowReduce rr;
    rr.rows = num_elements(x_dims) / last;
    rr.cols = last;
    rr.value = load(state, element);
    const int64_t n = ragged_.empty() ? last * bg_.config().forloop_range : accumulated_count(bg_, op, ragged_);
    const Expr count = float_const(static_cast<double>(n));
    std::vector<Access> reads = {{state_key(i), false}};
    if (op.kind == OpKind::kAccumReduceMean) rr.finish.push_back(assign("total", var("total") / count));
    if (op.kind == OpKind::kAccumReduceRms) {
      // Σ S / R² over the row; where that leaves float32's range, again with each peak 1 / R
      // multiplied by the scale of the row's largest first (serial loops, each thread of the row
      // runs them): sqrt(Σ S · (scale / R)² / count) / scale.
      // eps (rms_norm's, where the search put this for one) is added to the mean square, and
      // to the scaled one times scale², which rms_scale keeps at most 1.
      const double eps = op.attributes.eps;
      const BufferRef scales = at(l_.layout.running_max[i]);
      const Expr s_at = load(state, element), r_at = load(scales, element), m = var("m");
      rr.value = s_at / (r_at * r_at);
      const Block scaled = {
          let_mutable("peak", float_const(0)),
          loop({last}, {"c"}, Sharing::kSerial, {assign("peak", call("yr_max", {var("peak"), float_const(1) / r_at}))}),
          let("scale", rms_scale(var("peak"), eps)),
          let_mutable("squares", float_const(0)),
          loop({last}, {"c"}, Sharing::kSerial,
               {let("m", var("scale") / r_at), assign("squares", var("squares") + s_at * m * m)}),
          assign("total", call("yr_sqrt", {rms_scaled_mean(var("squares"), n, eps, var("scale"))}) / var("scale"))};
      Expr mean = var("total") / count;
      if (eps != 0) mean = mean + float_const(eps);
      rr.finish.push_back(let("mean", mean));
      rr.finish.push_back(
          if_then(rms_mean_in_range(var("mean")), {assign("total", call("yr_sqrt", {var("mean")}))}, scaled));
      reads.push_back({max_key(i), false});
    }
    rr.finish.push_back(
        loop({1}, {"c"}, Sharing::kRowLanes, {store(tile(op.outputs[0]).buffer, var("r"), var("total"))}));
    return Step{StepKind::kFinishAccumulator, i, 0, {Stmt{rr}}, std::move(reads), {{op.outputs[0], false}}};
  }

  // accum_sum_todimx's result: each output element the sum of its row's running sums at
  // j, j + dimx, j + 2·dimx, … (a thread per element, the slices added in order).
  Step finish_fold(size_t i) {
    const Operator &op = bg_.operators()[i];
    const int64_t n = dims_of(op.inputs[0]).back(), dimx = op.attributes.sizes.at(0);
    const int64_t rows = num_elements(dims_of(op.inputs[0])) / n;
    const BufferRef state = at(l_.layout.state[i]);
    const Expr r = var("r"), j = var("j");
    const Block body = {
        let_mutable("total", float_const(0)),
        loop({n / dimx}, {"k"}, Sharing::kSerial,
             {assign("total", var("total") + load(state, r * int_const(n) + var("k") * int_const(dimx) + j))}),
        store(tile(op.outputs[0]).buffer, r * int_const(dimx) + j, var("total"))};
    return Step{StepKind::kFinishAccumulator,
                i,
                0,
                {loop({rows, dimx}, {"r", "j"}, Sharing::kThreads, body)},
                {{state_key(i), false}},
                {{op.outputs[0], true}}};
  }

  const BlockGraph &bg_;
  const UGraphLowering &l_;
  const std::vector<RaggedDims> ragged_;
};

}  // namespace

TensorRef tile_ref(const BlockGraph &bg, const UGraphLowering &l, TensorId t) {
  const auto index = static_cast<size_t>(t);
  const Dims &dims = bg.tensor(t).dims;
  TensorRef ref{shared_buffer(l.layout.tile[index]), dims, {}};
  if (index < l.layout.stored.size()) ref.buffer.element = l.layout.stored[index];
  const int64_t pad = index < l.row_pad.size() ? l.row_pad[index] : 0;
  if (pad > 0) {
    Dims padded = dims;
    padded.back() += pad;
    ref.strides = row_major_strides(padded);
  }
  return ref;
}

std::vector<Access> compute_reads(const BlockGraph &bg, const UGraphLowering &l, const Operator &op) {
  std::vector<Access> reads;
  const Dims &out = bg.tensor(op.outputs[0]).dims;
  const bool elementwise = is_elementwise(op.kind);
  for (TensorId in : op.inputs) {
    if (inlined(l, in)) {  // read where the inlined operator would have read them
      for (const Access &a : compute_reads(bg, l, producer(bg, in))) reads.push_back(a);
    } else {
      reads.push_back({in, elementwise && bg.tensor(in).dims == out});
    }
  }
  return reads;
}

bool has_state(const BlockGraph &bg, const UGraphLowering &l, size_t op) {
  return l.layout.state[op] >= 0 && bg.operators()[op].kind != OpKind::kAccumRescale;
}

int64_t accumulator_key(const BlockGraph &bg, const UGraphLowering &l, size_t op) {
  return has_state(bg, l, op) ? state_key(op) : bg.operators()[op].outputs[0];
}

bool fill_needed(const BlockGraph &bg, const std::vector<RaggedDims> &ragged, const Operator &op, const AbsentFill &f) {
  const TensorId t = op.inputs[f.input];
  if (f.value != 0 || producer(bg, t).kind != OpKind::kInputIterator) return true;
  for (const Operator &other : bg.operators()) {
    for (const AbsentFill &g : absent_fills(bg, other, ragged)) {
      if (other.inputs[g.input] == t && g.value != 0) return true;
    }
  }
  return false;
}

Expr ragged_inside(const RaggedSplit &split, const Expr &it) {
  static const char *block_vars[3] = {"bx", "by", "bz"};
  Expr start = split.looped ? it * int_const(split.tile) : int_const(0);
  if (split.grid_axis >= 0) start = std::move(start) + var(block_vars[split.grid_axis]) * int_const(split.block_stride);
  return int_const(split.extent) - std::move(start);
}

LoweredUGraph lower_ugraph(const BlockGraph &bg, const UGraphLowering &lowering) {
  check_arena_fits(lowering.layout.floats * 4, lowering.max_shared_bytes);
  return Lowerer(bg, lowering).lower();
}

}  // namespace yirage::codegen
