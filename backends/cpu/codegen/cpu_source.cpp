#include "cpu/codegen/cpu_source.hpp"

#include <algorithm>
#include <map>

#include "codegen/lower_operator.hpp"
#include "codegen/ugraph_walker.hpp"
#include "cpu/codegen/cpu_prelude.hpp"
#include "cpu/codegen/cpu_printer.hpp"
#include "ir/block_graph.hpp"
#include "ir/ragged_tiles.hpp"
#include "search/cpu_matmul_cost.hpp"
#include "util/error.hpp"

namespace yirage::codegen {
namespace {

// The input tiles read in place (search::cpu_in_place_tiles: read only by matmuls, which take
// strided rows, so that a pass over the tile, usually the big weight tile, is saved), but those
// ragged in a batch dim. Per input tensor id: its view.
std::map<TensorId, TensorRef> matmul_views(const BlockGraph &bg) {
  std::map<TensorId, TensorRef> views;
  const std::vector<bool> in_place = search::cpu_in_place_tiles(bg);
  const std::vector<RaggedDims> ragged = has_ragged_tiles(bg) ? ragged_dims(bg) : std::vector<RaggedDims>{};
  size_t input = 0;
  for (const Operator &op : bg.operators()) {
    if (op.kind != OpKind::kInputIterator) continue;
    const size_t index = input++;
    const TensorId id = op.outputs[0];
    // A ragged tile too, where only its last two dims are ragged: the matmuls stop their rows,
    // columns and sums at the tensor's end (Matmul::k_inside, m_inside, n_inside), so the view is
    // never read past it. A ragged batch dim would be.
    if (!ragged.empty()) {
      const RaggedDims &split = ragged[static_cast<size_t>(id)];
      bool batch = false;
      for (size_t d = 0; d + 2 < split.size(); ++d) batch = batch || split[d].has_value();
      if (batch) continue;
    }
    if (!in_place[static_cast<size_t>(id)]) continue;
    const Dims &dims = bg.tensor(id).dims;
    views[id] = {global_buffer("in" + std::to_string(index), op.attributes.dtype), dims,
                 row_major_strides(op.attributes.sizes), tile_base(bg, op, dims)};
  }
  return views;
}

// The block's steps, with matmuls reading their views.
class CpuWalker : public UGraphWalker {
 public:
  CpuWalker(CPrinter &printer, const BlockGraph &bg, const LoweredUGraph &lowered, std::map<TensorId, TensorRef> views)
      : UGraphWalker(printer, bg, lowered), views_(std::move(views)) {}

 protected:
  std::optional<bool> print_step(const Step &step) override {
    const Operator &op = bg_.operators()[step.op];
    if (step.kind == StepKind::kLoadTile && views_.count(op.outputs[0])) return std::nullopt;
    if (step.kind == StepKind::kCompute && op.kind == OpKind::kMatmul) {
      Matmul m = std::get<Matmul>(step.body.at(0).node);
      if (auto a = views_.find(op.inputs[0]); a != views_.end()) m.a = a->second;
      if (auto b = views_.find(op.inputs[1]); b != views_.end()) m.b = b->second;
      printer_.print(Stmt{m});
      return std::nullopt;
    }
    return UGraphWalker::print_step(step);
  }

 private:
  std::map<TensorId, TensorRef> views_;
};

// The customized operator: blocks in parallel, each chunk of blocks with its tiles in an arena of
// its own (allocated per chunk: a few per launch, each reused block after block).
void print_customized(Printer &p, const BlockGraph &bg, const std::vector<DType> &output_dtypes) {
  std::map<TensorId, TensorRef> views = matmul_views(bg);
  UGraphLowering lowering;
  lowering.inlined = inlined_tensors(bg);
  std::vector<bool> elsewhere = lowering.inlined;
  for (const auto &view : views) elsewhere[static_cast<size_t>(view.first)] = true;
  // 64-byte aligned tiles (a cache line each).
  lowering.layout = plan_block_layout(bg, 16, {}, elsewhere);
  lowering.output_dtypes = output_dtypes;
  const LoweredUGraph lowered = lower_ugraph(bg, lowering);
  const auto &grid = bg.config().grid;
  const int64_t blocks = grid[0] * grid[1] * grid[2];

  // A block's work, for the size of a chunk of blocks.
  double block_work = 0;
  for (const std::vector<Step> *phase : {&lowered.start, &lowered.invariant, &lowered.after}) {
    for (const Step &s : *phase) block_work += work_of(s.body);
  }
  for (const Step &s : lowered.loop) block_work += static_cast<double>(bg.config().forloop_range) * work_of(s.body);

  p.line("int failed = 0;");
  p.open("yr_parallel_for(rt, " + std::to_string(blocks) + ", " + std::to_string(parallel_grain(block_work)) +
         ", [&](int64_t yr_begin, int64_t yr_end)");
  p.line("float *arena = static_cast<float *>(aligned_alloc(64, " + std::to_string(lowering.layout.floats * 4) + "));");
  p.open("if (arena == nullptr)");
  p.line("__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);");
  p.line("return;");
  p.close();
  p.open("for (int64_t b = yr_begin; b < yr_end; ++b)");
  p.line("const int64_t bx = b % " + std::to_string(grid[0]) + ", by = (b / " + std::to_string(grid[0]) + ") % " +
         std::to_string(grid[1]) + ", bz = b / " + std::to_string(grid[0] * grid[1]) + ";");
  p.line("(void)bx; (void)by; (void)bz;");
  CppPrinter printer(p);
  CpuWalker(printer, bg, lowered, std::move(views)).walk();
  p.close();  // blocks
  p.line("free(arena);");
  p.close(");");
  p.line("return failed;");
}

}  // namespace

std::string cpu_source(const serialize::KernelProgram &program) {
  const KernelGraph &g = program.graph;
  const Operator &op = program.op();
  Printer p;
  p.line(kCpuPrelude);
  p.line("// Kernel program \"" + program.name + "\": " + op_name(op.kind));
  p.open(std::string("extern \"C\" __attribute__((visibility(\"default\"))) int ") + kCpuKernelSymbol +
         "(const void *const *inputs, void *const *outputs, const yr_runtime *rt)");
  std::vector<TensorRef> in, out;
  std::vector<DType> output_dtypes;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Tensor &t = g.tensor(g.inputs()[i]);
    const std::string name = "in" + std::to_string(i), type = element_type(t.dtype);
    p.line("const " + type + " *" + name + " = static_cast<const " + type + " *>(inputs[" + std::to_string(i) + "]);");
    in.push_back({global_buffer(name, t.dtype), t.dims, {}});
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Tensor &t = g.tensor(g.outputs()[i]);
    const std::string name = "out" + std::to_string(i), type = element_type(t.dtype);
    p.line(type + " *" + name + " = static_cast<" + type + " *>(outputs[" + std::to_string(i) + "]);");
    out.push_back({global_buffer(name, t.dtype), t.dims, {}});
    output_dtypes.push_back(t.dtype);
  }
  p.line("(void)rt;");
  if (op.kind == OpKind::kCustomized) {
    print_customized(p, *op.block_graph, output_dtypes);
  } else {
    CppPrinter printer(p);
    printer.print(lower_operator(op, in, out, Sharing::kGrid));
    p.line("return 0;");
  }
  p.close();
  return p.str();
}

}  // namespace yirage::codegen
