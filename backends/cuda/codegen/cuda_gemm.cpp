#include "cuda/codegen/cuda_gemm.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_wgmma.hpp"

namespace yirage::codegen::cuda {
namespace {

constexpr int64_t kThreads = 256;  // 8 warps: 2 along the rows, 4 along the columns
constexpr int64_t kWarpsM = 2, kWarpsN = 4;
constexpr int64_t kBk = 64;  // k per stage: four mma k-steps between barriers
constexpr int64_t kPad = 8;  // elements after each row of a stage (16 bytes)
// The ring: three steps in flight while one is multiplied (two for 128-row tiles, so that two
// blocks still fit an SM's shared memory).
constexpr int64_t kStages = 4;
constexpr int64_t kMinRows = 17;  // fewer: the vector kernel (cuda_matmul.cpp)

// Both bodies' start ($TILE$): the block's tile of A, B and O, and the loads of a stage, A's
// element (r, kc) at $A_AT$ and B's (r, nc) at $B_AT$ of their stages ($A_STAGE$, $B_STAGE$
// elements each). Filled into the body before its own placeholders.
constexpr const char *kTile = R"($ORIGIN$
const $T$ *const A = $A$ + ia + tm * $BM$ * $SA$;
const $T$ *const B = $B$ + ib + tn * $BN$;
$T$ *const O = $O$ + bt * $MN$;
const bool aligned = ((reinterpret_cast<unsigned long long>($A$) | reinterpret_cast<unsigned long long>($B$) |
                       reinterpret_cast<unsigned long long>($O$)) & 15) == 0;
const int rows = $M$ - tm * $BM$, cols = $N$ - tn * $BN$;
auto load = [&](int stage, int kt) {
  const int k0 = kt * $BK$;
  $T$ *const a = sa + stage * $A_STAGE$;
#pragma unroll
  for (int c = tid; c < $BM$ * $BK$ / 8; c += $THREADS$) {
    const int r = c / ($BK$ / 8), kc = c % ($BK$ / 8) * 8;
    const bool valid = r < rows && k0 + kc < $K$;
    yr_cp16_zfill(a + $A_AT$, valid ? A + r * $SA$ + k0 + kc : $A$, valid, aligned);
  }
  $T$ *const b = sb + stage * $B_STAGE$;
#pragma unroll
  for (int c = tid; c < $BK$ * $BN$ / 8; c += $THREADS$) {
    const int r = c / ($BN$ / 8), nc = c % ($BN$ / 8) * 8;
    const bool valid = k0 + r < $K$ && nc < cols;
    yr_cp16_zfill(b + $B_AT$, valid ? B + (k0 + r) * $SB$ + nc : $B$, valid, aligned);
  }
};)";

// The kernel body, with $NAME$ placeholders filled by tiled_gemm. The loads of a stage are a
// lambda so that the prologue and the loop share them.
constexpr const char *kBody = R"(extern __shared__ __align__(128) unsigned char yr_gemm_smem[];
$T$ *const sa = reinterpret_cast<$T$ *>(yr_gemm_smem);
$T$ *const sb = sa + $STAGES$ * $BM$ * $AS$;
const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
const int wm = warp / $WN$, wn = warp % $WN$;
$TILE$
float acc[$MT$][$NT$][4];
#pragma unroll
for (int i = 0; i < $MT$; ++i)
#pragma unroll
  for (int j = 0; j < $NT$; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
constexpr int kt_count = $KT$;
#pragma unroll
for (int s = 0; s < $STAGES$ - 1; ++s) {
  if (s < kt_count) load(s, s);
  yr_cp_commit();
}
for (int kt = 0; kt < kt_count; ++kt) {
  yr_cp_wait<$STAGES$ - 2>();
  __syncthreads();  // step kt is in, and every warp is done with the stage the next load fills
  if (kt + $STAGES$ - 1 < kt_count) load((kt + $STAGES$ - 1) % $STAGES$, kt + $STAGES$ - 1);
  yr_cp_commit();
  const $T$ *const a = sa + (kt % $STAGES$) * $BM$ * $AS$ + (wm * $WTM$ + (lane & 15)) * $AS$ + (lane >> 4) * 8;
  const $T$ *const b = sb + (kt % $STAGES$) * $BK$ * $BS$ + ((lane & 7) + ((lane >> 3) & 1) * 8) * $BS$ +
                       wn * $WTN$ + (lane >> 4) * 8;
#pragma unroll
  for (int kk = 0; kk < $BK$; kk += 16) {
    unsigned af[$MT$][4], bf[$NT$][2];
#pragma unroll
    for (int i = 0; i < $MT$; ++i) yr_ldmatrix4(a + i * 16 * $AS$ + kk, af[i]);
#pragma unroll
    for (int j = 0; j < $NT$; j += 2) {
      unsigned r[4];
      yr_ldmatrix_t4(b + kk * $BS$ + j * 8, r);
      bf[j][0] = r[0]; bf[j][1] = r[1]; bf[j + 1][0] = r[2]; bf[j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < $MT$; ++i)
#pragma unroll
      for (int j = 0; j < $NT$; ++j)
        yr_mma16(static_cast<const $T$ *>(nullptr), acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0],
                 bf[j][1]);
  }
}
#pragma unroll
for (int i = 0; i < $MT$; ++i)
#pragma unroll
  for (int j = 0; j < $NT$; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wm * $WTM$ + i * 16 + (lane >> 2) + h * 8, c = wn * $WTN$ + j * 8 + (lane & 3) * 2;
      if (r >= rows || c >= cols) continue;
      $T$ *const to = O + (tm * $BM$ + r) * $N$ + tn * $BN$ + c;
      if (aligned) {
        *reinterpret_cast<unsigned *>(to) = yr_pack2(static_cast<const $T$ *>(nullptr), $V0$, $V1$);
      } else {
        yr_st(to, $V0$);
        yr_st(to + 1, $V1$);
      }
    }
)";

// The same GEMM on warpgroup mma (sm_90a): two warpgroups of 4 warps, each a 64 × WG_COLS tile of
// wgmma.m64nWG_COLSk16 accumulators (WG_COLS = BN / WGN, the warpgroups WGM along the rows, WGN along the
// columns). Both operands' stages are laid out as wgmma reads them with 128-byte swizzling
// (yr_swizzled128): A K-major (its BM rows of 64 k), B MN-major (blocks of 64 columns, BK rows
// each). No operand passes through registers: a wgmma in flight reads registers of A it was
// given, which the next stage's ldmatrix would overwrite. $WGMMA$ is the four k steps of a
// stage (A's descriptor 32 bytes further each, B's 16 rows). With $INFLIGHT$ = 1 one stage's
// wgmma stays in flight while the next is issued, and copies run STAGES − 2 steps ahead; with 0
// each stage's wgmma is waited for and copies run STAGES − 1 ahead. Either way a copy fills the
// stage whose wgmma every warpgroup waited for before the barrier.
constexpr const char *kWarpgroupBody = R"(extern __shared__ __align__(1024) unsigned char yr_gemm_smem[];
if ((static_cast<unsigned>(__cvta_generic_to_shared(yr_gemm_smem)) & 1023u) != 0) __trap();
$T$ *const sb = reinterpret_cast<$T$ *>(yr_gemm_smem);
$T$ *const sa = sb + $STAGES$ * $BK$ * $BN$;
const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
const int wgm = wg / $WGN$, wgn = wg % $WGN$;
$TILE$
float acc[$NC$][4];
#pragma unroll
for (int j = 0; j < $NC$; ++j)
#pragma unroll
  for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
constexpr int kt_count = $KT$;
constexpr int ahead = $STAGES$ - 1 - $INFLIGHT$;  // steps the copies run ahead
#pragma unroll
for (int s = 0; s < ahead; ++s) {
  if (s < kt_count) load(s, s);
  yr_cp_commit();
}
for (int kt = 0; kt < kt_count; ++kt) {
  yr_cp_wait<ahead - 1>();
  yr_fence_proxy_async();  // the copies, visible to wgmma's reads
  __syncthreads();  // step kt is in, and no wgmma reads the stage the next copy fills
  if (kt + ahead < kt_count) load((kt + ahead) % $STAGES$, kt + ahead);
  yr_cp_commit();
  const unsigned long long ad = yr_wgmma_desc(sa + (kt % $STAGES$) * $BM$ * $BK$ + wgm * 64 * $BK$, 16, 1024);
  const unsigned long long bd = yr_wgmma_desc(sb + (kt % $STAGES$) * $BK$ * $BN$ + wgn * $WG_COLS$ * $BK$, $BK$ * 128, 1024);
  yr_wgmma_fence();
$WGMMA$
  yr_wgmma_commit();
  yr_wgmma_wait<$INFLIGHT$>();  // step kt - INFLIGHT's wgmma is done
$FENCE$}
yr_wgmma_wait<0>();
$FENCE$
#pragma unroll
for (int j = 0; j < $NC$; ++j)
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = wgm * 64 + (warp & 3) * 16 + (lane >> 2) + h * 8, c = wgn * $WG_COLS$ + j * 8 + (lane & 3) * 2;
    if (r >= rows || c >= cols) continue;
    $T$ *const to = O + (tm * $BM$ + r) * $N$ + tn * $BN$ + c;
    if (aligned) {
      *reinterpret_cast<unsigned *>(to) = yr_pack2(static_cast<const $T$ *>(nullptr), $V0$, $V1$);
    } else {
      yr_st(to, $V0$);
      yr_st(to + 1, $V1$);
    }
  }
)";

