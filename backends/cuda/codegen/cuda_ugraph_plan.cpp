#include "cuda/codegen/cuda_ugraph_plan.hpp"

#include <algorithm>

#include "cuda/codegen/cuda_tile_matmul.hpp"

namespace yirage::codegen::cuda {
namespace {

// Rows of Q, depth, keys and V's columns of a·b where every dim before the last two is 1.
bool plain_matrix(const Dims &dims) {
  return std::all_of(dims.begin(), dims.end() - 2, [](int64_t d) { return d == 1; });
}

// The ring may be as deep as the whole loop (at most kMaxRingDepth) where all of its stages take
// at most kSmallRingBytes: a loop that moves that little per iteration is bound by the latency of
// its copies, which are then all in flight from the start.
constexpr int64_t kSmallRingBytes = 32 * 1024, kMaxRingDepth = 16;
// Groups of 16 bytes per thread that the prefetch of tiles read once may hold in registers.
constexpr int64_t kMaxPrefetchGroups = 16;

}  // namespace

UGraphPlan::UGraphPlan(const BlockGraph &graph, int64_t threads, std::vector<DType> dtypes, bool cores,
                       const CudaTarget &device)
    : bg(graph), output_dtypes(std::move(dtypes)), tensor_cores(cores), target(device) {
  block.threads = threads;
  if (has_ragged_tiles(bg)) ragged = ragged_dims(bg);
  inlined = inlined_tensors(bg, [this](const Operator &op) { return in_epilogue(op); });
  plan_row_padding();
  plan_shared_memory();
  plan_producers();
  plan_tensor_core_views();
  plan_prefetch();
}

UGraphLowering UGraphPlan::lowering() const {
  UGraphLowering l;
  l.layout = layout;
  l.row_pad = row_pad;
  l.inlined = inlined;
  l.output_dtypes = output_dtypes;
  l.vector_bytes = 16;
  l.fill_matmul_operands = true;  // the tile matmuls sum whole tiles
  return l;
}

bool UGraphPlan::direct_candidate(TensorId t) const {
  const Operator &op = producer(t);
  if (op.kind != OpKind::kInputIterator || dtype_size(op.attributes.dtype) != 2) return false;
  return phase(t) == LoopPhase::kPerIteration && bg.config().forloop_range >= 2;
}

bool UGraphPlan::is_ragged(TensorId t) const {
  if (ragged.empty()) return false;
  const RaggedDims &dims = ragged[static_cast<size_t>(t)];
  return std::any_of(dims.begin(), dims.end(), [](const std::optional<RaggedSplit> &r) { return r.has_value(); });
}

std::vector<CopyBound> UGraphPlan::bounds(TensorId t, const std::string &it) const {
  std::vector<CopyBound> found;
  if (ragged.empty()) return found;
  const RaggedDims &dims = ragged[static_cast<size_t>(t)];
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d]) found.push_back({d, c_text(ragged_inside(*dims[d], var(it)), kOffsetPrecedence)});
  }
  return found;
}

bool UGraphPlan::filled_before(size_t op, size_t input) const {
  if (ragged.empty()) return false;
  const Operator &filled = bg.operators()[op];
  for (const AbsentFill &f : absent_fills(bg, filled, ragged)) {
    if (f.input == input && fill_needed(bg, ragged, filled, f)) return true;
  }
  return false;
}

// ---- queries ----

Dims UGraphPlan::tile_strides(TensorId t) const {
  Dims dims = dims_of(t);
  dims.back() += row_pad[static_cast<size_t>(t)];
  return row_major_strides(dims);
}

