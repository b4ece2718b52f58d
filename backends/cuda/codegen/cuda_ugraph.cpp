#include "cuda/codegen/cuda_ugraph.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "cuda/codegen/cuda_attention.hpp"
#include "cuda/codegen/cuda_compute_emitter.hpp"
#include "cuda/codegen/cuda_rows.hpp"

namespace yirage::codegen::cuda {
namespace {

// The customized operator: one CUDA block per µGraph block, tiles in dynamic shared memory.
class CustomizedEmitter {
 public:
  // threads: the block's thread count, a multiple of 32; output_dtypes: the element types of the
  // kernel's outputs, in order.
  // target: the device's shared memory, which bounds the load pipeline.
  CustomizedEmitter(Printer &p, const BlockGraph &bg, int64_t threads, std::vector<DType> output_dtypes,
                    bool tensor_cores, const CudaTarget &target)
      : p_(p), bg_(bg), output_dtypes_(std::move(output_dtypes)), tensor_cores_(tensor_cores), target_(target) {
    block_.threads = threads;
  }

  // Emits the body; returns the dynamic shared memory it needs and the block's threads.
  CustomizedBody emit() {
    const auto &ops = bg_.operators();
    plan_inlining();
    plan_row_padding();
    plan_shared_memory(ops);
    plan_producers();
    plan_tensor_core_views();
    // Swizzled stages need their 1024-byte alignment from the base: asked for, and checked (a
    // trap, the launch's error, rather than wrong sums where a driver placed it otherwise).
    if (any_swizzled()) {
      p_.line("extern __shared__ __align__(1024) float smem[];");
      p_.line("if ((static_cast<unsigned>(__cvta_generic_to_shared(smem)) & 1023u) != 0) __trap();");
    } else {
      p_.line("extern __shared__ float smem[];");
    }
    p_.line("const int64_t bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;");
    p_.line("(void)bx; (void)by; (void)bz;");
    declare_alignment(ops);
    load_invariant_tiles();
    start_pipeline();
    for (size_t i = 0; i < ops.size(); ++i) start_accumulator(i);
    if (producers_ > 0) start_stage_barriers();
    emit_invariant_part();
    if (producers_ > 0) {
      emit_specialized_loop();
    } else {
      emit_loop();
    }
    if (attention_) emit_attention_finish();
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (is_accumulator(op.kind)) {
        finish_accumulator(i);
      } else if (op.kind == OpKind::kOutputSaver) {
        const bool saved = attention_ && attention_->saves(i);
        if (!saved && phase(op.inputs[0]) != LoopPhase::kPerIteration) save_tile(i, "0");
      } else if (op.kind != OpKind::kInputIterator && !inlined(op.outputs[0]) &&
                 phase(op.outputs[0]) == LoopPhase::kAfterLoop) {
        barrier_before(compute_reads(op));
        compute(op);
        wrote(op.outputs, same_index_);
      }
    }
    return {layout_.floats * 4, block_.threads};
  }

  // The for-loop, every thread taking part in every step.
  void emit_loop() {
    const auto &ops = bg_.operators();
    p_.open("for (int it = 0; it < " + std::to_string(bg_.config().forloop_range) + "; ++it)");
    advance_pipeline();
    size_t input_index = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (op.kind == OpKind::kInputIterator) {
        const size_t input = input_index++;
        if (phase(op.outputs[0]) != LoopPhase::kInvariant && !prefetched(input)) read_tile(op, input);
      } else if (attention_ && attention_->handles(i)) {
        if (i == attention_->qk) emit_attention_iteration();
      } else if (is_accumulator(op.kind)) {
        update_accumulator(i);
      } else if (op.kind == OpKind::kOutputSaver) {
        if (phase(op.inputs[0]) == LoopPhase::kPerIteration) save_tile(i, "it");
      } else if (phase(op.outputs[0]) == LoopPhase::kPerIteration) {
        emit_compute(i);
      }
    }
    // The next iteration overwrites this one's tiles, which other threads may still be reading:
    // a barrier here, or the one at the top of the next iteration where the pipeline has one.
    issue_next_stages();
    if (depth_ == 0) sync();
    p_.close();
  }

