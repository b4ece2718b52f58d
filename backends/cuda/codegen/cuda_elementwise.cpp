#include "cuda/codegen/cuda_elementwise.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "codegen/lower_operator.hpp"
#include "cuda/codegen/cuda_printer.hpp"
#include "cuda/codegen/cuda_reduction_kernels.hpp"
#include "ir/dtype.hpp"
#include "ir/shape.hpp"

namespace yirage::codegen::cuda {

namespace {

// How operand `dims` meets the output's `out` dims: the same shape, broadcast along its last dim
// (one element a row, repeated across a vector), broadcast along others only (vectors of its own
// last dim), or none of these (nullopt: not broadcast-compatible).
enum class Operand { kWhole, kRowScalar, kRowVector };
std::optional<Operand> operand_kind(const Dims &dims, const Dims &out) {
  if (dims == out) return Operand::kWhole;
  if (dims.size() != out.size()) return std::nullopt;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] != out[d] && dims[d] != 1) return std::nullopt;
  }
  return dims.back() == 1 && out.back() != 1 ? Operand::kRowScalar : Operand::kRowVector;
}

// The element index, in a broadcast operand of `dims`, of the output element `first` (an int
// expression) of `out`: the output's coordinate along each dim the operand has, at its stride.
std::string broadcast_index(const Dims &dims, const Dims &out, const std::string &first) {
  const Dims out_strides = row_major_strides(out), strides = row_major_strides(dims);
  std::string index;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    std::string coordinate = "static_cast<unsigned>(" + first + ") / " + std::to_string(out_strides[d]) + "u";
    if (d > 0) coordinate += " % " + std::to_string(out[d]) + "u";
    index += (index.empty() ? "" : " + ") + ("static_cast<int>(" + coordinate + ") * " + std::to_string(strides[d]));
  }
  return index.empty() ? "0" : index;
}

}  // namespace

int64_t vector_elementwise_kernel(Printer &p, const Operator &op, const std::vector<TensorRef> &in,
                                  const TensorRef &out, const std::vector<DType> &dtypes) {
  if (!is_unary(op.kind) && !is_binary(op.kind)) return 0;
  const size_t bytes = dtype_size(dtypes.front());
  std::vector<Operand> kinds;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::optional<Operand> kind = operand_kind(in[i].dims, out.dims);
    if (!kind || dtype_size(dtypes[i]) != bytes) return 0;
    kinds.push_back(*kind);
  }
  if (dtype_size(dtypes.back()) != bytes) return 0;
  const int64_t lanes = static_cast<int64_t>(16 / bytes);
  const int64_t n = num_elements(out.dims);
  if (n % lanes != 0 || n / lanes > std::numeric_limits<int>::max()) return 0;
  // A broadcast operand's vectors must not straddle its rows: the output's rows are whole vectors.
  // Its index is worked out from the vector's first element, an int.
  const bool broadcasts = std::any_of(kinds.begin(), kinds.end(), [](Operand k) { return k != Operand::kWhole; });
  if (broadcasts && (out.dims.back() % lanes != 0 || n > std::numeric_limits<int>::max())) return 0;
  const int64_t vectors = n / lanes;

  // The operands' 16-byte vectors as register arrays, named v<buffer>, in the lowering's terms.
  // Those read as vectors must be 16-byte aligned; a row's scalar need not.
  std::vector<TensorRef> vin;
  std::string aligned;
  for (size_t i = 0; i < in.size(); ++i) {
    vin.push_back({global_buffer("v" + in[i].buffer.name, dtypes[i]), {lanes}, {}});
    if (kinds[i] != Operand::kRowScalar)
      aligned += "reinterpret_cast<unsigned long long>(" + in[i].buffer.name + ") | ";
  }
  const TensorRef vout{global_buffer("v" + out.buffer.name, dtypes.back()), {lanes}, {}};
  aligned += "reinterpret_cast<unsigned long long>(" + out.buffer.name + ")";

  p.open("if (((" + aligned + ") & 15) == 0)");
  p.open("for (int v = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); v < " + std::to_string(vectors) +
         "; v += static_cast<int>(gridDim.x * blockDim.x))");
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string &name = in[i].buffer.name;
    const std::string type = element_type(dtypes[i]);
    const std::string at = broadcast_index(in[i].dims, out.dims, "v * " + std::to_string(lanes));
    switch (kinds[i]) {
      case Operand::kWhole:
        p.line("const uint4 r" + name + " = reinterpret_cast<const uint4 *>(" + name + ")[v];");
        p.line("const " + type + " *v" + name + " = reinterpret_cast<const " + type + " *>(&r" + name + ");");
        break;
      case Operand::kRowVector:
        p.line("const uint4 r" + name + " = reinterpret_cast<const uint4 *>(" + name + ")[(" + at + ") / " +
               std::to_string(lanes) + "];");
        p.line("const " + type + " *v" + name + " = reinterpret_cast<const " + type + " *>(&r" + name + ");");
        break;
      case Operand::kRowScalar:
        p.line("const " + type + " s" + name + " = " + name + "[" + at + "];");
        p.line(type + " v" + name + "[" + std::to_string(lanes) + "];");
        p.line("#pragma unroll");
        p.line("for (int l = 0; l < " + std::to_string(lanes) + "; ++l) v" + name + "[l] = s" + name + ";");
        break;
    }
  }
  const std::string &o = out.buffer.name;
  const std::string out_type = element_type(dtypes.back());
  p.line("uint4 r" + o + ";");
  p.line(out_type + " *v" + o + " = reinterpret_cast<" + out_type + " *>(&r" + o + ");");
  p.line("#pragma unroll");
  CudaPrinter(p, nullptr).print(lower_operator(op, vin, {vout}, Sharing::kSerial));
  p.line("reinterpret_cast<uint4 *>(" + o + ")[v] = r" + o + ";");
  p.close();
  p.close();
  p.open("else");  // a view's unaligned pointer: the lowering's loop, one element a thread
  CudaPrinter(p, nullptr).print(lower_operator(op, in, {out}, Sharing::kGrid));
  p.close();
  return std::clamp<int64_t>((vectors + kThreads - 1) / kThreads, 1, int64_t{1} << 16);
}

}  // namespace yirage::codegen::cuda