Ref UGraphPlan::tile_ref(TensorId t) const {
  if (is_direct(t)) {
    for (const Stage &st : stages) {
      if (st.op->outputs[0] != t) continue;
      Ref ref{stage_ptr(st, "it"), dims_of(t), st.strides};
      ref.widened_16bit = ref.raw_16bit = true;
      ref.element = st.op->attributes.dtype;
      return ref;
    }
  }
  Ref ref{tile(t), dims_of(t), row_pad[static_cast<size_t>(t)] > 0 ? tile_strides(t) : Dims{}};
  for (const Operator &op : bg.operators()) {
    if (op.kind != OpKind::kInputIterator || op.outputs[0] != t) continue;
    ref.widened_16bit = dtype_size(op.attributes.dtype) == 2;
    ref.element = op.attributes.dtype;
  }
  return ref;
}

std::optional<Ref> UGraphPlan::tensor_core_view(TensorId t) const {
  const auto found = tensor_core_views.find(t);
  return found == tensor_core_views.end() ? std::nullopt : std::optional<Ref>(found->second);
}

int64_t UGraphPlan::group_of(const Operator &op, const Dims &tile_dims, DType dtype) const {
  return vector_group(bg, op, tile_dims, dtype, 16);
}

std::vector<size_t> UGraphPlan::readers(TensorId t) const {
  std::vector<size_t> found;
  const auto &ops = bg.operators();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (std::count(ops[i].inputs.begin(), ops[i].inputs.end(), t) > 0) found.push_back(i);
  }
  return found;
}

const Operator &UGraphPlan::producer(TensorId t) const {
  return bg.operators()[static_cast<size_t>(bg.tensor(t).producer)];
}

std::optional<size_t> UGraphPlan::only_saver(TensorId t) const {
  const std::vector<size_t> found = readers(t);
  if (found.size() != 1 || bg.operators()[found[0]].kind != OpKind::kOutputSaver) return std::nullopt;
  return found[0];
}

size_t UGraphPlan::output_index_of(size_t saver) const {
  const auto &ops = bg.operators();
  return static_cast<size_t>(std::count_if(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(saver),
                                           [](const Operator &op) { return op.kind == OpKind::kOutputSaver; }));
}

const Operator *UGraphPlan::unary_consumer(const Operator &op) const {
  if (op.kind != OpKind::kMatmul) return nullptr;
  const Operator *found = nullptr;
  for (const Operator &user : bg.operators()) {
    for (TensorId t : user.inputs) {
      if (t != op.outputs[0]) continue;
      if (found != nullptr || !is_unary(user.kind)) return nullptr;
      found = &user;
    }
  }
  if (found == nullptr || phase(found->outputs[0]) != phase(op.outputs[0])) return nullptr;
  return found;
}

bool UGraphPlan::in_epilogue(const Operator &op) const {
  return is_unary(op.kind) && unary_consumer(producer(op.inputs[0])) == &op;
}

std::vector<size_t> UGraphPlan::epilogue_sums(const Operator &op, const Operator *epilogue) const {
  if (op.kind != OpKind::kMatmul) return {};
  const TensorId result = epilogue != nullptr ? epilogue->outputs[0] : op.outputs[0];
  if (phase(result) != LoopPhase::kPerIteration) return {};
  std::vector<size_t> sums;
  const auto &ops = bg.operators();
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpKind kind = ops[i].kind;
    if ((kind == OpKind::kAccumSum || kind == OpKind::kAccumReduceSum || kind == OpKind::kAccumReduceMean) &&
        ops[i].inputs[0] == result && !filled_before(i, 0)) {
      sums.push_back(i);
    }
  }
  return sums;
}

bool UGraphPlan::has_state(size_t i) const {
  return layout.state[i] >= 0 && bg.operators()[i].kind != OpKind::kAccumRescale;
}

std::string UGraphPlan::accumulator_target(size_t i) const {
  return has_state(i) ? at(layout.state[i]) : tile(bg.operators()[i].outputs[0]);
}

const Stage *UGraphPlan::stage_of(size_t input) const {
  for (const Stage &st : stages) {
    if (st.input == input) return &st;
  }
  return nullptr;
}

