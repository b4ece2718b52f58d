#include "cpu/codegen/cpu_printer.hpp"

#include <algorithm>

namespace yirage::codegen {
namespace {

// The micro-kernel's register block: rows of A by columns of B per task.
constexpr int64_t kMatmulRows = 16;
constexpr int64_t kMatmulCols = 128;

// The pragma that shares a loop nest of `depth` loops among OpenMP threads (all but the innermost
// loop when there are several).
std::string parallel_pragma(size_t depth) {
  const size_t collapse = depth > 1 ? depth - 1 : 1;
  return "#pragma omp parallel for schedule(static) num_threads(threads)" +
         (collapse > 1 ? " collapse(" + std::to_string(collapse) + ")" : std::string());
}

}  // namespace

std::string CppPrinter::pointer(const BufferRef &buffer) const {
  if (buffer.space == MemorySpace::kShared) return "(arena + " + std::to_string(buffer.offset) + ")";
  return buffer.name;
}

std::string CppPrinter::start_of(const TensorRef &t) const {
  return t.base.is_int(0) ? pointer(t.buffer) : "(" + pointer(t.buffer) + " + " + offset_text(t.base) + ")";
}

void CppPrinter::print_shared_loop(const Loop &l) {
  // One thread per block: only kernel-level loops are parallel.
  if (l.sharing == Sharing::kGrid && !l.dims.empty()) p_.line(parallel_pragma(l.dims.size()));
  print_serial_loop(l);
}

// Batched A[..., m, k] · B[..., k, n] in blocks of kMatmulRows × kMatmulCols outputs, each
// accumulated in float over the whole k before it is stored.
void CppPrinter::print_matmul(const Matmul &mm) {
  const TensorRef &a = mm.a, &b = mm.b, &o = mm.o;
  const bool parallel = mm.sharing == Sharing::kGrid;
  const size_t rank = o.dims.size();
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = b.dims[rank - 1];
  const Dims batch_out(o.dims.begin(), o.dims.end() - 2);
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const int64_t a_row = sa[rank - 2], b_row = sb[rank - 2];
  const int64_t batches = num_elements(batch_out);
  const int64_t rows = std::min(m, kMatmulRows), cols = std::min(n, kMatmulCols);
  const int64_t row_blocks = (m + rows - 1) / rows, col_blocks = (n + cols - 1) / cols;
  p_.open("");
  if (parallel) p_.line("#pragma omp parallel for schedule(static) num_threads(threads) collapse(3)");
  p_.open("for (int64_t bt = 0; bt < " + std::to_string(batches) + "; ++bt)");
  p_.open("for (int64_t rb = 0; rb < " + std::to_string(row_blocks) + "; ++rb)");
  p_.open("for (int64_t cb = 0; cb < " + std::to_string(col_blocks) + "; ++cb)");
  // Decompose the output batch index into the operands' (broadcast) batch offsets.
  p_.line("int64_t ia = 0, ib = 0, rest = bt;");
  for (size_t d = batch_out.size(); d-- > 0;) {
    p_.line("{ const int64_t c = rest % " + std::to_string(batch_out[d]) + "; rest /= " + std::to_string(batch_out[d]) +
            "; ia += c * " + std::to_string(sa[d]) + "; ib += c * " + std::to_string(sb[d]) + "; }");
  }
  p_.line("(void)rest;");
  p_.line("const auto *pa = " + start_of(a) + " + ia;");
  p_.line("const auto *pb = " + start_of(b) + " + ib;");
  p_.line("auto *po = " + start_of(o) + " + bt * " + std::to_string(m * n) + ";");
  p_.line("const int64_t i0 = rb * " + std::to_string(rows) + ", j0 = cb * " + std::to_string(cols) + ";");
  p_.line(m % rows == 0 ? "constexpr int64_t mi = " + std::to_string(rows) + ";"
                        : "const int64_t mi = yr_min64(" + std::to_string(rows) + ", " + std::to_string(m) + " - i0);");
  p_.line(n % cols == 0 ? "constexpr int64_t nj = " + std::to_string(cols) + ";"
                        : "const int64_t nj = yr_min64(" + std::to_string(cols) + ", " + std::to_string(n) + " - j0);");
  p_.line("alignas(64) float acc[" + std::to_string(rows) + "][" + std::to_string(cols) + "] = {};");
  p_.line("alignas(64) float brow[" + std::to_string(cols) + "];");
  p_.open("for (int64_t p = 0; p < " + std::to_string(k) + "; ++p)");
  p_.line("yr_ld_row(brow, pb + p * " + std::to_string(b_row) + " + j0, nj);");
  p_.open("for (int64_t i = 0; i < mi; ++i)");
  p_.line("const float av = yr_ld(pa + (i0 + i) * " + std::to_string(a_row) + " + p);");
  p_.line("for (int64_t j = 0; j < nj; ++j) acc[i][j] += av * brow[j];");
  p_.close();
  p_.close();
  p_.line("for (int64_t i = 0; i < mi; ++i)");
  p_.line("  for (int64_t j = 0; j < nj; ++j) yr_st(po + (i0 + i) * " + std::to_string(n) + " + j0 + j, acc[i][j]);");
  p_.close();
  p_.close();
  p_.close();
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
  p_.line(c.load ? "yr_ld_row(" + tile_at + ", " + tensor_at + ", " + n + ");"
                 : "yr_st_row(" + tensor_at + ", " + tile_at + ", " + n + ");");
  for (size_t d = 0; d < outer.size(); ++d) p_.close();
  p_.close();
}

}  // namespace yirage::codegen
