#include "cuda/codegen/cuda_ugraph.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "codegen/ugraph_walker.hpp"
#include "cuda/codegen/cuda_load_pipeline.hpp"
#include "cuda/codegen/cuda_printer.hpp"
#include "cuda/codegen/cuda_reduction_kernels.hpp"
#include "cuda/codegen/cuda_rows.hpp"
#include "cuda/codegen/cuda_tile_matmul.hpp"
#include "cuda/codegen/cuda_ugraph_plan.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {
namespace {

// The µGraph block printed from the shared lowering: every step as its plain code (through
// CudaPrinter) except where the plan says otherwise — staged and prefetched tiles, matmuls on
// tensor cores with their epilogue and sums, attention in registers, the warp-specialized loop.
class UGraphEmitter : public UGraphWalker {
 public:
  UGraphEmitter(CudaPrinter &printer, UGraphPlan &plan, const LoweredUGraph &lowered)
      : UGraphWalker(printer, plan.bg, lowered), plan_(plan), pipeline_(printer.out(), plan, [this] { sync(); }) {}

  CustomizedBody emit(const BodyPlacement &placement) {
    emit_block_prologue(p_, placement, plan_.any_swizzled());
    declare_alignments();
    pipeline_.load_prefetched();
    pipeline_.start();
    walk();
    return {plan_.layout.floats * 4, plan_.block.threads,          plan_.producers > 0,
            plan_.loop_waits(),      plan_.shared_traffic_bytes(), plan_.attention.has_value()};
  }

 protected:
  void run(const Step &step) override {
    const Operator &op = bg_.operators()[step.op];
    const std::optional<AttentionPlan> &att = plan_.attention;
    const bool attention = att && att->handles(step.op);
    switch (step.kind) {
      case StepKind::kStartAccumulator:
        if (attention) return;  // attention's sums are written once, after the loop
        break;
      case StepKind::kLoadTile:
        if (plan_.prefetched(step.io)) return;  // stored by the invariant part
        if (const Stage *st = plan_.stage_of(step.io)) {
          pipeline_.read_staged(*st);
          if (!plan_.is_direct(op.outputs[0])) wrote({{op.outputs[0], false}});
          return;
        }
        break;
      case StepKind::kCompute:
        if (attention) {
          if (step.op == att->qk && !specialized_) emit_attention_iteration();
          return;
        }
        if (fused_into_.count(step.op) != 0) return;  // done in a matmul's epilogue
        if (op.kind == OpKind::kMatmul) {
          emit_matmul(step);
          return;
        }
        break;
      case StepKind::kUpdateAccumulator:
        if (attention) return;
        if (summed_in_epilogue_.count(step.op) != 0) {
          update_before_sm80(step);
          return;
        }
        break;
      case StepKind::kSaveTile:
        if (att && att->saves(step.op)) return;  // attention wrote the sums to the output
        break;
      case StepKind::kFinishAccumulator: break;
      case StepKind::kFillAbsent:
        // Attention masks its ragged keys' scores instead (RegisterAttention::keys_inside).
        if (attention) return;
        // A direct tile has no float copy to fill; it is loaded, with zeros past the end, and only
        // matmuls read it (plan_row_padding).
        if (plan_.is_direct(step.writes.at(0).key)) {
          throw Error(ErrorCode::kInternal, "cuda codegen: a fill of a tile read from its stage");
        }
        break;
    }
    UGraphWalker::run(step);
  }

  void after_start() override {
    if (plan_.producers > 0) pipeline_.start_stage_barriers();
  }

