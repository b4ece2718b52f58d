#include "opencl/codegen/opencl_printer.hpp"

#include "util/error.hpp"

namespace yirage::codegen::opencl {
namespace {

// Declares vars[d] as the row-major index of linear element `e` in `dims`, divided as unsigned
// (e is never negative: an unsigned division by a power of 2 is a shift).
void index_vars(Printer &p, const std::string &e, const Dims &dims, const std::vector<std::string> &vars) {
  const Dims strides = row_major_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims.size() == 1) {
      p.line("const int " + vars[d] + " = " + e + ";");
      continue;
    }
    std::string value = "(uint)" + e;
    if (strides[d] != 1) value += " / " + std::to_string(strides[d]) + "u";
    if (d > 0) value += " % " + std::to_string(dims[d]) + "u";
    p.line("const int " + vars[d] + " = (int)(" + value + ");");
  }
}

}  // namespace

const char *element_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "half";
    case DType::kBFloat16: return "ushort";
    case DType::kFloat32: return "float";
  }
  return "float";
}

std::string OpenclPrinter::pointer(const BufferRef &buffer) const {
  if (buffer.space == MemorySpace::kShared) return "(arena + " + std::to_string(buffer.offset) + ")";
  return buffer.name;
}

std::string OpenclPrinter::load_text(const BufferRef &buffer, const std::string &index) const {
  if (buffer.space != MemorySpace::kGlobal) return CPrinter::load_text(buffer, index);
  switch (buffer.element) {
    case DType::kFloat16: return "vload_half(" + index + ", " + buffer.name + ")";
    case DType::kBFloat16: return "yr_ld_bf16(" + buffer.name + "[" + index + "])";
    case DType::kFloat32: break;
  }
  return buffer.name + "[" + index + "]";
}

void OpenclPrinter::print_store(const BufferRef &buffer, const std::string &index, const std::string &value) {
  if (buffer.space != MemorySpace::kGlobal) {
    CPrinter::print_store(buffer, index, value);
    return;
  }
  switch (buffer.element) {
    case DType::kFloat16: p_.line("vstore_half_rte(" + value + ", " + index + ", " + buffer.name + ");"); return;
    case DType::kBFloat16: p_.line(buffer.name + "[" + index + "] = yr_st_bf16(" + value + ");"); return;
    case DType::kFloat32: break;
  }
  p_.line(buffer.name + "[" + index + "] = " + value + ";");
}

void OpenclPrinter::print_shared_loop(const Loop &l) {
  if (l.sharing == Sharing::kRowLanes) {  // a row's work is one work-item's (plain row reductions)
    print_serial_loop(l);
    return;
  }
  const int64_t n = num_elements(l.dims);
  const std::string &first = l.vars.empty() ? std::string("e") : l.vars[0];
  const std::string e = (first.size() > 1 && first.back() == '0' ? first.substr(0, first.size() - 1) : first) + "_e";
  if (l.sharing == Sharing::kGrid) {
    p_.open("for (int " + e + " = (int)get_global_id(0); " + e + " < " + std::to_string(n) + "; " + e +
            " += (int)get_global_size(0))");
  } else {
    if (threads_ <= 0) throw Error(ErrorCode::kInternal, "opencl codegen: a block-level loop outside a block");
    p_.open("for (int " + e + " = (int)get_local_id(0); " + e + " < " + std::to_string(n) + "; " + e +
            " += " + std::to_string(threads_) + ")");
  }
  index_vars(p_, e, l.dims, l.vars);
  print(l.body);
  p_.close();
}

}  // namespace yirage::codegen::opencl