std::string UGraphPlan::stage_ptr(const Stage &st, const std::string &it) const {
  return "reinterpret_cast<" + std::string(element_type(st.op->attributes.dtype)) + " *>(smem + " +
         std::to_string(st.offset) + " + (static_cast<int>(" + it + ") % " + std::to_string(depth) + ") * " +
         std::to_string(st.floats) + ")";
}

bool UGraphPlan::any_swizzled() const {
  return std::any_of(stages.begin(), stages.end(), [](const Stage &st) { return st.swizzled; });
}

bool UGraphPlan::prefetched(size_t input) const {
  return std::any_of(prefetch.begin(), prefetch.end(), [&](const PrefetchedTile &tl) { return tl.input == input; });
}

bool UGraphPlan::read_once(const Operator &input) const {
  return phase(input.outputs[0]) == LoopPhase::kInvariant || bg.config().forloop_range == 1;
}

int64_t UGraphPlan::loop_waits() const {
  int64_t groups = 0;
  bool ring = depth >= 2;
  each_input_tile([&](const Operator &op, size_t input, const Dims &tile_dims, int64_t group) {
    const Stage *st = stage_of(input);
    if (!read_once(op)) {
      ring = ring && st != nullptr && !st->plain;
      return;
    }
    if (st != nullptr || prefetched(input)) return;
    Dims g = tile_dims;
    g.back() = (g.back() + group - 1) / group;
    groups += per_thread(g, block.threads);
  });
  const int64_t range = bg.config().forloop_range;
  const int64_t loop = ring ? (range + depth - 2) / (depth - 1) : bg.loop_waits();
  return loop + (groups + kMaxPrefetchGroups - 1) / kMaxPrefetchGroups;
}

int64_t UGraphPlan::shared_traffic_bytes() const {
  const auto &ops = bg.operators();
  const auto range = bg.config().forloop_range;
  const auto times = [&](const Operator &op) {
    const TensorId t = op.outputs.empty() ? op.inputs.at(0) : op.outputs[0];
    return phase(t) == LoopPhase::kPerIteration || is_accumulator(op.kind) ? range : 1;
  };
  const auto elements = [&](TensorId t) { return num_elements(dims_of(t)); };
  int64_t bytes = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operator &op = ops[i];
    if (attention && (attention->handles(i) || attention->saves(i))) continue;
    if (op.kind == OpKind::kInputIterator) {
      const TensorId t = op.outputs[0];
      const bool staged = std::any_of(stages.begin(), stages.end(), [&](const Stage &s) { return s.op == &op; });
      // A staged tile not read from its stage is widened: read at 16 bits, written as floats.
      if (staged && !is_direct(t)) bytes += times(op) * elements(t) * 6;
      continue;
    }
    for (TensorId in : op.inputs) {
      if (!is_inlined(in)) bytes += times(op) * elements(in) * (is_direct(in) ? 2 : 4);
    }
    if (op.kind == OpKind::kOutputSaver) continue;
    for (TensorId out : op.outputs) {
      if (!is_inlined(out)) bytes += times(op) * elements(out) * 4;
    }
  }
  return bytes;
}

bool UGraphPlan::read_by_every_block(const Operator &input) const {
  for (size_t axis = 0; axis < 3; ++axis) {
    if (bg.config().grid[axis] > 1 && input.attributes.grid_map[axis] >= 0) return false;
  }
  return true;
}

void UGraphPlan::each_input_tile(const std::function<void(const Operator &, size_t, const Dims &, int64_t)> &f) const {
  size_t input = 0;
  for (const Operator &op : bg.operators()) {
    if (op.kind != OpKind::kInputIterator) continue;
    const Dims &tile_dims = dims_of(op.outputs[0]);
    f(op, input++, tile_dims, group_of(op, tile_dims, op.attributes.dtype));
  }
}