  // ---- the warp-specialized loop ----
  // Where the loop's iteration is attention on warpgroup mma alone (sm_90a), reading K and V
  // from their stages, the warps split: the attention's warps compute, the others (a warpgroup
  // added where the attention takes every warp) only copy, and they meet at two mbarriers per
  // stage instead of a barrier of the whole block per iteration: stage_full[s] (its copies
  // landed and were made visible to the async proxy: one arrival per producer thread) and
  // stage_empty[s] (its readers are done: one per computing thread). Two computing warpgroups
  // no longer start every iteration together (one's softmax can run while the other's mma
  // does), and no copy waits for the slowest warp. On an H100 (benchmarks/gpu/RESULTS.md,
  // twenty-third session) gqa's chunk kernel at b = 8 (128 rows, 8 iterations of 128 keys)
  // took 19.6 us instead of 21.0, and gqa at b = 8 25.2 instead of 26.8 in bench.py.
  void plan_producers() {
    if (!attention_ || !attention_->warpgroups || depth_ < 2) return;
    const auto &ops = bg_.operators();
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (attention_->handles(i)) continue;
      if (op.kind == OpKind::kInputIterator) {
        if (phase(op.outputs[0]) == LoopPhase::kPerIteration && !direct(op.outputs[0])) return;
      } else if (op.kind == OpKind::kOutputSaver) {
        if (phase(op.inputs[0]) == LoopPhase::kPerIteration) return;
      } else if (is_accumulator(op.kind) || phase(op.outputs[0]) == LoopPhase::kPerIteration) {
        return;
      }
    }
    const int64_t computing = attention_->warps * 32;
    const int64_t threads = block_.warps() > attention_->warps ? block_.threads : computing + 128;
    if (threads > 1024) return;
    // The barriers, and for a larger block its reductions' scratch (a float per warp), past the
    // rest; nothing changes where they do not fit.
    const int64_t floats = layout_.floats;
    const std::string scratch[2] = {block_.scratch[0], block_.scratch[1]};
    if (threads != block_.threads) {
      for (std::string &s : block_.scratch) s = allocate_spare((threads / 32 + 3) / 4 * 4);
    }
    stage_barriers_ = allocate_spare(4 * depth_);  // 2 · depth mbarriers of 8 bytes
    if (stage_barriers_.empty() || block_.scratch[0].empty() || block_.scratch[1].empty()) {
      layout_.floats = floats;
      block_.scratch[0] = scratch[0];
      block_.scratch[1] = scratch[1];
      stage_barriers_.clear();
      return;
    }
    block_.threads = threads;
    producers_ = threads - computing;
    attention_->issue_turns = bg_.config().forloop_range;  // no block barrier: warpgroups take turns
  }
  std::string computing_threads() const { return std::to_string(block_.threads - producers_); }
  // The producers' threads, renumbered from 0.
  Sharing producer_sharing() const {
    return {"(static_cast<int64_t>(threadIdx.x) - " + computing_threads() + ")", std::to_string(producers_), producers_};
  }
  void start_stage_barriers() {
    const std::string D = std::to_string(depth_);
    p_.line("unsigned long long *const stage_full = reinterpret_cast<unsigned long long *>(" + stage_barriers_ +
            "), *const stage_empty = stage_full + " + D + ";");
    p_.open("if (threadIdx.x == 0)");
    p_.open("for (int s = 0; s < " + D + "; ++s)");
    p_.line("yr_mbar_init(stage_full + s, " + std::to_string(producers_) + ");");
    p_.line("yr_mbar_init(stage_empty + s, " + computing_threads() + ");");
    p_.close();
    p_.close();
    sync();
  }
  // Stage `it`'s copies by the producers: cp.async where the tensor is 16-byte aligned, plain
  // copies where not; one group committed either way.
  void produce_stage(const std::string &it) {
    const Sharing producers = producer_sharing();
    p_.open("if (" + it + " < " + std::to_string(bg_.config().forloop_range) + ")");
    fill_unaligned_stages(it, producers);
    p_.close();
    issue_stages(it, producers);
  }
  // The producers had stage 0 in flight before the loop (start_pipeline). At iteration it they
  // issue stage it + 1 (into the ring's slot of iteration it + 1 − depth, once every computing
  // thread is done with that), then wait for stage it's copies only, fence them for the async
  // proxy and arrive on its stage_full. A stage is announced as soon as it landed and the next
  // is under way: waiting for the readers of the slot of iteration it + 1 first would hold back
  // the announcement of stages that landed long before (on an H100 that took all of the gain).
  void emit_specialized_loop() {
    const std::string R = std::to_string(bg_.config().forloop_range), D = std::to_string(depth_);
    p_.open("if (threadIdx.x >= " + computing_threads() + ")");
    p_.open("for (int it = 0; it < " + R + "; ++it)");
    p_.line("const int next = it + 1;");
    p_.line("if (next >= " + D + " && next < " + R + ") yr_mbar_wait(stage_empty + next % " + D + ", (next / " + D +
            " - 1) & 1);");
    produce_stage("next");
    p_.line("yr_cp_wait<1>();");
    p_.line("yr_fence_proxy_async();");
    p_.line("yr_mbar_arrive(stage_full + it % " + D + ");");
    p_.close();
    p_.close();
    p_.open("else");
    attention_->emit_turns_start(p_);
    p_.open("for (int it = 0; it < " + R + "; ++it)");
    p_.line("yr_mbar_wait(stage_full + it % " + D + ", (it / " + D + ") & 1);");
    emit_attention_iteration();
    p_.line("yr_mbar_arrive(stage_empty + it % " + D + ");");
    p_.close();
    p_.close();
  }

  // The loop-invariant part before the loop: tiles read once and what is computed from them
  // only (and the stores of every prefetched tile, per-iteration ones of a loop that runs once
  // included). Done once, ahead of the loop's first iteration, and followed by one barrier
  // instead of costing one in every iteration.
  void emit_invariant_part() {
    const auto &ops = bg_.operators();
    const bool any = std::any_of(ops.begin(), ops.end(), [&](const Operator &op) {
      return op.kind != OpKind::kOutputSaver && !is_accumulator(op.kind) && phase(op.outputs[0]) == LoopPhase::kInvariant;
    });
    if (!any && prefetch_.empty()) return;
    p_.open("");
    p_.line("const int it = 0;  // invariant tiles do not move with the loop");
    p_.line("(void)it;");
    store_invariant_tiles();
    size_t input_index = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (op.kind == OpKind::kInputIterator) {
        const size_t input = input_index++;
        if (phase(op.outputs[0]) == LoopPhase::kInvariant && !prefetched(input)) read_tile(op, input);
      } else if (!is_accumulator(op.kind) && op.kind != OpKind::kOutputSaver &&
                 phase(op.outputs[0]) == LoopPhase::kInvariant && !(attention_ && attention_->handles(i))) {
        emit_compute(i);
      }
    }
    p_.close();
    sync();
    if (attention_) {
      const std::optional<size_t> &norm = attention_->q_norm;
      const Ref q = tile_ref(norm ? ops[*norm].inputs[0] : ops[attention_->qk].inputs[0]);
      const Dims sq = q.element_strides();
      attention_->emit_registers(p_, q.ptr, sq[sq.size() - 2],
                                 norm ? std::optional<double>(ops[*norm].attributes.eps) : std::nullopt);
    }
    // A per-iteration matmul's invariant A: its operands into registers once, not read (with
    // bank conflicts) in every iteration.
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (op.kind != OpKind::kMatmul || phase(op.outputs[0]) != LoopPhase::kPerIteration ||
          phase(op.inputs[0]) != LoopPhase::kInvariant || (attention_ && attention_->handles(i))) {
        continue;
      }
      const std::string name = "a_fragments" + std::to_string(i);
      ComputeEmitter emitter(p_, block_wide(), &block_, tensor_cores_);
      if (emitter.register_fragments(name, tile_ref(op.inputs[0]), tile_ref(op.inputs[1]), tile_ref(op.outputs[0]))) {
        fragment_arrays_[i] = name;
      }
    }
  }

  // ---- attention in registers (cuda_attention.hpp) ----
  struct AttentionPlan : RegisterAttention {
    size_t qk = 0, exp = 0, ev = 0, sum_ev = 0, sum_e = 0;  // the operators it runs
    std::optional<size_t> q_norm;  // Q = rms_norm(X), done as Q's fragments are loaded from X
    std::optional<size_t> row_sum;  // E's rows summed in the iteration, then accumulated by sum_e
    // The output savers that are all that read sum_ev's and sum_e's results: the sums then go
    // straight to the kernel's outputs, without a tile (a split loop's chunks).
    std::optional<size_t> ev_saver, e_saver;
    std::string scratch;  // scratch_floats() where the warps' sums meet (empty: none needed)
    bool scratch_in_ring = false;  // the load pipeline's stages, free after the loop
    bool handles(size_t i) const {
      return i == qk || i == exp || i == ev || i == sum_ev || i == sum_e || i == row_sum || i == q_norm;
    }
    bool saves(size_t i) const { return i == ev_saver || i == e_saver; }
  };

  std::vector<size_t> readers(TensorId t) const {
    std::vector<size_t> found;
    const auto &ops = bg_.operators();
    for (size_t i = 0; i < ops.size(); ++i) {
      if (std::count(ops[i].inputs.begin(), ops[i].inputs.end(), t) > 0) found.push_back(i);
    }
    return found;
  }
  // Rows of Q, depth, keys and V's columns of a·b where every dim before the last two is 1.
  static bool plain_matrix(const Dims &dims) {
    return std::all_of(dims.begin(), dims.end() - 2, [](int64_t d) { return d == 1; });
  }

  // Finds A = Q·K, E = exp(A), Σ E (row sums), Σ E·V in the loop with Q loop-invariant, K and V
  // read by the mma from their 16-bit stages, and no other reader of A, E or E·V.
  void plan_register_attention() {
    if (!tensor_cores_ || target_.compute_capability < 80) return;
    const auto &ops = bg_.operators();
    for (size_t qk = 0; qk < ops.size(); ++qk) {
      const Operator &mm = ops[qk];
      if (mm.kind != OpKind::kMatmul || phase(mm.outputs[0]) != LoopPhase::kPerIteration ||
          phase(mm.inputs[0]) != LoopPhase::kInvariant) {
        continue;
      }
      const std::vector<size_t> exps = readers(mm.outputs[0]);
      if (exps.size() != 1 || ops[exps[0]].kind != OpKind::kExp) continue;
      const TensorId e = ops[exps[0]].outputs[0];
      std::optional<size_t> ev, sum_e, row_sum;
      bool other = false;
      for (size_t r : readers(e)) {
        if (!ev && ops[r].kind == OpKind::kMatmul && ops[r].inputs[0] == e && ops[r].inputs[1] != e) {
          ev = r;
        } else if (!sum_e && ops[r].kind == OpKind::kAccumReduceSum) {
          sum_e = r;
        } else if (!sum_e && ops[r].kind == OpKind::kReduction &&
                   ops[r].attributes.dim == static_cast<int32_t>(dims_of(e).size()) - 1) {
          // Σ E written as the iteration's row sums, accumulated (AccumSum, or AccumReduceSum of
          // a last dim of 1): the same sums.
          const std::vector<size_t> acc = readers(ops[r].outputs[0]);
          if (acc.size() == 1 && (ops[acc[0]].kind == OpKind::kAccumSum || ops[acc[0]].kind == OpKind::kAccumReduceSum)) {
            row_sum = r;
            sum_e = acc[0];
          } else {
            other = true;
          }
        } else {
          other = true;
        }
      }
      if (other || !ev || !sum_e) continue;
      const std::vector<size_t> sums = readers(ops[*ev].outputs[0]);
      if (sums.size() != 1 || ops[sums[0]].kind != OpKind::kAccumSum) continue;
      // (Planned before the tiles' places: only what the graph says is used here.)
      const TensorId q = mm.inputs[0], k = mm.inputs[1], v = ops[*ev].inputs[1];
      if (!direct(k) || !direct(v) || inlined(mm.outputs[0]) || inlined(e) || inlined(q)) continue;
      const Operator &q_source = producer(q), &k_source = producer(k), &v_source = producer(v);
      const DType element = k_source.attributes.dtype;
      if (!plain_matrix(dims_of(q)) || !plain_matrix(dims_of(k)) || !plain_matrix(dims_of(v)) ||
          v_source.attributes.dtype != element) {
        continue;
      }
      // Q goes to the mma in K's 16-bit type: exactly where its values are that type widened;
      // an rms_norm without weight (|x| ≤ √depth) rounds as TF32 would, within range.
      const bool q_exact = q_source.kind == OpKind::kInputIterator && q_source.attributes.dtype == element;
      const bool q_bounded = q_source.kind == OpKind::kRmsNorm && !q_source.attributes.has_weight;
      if (!q_exact && !q_bounded) continue;
      AttentionPlan plan;
      // rms_norm(X) over Q's rows read by Q·K alone: normalized as the fragments are loaded.
      if (q_bounded && q_source.attributes.sizes == Dims{dims_of(q).back()} && readers(q).size() == 1 &&
          !inlined(q_source.inputs[0]) && !direct(q_source.inputs[0])) {
        plan.q_norm = static_cast<size_t>(bg_.tensor(q).producer);
      }
      const size_t rank = dims_of(q).size();
      plan.rows = dims_of(q)[rank - 2];
      plan.depth = dims_of(q)[rank - 1];
      plan.keys = dims_of(k)[rank - 1];
      plan.cols = dims_of(v)[rank - 1];
      plan.element = element_type(element);
      plan.offset_slack = target_.attention_offset_slack;
      const bool warpgroups = target_.warpgroup_mma() && plan.fits_warpgroups(block_.warps());
      if (!warpgroups && !plan.fits(block_.warps())) continue;
      plan.qk = qk;
      plan.exp = exps[0];
      plan.ev = *ev;
      plan.sum_ev = sums[0];
      plan.sum_e = *sum_e;
      plan.row_sum = row_sum;
      plan.ev_saver = only_saver(ops[plan.sum_ev].outputs[0]);
      plan.e_saver = only_saver(ops[plan.sum_e].outputs[0]);
      attention_ = plan;
      return;
    }
  }
  // The output saver that is the only reader of t, if there is one.
  std::optional<size_t> only_saver(TensorId t) const {
    const std::vector<size_t> found = readers(t);
    if (found.size() != 1 || bg_.operators()[found[0]].kind != OpKind::kOutputSaver) return std::nullopt;
    return found[0];
  }
  // The scratch array: the stages of the load pipeline where they are large enough (no copy is
  // in flight after the loop), else room past everything else. False where neither fits.
  bool place_attention_scratch() {
    const int64_t floats = attention_->scratch_floats();
    if (floats == 0) return true;
    if (depth_ == 0) return false;
    int64_t ring = 0;
    for (const Stage &st : stages_) ring += depth_ * st.floats;
    attention_->scratch_in_ring = ring >= floats;
    attention_->scratch = attention_->scratch_in_ring ? at(stages_.front().offset) : allocate_spare(floats);
    return !attention_->scratch.empty();
  }
  void emit_attention_iteration() {
    const auto &ops = bg_.operators();
    const Ref k = tile_ref(ops[attention_->qk].inputs[1]), v = tile_ref(ops[attention_->ev].inputs[1]);
    const Dims sk = k.element_strides(), sv = v.element_strides();
    attention_->emit_iteration(p_, k.ptr, sk[sk.size() - 2], v.ptr, sv[sv.size() - 2]);
    // Warps without keys issue the next copies.
    block_.next_warp = attention_->warps % block_.warps();
    block_.idle_warps = block_.warps() - attention_->warps;
  }
  void emit_attention_finish() {
    // Warps still reading the last stages must be done before the scratch overwrites them.
    if (attention_->scratch_in_ring) p_.line("__syncthreads();");
    const auto &ops = bg_.operators();
    // Accumulator `sum`'s destination: its saver's place in the kernel output, or its tile.
    auto destination = [&](size_t sum, const std::optional<size_t> &saver, const std::string &name) {
      const Dims &dims = dims_of(ops[sum].outputs[0]);
      if (!saver) return RegisterAttention::Destination{accumulator_target(sum), dims.back(), "true"};
      const Operator &op = ops[*saver];
      const size_t output = output_index_of(*saver);
      const std::string tensor = "out" + std::to_string(output);
      p_.line("auto *const " + name + " = " + tensor + " + " + tile_base(bg_, op, dims, "0") + ";");
      const Dims strides = row_major_strides(op.attributes.sizes);
      const bool pairs = output_dtypes_[output] == DType::kFloat32 && group_of(op, dims, DType::kFloat32) > 1;
      return RegisterAttention::Destination{name, strides[strides.size() - 2], pairs ? aligned_name(tensor) : ""};
    };
    const auto ev = destination(attention_->sum_ev, attention_->ev_saver, "att_ev_out");
    const auto e_sum = destination(attention_->sum_e, attention_->e_saver, "att_e_out");
    attention_->emit_finish(p_, ev, e_sum, attention_->scratch);
    if (attention_->shares > 1) {  // emit_finish's barrier
      dirty_same_index_.clear();
      dirty_other_.clear();
    }
    // Written by the warps that own their rows, not by the block-wide loops' owners.
    if (!attention_->ev_saver) wrote_key(accumulator_key(attention_->sum_ev), false);
    if (!attention_->e_saver) wrote_key(accumulator_key(attention_->sum_e), false);
  }
  // Which kernel output output saver `saver` writes: the savers are the outputs, in order.
  size_t output_index_of(size_t saver) const {
    const auto &ops = bg_.operators();
    return static_cast<size_t>(std::count_if(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(saver),
                                             [](const Operator &op) { return op.kind == OpKind::kOutputSaver; }));
  }

  // ---- tensor-core views ----
  // A transposed matmul reads each lane's A row at the same columns as 7 other lanes' rows: in a
  // tile whose rows are a multiple of 32 floats long those are 8-way bank conflicts, on the
  // matmul's critical path (E in attention's E·V). Where a per-iteration result of a transposed
  // matmul is read, on sm_80+, only by transposed matmuls as A (and by sums its epilogue
  // updates), the tensor-core code stores it in a copy of its own whose rows are 8 floats longer
  // (conflict-free reads, 2-way stores) and reads it from there; the tile itself is what devices
  // before sm_80 use. Views are placed past everything else, where they fit.
  void plan_tensor_core_views() {
    if (!tensor_cores_) return;
    const auto &ops = bg_.operators();
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operator &op = ops[i];
      if (op.kind != OpKind::kMatmul || phase(op.outputs[0]) != LoopPhase::kPerIteration ||
          (attention_ && attention_->handles(i)) || !ComputeEmitter::transposes(tile_ref(op.inputs[0]), tile_ref(op.inputs[1]), tile_ref(op.outputs[0]), true)) {
        continue;
      }
      const Operator *epilogue = unary_consumer(op);
      const TensorId result = epilogue != nullptr ? epilogue->outputs[0] : op.outputs[0];
      const Dims &dims = dims_of(result);
      if (dims.back() % 32 != 0 || direct(result) || inlined(result)) continue;
      const std::vector<size_t> sums = epilogue_sums(op, epilogue);
      bool only_transposed = true, read_as_a = false;
      for (size_t r = 0; r < ops.size(); ++r) {
        const Operator &reader = ops[r];
        for (size_t k = 0; k < reader.inputs.size(); ++k) {
          if (reader.inputs[k] != result) continue;
          const bool as_a = reader.kind == OpKind::kMatmul && k == 0 && reader.inputs[1] != result &&
                            ComputeEmitter::transposes(tile_ref(result), tile_ref(reader.inputs[1]),
                                                       tile_ref(reader.outputs[0]), true);
          read_as_a = read_as_a || as_a;
          only_transposed = only_transposed && (as_a || std::count(sums.begin(), sums.end(), r) > 0);
        }
      }
      if (!only_transposed || !read_as_a) continue;
      Dims padded = dims;
      padded.back() += 8;
      const std::string at = allocate_spare(num_elements(padded));
      if (at.empty()) continue;
      Ref view = tile_ref(result);
      view.ptr = at;
      view.strides = row_major_strides(padded);
      // Its readers are TF32 mma (a computed result is never B's 16-bit type widened): it holds
      // the values rounded to TF32 once, by the writer, instead of by every read.
      view.tf32_rounded = !view.widened_16bit;
      tensor_core_views_.emplace(result, view);
    }
  }
  std::optional<Ref> tensor_core_view(TensorId t) const {
    const auto found = tensor_core_views_.find(t);
    return found == tensor_core_views_.end() ? std::nullopt : std::optional<Ref>(found->second);
  }
  // Shared memory past everything planned, for `floats` more floats, when it fits the block's
  // limit: a pointer expression, or "" when it does not fit.
  std::string allocate_spare(int64_t floats) {
    const int64_t offset = (layout_.floats + 3) / 4 * 4;
    if (target_.max_shared_bytes > 0 && (offset + floats) * 4 > target_.max_shared_bytes) return "";
    layout_.floats = offset + floats;
    return at(offset);
  }

  // A compute operator in the loop or before it (not one inlined into its reader or done in a
  // matmul's epilogue), with its barrier.
  void emit_compute(size_t i) {
    const Operator &op = bg_.operators()[i];
    if (fused_into_.count(i) != 0 || inlined(op.outputs[0])) return;
    const Operator *epilogue = unary_consumer(op);
    const std::vector<size_t> sums = epilogue_sums(op, epilogue);
    std::vector<std::pair<Key, bool>> reads = compute_reads(op);
    for (size_t sum : sums) reads.push_back({accumulator_key(sum), false});
    barrier_before(reads);
    const bool fused = compute(op, epilogue, sums);
    wrote(op.outputs, same_index_);
    if (fused) {
      fused_into_.insert(static_cast<size_t>(epilogue - bg_.operators().data()));
      wrote(epilogue->outputs, false);
    }
  }

 private:
  const Dims &dims_of(TensorId id) const { return bg_.tensor(id).dims; }
  LoopPhase phase(TensorId id) const { return bg_.tensor(id).phase; }
  std::string at(int64_t offset) const { return "(smem + " + std::to_string(offset) + ")"; }
  std::string tile(TensorId id) const { return at(layout_.tile[static_cast<size_t>(id)]); }
  Sharing block_wide() const { return cuda::block_wide(block_.threads); }

  // ---- elementwise chains ----
  // A tile made by an elementwise operator and read by exactly one elementwise operator, at that
  // operator's own output index (same dims) and in the same loop phase, is never stored: its
  // reader computes it in the reader's own loop. x + a·(y − x) is then one pass over shared
  // memory instead of three, with one tile instead of three, and no barriers between. A unary
  // operator done in a matmul's epilogue (unary_consumer) stays as it is.
  void plan_inlining() {
    inlined_.assign(bg_.num_tensors(), false);
    std::vector<int> readers(bg_.num_tensors(), 0);
    for (const Operator &op : bg_.operators()) {
      for (TensorId t : op.inputs) ++readers[static_cast<size_t>(t)];
    }
    for (const Operator &op : bg_.operators()) {
      if (!is_elementwise(op.kind)) continue;
      for (TensorId t : op.inputs) {
        const Operator &made_by = producer(t);
        if (!is_elementwise(made_by.kind) || readers[static_cast<size_t>(t)] != 1 ||
            dims_of(t) != dims_of(op.outputs[0]) || phase(t) != phase(op.outputs[0]) || in_epilogue(made_by)) {
          continue;
        }
        inlined_[static_cast<size_t>(t)] = true;
      }
    }
  }
  bool inlined(TensorId t) const { return inlined_[static_cast<size_t>(t)]; }
  static bool is_elementwise(OpKind kind) { return is_unary(kind) || is_binary(kind); }
  const Operator &producer(TensorId t) const {
    return bg_.operators()[static_cast<size_t>(bg_.tensor(t).producer)];
  }
  // Whether `op` is the unary operator that some matmul applies in its epilogue.
  bool in_epilogue(const Operator &op) const {
    return is_unary(op.kind) && unary_consumer(producer(op.inputs[0])) == &op;
  }

  // An elementwise operator with inlined inputs: one loop over its output, each element's chain
  // of values in registers.
  void compute_chain(const Operator &op) {
    // Without broadcasts every tile is read at the output's linear index: one flat loop.
    bool broadcast = false;
    for_each_leaf(op, [&](TensorId t) { broadcast = broadcast || dims_of(t) != dims_of(op.outputs[0]); });
    const Dims out = broadcast ? dims_of(op.outputs[0]) : Dims{num_elements(dims_of(op.outputs[0]))};
    const std::string o = tile(op.outputs[0]);
    shared_loop(p_, block_wide(), out, "i", [&](const std::vector<std::string> &v) {
      int next = 0;
      const std::string value = chain_value(op, v, out, next);
      p_.line("yr_st(" + o + " + " + index_expr(v, row_major_strides(out)) + ", " + value + ");");
    });
  }
  // Calls f on every stored tile an operator's chain reads.
  void for_each_leaf(const Operator &op, const std::function<void(TensorId)> &f) const {
    for (TensorId t : op.inputs) {
      if (inlined(t)) for_each_leaf(producer(t), f);
      else f(t);
    }
  }
  // Declares op's value at index `v` of `out` (and the values it needs first); returns its name.
  std::string chain_value(const Operator &op, const std::vector<std::string> &v, const Dims &out, int &next) {
    std::vector<std::string> args;
    for (TensorId t : op.inputs) {
      if (inlined(t)) {
        args.push_back(chain_value(producer(t), v, out, next));
        continue;
      }
      args.push_back("c" + std::to_string(next++));
      const Dims strides = v.size() == dims_of(t).size() ? broadcast_strides(dims_of(t), out) : Dims{1};
      p_.line("const float " + args.back() + " = yr_ld(" + tile(t) + " + " + index_expr(v, strides) + ");");
    }
    const std::string name = "c" + std::to_string(next++);
    p_.line("const float " + name + " = " +
            (is_unary(op.kind) ? unary_expr(op.kind, op.attributes, args[0]) : binary_expr(op.kind, args[0], args[1])) +
            ";");
    return name;
  }

  // ---- padded tiles ----
  // A tile read only as the B operand of tensor-core matmuls has its rows padded by 4 floats
  // when their length is a multiple of 32. The lanes of an mma read B in one column at rows 4
  // apart (k is permuted, see tensor_core_matmul), which in an unpadded tile all fall in one bank
  // (4-way conflicts); 4 floats of padding halve that and keep rows 16-byte aligned for float4
  // stores (8 floats would change nothing: 4 rows · 8 = 32). On an H100 this made the attention
  // µGraphs 12% faster.
  void plan_row_padding() {
    row_pad_.assign(bg_.num_tensors(), 0);
    if (!tensor_cores_) return;
    for (const Operator &op : bg_.operators()) {
      if (op.kind != OpKind::kInputIterator) continue;
      const TensorId t = op.outputs[0];
      const Dims &dims = dims_of(t);
      bool only_b = dims.size() >= 2 && dims.back() % 32 == 0;
      for (const Operator &user : bg_.operators()) {
        for (size_t i = 0; i < user.inputs.size(); ++i) {
          if (user.inputs[i] != t) continue;
          const bool as_b = user.kind == OpKind::kMatmul && i == 1 && dims_of(user.inputs[0]).back() % 8 == 0;
          only_b = only_b && as_b;
        }
      }
      if (only_b) row_pad_[static_cast<size_t>(t)] = 4;
    }
  }
  // The layout: 16-byte aligned tiles (float4 reads), the two scratch arrays of reductions, the
  // load pipeline's stages. A 16-bit B tile that is staged (padded, above) is read by the mma
  // straight from its stage (`direct_`: no float copy, no conversion pass; the widening is
  // exact), unless the stages then do not fit, when every tile is planned again.
  void plan_shared_memory(const std::vector<Operator> &ops) {
    direct_.assign(bg_.num_tensors(), false);
    for (const Operator &op : ops) {
      const TensorId t = op.kind == OpKind::kInputIterator ? op.outputs[0] : -1;
      if (t < 0 || row_pad_[static_cast<size_t>(t)] == 0 || dtype_size(op.attributes.dtype) != 2) continue;
      direct_[static_cast<size_t>(t)] = phase(t) == LoopPhase::kPerIteration && bg_.config().forloop_range >= 2 &&
                                        group_of(op, dims_of(t), op.attributes.dtype) > 1;
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      // With attention in registers where it applies (its per-iteration tiles then get no room),
      // else without.
      for (const bool registers : {true, false}) {
        attention_.reset();
        if (registers) plan_register_attention();
        if (registers && !attention_) continue;
        std::vector<bool> elsewhere = direct_, sums_elsewhere;
        for (size_t t = 0; t < elsewhere.size(); ++t) elsewhere[t] = elsewhere[t] || inlined_[t];
        if (attention_) {
          const auto &ops = bg_.operators();
          for (size_t i : {attention_->qk, attention_->exp, attention_->ev}) elsewhere[static_cast<size_t>(ops[i].outputs[0])] = true;
          if (attention_->row_sum) elsewhere[static_cast<size_t>(ops[*attention_->row_sum].outputs[0])] = true;
          if (attention_->q_norm) elsewhere[static_cast<size_t>(ops[*attention_->q_norm].outputs[0])] = true;
          if (attention_->ev_saver) elsewhere[static_cast<size_t>(ops[attention_->sum_ev].outputs[0])] = true;
          if (attention_->e_saver) elsewhere[static_cast<size_t>(ops[attention_->sum_e].outputs[0])] = true;
          // Σ E's row sums are the warps' (no rows × keys state to clear and reduce).
          sums_elsewhere.assign(ops.size(), false);
          sums_elsewhere[attention_->sum_e] = true;
        }
        layout_ = plan_block_layout(bg_, 4, row_pad_, elsewhere, sums_elsewhere);
        const int64_t scratch_floats = (block_.warps() + 3) / 4 * 4;
        block_.scratch[0] = at(layout_.floats);
        block_.scratch[1] = at(layout_.floats + scratch_floats);
        layout_.floats += 2 * scratch_floats;
        stages_.clear();
        depth_ = 0;
        plan_stages();
        if (!attention_ || place_attention_scratch()) break;
      }
      if (depth_ > 0 || std::find(direct_.begin(), direct_.end(), true) == direct_.end()) return;
      direct_.assign(bg_.num_tensors(), false);
    }
  }
  bool direct(TensorId t) const { return direct_[static_cast<size_t>(t)]; }

  // A tile's element strides (its rows padded or not).
  Dims tile_strides(TensorId t) const {
    Dims dims = dims_of(t);
    dims.back() += row_pad_[static_cast<size_t>(t)];
    Dims strides = row_major_strides(dims);
    return strides;
  }
  Ref tile_ref(TensorId t) const {
    if (direct(t)) {
      for (const Stage &st : stages_) {
        if (st.op->outputs[0] != t) continue;
        Ref ref{stage_ptr(st, "it"), dims_of(t), st.strides};
        ref.widened_16bit = ref.raw_16bit = true;
        ref.element = st.op->attributes.dtype;
        return ref;
      }
    }
    Ref ref{tile(t), dims_of(t), row_pad_[static_cast<size_t>(t)] > 0 ? tile_strides(t) : Dims{}};
    for (const Operator &op : bg_.operators()) {
      if (op.kind != OpKind::kInputIterator || op.outputs[0] != t) continue;
      ref.widened_16bit = dtype_size(op.attributes.dtype) == 2;
      ref.element = op.attributes.dtype;
    }
    return ref;
  }

  // ---- tile transfers ----
  // A tile moves in 16-byte groups of consecutive elements (one load or store of global memory,
  // converted in registers, and one or two float4 accesses of shared memory) when every group
  // starts at a multiple of the group in the kernel-level tensor and in the tile; the tensor's
  // base must then be 16-byte aligned, which the kernel tests once at its start (a caller's
  // tensor may start anywhere: unaligned ones take the element-wise copy).
  int64_t group_of(const Operator &op, const Dims &tile_dims, DType dtype) const {
    const int64_t group = group_elements(dtype);
    if (tile_dims.back() % group != 0 || op.attributes.sizes.back() % group != 0) return 1;
    if (tile_base_granule(bg_, op, tile_dims) % group != 0) return 1;
    return group;
  }
  static std::string aligned_name(const std::string &tensor) { return tensor + "_16"; }

  void declare_alignment(const std::vector<Operator> &ops) {
    size_t input = 0, output = 0;
    for (const Operator &op : ops) {
      std::string name;
      if (op.kind == OpKind::kInputIterator) {
        name = "in" + std::to_string(input);
        if (group_of(op, dims_of(op.outputs[0]), op.attributes.dtype) == 1) name.clear();
        ++input;
      } else if (op.kind == OpKind::kOutputSaver) {
        name = "out" + std::to_string(output);
        if (group_of(op, dims_of(op.inputs[0]), output_dtypes_[output]) == 1) name.clear();
        ++output;
      }
      if (!name.empty()) {
        p_.line("const bool " + aligned_name(name) + " = (reinterpret_cast<unsigned long long>(" + name +
                ") & 15) == 0;");
      }
    }
  }

  // Copies between a tile (float, in shared memory) and its place in a kernel-level tensor:
  // body(index in the tensor, in the tile) per element or 16-byte group.
  using TransferBody = std::function<void(const std::string &, const std::string &)>;
  void transfer(const std::string &tensor, const Operator &op, TensorId tile_id, int64_t group,
                const TransferBody &element, const TransferBody &vector) {
    const Dims &tile_dims = dims_of(tile_id);
    const Dims sg = row_major_strides(op.attributes.sizes), st = tile_strides(tile_id);
    // Unrolled so that each thread has several global loads in flight: a tile load is otherwise
    // one memory latency per element a thread copies.
    auto copy = [&](int64_t g, const TransferBody &body) {
      Dims groups = tile_dims, gg = sg, gt = st;
      groups.back() /= g;
      gg.back() = gt.back() = g;
      shared_loop(p_, block_wide(), groups, "t", [&](const std::vector<std::string> &v) {
        body(index_expr(v, gg), index_expr(v, gt));
      }, 8);
    };
    if (group == 1) {
      copy(1, element);
      return;
    }
    p_.open("if (" + aligned_name(tensor) + ")");
    copy(group, vector);
    p_.close();
    p_.open("else");
    copy(1, element);
    p_.close();
  }

  // ---- the load pipeline ----
  // Tiles the for-loop reads anew every iteration, in 16-byte groups, are copied with cp.async
  // into a ring of `depth_` raw (unconverted) stages in shared memory, depth − 1 iterations
  // ahead: global loads are in flight while the block computes. At the top of each iteration the
  // block waits for iteration it's copies (its own, then a barrier for everyone's), then issues
  // those of iteration it + depth − 1; at the tile's turn its stage is converted into the float
  // tile. The stage written at iteration it was read in iteration it − 1, before that barrier.
  struct Stage {
    size_t input;
    const Operator *op;
    int64_t group, offset, floats;  // the ring's place in shared memory and one stage's size
    Dims strides;                   // of a stage, in elements: compact, or padded rows if direct
    // Laid out as yr_swizzled128 says (attention's K and V for warpgroup mma), each matrix of
    // `rows` rows; 1024-byte aligned.
    bool swizzled = false;
    int64_t rows = 0;
  };
  bool any_swizzled() const {
    return std::any_of(stages_.begin(), stages_.end(), [](const Stage &st) { return st.swizzled; });
  }
  // Where element `v` (one variable per dim of the tile; the last counts 16-byte groups of
  // `group` elements, or elements where group is 1) goes in a stage.
  std::string stage_index(const Stage &st, const std::vector<std::string> &v, int64_t group) const {
    if (!st.swizzled) {
      Dims strides = st.strides;
      strides.back() = group;
      return index_expr(v, strides);
    }
    const size_t n = v.size();
    const std::vector<std::string> lead(v.begin(), v.end() - 2);
    const Dims lead_strides(st.strides.begin(), st.strides.end() - 2);
    const std::string column = group == 1 ? v[n - 1] : v[n - 1] + " * " + std::to_string(group);
    return "(" + index_expr(lead, lead_strides) + " + yr_swizzled128(" + v[n - 2] + ", " + column + ", " +
           std::to_string(st.rows) + "))";
  }
  // Whether the tile `t` is K or V of attention on warpgroup mma.
  bool warpgroup_operand(TensorId t) const {
    if (!attention_ || !attention_->warpgroups) return false;
    const auto &ops = bg_.operators();
    return t == ops[attention_->qk].inputs[1] || t == ops[attention_->ev].inputs[1];
  }

  // The ring's depth: the deepest of 4, 3, 2 (and at most the loop's range: deeper stages would
  // never be filled) whose stages fit beside the tiles in a block's shared memory (0 if 2 do
  // not); up to the whole loop (at most 16) where all of its stages take at most 32 KiB: a loop
  // that moves that little per iteration is bound by the latency of its copies, which are then
  // all in flight from the start (on an H100, with 4-byte stages for its row sums: attention's
  // sum of 8 parts 5.1 -> 4.4 us, of 4 parts 4.3 -> 3.8, Nsight Compute at boost clock; those
  // sums now run in registers, cuda_rows.cpp). Where the device is known and that
  // leaves more blocks than its multiprocessors hold at once, the deepest that holds them all,
  // or 2: blocks that wait for a second wave cost more than a shallower ring (on an H100,
  // attention split over keys into 256 blocks of 8 iterations: 31.6 -> 27.1 us with 2 stages
  // instead of 4).
  static constexpr int64_t kSmallRingBytes = 32 * 1024, kMaxRingDepth = 16;
  int ring_depth(int64_t stage_floats) const {
    const int64_t blocks = bg_.config().grid[0] * bg_.config().grid[1] * bg_.config().grid[2];
    const bool known = target_.multiprocessors > 0 && target_.shared_bytes_per_multiprocessor > 0;
    const int64_t range = bg_.config().forloop_range;
    const int64_t deepest = std::min(range, range * stage_floats * 4 <= kSmallRingBytes ? kMaxRingDepth : 4);
    int chosen = 0;
    for (int depth = static_cast<int>(deepest); depth >= 2; --depth) {
      const int64_t bytes = (layout_.floats + depth * stage_floats) * 4;
      if (target_.max_shared_bytes > 0 && bytes > target_.max_shared_bytes) continue;
      chosen = depth;
      // sm_80 and newer reserve 1 KiB of a multiprocessor's shared memory per block.
      if (!known || target_.multiprocessors * (target_.shared_bytes_per_multiprocessor / (bytes + 1024)) >= blocks) break;
    }
    return chosen;
  }

  // Chooses the staged inputs and the ring's depth.
  void plan_stages() {
    if (bg_.config().forloop_range < 2) return;
    int64_t stage_floats = 0;
    each_input_tile([&](const Operator &op, size_t input, const Dims &tile_dims, int64_t group) {
      // float32 tiles without 16-byte groups are copied 4 bytes at a time (yr_cp4); 16-bit ones
      // are read directly in the loop.
      if (phase(op.outputs[0]) != LoopPhase::kPerIteration) return;
      if (group == 1 && dtype_size(op.attributes.dtype) != 4) return;
      // A direct stage's rows are padded by 8 elements: 16 bytes keep cp.async aligned, and rows
      // 4 apart then fall 2 ways into the banks instead of 4. A swizzled one is compact.
      const bool swizzled = warpgroup_operand(op.outputs[0]);
      Dims padded = tile_dims;
      if (direct(op.outputs[0]) && !swizzled) padded.back() += 8;
      const int64_t floats =
          (num_elements(padded) * static_cast<int64_t>(dtype_size(op.attributes.dtype)) / 4 + 3) / 4 * 4;
      stages_.push_back({input, &op, group, 0, floats, row_major_strides(padded), swizzled, tile_dims[tile_dims.size() - 2]});
      stage_floats += floats;
    });
    if (stages_.empty()) return;
    depth_ = ring_depth(stage_floats);
    if (depth_ < 2) {
      stages_.clear();
      depth_ = 0;
      return;
    }
    for (Stage &st : stages_) {
      if (st.swizzled) layout_.floats = (layout_.floats + 255) / 256 * 256;
      st.offset = layout_.floats;
      layout_.floats += depth_ * st.floats;
    }
  }
  // Calls f(op, input index, tile dims, 16-byte group) for every input iterator, in order.
  void each_input_tile(const std::function<void(const Operator &, size_t, const Dims &, int64_t)> &f) const {
    size_t input = 0;
    for (const Operator &op : bg_.operators()) {
      if (op.kind != OpKind::kInputIterator) continue;
      const Dims &tile_dims = dims_of(op.outputs[0]);
      f(op, input++, tile_dims, group_of(op, tile_dims, op.attributes.dtype));
    }
  }
  const Stage *stage_of(size_t input) const {
    for (const Stage &st : stages_) {
      if (st.input == input) return &st;
    }
    return nullptr;
  }
  // The raw stage for iteration `it` (an expression) as a pointer to the input's element type.
  std::string stage_ptr(const Stage &st, const std::string &it) const {
    return "reinterpret_cast<" + std::string(element_type(st.op->attributes.dtype)) + " *>(smem + " +
           std::to_string(st.offset) + " + (static_cast<int>(" + it + ") % " + std::to_string(depth_) + ") * " +
           std::to_string(st.floats) + ")";
  }

  // Issues the copies of iteration `it` (when it is < the loop's range) and commits them as one
  // group (empty past the end, so that the count of pending groups stays the iteration's).
  // `copiers`: the threads that issue them (all the block's, or some warps' only).
  void issue_stages(const std::string &it, const std::optional<Sharing> &copiers = std::nullopt) {
    p_.open("if (" + it + " < " + std::to_string(bg_.config().forloop_range) + ")");
    for (const Stage &st : stages_) {
      const std::string tensor = "in" + std::to_string(st.input);
      const Dims &tile_dims = dims_of(st.op->outputs[0]);
      Dims gg = row_major_strides(st.op->attributes.sizes);
      gg.back() = st.group;
      const bool words = st.group == 1;  // 4-byte copies: any float tensor is aligned for them
      p_.open(words ? "" : "if (" + aligned_name(tensor) + ")");
      p_.line("const auto *src = " + tensor + " + " + tile_base(bg_, *st.op, tile_dims, "(" + it + ")") + ";");
      p_.line("auto *stage = " + stage_ptr(st, it) + ";");
      const Dims groups = groups_of(tile_dims, st.group);
      const std::string copy = words ? "yr_cp4(stage + " : "yr_cp16(stage + ";
      shared_loop(p_, copiers.value_or(block_wide()), groups, "t", [&](const std::vector<std::string> &v) {
        p_.line(copy + stage_index(st, v, st.group) + ", src + " + index_expr(v, gg) + ");");
      }, 8);
      p_.close();
    }
    p_.close();
    p_.line("yr_cp_commit();");
  }
  void start_pipeline() {
    if (producers_ > 0) {
      p_.open("if (threadIdx.x >= " + computing_threads() + ")");
      produce_stage("0");
      p_.close();
      return;
    }
    for (int64_t s = 0; s + 1 < depth_; ++s) issue_stages(std::to_string(s));
  }
  // At the top of an iteration the block waits for iteration it's copies (its own, then
  // everyone's through the barrier). Those of iteration it + depth − 1 go into the stage that
  // iteration it − 1 read, which no thread reads past that barrier: they are issued at the end
  // of iteration it (issue_next_stages), and the loop needs no barrier at its end.
  void advance_pipeline() {
    if (depth_ == 0) return;
    fill_unaligned_stages("it", block_wide());
    p_.line("yr_cp_wait<" + std::to_string(depth_ - 2) + ">();");
    // wgmma reads its stages through the async proxy: each thread's copies are made visible to
    // it before the barrier.
    if (any_swizzled()) p_.line("yr_fence_proxy_async();");
    sync();
  }
  // At the end of the iteration, after its work: a cp.async holds its address registers until
  // its read is under way, and the instructions after it that reuse them wait (on an H100 a
  // tenth of the attention µGraph's stalls when the copies were issued before the work); here
  // that wait overlaps the one at the next iteration's barrier.
  // Where the iteration's last tensor-core matmul leaves up to half the warps without work
  // (attention's E·V: 4 column blocks for 8 warps), those warps issue the copies while the
  // others finish it. On the H100 (same run): attention 43.0 -> 39.1 us, but qknorm 40.4 -> 41.1
  // and attention at grid 2×64 45.0 -> 46.2; with more idle warps than busy ones (gated_mlp: 2 of
  // 8 busy) 35.4 -> 37.8, so those keep every thread copying.
  void issue_next_stages() {
    if (depth_ == 0) return;
    const std::string next = "it + " + std::to_string(depth_ - 1);
    const int64_t warps = block_.warps(), idle = block_.idle_warps;
    if (idle == 0 || idle > warps - idle) {
      issue_stages(next);
      return;
    }
    // The idle warps follow next_warp (mod warps): their threads, renumbered from 0.
    const int64_t first = block_.next_warp % warps;
    const std::string copier = "copier";
    p_.line("const int " + copier + " = (static_cast<int>(threadIdx.x) + " + std::to_string((warps - first) * 32) +
            ") % " + std::to_string(block_.threads) + ";");
    p_.open("if (" + copier + " < " + std::to_string(idle * 32) + ")");
    issue_stages(next, Sharing{"static_cast<int64_t>(" + copier + ")", std::to_string(idle * 32), idle * 32});
    p_.close();
    p_.open("else");
    p_.line("yr_cp_commit();  // an empty group: every thread commits one per iteration");
    p_.close();
  }
  // A stage the mma reads directly, of a tensor not 16-byte aligned (no cp.async), is filled by
  // plain copies at the top of its own iteration, before the barrier that the iteration's
  // copies wait on (so that it needs none of its own). No thread still reads that stage: the
  // one read in the previous iteration is another (depth ≥ 2).
  void fill_unaligned_stages(const std::string &it, const Sharing &copiers) {
    for (const Stage &st : stages_) {
      const Operator &op = *st.op;
      if (!direct(op.outputs[0])) continue;
      const std::string tensor = "in" + std::to_string(st.input);
      const Dims &tile_dims = dims_of(op.outputs[0]);
      p_.open("if (!" + aligned_name(tensor) + ")");
      p_.line("const auto *src = " + tensor + " + " + tile_base(bg_, op, tile_dims, "(" + it + ")") + ";");
      p_.line("auto *stage = " + stage_ptr(st, it) + ";");
      const Dims sg = row_major_strides(op.attributes.sizes);
      shared_loop(p_, copiers, tile_dims, "t", [&](const std::vector<std::string> &v) {
        p_.line("stage[" + stage_index(st, v, 1) + "] = src[" + index_expr(v, sg) + "];");
      }, 8);
      p_.close();
    }
  }

  Dims groups_of(const Dims &tile_dims, int64_t group) const {
    Dims groups = tile_dims;
    groups.back() /= group;
    return groups;
  }

  // Stores 16 bytes of elements of the tensor's type, held in `raw`, as floats at tile + offset.
  void store_group(const std::string &tensor, const std::string &raw, const std::string &tile_at, int64_t group) {
    p_.line("float v[" + std::to_string(group) + "];");
    p_.line("yr_cvt16(" + tensor + ", " + raw + ", v);");
    for (int64_t q = 0; q < group; q += 4) {
      p_.line("*reinterpret_cast<float4 *>(" + tile_at + " + " + std::to_string(q) + ") = make_float4(v[" +
              std::to_string(q) + "], v[" + std::to_string(q + 1) + "], v[" + std::to_string(q + 2) + "], v[" +
              std::to_string(q + 3) + "]);");
    }
  }

  // Converts the iteration's stage into the tile: every 16-byte group a thread converts is read
  // first (the compiler would not move those reads above the stores into the tile, which may
  // alias them as far as it knows), then converted and stored.
  static constexpr int64_t kMaxStageGroupsPerThread = 8;
  void read_staged(const Stage &st) {
    const Operator &op = *st.op;
    if (direct(op.outputs[0])) return;  // the mma reads the stage (fill_unaligned_stages)
    const Dims &tile_dims = dims_of(op.outputs[0]);
    const std::string tensor = "in" + std::to_string(st.input), t = tile(op.outputs[0]);
    const Dims groups = groups_of(tile_dims, st.group);
    Dims gt = tile_strides(op.outputs[0]), gc = st.strides;
    gt.back() = gc.back() = st.group;
    p_.open("");
    p_.line("const auto *stage = " + stage_ptr(st, "it") + ";");
    if (st.group == 1) {  // float32 words
      shared_loop(p_, block_wide(), tile_dims, "t", [&](const std::vector<std::string> &v) {
        p_.line(t + "[" + index_expr(v, gt) + "] = stage[" + index_expr(v, gc) + "];");
      }, kMaxStageGroupsPerThread);
      p_.close();
      wrote(op.outputs, false);
      return;
    }
    p_.open("if (" + aligned_name(tensor) + ")");
    const int64_t slots = per_thread(groups, block_.threads);
    if (slots <= kMaxStageGroupsPerThread) {
      p_.line("uint4 raw[" + std::to_string(slots) + "];");
      shared_loop(p_, block_wide(), groups, "t", [&](const std::vector<std::string> &v) {
        p_.line("raw[u] = yr_raw16(stage + " + index_expr(v, gc) + ");");
      }, kMaxStageGroupsPerThread);
      shared_loop(p_, block_wide(), groups, "t", [&](const std::vector<std::string> &v) {
        store_group(tensor, "raw[u]", t + " + " + index_expr(v, gt), st.group);
      }, kMaxStageGroupsPerThread);
    } else {
      shared_loop(p_, block_wide(), groups, "t", [&](const std::vector<std::string> &v) {
        store_group(tensor, "yr_raw16(stage + " + index_expr(v, gc) + ")", t + " + " + index_expr(v, gt), st.group);
      }, 8);
    }
    p_.close();
    p_.open("else");
    p_.line("const auto *src = " + tensor + " + " + tile_base(bg_, op, tile_dims, "it") + ";");
    transfer(tensor, op, op.outputs[0], 1,
             [&](const std::string &g, const std::string &s) {
               p_.line(t + "[" + s + "] = yr_ld(src + " + g + ");");
             },
             nullptr);
    p_.close();
    p_.close();
    wrote(op.outputs, false);
  }

  // Tiles read once in 16-byte groups (the loop-invariant ones, and every one where the loop runs
  // once) are loaded into registers all together before any is converted and stored: every such
  // load of a thread is in flight at once, one memory latency in all instead of one per tile (the
  // compiler does not move a tile's global loads above the previous tile's shared-memory stores;
  // on an H100 the lora µGraph spent a third of its time waiting on them one tile after another,
  // and the benchmark's hand-made lora µGraph at grid 128, whose loop runs once, 1.0 of 8.7 µs).
  // Up to kMaxPrefetchGroups groups per thread; further tiles are read as usual.
  static constexpr int64_t kMaxPrefetchGroups = 16;
  struct PrefetchedTile {
    const Operator *op;
    size_t input;
    int64_t group;
  };
  // The global loads, first thing in the kernel (ahead of the pipeline's first copies, whose
  // issue then hides their latency: attention's Q waited behind 3 stages of K and V).
  void load_invariant_tiles() {
    int64_t slots = 0;
    each_input_tile([&](const Operator &op, size_t input, const Dims &tile_dims, int64_t group) {
      if (!read_once(op) || stage_of(input) != nullptr || group == 1) return;
      const int64_t n = per_thread(groups_of(tile_dims, group), block_.threads);
      if (slots + n > kMaxPrefetchGroups) return;
      slots += n;
      prefetch_.push_back({&op, input, group});
    });
    // One tile gains nothing unless there are copies to overlap.
    if (prefetch_.size() < (depth_ > 0 ? 1u : 2u)) {
      prefetch_.clear();
      return;
    }
    // Each block's own tiles are issued first, the tiles every block reads after: the former
    // come from DRAM, the latter soon from L2, so the longest loads start first and the others
    // still return before them (lora's W tile ahead of X and A: 0.2-0.3 µs of 8 in
    // experiments/lora_one_kernel.cu). Stores keep the µGraph's order.
    std::vector<PrefetchedTile> issue_order = prefetch_;
    std::stable_partition(issue_order.begin(), issue_order.end(),
                          [&](const PrefetchedTile &tl) { return !read_by_every_block(*tl.op); });
    for (const PrefetchedTile &tl : issue_order) {
      const Dims &tile_dims = dims_of(tl.op->outputs[0]);
      const Dims groups = groups_of(tile_dims, tl.group);
      Dims gg = row_major_strides(tl.op->attributes.sizes);
      gg.back() = tl.group;
      const std::string tensor = "in" + std::to_string(tl.input), raw = "raw" + std::to_string(tl.input);
      p_.line("const auto *src" + std::to_string(tl.input) + " = " + tensor + " + " +
              tile_base(bg_, *tl.op, tile_dims, "0") + ";");
      p_.line("uint4 " + raw + "[" + std::to_string(per_thread(groups, block_.threads)) + "];");
      p_.open("if (" + aligned_name(tensor) + ")");
      shared_loop(p_, block_wide(), groups, "t", [&](const std::vector<std::string> &v) {
        p_.line(raw + "[u] = yr_stream16(src" + std::to_string(tl.input) + " + " + index_expr(v, gg) + ");");
      }, 8);
      p_.close();
    }
  }
  // Their conversion and stores, where the invariant part reads its tiles.
  void store_invariant_tiles() {
    for (const PrefetchedTile &tl : prefetch_) {
      const std::string tensor = "in" + std::to_string(tl.input), t = tile(tl.op->outputs[0]);
      const std::string src = "src" + std::to_string(tl.input), raw = "raw" + std::to_string(tl.input);
      transfer(tensor, *tl.op, tl.op->outputs[0], tl.group,
               [&](const std::string &g, const std::string &s) { p_.line(t + "[" + s + "] = yr_ld(" + src + " + " + g + ");"); },
               [&](const std::string &, const std::string &s) { store_group(tensor, raw + "[u]", t + " + " + s, tl.group); });
      wrote(tl.op->outputs, false);
    }
  }
  // Whether every block reads the same tile (no grid axis of several blocks splits the input).
  bool read_by_every_block(const Operator &input) const {
    for (size_t axis = 0; axis < 3; ++axis) {
      if (bg_.config().grid[axis] > 1 && input.attributes.grid_map[axis] >= 0) return false;
    }
    return true;
  }
  bool read_once(const Operator &input) const {
    return phase(input.outputs[0]) == LoopPhase::kInvariant || bg_.config().forloop_range == 1;
  }
  bool prefetched(size_t input) const {
    return std::any_of(prefetch_.begin(), prefetch_.end(), [&](const PrefetchedTile &tl) { return tl.input == input; });
  }

  void read_tile(const Operator &op, size_t input) {
    if (const Stage *st = stage_of(input)) {
      read_staged(*st);
      return;
    }
    const Dims &tile_dims = dims_of(op.outputs[0]);
    const std::string tensor = "in" + std::to_string(input), t = tile(op.outputs[0]);
    const int64_t group = group_of(op, tile_dims, op.attributes.dtype);
    p_.open("");
    p_.line("const auto *src = " + tensor + " + " + tile_base(bg_, op, tile_dims, "it") + ";");
    transfer(tensor, op, op.outputs[0], group,
             [&](const std::string &g, const std::string &s) {
               p_.line(t + "[" + s + "] = yr_ld(src + " + g + ");");
             },
             [&](const std::string &g, const std::string &s) {
               store_group(tensor, "yr_stream16(src + " + g + ")", t + " + " + s, group);
             });
    p_.close();
    wrote(op.outputs, group == 1);
  }

  // Output saver `saver`'s tile into its kernel output (at iteration `it`).
  void save_tile(size_t saver, const std::string &it) {
    const Operator &op = bg_.operators()[saver];
    const size_t output = output_index_of(saver);
    const Dims &tile_dims = dims_of(op.inputs[0]);
    const std::string tensor = "out" + std::to_string(output), t = tile(op.inputs[0]);
    const int64_t group = group_of(op, tile_dims, output_dtypes_[output]);
    barrier_before({{op.inputs[0], group == 1}});
    p_.open("");
    p_.line("auto *dst = " + tensor + " + " + tile_base(bg_, op, tile_dims, it) + ";");
    transfer(tensor, op, op.inputs[0], group,
             [&](const std::string &g, const std::string &s) {
               p_.line("yr_st(dst + " + g + ", " + t + "[" + s + "]);");
             },
             [&](const std::string &g, const std::string &s) {
               p_.line("float v[" + std::to_string(group) + "];");
               for (int64_t q = 0; q < group; q += 4) {
                 p_.line("{ const float4 f = *reinterpret_cast<const float4 *>(" + t + " + " + s + " + " +
                         std::to_string(q) + "); v[" + std::to_string(q) + "] = f.x; v[" + std::to_string(q + 1) +
                         "] = f.y; v[" + std::to_string(q + 2) + "] = f.z; v[" + std::to_string(q + 3) + "] = f.w; }");
               }
               p_.line("*reinterpret_cast<uint4 *>(dst + " + g + ") = yr_pack16(dst, v);");
             });
    p_.close();
  }

  // Emits op, with `epilogue` (a unary operator reading only op's output) applied to its results
  // in registers where the emitter can; returns whether it did.
  // `sums`: accumulators (operator indices, from epilogue_sums) that the matmul adds its
  // results to where it can (recorded in summed_in_epilogue_).
  bool compute(const Operator &op, const Operator *epilogue = nullptr, const std::vector<size_t> &sums = {}) {
    if (std::any_of(op.inputs.begin(), op.inputs.end(), [&](TensorId t) { return inlined(t); })) {
      compute_chain(op);
      same_index_ = true;
      return false;
    }
    std::vector<Ref> in, out;
    for (TensorId id : op.inputs) in.push_back(tile_ref(id));
    for (TensorId id : op.outputs) out.push_back(tile_ref(id));
    ComputeEmitter emitter(p_, block_wide(), &block_, tensor_cores_);
    if (epilogue != nullptr) emitter.set_epilogue(epilogue, tile_ref(epilogue->outputs[0]));
    const auto fragments = fragment_arrays_.find(static_cast<size_t>(&op - bg_.operators().data()));
    if (fragments != fragment_arrays_.end()) emitter.set_a_fragments(fragments->second);
    if (op.kind == OpKind::kMatmul) {
      emitter.set_views(tensor_core_view(op.inputs[0]),
                        tensor_core_view(epilogue != nullptr ? epilogue->outputs[0] : op.outputs[0]));
    }
    if (!sums.empty()) {
      std::vector<ComputeEmitter::Sum> targets;
      for (size_t sum : sums) {
        const OpKind kind = bg_.operators()[sum].kind;
        targets.push_back({accumulator_target(sum), kind == OpKind::kAccumReduceSum || kind == OpKind::kAccumReduceMean});
      }
      const TensorId result = epilogue != nullptr ? epilogue->outputs[0] : op.outputs[0];
      emitter.set_sums(targets, readers_of(result) > sums.size());
    }
    same_index_ = emitter.emit(op, in, out);
    if (emitter.accumulated()) {
      for (size_t sum : sums) {
        summed_in_epilogue_.insert(sum);
        wrote_key(accumulator_key(sum), false);
      }
    }
    return emitter.fused();
  }

  // The for-loop accumulators that sum a matmul's per-iteration result (after its epilogue)
  // as they are, which its tensor-core path can update in registers instead of a pass over
  // the stored result after a barrier: sums, and the sums behind a sum or mean of rows.
  std::vector<size_t> epilogue_sums(const Operator &op, const Operator *epilogue) const {
    if (op.kind != OpKind::kMatmul) return {};
    const TensorId result = epilogue != nullptr ? epilogue->outputs[0] : op.outputs[0];
    if (phase(result) != LoopPhase::kPerIteration) return {};
    std::vector<size_t> sums;
    const auto &ops = bg_.operators();
    for (size_t i = 0; i < ops.size(); ++i) {
      const OpKind kind = ops[i].kind;
      if ((kind == OpKind::kAccumSum || kind == OpKind::kAccumReduceSum || kind == OpKind::kAccumReduceMean) &&
          ops[i].inputs[0] == result) {
        sums.push_back(i);
      }
    }
    return sums;
  }
  size_t readers_of(TensorId t) const {
    size_t n = 0;
    for (const Operator &op : bg_.operators()) n += static_cast<size_t>(std::count(op.inputs.begin(), op.inputs.end(), t));
    return n;
  }
  // Where accumulator i keeps its running value (accumulator_key: that array's barrier key).
  bool has_state(size_t i) const {
    return layout_.state[i] >= 0 && bg_.operators()[i].kind != OpKind::kAccumRescale;
  }
  std::string accumulator_target(size_t i) const {
    return has_state(i) ? at(layout_.state[i]) : tile(bg_.operators()[i].outputs[0]);
  }

  // The unary operator that is the only reader of a matmul's output, in the same loop phase: its
  // work can be done on the matmul's results before they are stored (saving a pass through
  // shared memory and a barrier); nullptr if there is none.
  const Operator *unary_consumer(const Operator &op) const {
    if (op.kind != OpKind::kMatmul) return nullptr;
    const Operator *found = nullptr;
    for (const Operator &user : bg_.operators()) {
      for (TensorId t : user.inputs) {
        if (t != op.outputs[0]) continue;
        if (found != nullptr || !is_unary(user.kind)) return nullptr;
        found = &user;
      }
    }
    if (found == nullptr || phase(found->outputs[0]) != phase(op.outputs[0])) return nullptr;
    return found;
  }

  // Runs `statement` (over element e) for every e < n, shared by the block's threads (element e
  // is thread e % threads's, as in every block-wide loop). The count per thread is a
  // constant: the loop unrolls, without the remainder loop a bound of threadIdx.x would need.
  void each(int64_t n, const std::string &statement) {
    const int64_t threads = block_.threads, count = per_thread({n}, threads);
    p_.line(count <= 8 ? "#pragma unroll" : "#pragma unroll 4");
    p_.open("for (int u = 0; u < " + std::to_string(count) + "; ++u)");
    p_.line("const int e = static_cast<int>(threadIdx.x) + u * " + std::to_string(threads) + ";");
    p_.line(n % threads == 0 ? statement : "if (e < " + std::to_string(n) + ") " + statement);
    p_.close();
  }

  void start_accumulator(size_t i) {
    const Operator &op = bg_.operators()[i];
    // Attention's sums are written once, after the loop.
    if (!is_accumulator(op.kind) || (attention_ && (i == attention_->sum_ev || i == attention_->sum_e))) return;
    const char *init = op.kind == OpKind::kAccumMax ? "-INFINITY" : "0.0f";
    each(num_elements(dims_of(has_state(i) ? op.inputs[0] : op.outputs[0])), accumulator_target(i) + "[e] = " + init + ";");
    wrote_key(accumulator_key(i), true);
    if (op.kind == OpKind::kAccumRescale) {
      each(num_elements(dims_of(op.inputs[1])), at(layout_.running_max[i]) + "[e] = -INFINITY;");
      wrote_key(max_key(i), true);
    }
  }

  void update_accumulator(size_t i) {
    const Operator &op = bg_.operators()[i];
    const std::string x = tile(op.inputs[0]);
    const int64_t n = num_elements(dims_of(op.inputs[0]));
    const std::string acc = tile(op.outputs[0]);
    if (summed_in_epilogue_.count(i)) {
      // The matmul's tensor-core path added its results; before sm_80 the sum is done here, with
      // barriers of its own (the barrier bookkeeping follows the tensor-core path).
      p_.line("#if __CUDA_ARCH__ < 800");
      p_.line("__syncthreads();");
      each(n, accumulator_target(i) + "[e] += " + x + "[e];");
      p_.line("__syncthreads();");
      p_.line("#endif");
      return;
    }
    if (op.kind != OpKind::kAccumRescale) {
      // Element e of the input, the accumulator and its state all belong to one thread.
      barrier_before({{op.inputs[0], true}});
      wrote_key(accumulator_key(i), true);
    }
    switch (op.kind) {
      case OpKind::kAccumSum: each(n, acc + "[e] += " + x + "[e];"); break;
      case OpKind::kAccumReduceSum:
      case OpKind::kAccumReduceMean: each(n, at(layout_.state[i]) + "[e] += " + x + "[e];"); break;
      case OpKind::kAccumReduceRms: each(n, at(layout_.state[i]) + "[e] += " + x + "[e] * " + x + "[e];"); break;
      case OpKind::kAccumMax: each(n, acc + "[e] = yr_max(" + acc + "[e], " + x + "[e]);"); break;
      case OpKind::kAccumRescale: {
        // acc' = acc·exp(M − M') + x·exp(m − M') with M' = max(M, m), as the reference does.
        const Dims &x_dims = dims_of(op.inputs[0]);
        const Dims &m_dims = dims_of(op.inputs[1]);
        const std::string m = tile(op.inputs[1]), running = at(layout_.running_max[i]), next = at(layout_.state[i]);
        const int64_t mn = num_elements(m_dims);
        sync();
        each(mn, next + "[e] = yr_max(" + running + "[e], " + m + "[e]);");
        sync();
        const Dims sx = row_major_strides(x_dims), sm = broadcast_strides(m_dims, x_dims);
        shared_loop(p_, block_wide(), x_dims, "a", [&](const std::vector<std::string> &v) {
          const std::string xi = index_expr(v, sx), mj = index_expr(v, sm);
          p_.line(acc + "[" + xi + "] = " + acc + "[" + xi + "] * yr_exp(" + running + "[" + mj + "] - " +
                  next + "[" + mj + "]) + " + x + "[" + xi + "] * yr_exp(" + m + "[" + mj + "] - " + next +
                  "[" + mj + "]);");
        });
        sync();
        each(mn, running + "[e] = " + next + "[e];");
        wrote_key(max_key(i), true);
        wrote_key(state_key(i), true);
        wrote_key(op.outputs[0], true);
        break;
      }
      default: throw Error(ErrorCode::kInternal, "cuda codegen: not an accumulator");
    }
  }

  void finish_accumulator(size_t i) {
    const Operator &op = bg_.operators()[i];
    if ((op.kind != OpKind::kAccumReduceSum && op.kind != OpKind::kAccumReduceMean &&
         op.kind != OpKind::kAccumReduceRms) || !has_state(i)) {
      return;  // the running value is the result
    }
    const Dims &x_dims = dims_of(op.inputs[0]);
    const int64_t last = x_dims.back();
    const std::string state = at(layout_.state[i]);
    barrier_before({{state_key(i), false}});
    RowReduce rr;
    rr.rows = num_elements(x_dims) / last;
    rr.cols = last;
    rr.value = state + "[r * " + std::to_string(last) + " + c]";
    rr.finish = [&](const std::string &) {
      const std::string count = literal(static_cast<double>(last * bg_.config().forloop_range));
      if (op.kind == OpKind::kAccumReduceMean) p_.line("total = total / " + count + ";");
      if (op.kind == OpKind::kAccumReduceRms) p_.line("total = yr_sqrt(total / " + count + ");");
      p_.line("if (rl == 0) " + tile(op.outputs[0]) + "[r] = total;");
    };
    emit_block_row_reduce(p_, block_, rr);
    wrote(op.outputs, false);
  }

  // ---- barriers ----
  // Every block-level loop hands element e to thread e % blockDim, so an operator may read a
  // tile written since the last barrier without one only at the index it was written (by the
  // same thread). Anything else — a matmul's rows and columns, a broadcast, a reduction, a row
  // per thread — needs a barrier first. Keys are tensor ids, and negative ids for the
  // accumulators' state arrays.
  using Key = int64_t;
  Key state_key(size_t op) const { return -2 * static_cast<Key>(op) - 2; }
  Key max_key(size_t op) const { return -2 * static_cast<Key>(op) - 3; }
  Key accumulator_key(size_t i) const { return has_state(i) ? state_key(i) : bg_.operators()[i].outputs[0]; }

  void sync() {
    p_.line("__syncthreads();");
    dirty_same_index_.clear();
    dirty_other_.clear();
  }
  void barrier_before(const std::vector<std::pair<Key, bool>> &reads) {
    for (const auto &[key, same_index] : reads) {
      if (dirty_other_.count(key) || (!same_index && dirty_same_index_.count(key))) {
        sync();
        return;
      }
    }
  }
  void wrote_key(Key key, bool same_index) { (same_index ? dirty_same_index_ : dirty_other_).insert(key); }
  void wrote(const std::vector<TensorId> &tensors, bool same_index) {
    for (TensorId t : tensors) wrote_key(t, same_index);
  }
  // How a compute operator reads its inputs: at its own output index (elementwise without
  // broadcast) or anywhere.
  std::vector<std::pair<Key, bool>> compute_reads(const Operator &op) const {
    std::vector<std::pair<Key, bool>> reads;
    const Dims &out = dims_of(op.outputs[0]);
    const bool elementwise = is_elementwise(op.kind);
    for (TensorId in : op.inputs) {
      if (inlined(in)) {  // read where the inlined operator would have read them
        for (const auto &read : compute_reads(producer(in))) reads.push_back(read);
      } else {
        reads.push_back({in, elementwise && dims_of(in) == out});
      }
    }
    return reads;
  }
  std::set<Key> dirty_same_index_, dirty_other_;
  bool same_index_ = true;  // how the last compute operator wrote its outputs

  Printer &p_;
  const BlockGraph &bg_;
  std::vector<DType> output_dtypes_;
  bool tensor_cores_;
  BlockShape block_;
  CudaTarget target_;
  std::vector<int64_t> row_pad_;  // per tensor: floats after each row of its tile
  std::vector<bool> direct_;      // per tensor: read by the mma from its 16-bit stage
  std::vector<bool> inlined_;     // per tensor: computed by its only reader, never stored
  std::set<size_t> fused_into_;   // unary operators done in the epilogue of a matmul
  std::set<size_t> summed_in_epilogue_;  // accumulators a matmul's tensor-core path updates
  std::map<size_t, std::string> fragment_arrays_;  // matmuls whose A's operands are in registers
  std::optional<AttentionPlan> attention_;         // attention in registers, where it applies
  std::map<TensorId, Ref> tensor_core_views_;      // tiles the tensor-core code keeps a padded copy of
  std::vector<PrefetchedTile> prefetch_;  // invariant tiles loaded into registers first
  std::vector<Stage> stages_;
  int64_t depth_ = 0;  // of the load pipeline; 0: none
  int64_t producers_ = 0;        // threads that only copy (the warp-specialized loop); 0: none
  std::string stage_barriers_;   // their mbarriers in shared memory
  BlockLayout layout_;
};

}  // namespace

CustomizedBody emit_customized_body(Printer &p, const BlockGraph &bg, int64_t threads, std::vector<DType> output_dtypes,
                                    bool tensor_cores, const CudaTarget &target) {
  if (target.rows_in_registers) {
    if (const std::optional<int64_t> bytes = emit_rows_in_registers(p, bg, threads, output_dtypes)) {
      return {*bytes, threads};
    }
  }
  return CustomizedEmitter(p, bg, threads, std::move(output_dtypes), tensor_cores, target).emit();
}

}  // namespace yirage::codegen::cuda
