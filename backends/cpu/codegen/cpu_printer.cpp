#include "cpu/codegen/cpu_printer.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "search/cpu_matmul_cost.hpp"

namespace yirage::codegen {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// A float16 element read or written one at a time costs a conversion (yr_ld/yr_st: integer
// arithmetic that vectorizes, a few operations an element; yr_ld_row's rows count as plain
// elements). At 8, as when the conversions were scalar, ntrans' fused µGraph was shared among
// threads and took 20.6 µs against 11.3 on one (benchmarks/cpu/README.md).
constexpr double kFloat16Access = 2;

// Float elements: the arena's tiles, or a tensor stored as float32.
bool is_float32(const BufferRef &buffer) {
  return buffer.space == MemorySpace::kShared ||
         (buffer.space == MemorySpace::kGlobal && buffer.element == DType::kFloat32);
}

double access_work(const BufferRef &buffer) {
  return buffer.space == MemorySpace::kGlobal && buffer.element == DType::kFloat16 ? kFloat16Access : 0;
}

double work_of(const Expr &e) {
  double total = e.kind == ExprKind::kLoad ? access_work(e.buffer) : 0;
  for (const Expr &a : e.args) total += work_of(a);
  return total;
}

double work_of(const Stmt &stmt) {
  return std::visit(
      Overloaded{[](const Block &b) { return work_of(b); },
                 [](const Store &st) { return 1 + access_work(st.buffer) + work_of(st.value); },
                 [](const Let &l) { return 1 + work_of(l.value); },
                 [](const Assign &a) { return 1 + work_of(a.value); },
                 [](const Loop &l) { return static_cast<double>(num_elements(l.dims)) * work_of(l.body); },
                 [](const If &i) { return 1 + std::max(work_of(i.then_body), work_of(i.else_body)); },
                 [](const Matmul &m) {
                   const size_t rank = m.o.dims.size();
                   return static_cast<double>(num_elements(m.o.dims)) * static_cast<double>(m.a.dims[rank - 1]);
                 },
                 [](const RowReduce &r) {
                   return static_cast<double>(r.rows) * (static_cast<double>(r.cols) + work_of(r.finish));
                 },
                 [](const TileCopy &c) { return static_cast<double>(num_elements(c.tile.dims)); },
                 [](const auto &) { return 1.0; }},
      stmt.node);
}

}  // namespace

double work_of(const Block &block) {
  double total = 0;
  for (const Stmt &s : block) total += work_of(s);
  return total;
}

int64_t parallel_grain(double work_per_item) {
  return static_cast<int64_t>(std::ceil(kParallelWork / std::max(work_per_item, 1.0)));
}

std::string CppPrinter::pointer(const BufferRef &buffer) const {
  if (buffer.space == MemorySpace::kShared) return "(arena + " + std::to_string(buffer.offset) + ")";
  return buffer.name;
}

std::string CppPrinter::start_of(const TensorRef &t) const {
  return t.base.is_int(0) ? pointer(t.buffer) : "(" + pointer(t.buffer) + " + " + offset_text(t.base) + ")";
}

void CppPrinter::open_parallel_for(int64_t count, int64_t grain) {
  shares_loops_ = shares_loops_ || count >= 2 * grain;
  p_.open("yr_parallel_for(rt, " + std::to_string(count) + ", " + std::to_string(grain) +
          ", [&](int64_t yr_begin, int64_t yr_end)");
}