ThreadShare UGraphPlan::producer_share() const {
  return {"(static_cast<int64_t>(threadIdx.x) - " + computing_threads() + ")", std::to_string(producers), producers};
}

std::string UGraphPlan::allocate_spare(int64_t floats) {
  const int64_t offset = (layout.floats + 3) / 4 * 4;
  if (target.max_shared_bytes > 0 && (offset + floats) * 4 > target.max_shared_bytes) return "";
  layout.floats = offset + floats;
  return at(offset);
}

// ---- padded tiles ----
// A tile read only as the B operand of tensor-core matmuls has its rows padded by 4 floats when
// their length is a multiple of 32. The lanes of an mma read B in one column at rows 4 apart (k
// is permuted, see TileMatmul), which in an unpadded tile all fall in one bank (4-way
// conflicts); 4 floats of padding halve that and keep rows 16-byte aligned for float4 stores (8
// floats would change nothing: 4 rows · 8 = 32).
void UGraphPlan::plan_row_padding() {
  row_pad.assign(bg.num_tensors(), 0);
  if (!tensor_cores) return;
  for (const Operator &op : bg.operators()) {
    if (op.kind != OpKind::kInputIterator) continue;
    const TensorId t = op.outputs[0];
    const Dims &dims = dims_of(t);
    bool only_b = dims.size() >= 2 && dims.back() % 32 == 0;
    for (const Operator &user : bg.operators()) {
      for (size_t i = 0; i < user.inputs.size(); ++i) {
        if (user.inputs[i] != t) continue;
        const bool as_b = user.kind == OpKind::kMatmul && i == 1 && dims_of(user.inputs[0]).back() % 8 == 0;
        only_b = only_b && as_b;
      }
    }
    if (only_b) row_pad[static_cast<size_t>(t)] = 4;
  }
}

// The layout: 16-byte aligned tiles (float4 reads), the two scratch arrays of reductions, the
// load pipeline's stages. A 16-bit B tile that is staged (padded, above) is read by the mma
// straight from its stage (direct: no float copy, no conversion pass; the widening is exact),
// unless the stages then do not fit, when every tile is planned again.
void UGraphPlan::plan_shared_memory() {
  const auto &ops = bg.operators();
  direct.assign(bg.num_tensors(), false);
  for (const Operator &op : ops) {
    const TensorId t = op.kind == OpKind::kInputIterator ? op.outputs[0] : -1;
    if (t >= 0 && row_pad[static_cast<size_t>(t)] > 0) direct[static_cast<size_t>(t)] = direct_candidate(t);
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    // With attention in registers where it applies (its per-iteration tiles then get no room),
    // else without. Attention may make its K and V direct (the first attempt only).
    const std::vector<bool> planned = direct;
    for (const bool registers : {true, false}) {
      attention.reset();
      direct = planned;
      if (registers) plan_register_attention(attempt == 0);
      if (registers && !attention) continue;
      std::vector<bool> elsewhere = direct, sums_elsewhere;
      for (size_t t = 0; t < elsewhere.size(); ++t) elsewhere[t] = elsewhere[t] || inlined[t];
      if (attention) {
        for (size_t i : {attention->qk, attention->exp, attention->ev})
          elsewhere[static_cast<size_t>(ops[i].outputs[0])] = true;
        if (attention->row_sum) elsewhere[static_cast<size_t>(ops[*attention->row_sum].outputs[0])] = true;
        if (attention->q_norm) elsewhere[static_cast<size_t>(ops[*attention->q_norm].outputs[0])] = true;
        if (attention->ev_saver) elsewhere[static_cast<size_t>(ops[attention->sum_ev].outputs[0])] = true;
        if (attention->e_saver) elsewhere[static_cast<size_t>(ops[attention->sum_e].outputs[0])] = true;
        // Σ E's row sums are the warps' (no rows × keys state to clear and reduce).
        sums_elsewhere.assign(ops.size(), false);
        sums_elsewhere[attention->sum_e] = true;
      }
      layout = plan_block_layout(bg, 4, row_pad, elsewhere, sums_elsewhere);
      const int64_t scratch_floats = (block.warps() + 3) / 4 * 4;
      block.scratch[0] = at(layout.floats);
      block.scratch[1] = at(layout.floats + scratch_floats);
      layout.floats += 2 * scratch_floats;
      stages.clear();
      depth = 0;
      plan_stages();
      if (!attention || place_attention_scratch()) break;
    }
    if (depth > 0 || std::find(direct.begin(), direct.end(), true) == direct.end()) return;
    direct.assign(bg.num_tensors(), false);
  }
}

