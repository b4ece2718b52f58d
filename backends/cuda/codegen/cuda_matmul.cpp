#include "cuda/codegen/cuda_matmul.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "codegen/lower_operator.hpp"
#include "cuda/codegen/cuda_gemm.hpp"
#include "cuda/codegen/cuda_loops.hpp"
#include "cuda/codegen/cuda_mfma.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {
namespace {

// Prints the stores of output row `ii`, column `jj` (expressions, inside the output's m × n)
// from the float sums of the kernel's products (one name per product); the batch index `bt` is
// in scope.
using ProductStore =
    std::function<void(Printer &p, const std::vector<std::string> &sums, const std::string &ii, const std::string &jj)>;

// What a weight-product kernel computes: A times each of `b` (of one shape: dims, strides and
// `dtype`), out_dims the products' dims, and what it stores of their sums.
struct WeightProducts {
  Ref a;
  std::vector<Ref> b;
  Dims out_dims;
  DType dtype;
  ProductStore store;
  // A norm's weight folded into A ([1, k]: A's column q times a_scale[q]), and the rms of A's rows
  // (before that weight) with this eps, kept in rms_row[] for `store` (a µGraph's norm + product).
  std::optional<Ref> a_scale;
  std::optional<double> rms_eps;
  std::string block_index = "blockIdx.x";  // the block's index in the grid (C text)
};

// The one product's sum, stored to `o` (batch, m, n).
ProductStore store_to(const Ref &o, int64_t m, int64_t n) {
  return [ptr = o.ptr, m, n](Printer &p, const std::vector<std::string> &sums, const std::string &ii,
                             const std::string &jj) {
    p.line("yr_st(" + ptr + " + bt * " + std::to_string(m * n) + " + " + ii + " * " + std::to_string(n) + " + " + jj +
           ", " + sums[0] + ");");
  };
}

// After every warp stored its partial sums of the block's rows × tile_cols outputs in
// partial[warp][row][column], the warps of product q being q · warps … q · warps + warps − 1:
// sums each product over its warps and stores the outputs inside m × n.
void emit_matmul_partial_sums(Printer &p, int64_t products, int64_t warps, int64_t rows, int64_t tile_cols, int64_t m,
                              int64_t n, const ProductStore &store) {
  const std::string TC = std::to_string(tile_cols), N = std::to_string(n);
  p.line("__syncthreads();");
  p.open("for (int t = threadIdx.x; t < " + std::to_string(rows * tile_cols) + "; t += blockDim.x)");
  p.line("const int64_t r = t / " + TC + ", jj = cb * " + TC + " + t % " + TC + ", ii = rb * " + std::to_string(rows) +
         " + r;");
  p.line("if (jj >= " + N + " || ii >= " + std::to_string(m) + ") continue;");
  std::vector<std::string> sums;
  for (int64_t q = 0; q < products; ++q) {
    sums.push_back("sum" + std::to_string(q));
    p.line("float " + sums.back() + " = 0.0f;");
    p.line("#pragma unroll");
    p.line("for (int w = 0; w < " + std::to_string(warps) + "; ++w) " + sums.back() + " += partial[" +
           std::to_string(q * warps) + " + w][r][t % " + TC + "];");
  }
  store(p, sums, "ii", "jj");
  p.close();
}

// A pre-defined matmul, split along k: each block computes kMatmulRows rows × 32 columns of
// one batch; each of its warps (16, or 32 when there are few blocks: enough loads in flight)
// accumulates a slice of k in registers (a lane per column, so
// loads of B are coalesced and loads of A are broadcasts), then the slices are summed through
// shared memory. Small-m matmuls (the benchmark's weight products) get 8× the parallelism of one
// thread per output and read the weights once. Returns the number of blocks.
constexpr int64_t kMatmulRows = 8;
MatmulLaunch matmul_kernel(Printer &p, const Ref &a, const Ref &b, const Ref &o) {
  const size_t rank = o.dims.size();
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = b.dims[rank - 1];
  const Dims batch_out(o.dims.begin(), o.dims.end() - 2);
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const int64_t rows = std::min(m, kMatmulRows);
  const int64_t row_blocks = (m + rows - 1) / rows, col_blocks = (n + 31) / 32;
  const int64_t blocks = std::max<int64_t>(1, num_elements(batch_out) * row_blocks * col_blocks);
  const int64_t kMatmulWarps = blocks < 256 ? 32 : 16;
  const int64_t slice = (k + kMatmulWarps - 1) / kMatmulWarps;
  const std::string R = std::to_string(rows);
  p.line("__shared__ float partial[" + std::to_string(kMatmulWarps) + "][" + R + "][32];");
  p.line("const int64_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  emit_matmul_block_origin(p, "cb", col_blocks, "rb", row_blocks, batch_out, sa, sb);
  p.line("const int64_t j = cb * 32 + lane, i0 = rb * " + R + ";");
  p.line("const int64_t p0 = warp * " + std::to_string(slice) + ", p1 = p0 + " + std::to_string(slice) + " < " +
         std::to_string(k) + " ? p0 + " + std::to_string(slice) + " : " + std::to_string(k) + ";");
  p.line("float acc[" + R + "];");
  p.line("#pragma unroll");
  p.line("for (int r = 0; r < " + R + "; ++r) acc[r] = 0.0f;");
  p.open("if (j < " + std::to_string(n) + ")");
  // Rows past m read row m − 1 (in bounds) and are never stored: no branch in the inner loop.
  p.line("const auto *pb = " + b.ptr + " + ib + j * " + std::to_string(sb[rank - 1]) + ";");
  p.line("const auto *pa = " + a.ptr + " + ia;");
  p.line("int64_t row[" + R + "];");
  p.line("#pragma unroll");
  p.line("for (int r = 0; r < " + R + "; ++r) row[r] = (i0 + r < " + std::to_string(m) +
         " ? i0 + r : " + std::to_string(m - 1) + ") * " + std::to_string(sa[rank - 2]) + ";");
  p.line("#pragma unroll 8");
  p.open("for (int64_t q = p0; q < p1; ++q)");
  p.line("const float bv = yr_ld(pb + q * " + std::to_string(sb[rank - 2]) + ");");
  p.line("#pragma unroll");
  p.line("for (int r = 0; r < " + R + "; ++r) acc[r] += yr_ld(pa + row[r] + q * " + std::to_string(sa[rank - 1]) +
         ") * bv;");
  p.close();
  p.close();
  p.line("#pragma unroll");
  p.line("for (int r = 0; r < " + R + "; ++r) partial[warp][r][lane] = acc[r];");
  emit_matmul_partial_sums(p, 1, kMatmulWarps, rows, 32, m, n, store_to(o, m, n));
  return {blocks, kMatmulWarps * 32};
}

// The aligned part of a vector matmul on tensor cores, for up to 16 rows of 16-bit data (inside
// `if (aligned)`, after pb / pa and before the partial sums). A warp's 16-byte loads of 8 B rows
// × 32 columns (lane l: row l/4, columns 8(l%4)…+7, as in the FMA loop) are four 8×8 tiles whose
// columns interleave (tile j: columns 8c + 2j and 8c + 2j + 1 for c = 0…3); movmatrix turns each
// into an mma.m16n8k16 B operand (k pairs of one column per lane), two tiles of 8 rows making
// one k step of 16, and A is X's rows (zeros past m). Lane l ends with rows l/4 and l/4 + 8's
// sums for columns 8(l%4) + 2j and + 1 in its accumulator j. Steps are warp-uniform: slices are
// whole 8-row blocks (k is a multiple of 16), and a last lone block is paired with zeros.
//
// The main loop takes k in batches of 32 (two k steps) and permutes k within each batch so that
// a lane's A operands of the batch are 16 consecutive bytes of a row: the mma's k pair (step s,
// half h, lane column t) is the batch's pair 4t + 2s + h, so lane (g, t) reads row g's elements
// 8t…8t + 7 in one load (word 2s + h is the pair of step s, half h), and B's rows follow: tile
// u = 2s + h's row r, which lane r loads, is the batch's row 8(r/2) + 2u + r%2. Loaded in the
// natural order, A's operands were 16 two-byte loads per lane and batch against B's four 16-byte
// ones, and held the product below the rate at which it streams B. A must be 16-byte aligned (the
// caller tests it with B). The remainder loop (a slice that is not a multiple of 32) takes k steps
// of 16 in the natural order.
// `scale` (C text of a pointer, or empty): A's column q times scale[q], applied to A's words as
// they are loaded (in float, rounded back to A's type for the mma).
void emit_vector_matmul_mma(Printer &p, int64_t rows, int64_t m, int64_t n, int64_t a_row_stride,
                            const std::string &scale) {
  const std::string N = std::to_string(n), M = std::to_string(m);
  const std::string AS = std::to_string(a_row_stride);
  const bool upper = rows > 8;  // the mma's rows 8-15 hold A's rows too, else zeros
  p.line("const int g = kl, t = gl;  // the mma fragment's row and k pair / column group");
  p.line("const bool a_row = i0 + g < " + M + ";");
  p.line("const auto *arow = pa + (a_row ? (i0 + g) * " + AS + " : 0);");
  p.line("const bool a_up = " + (upper ? "i0 + g + 8 < " + M : std::string("false")) + ";");
  p.line("const auto *aup = pa + (a_up ? (i0 + g + 8) * " + AS + " : 0);");
  p.line("float tc[4][4];");
  p.line("#pragma unroll");
  p.line("for (int j = 0; j < 4; ++j) for (int e = 0; e < 4; ++e) tc[j][e] = 0.0f;");
  // One k step: the A operands a[0…3] against tiles `lo` (k 0-7) and `hi` (k 8-15) of B.
  auto step = [&](const std::string &a0, const std::string &a1, const std::string &a2, const std::string &a3,
                  const std::string &lo, const std::string &hi) {
    p.open("");
    p.line("const unsigned lo[4] = {" + lo + ".x, " + lo + ".y, " + lo + ".z, " + lo + ".w};");
    p.line("const unsigned hi[4] = {" + hi + ".x, " + hi + ".y, " + hi + ".z, " + hi + ".w};");
    p.line("#pragma unroll");
    p.line("for (int j = 0; j < 4; ++j) yr_mma16(pb, tc[j], " + a0 + ", " + a1 + ", " + a2 + ", " + a3 +
           ", yr_transpose8x8(lo[j]), yr_transpose8x8(hi[j]));");
    p.close();
  };
  // B's rows and A's words of the next batch are loaded before this batch is computed: A (X,
  // read by every block from L2) is as far from its first use as B.
  p.line("int64_t base = k0;");
  p.line("const auto *pbp = pb + (8 * (g >> 1) + (g & 1)) * " + N + ";  // B rows in the batch's k order");
  p.line("const auto *par = arow + 8 * t, *pau = aup + 8 * t;");
  p.line("uint4 raw[4], next[4], ar = make_uint4(0, 0, 0, 0), au = ar, nr = ar, nu = ar;");
  // The batch from k row `k0` on: B's rows into `b`, A's words into `wr` (row g) and `wu` (g + 8).
  auto scaled_words = [&](const std::string &words, const std::string &k0) {
    if (scale.empty()) return;
    p.open("");
    p.line("float va[8], vg[8];");
    p.line("yr_cvt16(pb, " + words + ", va);");
    p.line("yr_cvt16(pb, yr_raw16(" + scale + " + 8 * t + " + k0 + "), vg);");
    p.line(words +
           " = make_uint4(yr_pack2(pb, va[0] * vg[0], va[1] * vg[1]), yr_pack2(pb, va[2] * vg[2], va[3] * vg[3]), "
           "yr_pack2(pb, va[4] * vg[4], va[5] * vg[5]), yr_pack2(pb, va[6] * vg[6], va[7] * vg[7]));");
    p.close();
  };
  auto load_batch = [&](const std::string &k0, const std::string &b, const std::string &wr, const std::string &wu) {
    p.open("if (" + k0 + " + 32 <= p1)");
    p.line("#pragma unroll");
    p.line("for (int u = 0; u < 4; ++u) " + b + "[u] = yr_stream16(pbp + (" + k0 + " + 2 * u) * " + N + ");");
    for (const auto &[valid, words, pointer] :
         {std::tuple<std::string, std::string, std::string>{"a_row", wr, "par"}, {"a_up", wu, "pau"}}) {
      if (scale.empty()) {
        p.line("if (" + valid + ") " + words + " = yr_raw16(" + pointer + " + " + k0 + ");");
        continue;
      }
      p.open("if (" + valid + ")");
      p.line(words + " = yr_raw16(" + pointer + " + " + k0 + ");");
      scaled_words(words, k0);
      p.close();
    }
    p.close();
  };
  load_batch("base", "raw", "ar", "au");
  p.open("for (; base + 32 <= p1; base += 32)");
  load_batch("base + 32", "next", "nr", "nu");
  step("ar.x", "au.x", "ar.y", "au.y", "raw[0]", "raw[1]");
  step("ar.z", "au.z", "ar.w", "au.w", "raw[2]", "raw[3]");
  p.line("#pragma unroll");
  p.line("for (int u = 0; u < 4; ++u) raw[u] = next[u];");
  p.line("ar = nr;");
  p.line("au = nu;");
  p.close();
  p.open("for (; base < p1; base += 16)");
  p.line("const uint4 first = yr_stream16(pb + (base + g) * " + N + ");");
  p.line("const uint4 second = base + 8 < p1 ? yr_stream16(pb + (base + 8 + g) * " + N + ") : make_uint4(0, 0, 0, 0);");
  p.line("const bool full = base + 8 < p1;");
  // A's pair at k (scaled: each of the two times its factor).
  auto pair = [&](const std::string &row, const std::string &k) {
    if (scale.empty()) return "yr_pair16(" + row + " + " + k + ")";
    return "yr_pack2(pb, yr_ld(" + row + " + " + k + ") * yr_ld(" + scale + " + " + k + "), yr_ld(" + row + " + " + k +
           " + 1) * yr_ld(" + scale + " + " + k + " + 1))";
  };
  p.line("const unsigned a0 = a_row ? " + pair("arow", "base + 2 * t") + " : 0u;");
  p.line("const unsigned a1 = a_up ? " + pair("aup", "base + 2 * t") + " : 0u;");
  p.line("const unsigned a2 = a_row && full ? " + pair("arow", "base + 8 + 2 * t") + " : 0u;");
  p.line("const unsigned a3 = a_up && full ? " + pair("aup", "base + 8 + 2 * t") + " : 0u;");
  step("a0", "a1", "a2", "a3", "first", "second");
  p.close();
  for (int half = 0; half < (upper ? 2 : 1); ++half) {
    const std::string row = half == 0 ? "g" : "g + 8", e = half == 0 ? "0" : "2";
    p.open("if (" + row + " < " + std::to_string(rows) + ")");
    p.line("#pragma unroll");
    p.line("for (int j = 0; j < 4; ++j) { partial[warp][" + row + "][8 * t + 2 * j] = tc[j][" + e +
           "]; partial[warp][" + row + "][8 * t + 2 * j + 1] = tc[j][" + e + " + 1]; }");
    p.close();
  }
}

// A pre-defined matmul whose B rows are compact and split into 16-byte groups (n a multiple of
// 8 for 16-bit dtypes, of 4 for float32): the weight products of the benchmarks, where m is small
// and reading B once at full bandwidth is the whole cost. Each lane owns one 16-byte group of
// columns (one vector load per k row) and every row of the block's row tile; a warp covers 4
// groups × 8 k rows per step, and the block's warps split k. Partial sums meet through shuffles
// (the 8 k lanes of a group), then shared memory (the warps). With several B of one shape (a
// µGraph of weight products), the block's warps are split among them, each product's warps
// splitting k. vector_matmul_kernel emits it where vector_shape says B fits.
//
// 16 warps per block (fewer when k is short: at least 16 rows per k lane), fewer where the grid
// would not be resident at once (vector_shape's block_warps); with few accumulators (at most 32
// per lane) registers are capped at 64, B rows in batches of 2; with more, batches of 4, and on
// sm_80+ for 16-bit data the products on tensor cores (see emit_vector_matmul_mma). Why these batch sizes and the
// tensor cores, and why k is not split further over thread block clusters: docs/backends/cuda.md, "Why the generator
// does what it does".
//
// Every row block reads all of B, so the rows per block decide how often B is read: 8 with FMAs
// (a lane's accumulators are rows × 8 columns), 16 on the tensor cores, whose m16 tiles take rows
// 8-15 at no cost (rmsnorm_linear at b = 8, 16 rows, read its 50 MB of weights twice with 8).
constexpr int64_t kGroupLanes = 4, kMmaRows = 16;
// `before_wait` receives what runs before griddepcontrol.wait: the block's coordinates and L2
// prefetches of the first kBPrefetchRows of each warp's rows of B (2 KB per warp: 32 rows of its
// 64-byte column strip), so that a kernel launched while the previous one still runs
// (programmatic dependent launch) starts streaming its weights meanwhile. Prefetching is safe
// there: L2 is the device's point of coherence, so a line the previous kernel writes afterwards
// is updated in L2, and nothing enters L1 before the wait. A fixed number of rows, not a fraction
// of the warp's slice: no one fraction suited every weight product, while 32 rows came out best
// or close to it for each (docs/backends/cuda.md, "Why the generator does what it does").
constexpr int64_t kBPrefetchRows = 32;
// k split over blocks (one row of A by at least kMinSplitK rows of B, on CUDA targets whose
// multiprocessors are known): each column tile's blocks take chunks of k, write their float sums
// to the launch's workspace, and the tile's last block to finish adds them up (in the chunks'
// order) and stores the outputs. A tile's k is split in two, four, … while there are fewer than
// kSplitBlocksPerSm blocks per multiprocessor and each chunk keeps at least kMinSplitRows rows:
// a grid of one or two blocks per multiprocessor left some streaming twice the columns of others
// (docs/backends/cuda.md, "Why the generator does what it does").
constexpr int64_t kSplitBlocksPerSm = 3, kMaxSplits = 16, kMinSplitRows = 128, kMinSplitK = 2048;
// The shape of a vector matmul: {} (fits false) where B's rows are not compact 16-byte groups.
struct VectorShape {
  bool fits = false;
  // A lane's 16 bytes of columns (`group` elements); `group_lanes` lanes across a warp's columns
  // (4 or 8; 4 on the tensor cores), the other 32 / group_lanes across its k rows.
  int64_t group = 0, group_lanes = kGroupLanes, rows = 0, tile_cols = 0, row_blocks = 0, col_blocks = 0;
  int64_t tiles = 0, k_splits = 1, blocks = 0;  // blocks = tiles (columns, rows, batches) × k_splits
  bool few_accumulators = false, tensor_cores = false;
  int64_t block_warps = 16, min_blocks = 1;  // warps per block; __launch_bounds__'s blocks per SM
  int64_t warps_per_product = 0, slice = 0;  // a product's warps each take a slice of k rows
  int64_t k_lanes() const { return 32 / group_lanes; }
};
// The warps per block and blocks per SM: the most warps (16, 8 or 4) with which the whole grid is
// resident at once, every block streaming its columns from the start; a grid past one wave left
// its last blocks to run alone (llama3_70b's qkv at 1 token: 320 blocks of 16 warps, 264
// resident, 97 µs; 87 with 8 warps; docs/backends/cuda.md). A lane's registers decide how many
// warps fit an SM: 32 with few accumulators (64 registers), 16 on the tensor cores (128). Many
// FMA accumulators keep 16 warps, one block per SM, and so does a device whose multiprocessors
// are unknown.
int64_t warp_slots(const VectorShape &s) {
  return s.few_accumulators ? 32 : 16;
}
void block_warps(VectorShape &s, int64_t multiprocessors) {
  const int64_t slots = warp_slots(s);
  s.min_blocks = slots / s.block_warps;
  if (!(s.few_accumulators || s.tensor_cores) || multiprocessors <= 0) return;
  for (int64_t warps : {16, 8, 4}) {
    s.block_warps = warps;
    s.min_blocks = slots / warps;
    if (s.blocks <= multiprocessors * s.min_blocks) return;
  }
}

// `may_split`: whether k may be split over blocks (a pre-defined product's; a µGraph's grid fixes
// its tiles of 4 lanes, each a block).
VectorShape vector_shape(const WeightProducts &w, const CudaTarget &target, bool may_split) {
  const Dims &od = w.out_dims;
  const size_t rank = od.size();
  const int64_t m = w.a.dims[rank - 2], k = w.a.dims[rank - 1], n = w.b[0].dims[rank - 1];
  const Dims batch_out(od.begin(), od.end() - 2);
  const Dims sa = matmul_operand_strides(w.a, od), sb = matmul_operand_strides(w.b[0], od);
  const auto products = static_cast<int64_t>(w.b.size());
  VectorShape s;
  s.group = group_elements(w.dtype);
  const int64_t group = s.group;
  // Every product's warps get at least one slice (at most 16 warps a block).
  if (n % group != 0 || sb[rank - 1] != 1 || sb[rank - 2] != n || products > 16) return s;
  s.fits = true;
  const int64_t fma_rows = std::min(m, kMatmulRows);
  s.few_accumulators = fma_rows * group <= 32;
  // Many rows of 16-bit data on sm_80+: the products on tensor cores (emit_vector_matmul_mma)
  // where every warp step is whole (k a multiple of 16, whole column tiles) and A's rows are
  // compact and start on 16-byte groups (its operands are 16-byte loads).
  const bool a_groups =
      sa[rank - 1] == 1 && std::all_of(sa.begin(), sa.end() - 1, [&](int64_t x) { return x % group == 0; });
  s.tensor_cores = !s.few_accumulators && group == 8 && target.compute_capability >= 80 && k % 16 == 0 &&
                   n % (kGroupLanes * group) == 0 && a_groups;
  s.rows = s.tensor_cores ? std::min(m, kMmaRows) : fma_rows;
  // A pre-defined product of one row by a long k on CUDA: 8 lanes of columns (each warp step reads
  // 128 bytes of a row of B, not 64), and k split over blocks where that leaves too few tiles.
  // Measured slower at 4, 8 and 16 rows, at k = 1024, and for µGraphs (a weighted norm's product,
  // whose rms the last block then computed: docs/backends/cuda.md).
  const bool split = may_split && target.k_split_blocks() && s.rows == 1 && !s.tensor_cores && k >= kMinSplitK;
  s.group_lanes = split ? 2 * kGroupLanes : kGroupLanes;
  s.tile_cols = s.group_lanes * group;
  s.row_blocks = (m + s.rows - 1) / s.rows;
  s.col_blocks = (n + s.tile_cols - 1) / s.tile_cols;
  s.tiles = std::max<int64_t>(1, num_elements(batch_out) * s.row_blocks * s.col_blocks);
  // k halved while the tiles give fewer than kSplitBlocksPerSm blocks per multiprocessor and the
  // grid stays resident at once with the fewest warps per block that block_warps takes (4), each
  // chunk keeping kMinSplitRows.
  const int64_t resident = target.multiprocessors * (s.few_accumulators ? warp_slots(s) / 4 : 1);
  int64_t splits = 1;
  while (split && splits < kMaxSplits && s.tiles * splits < kSplitBlocksPerSm * target.multiprocessors &&
         s.tiles * splits * 2 <= resident && k / (2 * splits) >= kMinSplitRows) {
    splits *= 2;
  }
  s.blocks = s.tiles * splits;
  block_warps(s, target.multiprocessors);
  // Several products share the block's warps, each warp a slice of its chunk of k (at least 16
  // rows per k lane), in whole steps of the k lanes; the chunks that those slices make may be
  // fewer than `splits`.
  const int64_t chunk = (k + splits - 1) / splits, lanes = s.k_lanes();
  s.warps_per_product = std::clamp<int64_t>(chunk / (lanes * 16), 1, std::max<int64_t>(1, s.block_warps / products));
  s.slice = ((chunk + s.warps_per_product - 1) / s.warps_per_product + lanes - 1) / lanes * lanes;
  s.k_splits = (k + s.slice * s.warps_per_product - 1) / (s.slice * s.warps_per_product);
  s.blocks = s.tiles * s.k_splits;
  return s;
}

// rms_row[r] = sqrt(Σ x² / k + eps) over row i0 + r of `a` (rows of `rows` from i0, inside m),
// after the products, every thread of the block taking its share of each row's squares. Where a
// row's mean square leaves float32's range (rms_mean_in_range: squares past float32, or all of
// them too small), one thread takes that row again, its largest magnitude first and then the
// squares scaled by it (as rms_scale does in the shared lowering: eps · scale² stays <= 1).
void emit_row_rms(Printer &p, const Ref &a, int64_t rows, int64_t m, int64_t k, const Dims &sa, double eps,
                  int64_t warps) {
  const size_t rank = sa.size();
  const std::string R = std::to_string(rows), K = std::to_string(k), SK = std::to_string(sa[rank - 1]);
  const std::string row_start = a.ptr + " + ia + (i0 + r < " + std::to_string(m) +
                                " ? i0 + r : " + std::to_string(m - 1) + ") * " + std::to_string(sa[rank - 2]);
  p.line("__shared__ float rms_part[" + std::to_string(warps) + "][" + R + "], rms_row[" + R + "];");
  p.open("");
  p.line("float squares[" + R + "];");
  p.line("#pragma unroll");
  p.line("for (int r = 0; r < " + R + "; ++r) squares[r] = 0.0f;");
  p.open("for (int64_t c = threadIdx.x; c < " + K + "; c += blockDim.x)");
  p.line("#pragma unroll");
  p.line("for (int r = 0; r < " + R + "; ++r) { const float v = yr_ld(" + row_start + " + c * " + SK +
         "); squares[r] += v * v; }");
  p.close();
  p.line("#pragma unroll");
  p.open("for (int r = 0; r < " + R + "; ++r)");
  p.line(warp_reduce("squares[r]", false));
  p.line("if (lane == 0) rms_part[warp][r] = squares[r];");
  p.close();
  p.close();
  p.line("__syncthreads();");
  p.open("for (int r = threadIdx.x; r < " + R + "; r += blockDim.x)");
  p.line("float total = 0.0f;");
  p.line("for (int w = 0; w < " + std::to_string(warps) + "; ++w) total += rms_part[w][r];");
  Expr mean = var("total") / float_const(static_cast<double>(k));
  if (eps != 0) mean = mean + float_const(eps);
  p.line("const float mean = " + c_text(mean) + ";");
  p.open("if (" + c_text(rms_mean_in_range(var("mean"))) + ")");
  p.line("rms_row[r] = sqrtf(mean);");
  p.close();
  p.open("else");
  p.line("const auto *px = " + row_start + ";");
  p.line("float peak = 0.0f, scaled = 0.0f;");
  p.line("for (int64_t c = 0; c < " + K + "; ++c) peak = yr_max(peak, fabsf(yr_ld(px + c * " + SK + ")));");
  p.line(rms_scale("peak", eps));
  p.line("for (int64_t c = 0; c < " + K + "; ++c) { const float v = yr_ld(px + c * " + SK +
         ") * scale; scaled += v * v; }");
  p.line("rms_row[r] = sqrtf(" + c_text(rms_scaled_mean(var("scaled"), k, eps, var("scale"))) + ") / scale;");
  p.close();
  p.close();
}

// The end of a vector matmul whose k is split over s.k_splits blocks per tile (the block's chunk
// `ks` of tile `tile`), after every warp stored its partial sums in partial[warp][row][column] (as
// emit_matmul_partial_sums reads them). The launch's workspace `yr_ws` (zeros before the first launch) holds a counter
// per tile (counter_bytes), then each tile's chunks' sums: the block adds its warps' sums of each product into its
// chunk's, counts itself in, and the tile's last block (the counter at k_splits − 1) sets the counter back to zero and
// stores each output from the chunks' sums, added in the chunks' order.
void emit_split_sums(Printer &p, const VectorShape &s, int64_t products, int64_t counter_bytes, int64_t m, int64_t n,
                     const ProductStore &store) {
  const int64_t part = products * s.rows * s.tile_cols;  // one chunk's sums
  const std::string TC = std::to_string(s.tile_cols), RT = std::to_string(s.rows * s.tile_cols);
  const std::string PART = std::to_string(part), S = std::to_string(s.k_splits);
  const std::string sums_at = "reinterpret_cast<float *>(yr_ws + " + std::to_string(counter_bytes) + ") + tile * " +
                              std::to_string(s.k_splits * part);
  p.line("__syncthreads();");
  p.open("");
  p.line("float *chunk = " + sums_at + " + ks * " + PART + ";");
  p.open("for (int t = threadIdx.x; t < " + PART + "; t += blockDim.x)");
  p.line("const int q = t / " + RT + ", rc = t % " + RT + ";");
  p.line("float sum = 0.0f;");
  p.line("#pragma unroll");
  p.line("for (int w = 0; w < " + std::to_string(s.warps_per_product) + "; ++w) sum += partial[q * " +
         std::to_string(s.warps_per_product) + " + w][rc / " + TC + "][rc % " + TC + "];");
  p.line("chunk[t] = sum;");
  p.close();
  p.close();
  p.line("__threadfence();");
  p.line("__syncthreads();");
  p.line("__shared__ bool last_block;");
  p.open("if (threadIdx.x == 0)");
  p.line("unsigned *count = reinterpret_cast<unsigned *>(yr_ws) + tile;");
  p.line("last_block = atomicAdd(count, 1u) == " + S + "u - 1u;");
  p.line("if (last_block) *count = 0u;  // for the next launch");
  p.close();
  p.line("__syncthreads();");
  p.line("if (!last_block) return;");
  p.line("__threadfence();");
  p.open("for (int t = threadIdx.x; t < " + RT + "; t += blockDim.x)");
  p.line("const int64_t r = t / " + TC + ", jj = cb * " + TC + " + t % " + TC + ", ii = rb * " +
         std::to_string(s.rows) + " + r;");
  p.line("if (jj >= " + std::to_string(n) + " || ii >= " + std::to_string(m) + ") continue;");
  p.line("const float *chunks = " + sums_at + " + t;");
  std::vector<std::string> sums;
  for (int64_t q = 0; q < products; ++q) {
    sums.push_back("sum" + std::to_string(q));
    p.line("float " + sums.back() + " = 0.0f;");
    p.line("for (int c = 0; c < " + S + "; ++c) " + sums.back() + " += __ldcg(chunks + c * " + PART + " + " +
           std::to_string(q * s.rows * s.tile_cols) + ");");
  }
  store(p, sums, "ii", "jj");
  p.close();
}

// `s`: vector_shape(wp, target), which fits.
MatmulLaunch vector_matmul_kernel(Printer &before_wait, Printer &p, const WeightProducts &wp, const VectorShape &s,
                                  const CudaTarget &target) {
  const Ref &a = wp.a;
  const Dims &od = wp.out_dims;
  const size_t rank = od.size();
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = wp.b[0].dims[rank - 1];
  const Dims batch_out(od.begin(), od.end() - 2);
  const Dims sa = matmul_operand_strides(a, od), sb = matmul_operand_strides(wp.b[0], od);
  const int64_t group = s.group, rows = s.rows, tile_cols = s.tile_cols, slice = s.slice;
  const auto products = static_cast<int64_t>(wp.b.size());
  const int64_t warps = products * s.warps_per_product;
  const std::string R = std::to_string(rows), G = std::to_string(group), N = std::to_string(n);
  const std::string SL = std::to_string(slice), K = std::to_string(k), WP = std::to_string(s.warps_per_product);
  const int64_t group_lanes = s.group_lanes, k_lanes = s.k_lanes();
  p.line("__shared__ float partial[" + std::to_string(warps) + "][" + R + "][" + std::to_string(tile_cols) + "];");
  Printer &w = before_wait;
  w.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  w.line("const int gl = lane % " + std::to_string(group_lanes) + ", kl = lane / " + std::to_string(group_lanes) + ";");
  // Warp `warp` computes product warp / WP over slice kw of k (of the block's chunk ks, where k
  // is split over blocks): its weights are `wb`, its rows from k0 on.
  w.line("const int kw = warp % " + WP + ";");
  if (s.k_splits > 1) {
    w.line("const int64_t ks = blockIdx.x / " + std::to_string(s.tiles) + ";");
    w.line("const int64_t tile = blockIdx.x % " + std::to_string(s.tiles) + ";");
    w.line("const int64_t k0 = (ks * " + WP + " + kw) * " + SL + ";");
  } else {
    w.line("const int64_t k0 = kw * " + SL + ";");
  }
  std::string weights = wp.b.back().ptr;
  for (size_t q = wp.b.size() - 1; q-- > 0;) {
    weights = "warp < " + std::to_string(static_cast<int64_t>(q + 1) * s.warps_per_product) + " ? " + wp.b[q].ptr +
              " : " + weights;
  }
  w.line("const auto *wb = " + weights + ";");
  emit_matmul_block_origin(w, "cb", s.col_blocks, "rb", s.row_blocks, batch_out, sa, sb,
                           s.k_splits > 1 ? "tile" : wp.block_index);
  w.line("const int64_t j0 = cb * " + std::to_string(tile_cols) + " + gl * " + G + ", i0 = rb * " + R + ";");
  w.line("const int64_t p1 = k0 + " + SL + " < " + K + " ? k0 + " + SL + " : " + K + ";");
  // Only a kernel that waits for the previous one has anything to overlap the prefetch with.
  const int64_t prefetch_rows = target.dependent_launch() ? std::min(slice, kBPrefetchRows) : 0;
  if (prefetch_rows >= k_lanes) {
    w.open("if (j0 < " + N + ")");
    w.line("const int64_t pend = k0 + " + std::to_string(prefetch_rows) + " < p1 ? k0 + " +
           std::to_string(prefetch_rows) + " : p1;");
    w.line("for (int64_t q = k0 + kl; q < pend; q += " + std::to_string(k_lanes) +
           ") asm volatile(\"prefetch.global.L2 [%0];\" :: \"l\"(wb + ib + j0 + q * " + N + "));");
    w.close();
  }
  // The batch offset, group start and row starts are multiples of the group: B's alignment is
  // its base's.
  p.line("const bool aligned = (reinterpret_cast<unsigned long long>(wb) & 15) == 0;");
  const int64_t batch = s.few_accumulators ? 2 : 4;
  const std::string U = std::to_string(batch), KL = std::to_string(k_lanes);
  // FMAs for `count` of the block's rows from `first` on, into partial[warp][first…]: the lanes'
  // sums, then the k lanes of a group meet (lanes gl, gl + 4, …: xor offsets 4, 8, 16 keep gl).
  // `pipelined`: an aligned B's rows are loaded U at a time, the next batch's loads issued before
  // this batch is computed (the compiler does not hoist them across the FMAs on its own), then a
  // remainder loop; unaligned B (or !pipelined) has the scalar loop alone. Every lane takes part,
  // columns past n with zeros, so that the shuffles see the whole warp.
  auto fma_rows_pass = [&](int64_t first, int64_t count, bool pipelined) {
    const std::string C = std::to_string(count);
    p.open("");
    p.line("float acc[" + C + "][" + G + "];");
    p.line("#pragma unroll");
    p.line("for (int r = 0; r < " + C + "; ++r) for (int c = 0; c < " + G + "; ++c) acc[r][c] = 0.0f;");
    p.open("if (j0 < " + N + ")");
    p.line("const auto *pb = wb + ib + j0;");
    p.line("const auto *pa = " + a.ptr + " + ia;");
    p.line("int64_t row[" + C + "];");
    p.line("#pragma unroll");
    p.line("for (int r = 0; r < " + C + "; ++r) row[r] = (i0 + " + std::to_string(first) + " + r < " +
           std::to_string(m) + " ? i0 + " + std::to_string(first) + " + r : " + std::to_string(m - 1) + ") * " +
           std::to_string(sa[rank - 2]) + ";");
    auto fma_row = [&](const std::string &q, const std::string &load) {
      p.line("float bv[" + G + "];");
      p.line(load);
      if (wp.a_scale) p.line("const float gq = yr_ld(" + wp.a_scale->ptr + " + (" + q + "));");
      p.line("#pragma unroll");
      p.open("for (int r = 0; r < " + C + "; ++r)");
      p.line("const float av = yr_ld(pa + row[r] + (" + q + ") * " + std::to_string(sa[rank - 1]) + ")" +
             (wp.a_scale ? " * gq" : "") + ";");
      p.line("#pragma unroll");
      p.line("for (int c = 0; c < " + G + "; ++c) acc[r][c] += av * bv[c];");
      p.close();
    };
    p.line("int64_t q = k0 + kl;");
    if (pipelined) {
      p.open("if (aligned)");
      const std::string last = std::to_string((batch - 1) * k_lanes), step = std::to_string(batch * k_lanes);
      p.line("uint4 raw[" + U + "], next[" + U + "];");
      p.line("#pragma unroll");
      p.line("for (int u = 0; u < " + U + "; ++u) raw[u] = q + " + last + " < p1 ? yr_stream16(pb + (q + u * " + KL +
             ") * " + N + ") : make_uint4(0, 0, 0, 0);");
      p.open("for (; q + " + last + " < p1; q += " + step + ")");
      p.line("const bool more = q + " + step + " + " + last + " < p1;");
      p.line("#pragma unroll");
      p.line("for (int u = 0; u < " + U + "; ++u) if (more) next[u] = yr_stream16(pb + (q + " + step + " + u * " + KL +
             ") * " + N + ");");
      p.line("#pragma unroll");
      p.open("for (int u = 0; u < " + U + "; ++u)");
      fma_row("q + u * " + KL, "yr_cvt16(pb, raw[u], bv);");
      p.close();
      p.line("#pragma unroll");
      p.line("for (int u = 0; u < " + U + "; ++u) raw[u] = next[u];");
      p.close();
      p.open("for (; q < p1; q += " + KL + ")");
      fma_row("q", "yr_cvt16(pb, yr_stream16(pb + q * " + N + "), bv);");
      p.close();
      p.close();
      p.open("else");
    }
    p.open("for (; q < p1; q += " + KL + ")");
    fma_row("q", "yr_ld16u(pb + q * " + N + ", bv);");
    p.close();
    if (pipelined) p.close();
    p.close();
    p.line("#pragma unroll");
    p.line("for (int r = 0; r < " + C + "; ++r) for (int c = 0; c < " + G + "; ++c)");
    p.line("  for (int off = " + std::to_string(group_lanes) +
           "; off < 32; off *= 2) acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);");
    p.open("if (kl == 0)");
    p.line("#pragma unroll");
    p.line("for (int r = 0; r < " + C + "; ++r) for (int c = 0; c < " + G + "; ++c) partial[warp][" +
           std::to_string(first) + " + r][gl * " + G + " + c] = acc[r][c];");
    p.close();
    p.close();
  };
  if (s.tensor_cores) {
    // Tensor cores need A and B 16-byte aligned; the rare unaligned tensor takes FMA passes of 4
    // rows, so that their accumulators (4 × 8 per lane) do not set the kernel's register count.
    constexpr int64_t kFallbackRows = 4;
    std::string scale_aligned;
    if (wp.a_scale) scale_aligned = " && (reinterpret_cast<unsigned long long>(" + wp.a_scale->ptr + ") & 15) == 0";
    p.open("if (aligned && (reinterpret_cast<unsigned long long>(" + a.ptr + ") & 15) == 0" + scale_aligned + ")");
    p.line("const auto *pb = wb + ib + j0;");
    p.line("const auto *pa = " + a.ptr + " + ia;");
    emit_vector_matmul_mma(p, rows, m, n, sa[rank - 2], wp.a_scale ? wp.a_scale->ptr : "");
    p.close();
    p.open("else");
    for (int64_t first = 0; first < rows; first += kFallbackRows) {
      fma_rows_pass(first, std::min(kFallbackRows, rows - first), false);
    }
    p.close();
  } else {
    fma_rows_pass(0, rows, true);
  }
  if (s.k_splits == 1) {
    if (wp.rms_eps) emit_row_rms(p, a, rows, m, k, sa, *wp.rms_eps, warps);
    emit_matmul_partial_sums(p, products, s.warps_per_product, rows, tile_cols, m, n, wp.store);
    return {s.blocks, warps * 32, s.min_blocks};
  }
  if (wp.rms_eps) throw Error(ErrorCode::kInternal, "cuda: a weight product with a row rms split over blocks");
  const int64_t counter_bytes = (s.tiles * 4 + 255) / 256 * 256;
  emit_split_sums(p, s, products, counter_bytes, m, n, wp.store);
  MatmulLaunch launch{s.blocks, warps * 32, s.min_blocks};
  launch.workspace_bytes = counter_bytes + s.tiles * s.k_splits * products * rows * tile_cols * 4;
  return launch;
}

// Whether input iterator or output saver `op` splits dim `grid_dim` over the grid's x axis and
// dim `loop_dim` over the loop's iterations (-1: neither), where those have more than one part.
bool splits(const BlockGraph &bg, const Operator &op, int32_t grid_dim, int32_t loop_dim) {
  const GridMap &g = op.attributes.grid_map;
  const bool grid = g[0] == grid_dim || (bg.config().grid[0] == 1 && g[0] == -1);
  const bool loop =
      op.attributes.forloop_dim == loop_dim || (bg.config().forloop_range == 1 && op.attributes.forloop_dim == -1);
  return grid && loop && g[1] == -1 && g[2] == -1;
}

}  // namespace

void emit_matmul_block_origin(Printer &p, const std::string &first, int64_t first_count, const std::string &second,
                              int64_t second_count, const Dims &batch_out, const Dims &sa, const Dims &sb,
                              const std::string &block_index) {
  p.line("int64_t block = " + block_index + ";");
  p.line("const int64_t " + first + " = block % " + std::to_string(first_count) +
         "; block /= " + std::to_string(first_count) + ";");
  p.line("const int64_t " + second + " = block % " + std::to_string(second_count) + ", bt = block / " +
         std::to_string(second_count) + ";");
  p.line("int64_t ia = 0, ib = 0, rest = bt;");
  for (size_t d = batch_out.size(); d-- > 0;) {
    p.line("{ const int64_t c = rest % " + std::to_string(batch_out[d]) + "; rest /= " + std::to_string(batch_out[d]) +
           "; ia += c * " + std::to_string(sa[d]) + "; ib += c * " + std::to_string(sb[d]) + "; }");
  }
  p.line("(void)rest;");
}

MatmulLaunch predefined_matmul(Printer &before_wait, Printer &p, const Ref &a, const Ref &b, const Ref &o, DType dtype,
                               const CudaTarget &target) {
  const int64_t rank = static_cast<int64_t>(o.dims.size());
  const int64_t m = o.dims[rank - 2], n = o.dims[rank - 1];
  // Many rows: a tiled GEMM on tensor cores (cuda_gemm.hpp), or AMD's matrix cores
  // (cuda_mfma.hpp), where it applies.
  if (std::optional<MatmulLaunch> gemm = tiled_gemm(p, a, b, o, dtype, target)) return *gemm;
  if (std::optional<MatmulLaunch> mfma = mfma_matmul(p, a, b, o, dtype, target)) return *mfma;
  const WeightProducts w{a, {b}, o.dims, dtype, store_to(o, m, n), std::nullopt, std::nullopt};
  const VectorShape s = vector_shape(w, target, true);
  return s.fits ? vector_matmul_kernel(before_wait, p, w, s, target) : matmul_kernel(p, a, b, o);
}

std::optional<MatmulLaunch> ugraph_weight_products(Printer &before_wait, Printer &p, const BlockGraph &bg,
                                                   const std::vector<Ref> &in, const std::vector<Ref> &out,
                                                   const CudaTarget &target, const std::string &block_index) {
  if (bg.config().grid[1] != 1 || bg.config().grid[2] != 1) return std::nullopt;
  const auto &ops = bg.operators();
  std::vector<int> uses(bg.num_tensors(), 0);
  for (const Operator &op : ops) {
    for (TensorId t : op.inputs) ++uses[static_cast<size_t>(t)];
  }
  auto used_once = [&](TensorId t) { return uses[static_cast<size_t>(t)] == 1; };
  std::map<TensorId, const Operator *> iterator;  // tile → its input iterator
  std::map<TensorId, size_t> input_of;            // tile → the kernel input it reads
  std::map<TensorId, size_t> product_of;          // a product's tile, then its sum → the product
  std::map<TensorId, const Operator *> epilogue;  // after-loop elementwise result → its operator
  std::vector<size_t> weights;                    // each product's B, a kernel input
  std::vector<const Operator *> savers;
  std::optional<TensorId> a;      // the products' A: an iterator's tile, or x ⊙ scale
  std::optional<TensorId> x;      // A's rows: A itself, or the x of x ⊙ scale
  std::optional<TensorId> scale;  // a [1, k] iterator tile multiplying A's columns (a norm's weight)
  std::set<TensorId> rms;         // rms accumulators of x (one eps)
  std::optional<double> rms_eps;
  for (const Operator &op : ops) {
    if (op.kind == OpKind::kInputIterator) {
      const size_t input = iterator.size();  // iterators read the kernel's inputs in order
      iterator[op.outputs[0]] = &op;
      input_of[op.outputs[0]] = input;
    } else if (op.kind == OpKind::kMul && !a && (!x || *x == op.inputs[0]) && iterator.count(op.inputs[0]) != 0 &&
               iterator.count(op.inputs[1]) != 0 && op.inputs[0] != op.inputs[1] &&
               bg.tensor(op.inputs[1]).dims.size() == 2 && bg.tensor(op.inputs[1]).dims[0] == 1 &&
               bg.tensor(op.inputs[0]).dims == bg.tensor(op.outputs[0]).dims) {
      // A = x ⊙ w, w one row of factors (a weighted norm's weight before the products).
      a = op.outputs[0];
      x = op.inputs[0];
      scale = op.inputs[1];
    } else if (op.kind == OpKind::kMatmul) {
      // One A for every product, each B a tile of its own read by this product only.
      const TensorId lhs = op.inputs[0], rhs = op.inputs[1];
      if ((!scale && (iterator.count(lhs) == 0 || (x && *x != lhs))) || iterator.count(rhs) == 0 || lhs == rhs ||
          (a && *a != lhs) || !used_once(rhs) || !used_once(op.outputs[0])) {
        return std::nullopt;
      }
      a = lhs;
      if (!x) x = lhs;
      product_of[op.outputs[0]] = weights.size();
      weights.push_back(input_of[rhs]);
    } else if (op.kind == OpKind::kAccumSum) {
      const auto product = product_of.find(op.inputs[0]);
      if (product == product_of.end()) return std::nullopt;
      product_of[op.outputs[0]] = product->second;
    } else if (op.kind == OpKind::kAccumReduceRms) {
      // The rms of A's rows (before a norm's weight), for the epilogue; it may come first.
      if (!x && iterator.count(op.inputs[0]) != 0) x = op.inputs[0];
      if (!x || op.inputs[0] != *x || (rms_eps && *rms_eps != op.attributes.eps)) return std::nullopt;
      rms_eps = op.attributes.eps;
      rms.insert(op.outputs[0]);
    } else if (is_unary(op.kind) || is_binary(op.kind)) {
      for (TensorId t : op.inputs) {
        const bool sum = product_of.count(t) != 0 && bg.tensor(t).phase == LoopPhase::kAfterLoop;
        const Dims &dims = bg.tensor(t).dims, &out_dims = bg.tensor(op.outputs[0]).dims;
        const bool row_rms = rms.count(t) != 0 && dims == Dims{out_dims[0], 1};
        if ((!sum && !row_rms && epilogue.count(t) == 0) || (!row_rms && dims != out_dims)) return std::nullopt;
      }
      if (!is_binary(op.kind) || rms.count(op.inputs[0]) == 0)
        epilogue[op.outputs[0]] = &op;
      else
        return std::nullopt;  // only the sums' values may be divided by (or meet) a row's rms
    } else if (op.kind == OpKind::kOutputSaver) {
      const TensorId t = op.inputs[0];
      const bool sum = product_of.count(t) != 0 && bg.tensor(t).phase == LoopPhase::kAfterLoop;
      if ((!sum && epilogue.count(t) == 0) || !splits(bg, op, 1, -1)) return std::nullopt;
      savers.push_back(&op);
    } else {
      return std::nullopt;
    }
  }
  const auto products = static_cast<int>(weights.size());
  if (!a || savers.empty() || iterator.size() != weights.size() + (scale ? 2 : 1) ||
      uses[static_cast<size_t>(*a)] != products + (scale ? 0 : static_cast<int>(rms.size())) ||
      uses[static_cast<size_t>(*x)] != (scale ? 1 : products) + static_cast<int>(rms.size()) ||
      (scale && !used_once(*scale))) {
    return std::nullopt;
  }
  // A: all its rows in every block, k along the loop; each B: [k, n] of A's type, its columns
  // along the grid, k along the loop; a scale: [1, k] of A's type, k along the loop.
  const Operator &a_op = *iterator[*x];
  const Dims &a_dims = a_op.attributes.sizes;
  if (a_dims.size() != 2 || !splits(bg, a_op, -1, 1)) return std::nullopt;
  const int64_t m = a_dims[0], k = a_dims[1];
  Dims b_dims;
  if (scale) {
    const Operator &s_op = *iterator[*scale];
    if (s_op.attributes.dtype != a_op.attributes.dtype || !splits(bg, s_op, -1, 1) ||
        s_op.attributes.sizes != Dims{1, k}) {
      return std::nullopt;
    }
  }
  for (const auto &[tile, op] : iterator) {
    if (tile == *x || (scale && tile == *scale)) continue;
    if (b_dims.empty()) b_dims = op->attributes.sizes;
    if (op->attributes.dtype != a_op.attributes.dtype || !splits(bg, *op, 1, 0) || op->attributes.sizes != b_dims ||
        b_dims.size() != 2 || b_dims[0] != k) {
      return std::nullopt;
    }
  }
  const int64_t n = b_dims[1];
  WeightProducts w{in[input_of[*x]], {}, {m, n}, a_op.attributes.dtype, {}, std::nullopt, rms_eps, block_index};
  if (scale) w.a_scale = in[input_of[*scale]];
  for (size_t input : weights) w.b.push_back(in[input]);
  for (const Operator *saver : savers) {
    if (saver->attributes.sizes != w.out_dims) return std::nullopt;
  }
  // One block per column tile of the weight product: the µGraph's grid.
  const VectorShape s = vector_shape(w, target, false);
  if (!s.fits || s.row_blocks != 1 || n % s.tile_cols != 0 || s.col_blocks != bg.config().grid[0]) return std::nullopt;
  // Each output element: the epilogue's values from the products' sums, in registers.
  w.store = [&](Printer &q, const std::vector<std::string> &sums, const std::string &ii, const std::string &jj) {
    std::map<TensorId, std::string> value;
    int next = 0;
    std::function<std::string(TensorId)> value_of = [&](TensorId t) {
      if (const auto found = value.find(t); found != value.end()) return found->second;
      const auto product = product_of.find(t);
      if (product != product_of.end()) return value[t] = sums[product->second];
      if (rms.count(t) != 0) return value[t] = "rms_row[" + ii + " - i0]";
      const Operator &op = *epilogue.at(t);
      std::vector<std::string> args;
      for (TensorId x : op.inputs) args.push_back(value_of(x));
      const std::string name = "e" + std::to_string(next++);
      q.line(
          "const float " + name + " = " +
          (is_unary(op.kind) ? unary_expr(op.kind, op.attributes, args[0]) : binary_expr(op.kind, args[0], args[1])) +
          ";");
      return value[t] = name;
    };
    for (size_t o = 0; o < savers.size(); ++o) {
      q.line("yr_st(" + out[o].ptr + " + " + ii + " * " + std::to_string(n) + " + " + jj + ", " +
             value_of(savers[o]->inputs[0]) + ");");
    }
  };
  return vector_matmul_kernel(before_wait, p, w, s, target);
}

}  // namespace yirage::codegen::cuda
