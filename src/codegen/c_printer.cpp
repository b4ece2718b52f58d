#include "codegen/c_printer.hpp"

#include "util/error.hpp"

namespace yirage::codegen {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

std::string CPrinter::text(const Expr &e) const {
  return text(e, 0);
}
std::string CPrinter::offset_text(const Expr &e) const {
  return text(e, kOffsetPrecedence);
}

std::string CPrinter::text(const Expr &e, int precedence) const {
  return c_text(e, precedence, [this](const BufferRef &b, const std::string &index) { return load_text(b, index); });
}

std::string CPrinter::load_text(const BufferRef &buffer, const std::string &index) const {
  if (buffer.space == MemorySpace::kGlobal) return "yr_ld(" + buffer.name + " + " + index + ")";
  return pointer(buffer) + "[" + index + "]";
}

void CPrinter::print_store(const BufferRef &buffer, const std::string &index, const std::string &value) {
  if (buffer.space == MemorySpace::kGlobal) {
    p_.line("yr_st(" + buffer.name + " + " + index + ", " + value + ");");
  } else {
    p_.line(pointer(buffer) + "[" + index + "] = " + value + ";");
  }
}

void CPrinter::print_serial_loop(const Loop &l) {
  for (size_t d = 0; d < l.dims.size(); ++d) {
    const std::string &v = l.vars[d];
    p_.open("for (" + int_type() + " " + v + " = 0; " + v + " < " + std::to_string(l.dims[d]) + "; ++" + v + ")");
  }
  print(l.body);
  for (size_t d = 0; d < l.dims.size(); ++d) p_.close();
}

void CPrinter::print(const Block &block) {
  for (const Stmt &s : block) print(s);
}

void CPrinter::print(const Stmt &stmt) {
  std::visit(Overloaded{
                 [&](const Block &b) {
                   p_.open("");
                   print(b);
                   p_.close();
                 },
                 [&](const Loop &l) {
                   if (l.sharing == Sharing::kSerial) {
                     print_serial_loop(l);
                   } else {
                     print_shared_loop(l);
                   }
                 },
                 [&](const If &i) {
                   p_.open("if (" + text(i.condition) + ")");
                   print(i.then_body);
                   if (i.else_body.empty()) {
                     p_.close();
                   } else {
                     p_.close();
                     p_.open("else");
                     print(i.else_body);
                     p_.close();
                   }
                 },
                 [&](const Let &l) {
                   const std::string type = l.is_float ? "float" : int_type();
                   p_.line((l.mutable_ ? "" : "const ") + type + " " + l.name + " = " + text(l.value) + ";");
                 },
                 [&](const Assign &a) { p_.line(a.name + " = " + text(a.value) + ";"); },
                 [&](const Store &s) { print_store(s.buffer, offset_text(s.index), text(s.value)); },
                 [&](const Barrier &) { print_barrier(); },
                 [&](const Matmul &m) { print_matmul(m); },
                 [&](const RowReduce &r) { print_row_reduce(r); },
                 [&](const TileCopy &c) { print_copy(c); },
             },
             stmt.node);
}

}  // namespace yirage::codegen