void CppPrinter::print_shared_loop(const Loop &l) {
  // One thread per block: only kernel-level loops are parallel.
  if (l.sharing != Sharing::kGrid || l.dims.empty()) {
    print_serial_loop(l);
    return;
  }
  // The outer dims (all but the innermost where there are several) are shared, as one flat
  // index; the innermost stays a loop of its own, which the compiler vectorizes.
  const size_t shared = l.dims.size() > 1 ? l.dims.size() - 1 : 1;
  const Dims outer(l.dims.begin(), l.dims.begin() + static_cast<std::ptrdiff_t>(shared));
  double per_item = work_of(l.body);
  for (size_t d = shared; d < l.dims.size(); ++d) per_item *= static_cast<double>(l.dims[d]);
  open_parallel_for(num_elements(outer), parallel_grain(per_item));
  p_.open("for (int64_t yr_i = yr_begin; yr_i < yr_end; ++yr_i)");
  int64_t stride = num_elements(outer);
  for (size_t d = 0; d < shared; ++d) {
    stride /= outer[d];
    std::string index = stride == 1 ? "yr_i" : "yr_i / " + std::to_string(stride);
    if (d > 0) index = "(" + index + ") % " + std::to_string(outer[d]);
    p_.line("const int64_t " + l.vars[d] + " = " + index + ";");
  }
  print_serial_loop(Loop{Dims(l.dims.begin() + static_cast<std::ptrdiff_t>(shared), l.dims.end()),
                         std::vector<std::string>(l.vars.begin() + static_cast<std::ptrdiff_t>(shared), l.vars.end()),
                         Sharing::kSerial, l.unroll, l.body});
  p_.close();
  p_.close(");");
}