// ---- attention in registers (cuda_attention.hpp) ----
// Finds A = Q·K, E = exp(A), Σ E (row sums), Σ E·V in the loop with Q loop-invariant, K and V
// read by the mma from their 16-bit stages, and no other reader of A, E or E·V. With `promote`,
// K and V read by Q·K and E·V alone are made direct where they were not (their tiles' rows not
// a multiple of 32 elements, which padded float tiles want).
void UGraphPlan::plan_register_attention(bool promote) {
  if (!tensor_cores || target.compute_capability < 80) return;
  const auto &ops = bg.operators();
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
    auto stageable = [&](TensorId t, size_t reader) {
      return is_direct(t) || (promote && direct_candidate(t) && readers(t) == std::vector<size_t>{reader});
    };
    if (!stageable(k, qk) || !stageable(v, *ev) || is_inlined(mm.outputs[0]) || is_inlined(e) || is_inlined(q)) {
      continue;
    }
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
        !is_inlined(q_source.inputs[0]) && !is_direct(q_source.inputs[0])) {
      plan.q_norm = static_cast<size_t>(bg.tensor(q).producer);
    }
    const size_t rank = dims_of(q).size();
    plan.rows = dims_of(q)[rank - 2];
    plan.depth = dims_of(q)[rank - 1];
    plan.cols = dims_of(v)[rank - 1];
    plan.element = element_type(element);
    plan.offset_slack = target.attention_offset_slack;
    // Keys that are not whole 16s are rounded up (the stages' rows past the tile are zeros, the
    // scores there masked), to the count that gives each warp the fewest keys (129: 160 in 5
    // shares of 32, rather than 144 in 3 of 48; at most 16 · warps more). Whole 16s stay.
    const int64_t tile_keys = dims_of(k)[rank - 1];
    plan.keys = tile_keys;
    bool warpgroups = target.warpgroup_mma() && plan.fits_warpgroups(block.warps());
    if (!warpgroups) {
      std::optional<AttentionPlan> best;
      const int64_t whole = (tile_keys + 15) / 16 * 16;
      const int64_t last = whole == tile_keys ? whole : whole + 16 * (block.warps() - 1);
      for (int64_t keys = whole; keys <= last; keys += 16) {
        AttentionPlan tried = plan;
        tried.keys = keys;
        if (tried.fits(block.warps()) && (!best || tried.keys_per_warp() < best->keys_per_warp())) best = tried;
      }
      if (!best) continue;
      plan = *best;
    }
    plan.qk = qk;
    plan.exp = exps[0];
    plan.ev = *ev;
    plan.sum_ev = sums[0];
    plan.sum_e = *sum_e;
    plan.row_sum = row_sum;
    // Ragged keys are masked in the scores (which stands for the fills of E); sums with ragged
    // rows go to their tiles, for the bounded savers.
    if (!ragged.empty()) {
      const std::optional<RaggedSplit> &keys = ragged[static_cast<size_t>(k)].back();
      if (keys.has_value() != ragged[static_cast<size_t>(v)][rank - 2].has_value()) continue;
      if (keys) plan.keys_inside = c_text(ragged_inside(*keys, var("it")), kOffsetPrecedence);
    }
    if (plan.keys != tile_keys) {
      const std::string tile = std::to_string(tile_keys);
      const std::string &inside = plan.keys_inside;
      plan.keys_inside = inside.empty() ? tile : "(" + inside + " < " + tile + " ? " + inside + " : " + tile + ")";
    }
    direct[static_cast<size_t>(k)] = direct[static_cast<size_t>(v)] = true;
    if (!is_ragged(ops[plan.sum_ev].outputs[0])) plan.ev_saver = only_saver(ops[plan.sum_ev].outputs[0]);
    if (!is_ragged(ops[plan.sum_e].outputs[0])) plan.e_saver = only_saver(ops[plan.sum_e].outputs[0]);
    attention = plan;
    return;
  }
}