std::string filled(std::string text, const std::map<std::string, std::string> &values) {
  for (const auto &[key, value] : values) {
    const std::string placeholder = "$" + key + "$";
    for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size())) {
      text.replace(at, placeholder.size(), value);
    }
  }
  return text;
}

}  // namespace

std::optional<GemmTiles> gemm_tiles(const Ref &a, const Ref &b, const Ref &o, DType dtype, const CudaTarget &target) {
  const size_t rank = o.dims.size();
  if (rank < 2 || target.compute_capability < 80 || dtype_size(dtype) != 2) return std::nullopt;
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = b.dims[rank - 1];
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  // Compact rows in 16-byte groups, a compact output (its stores are pairs at even offsets).
  if (m < kMinRows || n % 8 != 0 || k % 8 != 0 || sa[rank - 1] != 1 || sb[rank - 1] != 1 || sa[rank - 2] % 8 != 0 ||
      sb[rank - 2] % 8 != 0 || !o.strides.empty()) {
    return std::nullopt;
  }
  const Dims batch_out(o.dims.begin(), o.dims.end() - 2);
  const int64_t batch = num_elements(batch_out);
  GemmTiles t;
  const auto blocks = [&] { return batch * ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn); };
  const auto stage_bytes = [&] {
    return (t.warpgroups ? t.bm * kBk + kBk * t.bn : t.bm * (kBk + kPad) + kBk * (t.bn + kPad)) * 2;
  };
  // The largest tiles that still give every multiprocessor a block (fewer leave some idle for the
  // whole kernel); the smallest where none does. 128-row tiles only from 128 rows.
  // On sm_90a warpgroup tiles where one of them does; their smallest, 64 × 128, left grids of
  // fewer blocks than multiprocessors slower than mma.sync's 64 × 64 (benchmarks/models/RESULTS.md).
  using Tile = std::pair<int64_t, int64_t>;
  const auto choose = [&](const std::vector<Tile> &tiles) {
    for (const auto &[bm, bn] : tiles) {
      t.bm = bm;
      t.bn = bn;
      if ((bm == 64 || m >= 128) && (target.multiprocessors <= 0 || blocks() >= target.multiprocessors)) return true;
    }
    return false;
  };
  t.warpgroups = target.warpgroup_mma() && choose({{128, 256}, {128, 128}, {64, 128}});
  if (!t.warpgroups) choose({{128, 128}, {64, 128}, {64, 64}});
  if (t.warpgroups) {
    // Two warpgroups: stacked along the rows of 128-row tiles, side by side along the columns
    // of 64-row ones. Two blocks a multiprocessor with four stages, or three, where they fit
    // (one block with six stages took 25-40% longer than two with three); else one with four.
    t.wgm = t.bm / 64;
    t.wgn = 2 / t.wgm;
    const int64_t per_sm = target.shared_bytes_per_multiprocessor;
    t.stages = kStages;
    t.min_blocks = 1;
    for (int64_t stages : {kStages, kStages - 1}) {
      if (per_sm > 0 && 2 * stages * stage_bytes() <= per_sm) {
        t.stages = stages;
        t.min_blocks = 2;
        break;
      }
    }
  } else {
    t.stages = t.bm == 128 ? kStages - 1 : kStages;
    t.min_blocks = 2;  // two blocks an SM: at most 128 registers
  }
  t.blocks = blocks();
  t.shared_bytes = t.stages * stage_bytes();
  if (target.max_shared_bytes > 0 && t.shared_bytes > target.max_shared_bytes) return std::nullopt;
  return t;
}

