#include "cuda/codegen/cuda_loops.hpp"

#include "codegen/lower_operator.hpp"
#include "codegen/stmt.hpp"

namespace yirage::codegen::cuda {
namespace {

// Declares names[d] as the row-major index of linear element `e` in `dims`.
std::vector<std::string> index_vars(Printer &p, const std::string &type, const std::string &e, const Dims &dims,
                                    const std::vector<std::string> &names) {
  std::vector<std::string> vars;
  const Dims strides = row_major_strides(dims);
  // Divided as unsigned (e is never negative): a signed division or remainder by a power of 2
  // costs a sign fix-up of several instructions, an unsigned one a shift or a mask.
  const std::string unsigned_e = "static_cast<" + std::string(type == "int" ? "unsigned" : "uint64_t") + ">(" + e + ")";
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::string &v = names[d];
    if (dims.size() == 1) {
      p.line("const " + type + " " + v + " = " + e + ";");
      vars.push_back(v);
      continue;
    }
    std::string expr = strides[d] == 1 ? unsigned_e : unsigned_e + " / " + std::to_string(strides[d]) + "u";
    if (d > 0) expr += " % " + std::to_string(dims[d]) + "u";
    p.line("const " + type + " " + v + " = static_cast<" + type + ">(" + expr + ");");
    vars.push_back(v);
  }
  return vars;
}

}  // namespace

std::string warp_reduce_step(const std::string &value, bool is_max) {
  return value + " = " +
         (is_max ? "yr_max(" + value + ", __shfl_xor_sync(0xffffffffu, " + value + ", off));"
                 : value + " + __shfl_xor_sync(0xffffffffu, " + value + ", off);");
}

std::string warp_reduce(const std::string &value, bool is_max) {
  return "for (int off = 16; off > 0; off /= 2) " + warp_reduce_step(value, is_max);
}

std::string reduce_into(const std::string &into, const std::string &v, bool is_max) {
  return is_max ? into + " = yr_max(" + into + ", " + v + ");" : into + " += " + v + ";";
}

std::string rms_scale(const std::string &peak, double eps, const std::string &name) {
  return "const float " + name + " = " + c_text(codegen::rms_scale(var(peak), eps)) + ";";
}

std::string rms_inverse(const std::string &total, int64_t cols, double eps, const std::string &scale,
                        const std::string &name) {
  return "const float " + name + " = " + c_text(rms_scaled_inverse(var(total), cols, eps, var(scale))) + ";";
}

void shared_loop(Printer &p, const ThreadShare &s, const Dims &dims, const std::string &prefix,
                 const std::function<void(const std::vector<std::string> &)> &body, int unroll) {
  shared_loop(p, s, dims, numbered(prefix, dims.size()), prefix + "_e", body, unroll);
}

void shared_loop(Printer &p, const ThreadShare &s, const Dims &dims, const std::vector<std::string> &names,
                 const std::string &e, const std::function<void(const std::vector<std::string> &)> &body, int unroll) {
  const int64_t n = num_elements(dims);
  // 32-bit indices wherever they fit: 64-bit division by a constant costs many instructions on
  // a GPU, and a tile loop divides for every element.
  const std::string type = n <= 0x7fffffff ? "int" : "int64_t";
  const std::string first = "static_cast<" + type + ">(" + s.start + ")";
  if (s.threads > 0) {
    // Block level: independent elements interleave, indices fold.
    const int64_t count = per_thread(dims, s.threads);
    if (count <= 8) {
      p.line("#pragma unroll");
    } else if (unroll > 1) {
      p.line("#pragma unroll " + std::to_string(unroll));
    }
    p.open("for (int u = 0; u < " + std::to_string(count) + "; ++u)");
    p.line("const " + type + " " + e + " = " + first + " + u * " + std::to_string(s.threads) + ";");
    if (n % s.threads != 0) p.open("if (" + e + " < " + std::to_string(n) + ")");
    body(index_vars(p, type, e, dims, names));
    if (n % s.threads != 0) p.close();
    p.close();
    return;
  }
  if (unroll > 1) p.line("#pragma unroll " + std::to_string(unroll));
  p.open("for (" + type + " " + e + " = " + first + "; " + e + " < " + std::to_string(n) + "; " + e +
         " += static_cast<" + type + ">(" + s.step + "))");
  body(index_vars(p, type, e, dims, names));
  p.close();
}

}  // namespace yirage::codegen::cuda