  // The loop-invariant part before the loop: tiles read once and what is computed from them only
  // (and the stores of every prefetched tile, per-iteration ones of a loop that runs once
  // included). Done once, ahead of the loop's first iteration, and followed by one barrier
  // instead of costing one in every iteration.
  bool has_invariant_part() const override { return !lowered_.invariant.empty() || !plan_.prefetch.empty(); }
  void begin_invariant() override {
    p_.open("");
    p_.line("const int it = 0;  // invariant tiles do not move with the loop");
    p_.line("(void)it;");
    pipeline_.store_prefetched([this](TensorId t) { wrote({{t, false}}); });
  }
  void end_invariant() override {
    p_.close();
    sync();
    const auto &ops = bg_.operators();
    if (plan_.attention) {
      const std::optional<size_t> &norm = plan_.attention->q_norm;
      const Ref q = plan_.tile_ref(norm ? ops[*norm].inputs[0] : ops[plan_.attention->qk].inputs[0]);
      const Dims sq = q.element_strides();
      plan_.attention->emit_registers(p_, q.ptr, sq[sq.size() - 2],
                                      norm ? std::optional<double>(ops[*norm].attributes.eps) : std::nullopt);
    }
    // A per-iteration matmul's invariant A: its operands into registers once, not read (with
    // bank conflicts) in every iteration.
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (op.kind != OpKind::kMatmul || plan_.phase(op.outputs[0]) != LoopPhase::kPerIteration ||
          plan_.phase(op.inputs[0]) != LoopPhase::kInvariant || (plan_.attention && plan_.attention->handles(i)) ||
          plan_.filled_before(i, 0)) {
        continue;
      }
      const std::string name = "a_fragments" + std::to_string(i);
      TileMatmul matmul(p_, plan_.block_share(), plan_.block, plan_.tensor_cores);
      if (matmul.register_fragments(name, plan_.tile_ref(op.inputs[0]), plan_.tile_ref(op.inputs[1]),
                                    plan_.tile_ref(op.outputs[0]))) {
        fragment_arrays_[i] = name;
      }
    }
  }

  // The for-loop, every thread taking part in every step; or, with producers, the
  // warp-specialized loop whole (the steps inside are attention's or direct stages: nothing more
  // to print).
  void begin_loop() override {
    if (plan_.producers > 0) {
      specialized_ = true;
      emit_specialized_loop();
      return;
    }
    p_.open("for (int it = 0; it < " + std::to_string(bg_.config().forloop_range) + "; ++it)");
    pipeline_.advance();
  }
  void end_loop() override {
    if (!specialized_) {
      // The next iteration overwrites this one's tiles, which other threads may still be
      // reading: a barrier here, or the one at the top of the next iteration where the pipeline
      // has one.
      pipeline_.issue_next();
      if (plan_.depth == 0) sync();
      p_.close();
    }
    if (plan_.attention) emit_attention_finish();
  }

 private:
  int64_t accumulator_key(size_t i) const { return plan_.has_state(i) ? state_key(i) : bg_.operators()[i].outputs[0]; }

  void declare_alignments() {
    size_t input = 0, output = 0;
    for (const Operator &op : bg_.operators()) {
      if (op.kind == OpKind::kInputIterator) {
        if (plan_.group_of(op, plan_.dims_of(op.outputs[0]), op.attributes.dtype) > 1) {
          declare_alignment(p_, "in" + std::to_string(input));
        }
        ++input;
      } else if (op.kind == OpKind::kOutputSaver) {
        if (plan_.group_of(op, plan_.dims_of(op.inputs[0]), plan_.output_dtypes[output]) > 1) {
          declare_alignment(p_, "out" + std::to_string(output));
        }
        ++output;
      }
    }
  }

  // A matmul with what the plan lets its tensor-core path do: apply its only reader (a unary
  // operator) before storing, add its results to for-loop sums in registers, read A's operands
  // from registers or A and the result from padded views. After the loop: the matmul alone.
  void emit_matmul(const Step &step) {
    const Operator &op = bg_.operators()[step.op];
    const bool after = plan_.phase(op.outputs[0]) == LoopPhase::kAfterLoop;
    const Operator *epilogue = after ? nullptr : plan_.unary_consumer(op);
    const std::vector<size_t> sums = after ? std::vector<size_t>{} : plan_.epilogue_sums(op, epilogue);
    std::vector<Access> reads = step.reads;
    for (size_t sum : sums) reads.push_back({accumulator_key(sum), false});
    barrier_before(reads);
    TileMatmul matmul(p_, plan_.block_share(), plan_.block, plan_.tensor_cores);
    matmul.set_mfma(plan_.target.mfma_tiles);
    if (epilogue != nullptr) matmul.set_epilogue(epilogue, plan_.tile_ref(epilogue->outputs[0]));
    if (const auto fragments = fragment_arrays_.find(step.op); fragments != fragment_arrays_.end()) {
      matmul.set_a_fragments(fragments->second);
    }
    const TensorId result = epilogue != nullptr ? epilogue->outputs[0] : op.outputs[0];
    matmul.set_views(plan_.tensor_core_view(op.inputs[0]), plan_.tensor_core_view(result));
    if (!sums.empty()) {
      std::vector<TileMatmul::Sum> targets;
      for (size_t sum : sums) {
        const OpKind kind = bg_.operators()[sum].kind;
        targets.push_back(
            {plan_.accumulator_target(sum), kind == OpKind::kAccumReduceSum || kind == OpKind::kAccumReduceMean});
      }
      size_t reads_of_result = 0;
      for (const Operator &reader : bg_.operators()) {
        reads_of_result += static_cast<size_t>(std::count(reader.inputs.begin(), reader.inputs.end(), result));
      }
      matmul.set_sums(targets, reads_of_result > sums.size());
    }
    const bool same_index =
        matmul.emit(plan_.tile_ref(op.inputs[0]), plan_.tile_ref(op.inputs[1]), plan_.tile_ref(op.outputs[0]));
    if (matmul.accumulated()) {
      for (size_t sum : sums) {
        summed_in_epilogue_.insert(sum);
        wrote({{accumulator_key(sum), false}});
      }
    }
    wrote(step.writes, same_index);
    if (matmul.fused()) {
      fused_into_.insert(static_cast<size_t>(epilogue - bg_.operators().data()));
      wrote({{epilogue->outputs[0], false}});
    }
  }

