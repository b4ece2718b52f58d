#include "skeleton_source.hpp"

#include <algorithm>

#include "codegen/lower_operator.hpp"
#include "codegen/lower_ugraph.hpp"
#include "codegen/ugraph_walker.hpp"
#include "ir/block_graph.hpp"
#include "serialize/kernel_program.hpp"
#include "util/error.hpp"

namespace skeleton {
namespace {

using namespace yirage;
using namespace yirage::codegen;

// What the printed code calls (codegen/expr.hpp's helpers, for float32 buffers only).
constexpr const char *kPrelude = R"(#include <math.h>
static inline float yr_ld(const float *p) { return *p; }
static inline void yr_st(float *p, float v) { *p = v; }
static inline float yr_exp(float x) { return expf(x); }
static inline float yr_erf(float x) { return erff(x); }
static inline float yr_sqrt(float x) { return sqrtf(x); }
static inline float yr_rsqrt(float x) { return 1.0f / sqrtf(x); }
static inline float yr_log(float x) { return logf(x); }
static inline float yr_pow(float a, float b) { return powf(a, b); }
static inline float yr_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline float yr_max(float a, float b) { return (a != a || b != b) ? NAN : (a > b ? a : b); }
static inline float yr_clamp(float x, float lo, float hi) { return x != x ? x : fminf(fmaxf(x, lo), hi); }
)";

// One thread runs everything: every loop is serial, barriers are nothing, a block's tiles live in
// one array (`tiles`).
class SkeletonPrinter : public CPrinter {
 public:
  using CPrinter::CPrinter;
  std::string int_type() const override { return "long"; }
  void print_barrier() override {}

 protected:
  void print_shared_loop(const Loop &loop) override { print_serial_loop(loop); }
  std::string pointer(const BufferRef &buffer) const override {
    return buffer.space == MemorySpace::kShared ? "(tiles + " + std::to_string(buffer.offset) + ")" : buffer.name;
  }
};

void check_float32(const KernelGraph &g) {
  for (size_t t = 0; t < g.num_tensors(); ++t) {
    const DType dtype = g.tensor(static_cast<TensorId>(t)).dtype;
    if (dtype != DType::kFloat32) {
      throw Error(ErrorCode::kUnsupported,
                  std::string("skeleton: only float32 tensors (a tensor is ") + dtype_name(dtype) + ")");
    }
  }
}

// A customized operator: its blocks one after another, each walking the lowered µGraph.
void print_blocks(Printer &p, const BlockGraph &bg, const std::vector<DType> &output_dtypes) {
  UGraphLowering lowering;
  lowering.inlined = inlined_tensors(bg);
  lowering.layout = plan_block_layout(bg, 1, {}, lowering.inlined);
  lowering.output_dtypes = output_dtypes;
  const LoweredUGraph lowered = lower_ugraph(bg, lowering);
  const auto &grid = bg.config().grid;
  p.line("static float tiles[" + std::to_string(std::max<int64_t>(lowering.layout.floats, 1)) + "];");
  p.open("for (long bz = 0; bz < " + std::to_string(grid[2]) + "; ++bz)");
  p.open("for (long by = 0; by < " + std::to_string(grid[1]) + "; ++by)");
  p.open("for (long bx = 0; bx < " + std::to_string(grid[0]) + "; ++bx)");
  SkeletonPrinter printer(p);
  UGraphWalker(printer, bg, lowered).walk();
  p.close();
  p.close();
  p.close();
}

}  // namespace

std::string c_source(const void *program, size_t size) {
  const serialize::KernelProgram parsed = serialize::kernel_program_from_bytes(program, size);
  const KernelGraph &g = parsed.graph;
  check_float32(g);
  Printer p;
  p.text(kPrelude);
  p.open("void skeleton_kernel(const float *const *inputs, float *const *outputs)");
  std::vector<TensorRef> in, out;
  std::vector<DType> output_dtypes;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Tensor &t = g.tensor(g.inputs()[i]);
    p.line("const float *in" + std::to_string(i) + " = inputs[" + std::to_string(i) + "];");
    in.push_back({global_buffer("in" + std::to_string(i), t.dtype), t.dims, {}});
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Tensor &t = g.tensor(g.outputs()[i]);
    p.line("float *out" + std::to_string(i) + " = outputs[" + std::to_string(i) + "];");
    out.push_back({global_buffer("out" + std::to_string(i), t.dtype), t.dims, {}});
    output_dtypes.push_back(t.dtype);
  }
  const Operator &op = parsed.op();
  if (op.kind == OpKind::kCustomized) {
    print_blocks(p, *op.block_graph, output_dtypes);
  } else {
    SkeletonPrinter printer(p);
    printer.print(lower_operator(op, in, out, Sharing::kGrid));
  }
  p.close();
  return p.str();
}

}  // namespace skeleton
