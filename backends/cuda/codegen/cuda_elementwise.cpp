#include "cuda/codegen/cuda_elementwise.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "codegen/lower_operator.hpp"
#include "cuda/codegen/cuda_printer.hpp"
#include "cuda/codegen/cuda_reduction_kernels.hpp"
#include "ir/dtype.hpp"

namespace yirage::codegen::cuda {

int64_t vector_elementwise_kernel(Printer &p, const Operator &op, const std::vector<TensorRef> &in,
                                  const TensorRef &out, const std::vector<DType> &dtypes) {
  if (!is_unary(op.kind) && !is_binary(op.kind)) return 0;
  const size_t bytes = dtype_size(dtypes.front());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].dims != out.dims || dtype_size(dtypes[i]) != bytes) return 0;
  }
  if (dtype_size(dtypes.back()) != bytes) return 0;
  const int64_t lanes = static_cast<int64_t>(16 / bytes);
  const int64_t n = num_elements(out.dims);
  if (n % lanes != 0 || n / lanes > std::numeric_limits<int>::max()) return 0;
  const int64_t vectors = n / lanes;

  // The operands' 16-byte vectors as register arrays, named v<buffer>, in the lowering's terms.
  std::vector<TensorRef> vin;
  std::string aligned;
  for (size_t i = 0; i < in.size(); ++i) {
    vin.push_back({global_buffer("v" + in[i].buffer.name, dtypes[i]), {lanes}, {}});
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
    p.line("const uint4 r" + name + " = reinterpret_cast<const uint4 *>(" + name + ")[v];");
    p.line("const " + type + " *v" + name + " = reinterpret_cast<const " + type + " *>(&r" + name + ");");
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