  // An accumulator the matmul's tensor-core path added its results to: only devices before sm_80
  // (which take the plain matmul) run its plain update, between barriers of its own (the barrier
  // bookkeeping follows the tensor-core path).
  void update_before_sm80(const Step &step) {
    p_.line("#if __CUDA_ARCH__ < 800");
    p_.line("__syncthreads();");
    printer_.print(step.body);
    p_.line("__syncthreads();");
    p_.line("#endif");
  }

  // ---- attention in registers (cuda_attention.hpp) ----
  void emit_attention_iteration() {
    const auto &ops = bg_.operators();
    AttentionPlan &att = *plan_.attention;
    const Ref k = plan_.tile_ref(ops[att.qk].inputs[1]), v = plan_.tile_ref(ops[att.ev].inputs[1]);
    const Dims sk = k.element_strides(), sv = v.element_strides();
    att.emit_iteration(p_, k.ptr, sk[sk.size() - 2], v.ptr, sv[sv.size() - 2]);
    // Warps without keys issue the next copies.
    plan_.block.next_warp = att.warps % plan_.block.warps();
    plan_.block.idle_warps = plan_.block.warps() - att.warps;
  }

  void emit_attention_finish() {
    const AttentionPlan &att = *plan_.attention;
    // Warps still reading the last stages must be done before the scratch overwrites them.
    if (att.scratch_in_ring) p_.line("__syncthreads();");
    const auto &ops = bg_.operators();
    // Accumulator `sum`'s destination: its saver's place in the kernel output, or its tile.
    auto destination = [&](size_t sum, const std::optional<size_t> &saver, const std::string &name) {
      const Dims &dims = plan_.dims_of(ops[sum].outputs[0]);
      if (!saver) return RegisterAttention::Destination{plan_.accumulator_target(sum), dims.back(), "true"};
      const Operator &op = ops[*saver];
      const size_t output = plan_.output_index_of(*saver);
      const std::string tensor = "out" + std::to_string(output);
      p_.line("auto *const " + name + " = " + tensor + " + " +
              c_text(tile_base(bg_, op, dims, int_const(0)), kOffsetPrecedence) + ";");
      const Dims strides = row_major_strides(op.attributes.sizes);
      const bool pairs =
          plan_.output_dtypes[output] == DType::kFloat32 && plan_.group_of(op, dims, DType::kFloat32) > 1;
      return RegisterAttention::Destination{name, strides[strides.size() - 2], pairs ? aligned_name(tensor) : ""};
    };
    const auto ev = destination(att.sum_ev, att.ev_saver, "att_ev_out");
    const auto e_sum = destination(att.sum_e, att.e_saver, "att_e_out");
    att.emit_finish(p_, ev, e_sum, att.scratch);
    if (att.shares > 1) synced();  // emit_finish's barrier
    // Written by the warps that own their rows, not by the block-wide loops' owners.
    if (!att.ev_saver) wrote({{accumulator_key(att.sum_ev), false}});
    if (!att.e_saver) wrote({{accumulator_key(att.sum_e), false}});
  }