// Batched A[..., m, k] · B[..., k, n] in blocks of kCpuMatmulRows × kCpuMatmulCols outputs
// (search/cpu_matmul_cost.hpp, which the cost model shares), each accumulated in float over the
// whole k before it is stored.
void CppPrinter::print_matmul(const Matmul &mm) {
  const TensorRef &a = mm.a, &b = mm.b, &o = mm.o;
  const bool parallel = mm.sharing == Sharing::kGrid;
  const size_t rank = o.dims.size();
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = b.dims[rank - 1];
  const Dims batch_out(o.dims.begin(), o.dims.end() - 2);
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const int64_t a_row = sa[rank - 2], b_row = sb[rank - 2];
  const int64_t batches = num_elements(batch_out);
  const int64_t rows = std::min(m, search::kCpuMatmulRows);
  // A 16-bit B with fewer rows than a block's: columns such that the sums fit the vector registers
  // (256 floats, 16 of AVX-512's 32), since converting B's rows leaves the loop compute-bound and a
  // block of 8 × 128 sums spilled at every step of k. A float32 B streams faster in wide rows.
  const bool narrow_b = dtype_size(b.buffer.element) == 2 && rows < search::kCpuMatmulRows;
  const int64_t cols =
      std::min(n, narrow_b ? std::clamp<int64_t>(256 / rows, 32, search::kCpuMatmulCols) : search::kCpuMatmulCols);
  const int64_t row_blocks = (m + rows - 1) / rows, col_blocks = (n + cols - 1) / cols;
  // Decomposes the output batch index bt into the operands' (broadcast) batch offsets ia and ib.
  const auto print_batch_offsets = [&] {
    p_.line("int64_t ia = 0, ib = 0, rest = bt;");
    for (size_t d = batch_out.size(); d-- > 0;) {
      p_.line("{ const int64_t c = rest % " + std::to_string(batch_out[d]) +
              "; rest /= " + std::to_string(batch_out[d]) + "; ia += c * " + std::to_string(sa[d]) + "; ib += c * " +
              std::to_string(sb[d]) + "; }");
    }
    p_.line("(void)rest;");
  };
  // float32 operands go to the plugin's small-GEMM (yr_gemm, libxsmm) where it has one: a block's
  // matmul whole, a kernel-level one per task; the loop below runs where it has none. A
  // kernel-level product of fewer rows than a block's (decode: streaming B) keeps the loop, whose
  // prefetch of B's rows made it 1.2-1.5x faster there (benchmarks/cpu/README.md).
  const bool floats = is_float32(a.buffer) && is_float32(b.buffer) && is_float32(o.buffer);
  const bool gemm = floats && !(parallel && m < search::kCpuGemmRows);
  // A kernel-level product of 16-bit operands or result, as many rows as a block's: each task
  // converts its rows of A and its block of B to float scratch of its thread, calls yr_gemm and
  // converts the sums back. A chunk of tasks takes a column block's row blocks one after another,
  // so that B's block is converted once for all of them. Only where the scratch is small enough
  // (search::cpu_kernel_product_gemm: a thread keeps it until it ends). One scratch per chunk: a
  // kernel has one kernel-level matmul.
  const bool a16 = !is_float32(a.buffer), b16 = !is_float32(b.buffer), o16 = !is_float32(o.buffer);
  const int64_t fa = a16 ? rows * k : 0, fb = b16 ? k * cols : 0, fc = o16 ? rows * cols : 0;
  const bool converted = !floats && parallel && search::cpu_kernel_product_gemm(m, k, a16, b16, o16);
  // A kernel-level product of fewer rows (decode) over a 16-bit A of one batch, up to 1 MiB as
  // floats: each chunk of tasks converts A whole once, so that its tasks (column blocks, each
  // reading all of A) broadcast floats instead of converting an element per row and step.
  const bool a_floats = a16 && parallel && !converted && batches == 1 && m * k <= (int64_t{1} << 18);
  // Ragged tiles (ir/ragged_tiles.hpp): k, the rows and the columns end where the tensors do;
  // operands read in place are never read past them.
  const std::string sk = mm.k_inside ? "yr_k" : std::to_string(k), sa_row = std::to_string(a_row),
                    sb_row = std::to_string(b_row), sn = std::to_string(n);
  const std::string sm_in = mm.m_inside ? "yr_m" : std::to_string(m), sn_in = mm.n_inside ? "yr_n" : sn;
  p_.open("");
  const auto bound = [&](const std::optional<Expr> &inside, const char *name, int64_t whole) {
    if (inside) {
      p_.line(std::string("const int64_t ") + name + " = yr_min64(" + std::to_string(whole) + ", (" + text(*inside) +
              "));");
    }
  };
  bound(mm.k_inside, "yr_k", k);
  bound(mm.m_inside, "yr_m", m);
  bound(mm.n_inside, "yr_n", n);
  if (gemm && !parallel) {
    p_.line("bool yr_done = true;");
    p_.open("for (int64_t bt = 0; yr_done && bt < " + std::to_string(batches) + "; ++bt)");
    print_batch_offsets();
    p_.line("yr_done = yr_gemm(rt, " + sm_in + ", " + sn_in + ", " + sk + ", " + start_of(a) + " + ia, " + sa_row +
            ", " + start_of(b) + " + ib, " + sb_row + ", " + start_of(o) + " + bt * " + std::to_string(m * n) + ", " +
            sn + ");");
    p_.close();
  }
  // The tasks: batch × row block × column block, shared at kernel level, one after another inside a block.
  const std::string tasks = std::to_string(batches * row_blocks * col_blocks);
  if (parallel) {
    open_parallel_for(batches * row_blocks * col_blocks, parallel_grain(static_cast<double>(rows * cols * k)));
    if (a_floats) {
      p_.line("float *const yr_fa = yr_scratch(rt, " + std::to_string(m * k) + ");");
      p_.line("if (yr_fa != nullptr) for (int64_t i = 0; i < " + std::to_string(m) + "; ++i) yr_ld_row(yr_fa + i * " +
              std::to_string(k) + ", " + start_of(a) + " + i * " + std::to_string(a_row) + ", " + sk + ");");
    }
    if (converted) {
      // Null after gemm declines a task: the loop then takes the chunk without converting twice.
      p_.line("float *yr_f = yr_gemm_scratch(rt, " + std::to_string(fa + fb + fc) + ");");
      if (b16) p_.line("int64_t yr_fb_holds = -1;  // the batch and column block whose B yr_f holds");
    }
    p_.open("for (int64_t yr_t = yr_begin; yr_t < yr_end; ++yr_t)");
  } else {
    p_.open(gemm ? "if (!yr_done)" : "");
    p_.open("for (int64_t yr_t = 0; yr_t < " + tasks + "; ++yr_t)");
  }
  const std::string rb = converted ? "yr_t % " + std::to_string(row_blocks)
                                   : "(yr_t / " + std::to_string(col_blocks) + ") % " + std::to_string(row_blocks);
  const std::string cb = converted ? "(yr_t / " + std::to_string(row_blocks) + ") % " + std::to_string(col_blocks)
                                   : "yr_t % " + std::to_string(col_blocks);
  p_.line("const int64_t bt = yr_t / " + std::to_string(row_blocks * col_blocks) + ", rb = " + rb + ", cb = " + cb +
          ";");
  print_batch_offsets();
  p_.line("const auto *pa = " + start_of(a) + " + ia;");
  p_.line("const auto *pb = " + start_of(b) + " + ib;");
  p_.line("auto *po = " + start_of(o) + " + bt * " + std::to_string(m * n) + ";");
  p_.line("const int64_t i0 = rb * " + std::to_string(rows) + ", j0 = cb * " + std::to_string(cols) + ";");
  p_.line(m % rows == 0 && !mm.m_inside
              ? "constexpr int64_t mi = " + std::to_string(rows) + ";"
              : "const int64_t mi = yr_min64(" + std::to_string(rows) + ", " + sm_in + " - i0);");
  p_.line(n % cols == 0 && !mm.n_inside
              ? "constexpr int64_t nj = " + std::to_string(cols) + ";"
              : "const int64_t nj = yr_min64(" + std::to_string(cols) + ", " + sn_in + " - j0);");
  if (mm.m_inside || mm.n_inside) p_.line("if (mi <= 0 || nj <= 0) continue;  // rows or columns past the tensor");
  if (gemm && parallel) {
    p_.line("if (yr_gemm(rt, mi, nj, " + sk + ", pa + i0 * " + sa_row + ", " + sa_row + ", pb + j0, " + sb_row +
            ", po + i0 * " + sn + " + j0, " + sn + ")) continue;");
  }
  if (converted) {
    const std::string sk_all = std::to_string(k), scols = std::to_string(cols);
    p_.open("if (yr_f != nullptr)");
    if (a16) {
      p_.line("float *const ga = yr_f;");
      p_.line("for (int64_t i = 0; i < mi; ++i) yr_ld_row(ga + i * " + sk_all + ", pa + (i0 + i) * " + sa_row + ", " +
              sk + ");");
    } else {
      p_.line("const float *const ga = pa + i0 * " + sa_row + ";");
    }
    if (b16) {
      p_.line("float *const gb = yr_f + " + std::to_string(fa) + ";");
      p_.open("if (yr_fb_holds != bt * " + std::to_string(col_blocks) + " + cb)");
      p_.line("for (int64_t p = 0; p < " + sk + "; ++p) yr_ld_row(gb + p * " + scols + ", pb + p * " + sb_row +
              " + j0, nj);");
      p_.line("yr_fb_holds = bt * " + std::to_string(col_blocks) + " + cb;");
      p_.close();
    } else {
      p_.line("const float *const gb = pb + j0;");
    }
    p_.line(o16 ? "float *const gc = yr_f + " + std::to_string(fa + fb) + ";"
                : "float *const gc = po + i0 * " + sn + " + j0;");
    p_.open("if (yr_gemm(rt, mi, nj, " + sk + ", ga, " + (a16 ? sk_all : sa_row) + ", gb, " + (b16 ? scols : sb_row) +
            ", gc, " + (o16 ? scols : sn) + "))");
    if (o16) {
      p_.line("for (int64_t i = 0; i < mi; ++i) yr_st_row(po + (i0 + i) * " + sn + " + j0, gc + i * " + scols +
              ", nj);");
    }
    p_.line("continue;");
    p_.close();
    p_.line("yr_f = nullptr;");
    p_.close();
  }
  // A block's k loop and stores, `width` columns wide. Where the columns end in a partial block,
  // the whole blocks still get a constant width (a runtime one keeps the compiler from
  // vectorizing the inner loops: a decode attention over 4,097 keys, 257 to a tile, ran at half
  // the speed of 4,096's).
  const auto print_block = [&](const std::string &width) {
    p_.line("alignas(64) float acc[" + std::to_string(rows) + "][" + std::to_string(cols) + "] = {};");
    p_.line("alignas(64) float brow[" + std::to_string(cols) + "];");
    p_.open("for (int64_t p = 0; p < " + sk + "; ++p)");
    // B's block row 16 steps of k ahead is asked for now: consecutive steps read a row's length
    // apart, across pages, where the hardware prefetcher does not follow (benchmarks/cpu/README.md).
    // Not for a tile in the arena, which the block keeps in its cache.
    if (b.buffer.space != MemorySpace::kShared) {
      p_.line("__builtin_prefetch(pb + yr_min64(p + 16, " + std::to_string(k - 1) + ") * " + std::to_string(b_row) +
              " + j0);");
    }
    p_.line("yr_ld_row(brow, pb + p * " + std::to_string(b_row) + " + j0, " + width + ");");
    p_.open("for (int64_t i = 0; i < mi; ++i)");
    p_.line(a_floats ? "const float av = yr_fa != nullptr ? yr_fa[(i0 + i) * " + std::to_string(k) +
                           " + p] : yr_ld(pa + (i0 + i) * " + std::to_string(a_row) + " + p);"
                     : "const float av = yr_ld(pa + (i0 + i) * " + std::to_string(a_row) + " + p);");
    p_.line("for (int64_t j = 0; j < " + width + "; ++j) acc[i][j] += av * brow[j];");
    p_.close();
    p_.close();
    p_.line("for (int64_t i = 0; i < mi; ++i)");
    p_.line("  for (int64_t j = 0; j < " + width + "; ++j) yr_st(po + (i0 + i) * " + std::to_string(n) +
            " + j0 + j, acc[i][j]);");
  };
  if (n % cols == 0 && !mm.n_inside) {
    print_block("nj");
  } else {
    p_.open("if (nj == " + std::to_string(cols) + ")");
    print_block(std::to_string(cols));
    p_.close();
    p_.open("else");
    print_block("nj");
    p_.close();
  }
  p_.close();                      // tasks
  p_.close(parallel ? ");" : "");  // the shared loop's body
  p_.close();
}

