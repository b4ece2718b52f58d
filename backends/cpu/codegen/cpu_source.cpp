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
bool print_customized(Printer &p, const BlockGraph &bg, const std::vector<DType> &output_dtypes) {
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
  CppPrinter printer(p);
  printer.open_parallel_for(blocks, parallel_grain(block_work));
  p.line("float *arena = static_cast<float *>(aligned_alloc(64, " + std::to_string(lowering.layout.floats * 4) + "));");
  p.open("if (arena == nullptr)");
  p.line("__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);");
  p.line("return;");
  p.close();
  p.open("for (int64_t b = yr_begin; b < yr_end; ++b)");
  p.line("const int64_t bx = b % " + std::to_string(grid[0]) + ", by = (b / " + std::to_string(grid[0]) + ") % " +
         std::to_string(grid[1]) + ", bz = b / " + std::to_string(grid[0] * grid[1]) + ";");
  p.line("(void)bx; (void)by; (void)bz;");
  CpuWalker(printer, bg, lowered, std::move(views)).walk();
  p.close();  // blocks
  p.line("free(arena);");
  p.close(");");
  p.line("return failed;");
  return printer.shares_loops();
}

// One operator's statements, reading in0, in1, … and writing out0, … (typed pointers the caller
// declares, in the operator's order), ending in a return of 0, or 1 where a thread could not
// allocate its tiles. Returns whether a loop of it is shared (CppPrinter::shares_loops).
bool print_operator(Printer &p, const KernelGraph &g, const Operator &op) {
  std::vector<TensorRef> in, out;
  std::vector<DType> output_dtypes;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Tensor &t = g.tensor(op.inputs[i]);
    in.push_back({global_buffer("in" + std::to_string(i), t.dtype), t.dims, {}});
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor &t = g.tensor(op.outputs[i]);
    out.push_back({global_buffer("out" + std::to_string(i), t.dtype), t.dims, {}});
    output_dtypes.push_back(t.dtype);
  }
  p.line("(void)rt;");
  if (op.kind == OpKind::kCustomized) return print_customized(p, *op.block_graph, output_dtypes);
  CppPrinter printer(p);
  printer.print(lower_operator(op, in, out, Sharing::kGrid));
  p.line("return 0;");
  return printer.shares_loops();
}

// `name` as a typed pointer to tensor `t`'s elements, from the untyped pointer `from`.
void declare_pointer(Printer &p, const Tensor &t, const std::string &name, const std::string &from, bool read_only) {
  const std::string type = element_type(t.dtype), qualified = read_only ? "const " + type : type;
  p.line(qualified + " *" + name + " = static_cast<" + qualified + " *>(" + from + ");");
}

const char *const kEntry = "extern \"C\" __attribute__((visibility(\"default\"))) int ";

std::string one_operator_source(const serialize::KernelProgram &program) {
  const KernelGraph &g = program.graph;
  const Operator &op = program.op();
  Printer p;
  p.line(kCpuPrelude);
  p.line("// Kernel program \"" + program.name + "\": " + op_name(op.kind));
  p.open(std::string(kEntry) + kCpuKernelSymbol +
         "(const void *const *inputs, void *const *outputs, const yr_runtime *rt)");
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    declare_pointer(p, g.tensor(g.inputs()[i]), "in" + std::to_string(i), "inputs[" + std::to_string(i) + "]", true);
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    declare_pointer(p, g.tensor(g.outputs()[i]), "out" + std::to_string(i), "outputs[" + std::to_string(i) + "]",
                    false);
  }
  print_operator(p, g, op);
  p.close();
  return p.str();
}

// A program of several operators: its body runs them one after another, each in a lambda of its
// own that names its tensors in0…/out0… as a program of one operator does, in one parallel
// region (yr_region: the threads go from one operator's loops to the next without returning to
// the pool), or on the calling thread where no loop is large enough to share. Tensors that only
// the program's own operators read are in the memory the plugin passes after the outputs
// (program_own_tensors).
std::string operators_source(const serialize::KernelProgram &program) {
  const KernelGraph &g = program.graph;
  // Where each tensor is: the host's inputs and outputs, else the program's own memory.
  std::map<TensorId, std::string> where;
  for (size_t i = 0; i < g.inputs().size(); ++i) where[g.inputs()[i]] = "yr_g.inputs[" + std::to_string(i) + "]";
  for (size_t i = 0; i < g.outputs().size(); ++i) where[g.outputs()[i]] = "yr_g.outputs[" + std::to_string(i) + "]";
  const std::vector<TensorId> own = program_own_tensors(g);
  for (size_t i = 0; i < own.size(); ++i) where[own[i]] = "yr_g.own[" + std::to_string(i) + "]";
  Printer p;
  p.line(kCpuPrelude);
  p.line("// Kernel program \"" + program.name + "\": " + std::to_string(program.operator_count()) +
         " operators in one parallel region");
  p.line("struct yr_group { const void *const *inputs; void *const *outputs; void *const *own; };");
  p.open("static int yr_group_body(void *yr_context, const yr_runtime *rt)");
  p.line("const yr_group &yr_g = *static_cast<const yr_group *>(yr_context);");
  bool shares = false;
  for (const Operator &op : g.operators()) {
    if (op.kind == OpKind::kInput) continue;
    p.line("// " + std::string(op_name(op.kind)));
    p.open("if (const int yr_failed = [&]() -> int");
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      declare_pointer(p, g.tensor(op.inputs[i]), "in" + std::to_string(i), where.at(op.inputs[i]), true);
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      declare_pointer(p, g.tensor(op.outputs[i]), "out" + std::to_string(i), where.at(op.outputs[i]), false);
    }
    shares = print_operator(p, g, op) || shares;
    p.close("())");
    p.line("  return yr_failed;");
  }
  p.line("return 0;");
  p.close();
  p.open(std::string(kEntry) + kCpuKernelSymbol +
         "(const void *const *inputs, void *const *outputs, const yr_runtime *rt)");
  p.line("const yr_group g{inputs, outputs, outputs + " + std::to_string(g.outputs().size()) + "};");
  p.line(shares ? "return yr_region(rt, yr_group_body, const_cast<yr_group *>(&g));"
                : "return yr_group_body(const_cast<yr_group *>(&g), rt);  // no loop to share");
  p.close();
  return p.str();
}

}  // namespace

std::vector<TensorId> program_own_tensors(const KernelGraph &program_graph) {
  const std::vector<TensorId> &outputs = program_graph.outputs();
  std::vector<TensorId> own;
  for (const Operator &op : program_graph.operators()) {
    if (op.kind == OpKind::kInput) continue;
    for (TensorId t : op.outputs) {
      if (std::find(outputs.begin(), outputs.end(), t) == outputs.end()) own.push_back(t);
    }
  }
  return own;
}

std::string cpu_source(const serialize::KernelProgram &program) {
  return program.operator_count() == 1 ? one_operator_source(program) : operators_source(program);
}

}  // namespace yirage::codegen