std::optional<MatmulLaunch> tiled_gemm(Printer &p, const Ref &a, const Ref &b, const Ref &o, DType dtype,
                                       const CudaTarget &target, const GemmEpilogue &epilogue) {
  const std::optional<GemmTiles> tiles = gemm_tiles(a, b, o, dtype, target);
  if (!tiles) return std::nullopt;
  const GemmTiles &t = *tiles;
  const size_t rank = o.dims.size();
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = b.dims[rank - 1];
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const Dims batch_out(o.dims.begin(), o.dims.end() - 2);
  Printer origin(0);
  emit_matmul_block_origin(origin, "tm", (m + t.bm - 1) / t.bm, "tn", (n + t.bn - 1) / t.bn, batch_out, sa, sb);
  const auto text = [](int64_t v) { return std::to_string(v); };
  std::map<std::string, std::string> values{{"T", element_type(dtype)},
                                            {"A", a.ptr},
                                            {"B", b.ptr},
                                            {"O", o.ptr},
                                            {"ORIGIN", origin.str()},
                                            {"M", text(m)},
                                            {"N", text(n)},
                                            {"K", text(k)},
                                            {"MN", text(m * n)},
                                            {"SA", text(sa[rank - 2])},
                                            {"SB", text(sb[rank - 2])},
                                            {"BM", text(t.bm)},
                                            {"BN", text(t.bn)},
                                            {"BK", text(kBk)},
                                            {"AS", text(kBk + kPad)},
                                            {"BS", text(t.bn + kPad)},
                                            {"STAGES", text(t.stages)},
                                            {"KT", text((k + kBk - 1) / kBk)},
                                            {"THREADS", text(kThreads)},
                                            {"WN", text(kWarpsN)},
                                            {"WTM", text(t.bm / kWarpsM)},
                                            {"WTN", text(t.bn / kWarpsN)},
                                            {"MT", text(t.bm / kWarpsM / 16)},
                                            {"NT", text(t.bn / kWarpsN / 8)}};
  // The two values a lane stores at a time, through the epilogue where there is one.
  const std::string acc = t.warpgroups ? "acc[j]" : "acc[i][j]";
  for (int e = 0; e < 2; ++e) {
    const std::string value = acc + "[2 * h" + (e == 0 ? "" : " + 1") + "]";
    values["V" + text(e)] = epilogue ? epilogue(value, "(to - " + o.ptr + (e == 0 ? ")" : " + 1)")) : value;
  }
  if (t.warpgroups) {
    const int64_t wn = t.bn / t.wgn;
    std::string steps;
    // Each k step of 16 is 32 bytes further along A's rows and 16 × 128 bytes further into B's
    // stage (a descriptor's address counts 16 bytes; within A's 128-byte rows the swizzle applies
    // to the address the step gives).
    for (int64_t s = 0; s < kBk / 16; ++s) {
      steps +=
          "  " +
          wgmma_call_shared(wn, dtype, "acc", 0, "ad + " + text(s * 32 / 16), "bd + " + text(s * 16 * 128 / 16), true) +
          "\n";
    }
    values["WGN"] = text(t.wgn);
    values["WG_COLS"] = text(wn);
    values["NC"] = text(wn / 8);
    values["WGMMA"] = steps;
    // One stage's wgmma in flight needs four stages: with three the copies would run one ahead.
    values["INFLIGHT"] = t.stages >= 4 ? "1" : "0";
    values["FENCE"] = wgmma_operand_fence("acc", 0, wn / 8);
  }
  // The tile's text first (its own placeholders are the body's), then the rest.
  const std::string body = filled(t.warpgroups ? kWarpgroupBody : kBody,
                                  {{"TILE", t.warpgroups ? filled(kTile, {{"A_STAGE", "$BM$ * $BK$"},
                                                                          {"A_AT", "yr_swizzled128(r, kc, $BM$)"},
                                                                          {"B_STAGE", "$BK$ * $BN$"},
                                                                          {"B_AT", "yr_swizzled128(r, nc, $BK$)"}})
                                                         : filled(kTile, {{"A_STAGE", "$BM$ * $AS$"},
                                                                          {"A_AT", "r * $AS$ + kc"},
                                                                          {"B_STAGE", "$BK$ * $BS$"},
                                                                          {"B_AT", "r * $BS$ + nc"}})}});
  p.text(filled(body, values));
  return MatmulLaunch{t.blocks, kThreads, t.min_blocks, t.shared_bytes};
}