// The scratch array: the stages of the load pipeline where they are large enough (no copy is in
// flight after the loop), else room past everything else. False where neither fits.
bool UGraphPlan::place_attention_scratch() {
  const int64_t floats = attention->scratch_floats();
  if (floats == 0) return true;
  if (depth == 0) return false;
  int64_t ring = 0;
  for (const Stage &st : stages) ring += depth * st.floats;
  attention->scratch_in_ring = ring >= floats;
  attention->scratch = attention->scratch_in_ring ? at(stages.front().offset) : allocate_spare(floats);
  return !attention->scratch.empty();
}

// ---- the load pipeline's stages ----
// The ring's depth: the deepest of 4, 3, 2 (and at most the loop's range: deeper stages would
// never be filled) whose stages fit beside the tiles in a block's shared memory (0 if 2 do not);
// up to the whole loop where all of its stages are small (kSmallRingBytes). Where the device is
// known and that leaves more blocks than its multiprocessors hold at once, the deepest that
// holds them all, or 2: blocks that wait for a second wave cost more than a shallower ring.
int UGraphPlan::ring_depth(int64_t stage_floats) const {
  const int64_t blocks = bg.config().grid[0] * bg.config().grid[1] * bg.config().grid[2];
  const bool known = target.multiprocessors > 0 && target.shared_bytes_per_multiprocessor > 0;
  const int64_t range = bg.config().forloop_range;
  const int64_t deepest = std::min(range, range * stage_floats * 4 <= kSmallRingBytes ? kMaxRingDepth : 4);
  int chosen = 0;
  for (int d = static_cast<int>(deepest); d >= 2; --d) {
    const int64_t bytes = (layout.floats + d * stage_floats) * 4;
    if (target.max_shared_bytes > 0 && bytes > target.max_shared_bytes) continue;
    chosen = d;
    // sm_80 and newer reserve 1 KiB of a multiprocessor's shared memory per block.
    if (!known || target.multiprocessors * (target.shared_bytes_per_multiprocessor / (bytes + 1024)) >= blocks) break;
  }
  return chosen;
}

bool UGraphPlan::warpgroup_operand(TensorId t) const {
  if (!attention || !attention->warpgroups) return false;
  const auto &ops = bg.operators();
  return t == ops[attention->qk].inputs[1] || t == ops[attention->ev].inputs[1];
}