// A row of the tile at a time, converted by yr_ld_row / yr_st_row.
void CppPrinter::print_copy(const TileCopy &c) {
  if (c.tensor.element_strides().back() != 1 || c.tile.element_strides().back() != 1) {
    CPrinter::print_copy(c);
    return;
  }
  const Dims &dims = c.tile.dims;
  const Dims st = c.tile.element_strides(), sg = c.tensor.element_strides();
  const Dims outer(dims.begin(), dims.end() - 1);
  const std::vector<std::string> names = numbered("i", outer.size());
  const std::vector<Expr> v = vars_of(names);
  const std::string tile_at = pointer(c.tile.buffer) + " + " + offset_text(index_of(v, st));
  const std::string tensor_at = (c.load ? "src + " : "dst + ") + offset_text(index_of(v, sg));
  const std::string n = std::to_string(dims.back());
  p_.open("");
  p_.line(std::string(c.load ? "const auto *src = " : "auto *dst = ") + start_of(c.tensor) + ";");
  for (size_t d = 0; d < outer.size(); ++d) {
    p_.open("for (int64_t " + names[d] + " = 0; " + names[d] + " < " + std::to_string(outer[d]) + "; ++" + names[d] +
            ")");
  }
  if (c.inside.empty()) {
    p_.line(c.load ? "yr_ld_row(" + tile_at + ", " + tensor_at + ", " + n + ");"
                   : "yr_st_row(" + tensor_at + ", " + tile_at + ", " + n + ");");
  } else {
    // A ragged tile: a row past the tensor copies nothing, a row's end past it is cut; a load
    // sets the rest of the row to zero.
    std::string length = n;
    for (const TileBound &b : c.inside) {
      const std::string inside = "(" + text(b.inside) + ")";
      if (b.dim + 1 == dims.size()) {
        length = "(" + inside + " < " + length + " ? " + inside + " : " + length + ")";
      } else {
        length = "(" + names[b.dim] + " < " + inside + " ? " + length + " : int64_t{0})";
      }
    }
    p_.line("const int64_t yr_len = " + length + ";");
    p_.line(c.load ? "yr_ld_row(" + tile_at + ", " + tensor_at + ", yr_len);"
                   : "yr_st_row(" + tensor_at + ", " + tile_at + ", yr_len);");
    if (c.load) p_.line("for (int64_t j = yr_len; j < " + n + "; ++j) yr_st(" + tile_at + " + j, 0.0f);");
  }
  for (size_t d = 0; d < outer.size(); ++d) p_.close();
  p_.close();
}

}  // namespace yirage::codegen