std::optional<UGraphGemm> ugraph_gemm_form(const BlockGraph &bg) {
  const auto &ops = bg.operators();
  const BlockGraphConfig &config = bg.config();
  // The operators, in order: the iterators, the product of two of their tiles, its sum over the
  // loop (where the loop has several iterations), elementwise operators one after another, the
  // saver. Iterators read the kernel's inputs in order.
  size_t iterators = 0;
  while (iterators < ops.size() && ops[iterators].kind == OpKind::kInputIterator) ++iterators;
  if (iterators < 2 || iterators + 2 > ops.size() || ops[iterators].kind != OpKind::kMatmul ||
      ops.back().kind != OpKind::kOutputSaver) {
    return std::nullopt;
  }
  const auto iterator_of = [&](TensorId tile) -> std::optional<size_t> {
    for (size_t i = 0; i < iterators; ++i) {
      if (ops[i].outputs[0] == tile) return i;
    }
    return std::nullopt;
  };
  const Operator &product = ops[iterators];
  const std::optional<size_t> a_input = iterator_of(product.inputs[0]), b_input = iterator_of(product.inputs[1]);
  if (!a_input || !b_input || *a_input == *b_input) return std::nullopt;
  const Operator &a_op = ops[*a_input], &b_op = ops[*b_input], &saver = ops.back();
  const Dims &a_dims = a_op.attributes.sizes, &b_dims = b_op.attributes.sizes;
  const DType dtype = a_op.attributes.dtype;
  if (a_dims.size() != 2 || b_dims.size() != 2 || a_dims[1] != b_dims[0] || b_op.attributes.dtype != dtype ||
      saver.attributes.dtype != dtype || dtype_size(dtype) != 2 ||
      saver.attributes.sizes != Dims{a_dims[0], b_dims[1]} || saver.attributes.forloop_dim != -1) {
    return std::nullopt;
  }
  // k along the loop (or whole in one iteration); every grid axis splits A's rows or B's columns,
  // and the saver lays the blocks' tiles out along the same dim.
  const auto k_along_loop = [&](const Operator &it, int32_t k_dim) {
    return it.attributes.forloop_dim == k_dim || (config.forloop_range == 1 && it.attributes.forloop_dim == -1);
  };
  if (!k_along_loop(a_op, 1) || !k_along_loop(b_op, 0)) return std::nullopt;
  for (size_t axis = 0; axis < 3; ++axis) {
    if (config.grid[axis] == 1) continue;
    const int32_t rows = a_op.attributes.grid_map[axis], columns = b_op.attributes.grid_map[axis];
    const int32_t laid = saver.attributes.grid_map[axis];
    const bool along_rows = rows == 0 && columns == -1 && laid == 0;
    const bool along_columns = rows == -1 && columns == 1 && laid == 1;
    if (!along_rows && !along_columns) return std::nullopt;
  }
  // The other iterators: tensors of the output's shape, each block the tile it saves (a residual).
  std::vector<int> uses(bg.num_tensors(), 0);
  for (const Operator &op : ops) {
    for (TensorId t : op.inputs) ++uses[static_cast<size_t>(t)];
  }
  for (size_t i = 0; i < iterators; ++i) {
    if (i == *a_input || i == *b_input) continue;
    const Operator &it = ops[i];
    if (it.attributes.sizes != saver.attributes.sizes || it.attributes.forloop_dim != -1 ||
        uses[static_cast<size_t>(it.outputs[0])] != 1) {
      return std::nullopt;
    }
    for (size_t axis = 0; axis < 3; ++axis) {
      if (config.grid[axis] > 1 && it.attributes.grid_map[axis] != saver.attributes.grid_map[axis]) return std::nullopt;
    }
  }
  // The chain after the product: each operator takes the value so far and, for a binary one, one
  // of the other iterators' tiles.
  UGraphGemm form{*a_input, *b_input, iterators, {}};
  TensorId value = product.outputs[0];
  std::vector<UGraphGemm::Step> &chain = form.chain;
  bool summed = false;
  for (size_t i = iterators + 1; i + 1 < ops.size(); ++i) {
    const Operator &op = ops[i];
    if (op.kind == OpKind::kAccumSum && i == iterators + 1 && op.inputs[0] == value) {
      summed = true;
    } else if (is_unary(op.kind) && op.inputs[0] == value) {
      chain.push_back({&op});
    } else if (is_binary(op.kind) && (op.inputs[0] == value) != (op.inputs[1] == value)) {
      const bool value_first = op.inputs[0] == value;
      const std::optional<size_t> from = iterator_of(op.inputs[value_first ? 1 : 0]);
      if (!from || *from == *a_input || *from == *b_input) return std::nullopt;
      chain.push_back({&op, *from, value_first});
    } else {
      return std::nullopt;
    }
    value = op.outputs[0];
  }
  if (saver.inputs[0] != value || (config.forloop_range > 1 && !summed)) return std::nullopt;
  return form;
}