// Tiles the for-loop reads anew every iteration, in 16-byte groups, are copied with cp.async into
// a ring of `depth` raw stages in shared memory, depth − 1 iterations ahead (cuda_load_pipeline.hpp).
void UGraphPlan::plan_stages() {
  if (bg.config().forloop_range < 2) return;
  int64_t stage_floats = 0;
  each_input_tile([&](const Operator &op, size_t input, const Dims &tile_dims, int64_t group) {
    // float32 tiles without 16-byte groups are copied 4 bytes at a time (yr_cp4); 16-bit ones
    // are read directly in the loop.
    if (phase(op.outputs[0]) != LoopPhase::kPerIteration) return;
    const bool plain = group == 1 && dtype_size(op.attributes.dtype) != 4;
    if (plain && !is_direct(op.outputs[0])) return;
    // A direct stage's rows are padded by 8 elements: 16 bytes keep cp.async aligned, and rows
    // 4 apart then fall 2 ways into the banks instead of 4. A swizzled one is compact.
    const bool swizzled = warpgroup_operand(op.outputs[0]);
    Dims dims = tile_dims;
    if (attention) {  // keys rounded up to whole 16s
      if (op.outputs[0] == ops_input(attention->qk, 1)) dims.back() = attention->keys;
      if (op.outputs[0] == ops_input(attention->ev, 1)) dims[dims.size() - 2] = attention->keys;
    }
    Dims padded = dims;
    if (is_direct(op.outputs[0]) && !swizzled) padded.back() += 8;
    const int64_t floats =
        (num_elements(padded) * static_cast<int64_t>(dtype_size(op.attributes.dtype)) / 4 + 3) / 4 * 4;
    stages.push_back(
        {input, &op, group, 0, floats, row_major_strides(padded), swizzled, dims[dims.size() - 2], plain, dims});
    stage_floats += floats;
  });
  if (stages.empty()) return;
  depth = ring_depth(stage_floats);
  if (depth < 2) {
    stages.clear();
    depth = 0;
    return;
  }
  for (Stage &st : stages) {
    if (st.swizzled) layout.floats = (layout.floats + 255) / 256 * 256;
    st.offset = layout.floats;
    layout.floats += depth * st.floats;
  }
}

// ---- the warp-specialized loop ----
// Where the loop's iteration is attention on warpgroup mma alone (sm_90a), reading K and V from
// their stages, the warps split: the attention's warps compute, the others (a warpgroup added
// where the attention takes every warp asked for) only copy, and they meet at two mbarriers per
// stage instead of a barrier of the whole block per iteration: stage_full[s] (its copies landed
// and were made visible to the async proxy: one arrival per producer thread) and stage_empty[s]
// (its readers are done: one per computing thread). Two computing warpgroups then do not start
// every iteration together (one's softmax can run while the other's mma does), and no copy
// waits for the slowest warp.
void UGraphPlan::plan_producers() {
  if (!attention || !attention->warpgroups || depth < 2) return;
  const auto &ops = bg.operators();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operator &op = ops[i];
    if (attention->handles(i)) continue;
    if (op.kind == OpKind::kInputIterator) {
      if (phase(op.outputs[0]) == LoopPhase::kPerIteration && !is_direct(op.outputs[0])) return;
    } else if (op.kind == OpKind::kOutputSaver) {
      if (phase(op.inputs[0]) == LoopPhase::kPerIteration) return;
    } else if (is_accumulator(op.kind) || phase(op.outputs[0]) == LoopPhase::kPerIteration) {
      return;
    }
  }
  const int64_t computing = attention->warps * 32;
  const int64_t threads = block.warps() > attention->warps ? block.threads : computing + 128;
  if (threads > 1024) return;
  // The barriers, and for a larger block its reductions' scratch (a float per warp), past the
  // rest; nothing changes where they do not fit.
  const int64_t floats = layout.floats;
  const std::string scratch[2] = {block.scratch[0], block.scratch[1]};
  if (threads != block.threads) {
    for (std::string &s : block.scratch) s = allocate_spare((threads / 32 + 3) / 4 * 4);
  }
  stage_barriers = allocate_spare(4 * depth);  // 2 · depth mbarriers of 8 bytes
  if (stage_barriers.empty() || block.scratch[0].empty() || block.scratch[1].empty()) {
    layout.floats = floats;
    block.scratch[0] = scratch[0];
    block.scratch[1] = scratch[1];
    stage_barriers.clear();
    return;
  }
  block.threads = threads;
  producers = threads - computing;
  attention->issue_turns = bg.config().forloop_range;  // no block barrier: warpgroups take turns
}