  // The producers had stage 0 in flight before the loop (LoadPipeline::start). At iteration it
  // they issue stage it + 1 (into the ring's slot of iteration it + 1 − depth, once every
  // computing thread is done with that), then wait for stage it's copies only, fence them for the
  // async proxy and arrive on its stage_full. A stage is announced as soon as it landed and the
  // next is under way: waiting for the readers of the slot of iteration it + 1 first would hold
  // back the announcement of stages that landed long before.
  void emit_specialized_loop() {
    const std::string R = std::to_string(bg_.config().forloop_range), D = std::to_string(plan_.depth);
    p_.open("if (threadIdx.x >= " + plan_.computing_threads() + ")");
    p_.open("for (int it = 0; it < " + R + "; ++it)");
    p_.line("const int next = it + 1;");
    p_.line("if (next >= " + D + " && next < " + R + ") yr_mbar_wait(stage_empty + next % " + D + ", (next / " + D +
            " - 1) & 1);");
    pipeline_.produce_stage("next");
    p_.line("yr_cp_wait<1>();");
    p_.line("yr_fence_proxy_async();");
    p_.line("yr_mbar_arrive(stage_full + it % " + D + ");");
    p_.close();
    p_.close();
    p_.open("else");
    plan_.attention->emit_turns_start(p_);
    p_.open("for (int it = 0; it < " + R + "; ++it)");
    p_.line("yr_mbar_wait(stage_full + it % " + D + ", (it / " + D + ") & 1);");
    emit_attention_iteration();
    p_.line("yr_mbar_arrive(stage_empty + it % " + D + ");");
    p_.close();
    p_.close();
  }

  UGraphPlan &plan_;
  LoadPipeline pipeline_;
  bool specialized_ = false;
  std::set<size_t> fused_into_;                    // unary operators done in the epilogue of a matmul
  std::set<size_t> summed_in_epilogue_;            // accumulators a matmul's tensor-core path updates
  std::map<size_t, std::string> fragment_arrays_;  // matmuls whose A's operands are in registers
};

}  // namespace

UGraphBodySettings ugraph_body_settings(const BlockGraph &bg, const std::vector<DType> &input_dtypes,
                                        const CudaTarget &target) {
  UGraphBodySettings settings;
  // The µGraph's own thread count is a cost-model parameter, not a requirement of the code. A
  // block gets at least 256 threads: fewer leave the scalar parts of block-level operators
  // (elementwise chains, reductions) latency-bound. More cost issue slots: every operator's code
  // runs in every warp, and 1024-thread blocks were slower than 256-thread ones on most benchmark
  // µGraphs. The count is a constant of the source (the body's: it may add a warpgroup of
  // producers), and __launch_bounds__ keeps the registers within what a block of that many
  // threads may use.
  const int64_t threads = bg.config().block_threads, wave = target.wavefront;
  settings.threads = std::clamp<int64_t>((threads + wave - 1) / wave * wave, kThreads, 1024);
  // TF32 tensor cores round matmul operands to 10 mantissa bits: exact for 16-bit inputs and
  // within float16/bfloat16 tolerance for computed tiles, not within float32's. The precision owed
  // is that of the tiles: a 16-bit tile written as float32 (a partial sum that its consumer adds
  // up, kept in float32 for its range) is still a 16-bit result.
  bool sixteen_bit = true;
  for (DType dtype : input_dtypes) sixteen_bit = sixteen_bit && dtype_size(dtype) == 2;
  for (TensorId saved : bg.outputs()) sixteen_bit = sixteen_bit && dtype_size(bg.tensor(saved).dtype) == 2;
  // HIP: no mma (its tile matmuls take MFMA or the float path).
  settings.tensor_cores = sixteen_bit && target.dialect == CudaDialect::kCuda;
  // HIP on 64-lane wavefronts: MFMA where asked for, on the same 16-bit graphs (cuda_tile_mfma.hpp).
  settings.target = target;
  settings.target.mfma_tiles =
      target.mfma_tiles && sixteen_bit && target.dialect == CudaDialect::kHip && target.wavefront == 64;
  return settings;
}

CustomizedBody emit_customized_body(Printer &p, const BlockGraph &bg, int64_t threads, std::vector<DType> output_dtypes,
                                    bool tensor_cores, const CudaTarget &target, const BodyPlacement &placement) {
  if (target.rows_in_registers && !has_ragged_tiles(bg)) {
    if (const std::optional<int64_t> bytes = emit_rows_in_registers(p, bg, threads, output_dtypes, placement)) {
      return {*bytes, threads};
    }
  }
  UGraphPlan plan(bg, threads, std::move(output_dtypes), tensor_cores, target);
  const LoweredUGraph lowered = lower_ugraph(bg, plan.lowering());
  CudaPrinter printer(p, &plan.block);
  return UGraphEmitter(printer, plan, lowered).emit(placement);
}

}  // namespace yirage::codegen::cuda