std::optional<MatmulLaunch> ugraph_gemm(Printer &p, const BlockGraph &bg, const std::vector<Ref> &in,
                                        const std::vector<Ref> &out, const CudaTarget &target) {
  const std::optional<UGraphGemm> form = ugraph_gemm_form(bg);
  if (!form || out.size() != 1 || in.size() != form->inputs ||
      std::any_of(in.begin(), in.end(), [](const Ref &r) { return !r.strides.empty(); })) {
    return std::nullopt;
  }
  // The epilogue: the chain's value from the element's sum; `offset` is the element's in O (and
  // in every other input, of O's shape).
  const auto f = [&](const std::string &sum, const std::string &offset) {
    std::string v = sum;
    for (const UGraphGemm::Step &step : form->chain) {
      if (is_unary(step.op->kind)) {
        v = unary_expr(step.op->kind, step.op->attributes, v);
        continue;
      }
      const std::string loaded = "yr_ld(" + in[step.other].ptr + " + " + offset + ")";
      v = step.value_first ? binary_expr(step.op->kind, v, loaded) : binary_expr(step.op->kind, loaded, v);
    }
    return v;
  };
  const DType dtype = bg.operators()[form->a_input].attributes.dtype;
  return tiled_gemm(p, in[form->a_input], in[form->b_input], out[0], dtype, target,
                    form->chain.empty() ? GemmEpilogue() : GemmEpilogue(f));
}

}  // namespace yirage::codegen::cuda