// ---- tensor-core views ----
// A transposed matmul reads each lane's A row at the same columns as 7 other lanes' rows: in a
// tile whose rows are a multiple of 32 floats long those are 8-way bank conflicts, on the
// matmul's critical path (E in attention's E·V). Where a per-iteration result of a transposed
// matmul is read, on sm_80+, only by transposed matmuls as A (and by sums its epilogue updates),
// the tensor-core code stores it in a copy of its own whose rows are 8 floats longer
// (conflict-free reads, 2-way stores) and reads it from there; the tile itself is what devices
// before sm_80 use. Views are placed past everything else, where they fit.
void UGraphPlan::plan_tensor_core_views() {
  if (!tensor_cores) return;
  const auto &ops = bg.operators();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operator &op = ops[i];
    if (op.kind != OpKind::kMatmul || phase(op.outputs[0]) != LoopPhase::kPerIteration ||
        (attention && attention->handles(i)) ||
        !TileMatmul::transposes(tile_ref(op.inputs[0]), tile_ref(op.inputs[1]), tile_ref(op.outputs[0]), true)) {
      continue;
    }
    const Operator *epilogue = unary_consumer(op);
    const TensorId result = epilogue != nullptr ? epilogue->outputs[0] : op.outputs[0];
    const Dims &dims = dims_of(result);
    // A ragged result's fills (lower_ugraph.hpp) write its tile, not the copy.
    if (dims.back() % 32 != 0 || is_direct(result) || is_inlined(result) || is_ragged(result)) continue;
    const std::vector<size_t> sums = epilogue_sums(op, epilogue);
    bool only_transposed = true, read_as_a = false;
    for (size_t r = 0; r < ops.size(); ++r) {
      const Operator &reader = ops[r];
      for (size_t k = 0; k < reader.inputs.size(); ++k) {
        if (reader.inputs[k] != result) continue;
        const bool as_a =
            reader.kind == OpKind::kMatmul && k == 0 && reader.inputs[1] != result &&
            TileMatmul::transposes(tile_ref(result), tile_ref(reader.inputs[1]), tile_ref(reader.outputs[0]), true);
        read_as_a = read_as_a || as_a;
        only_transposed = only_transposed && (as_a || std::count(sums.begin(), sums.end(), r) > 0);
      }
    }
    if (!only_transposed || !read_as_a) continue;
    Dims padded = dims;
    padded.back() += 8;
    const std::string place = allocate_spare(num_elements(padded));
    if (place.empty()) continue;
    Ref view = tile_ref(result);
    view.ptr = place;
    view.strides = row_major_strides(padded);
    // Its readers are TF32 mma (a computed result is never B's 16-bit type widened): it holds
    // the values rounded to TF32 once, by the writer, instead of by every read.
    view.tf32_rounded = !view.widened_16bit;
    tensor_core_views.emplace(result, view);
  }
}

// ---- tiles read once ----
// Tiles read once in 16-byte groups (the loop-invariant ones, and every one where the loop runs
// once) are loaded into registers all together before any is converted and stored: every such
// load of a thread is in flight at once, one memory latency in all instead of one per tile (the
// compiler does not move a tile's global loads above the previous tile's shared-memory stores).
// Up to kMaxPrefetchGroups groups per thread; further tiles are read as usual. One tile gains
// nothing unless there are copies to overlap.
void UGraphPlan::plan_prefetch() {
  int64_t slots = 0;
  each_input_tile([&](const Operator &op, size_t input, const Dims &tile_dims, int64_t group) {
    if (!read_once(op) || stage_of(input) != nullptr || group == 1) return;
    Dims groups = tile_dims;
    groups.back() /= group;
    const int64_t n = per_thread(groups, block.threads);
    if (slots + n > kMaxPrefetchGroups) return;
    slots += n;
    prefetch.push_back({&op, input, group});
  });
  if (prefetch.size() < (depth > 0 ? 1u : 2u)) prefetch.clear();
}

}  // namespace yirage::codegen::cuda
