#include "ir/describe.hpp"

#include <cstdio>
#include <sstream>

#include "ir/block_graph.hpp"

namespace yirage {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

const char *phase_name(LoopPhase phase) {
  switch (phase) {
    case LoopPhase::kInvariant: return "";
    case LoopPhase::kPerIteration: return " per-iteration";
    case LoopPhase::kAfterLoop: return " after-loop";
  }
  return "";
}

void list(std::ostringstream &out, const OperatorGraph &g, const std::string &indent, const std::string &prefix) {
  for (const Operator &op : g.operators()) {
    out << indent;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      out << (i ? ", " : "") << prefix << op.outputs[i];
    }
    if (!op.outputs.empty()) out << " = ";
    out << op_name(op.kind) << "(";
    for (size_t i = 0; i < op.inputs.size(); ++i) out << (i ? ", " : "") << prefix << op.inputs[i];
    out << ")" << describe_attributes(op);
    if (op.kind == OpKind::kOutputSaver && op.attributes.dtype != g.tensor(op.inputs[0]).dtype) {
      out << " as " << dtype_name(op.attributes.dtype);
    }
    if (!op.outputs.empty()) {
      const Tensor &t = g.tensor(op.outputs[0]);
      out << " : " << to_string(t.dims) << " " << dtype_name(t.dtype) << phase_name(t.phase);
    }
    if (op.attributes.launch_with_next) out << ", launched with the next kernel as one program";
    out << "\n";
    if (op.kind == OpKind::kCustomized) {
      const BlockGraphConfig &c = op.block_graph->config();
      out << indent << "    grid " << c.grid[0] << "x" << c.grid[1] << "x" << c.grid[2] << ", " << c.block_threads
          << " threads per block, for-loop " << c.forloop_range << ", " << op.block_graph->shared_memory_bytes()
          << " bytes of tiles\n";
      list(out, *op.block_graph, indent + "    ", "s");
    }
  }
}

}  // namespace

std::string describe_grid_map(const GridMap &map) {
  static const char *axes[3] = {"x", "y", "z"};
  std::string text;
  for (size_t a = 0; a < 3; ++a) {
    if (map[a] < 0) continue;
    text += std::string(text.empty() ? "" : ",") + axes[a] + "->" + std::to_string(map[a]);
  }
  return "{" + text + "}";
}

std::string describe_attributes(const Operator &op) {
  const OpAttributes &a = op.attributes;
  switch (op.kind) {
    case OpKind::kReduction:
    case OpKind::kReductionMax:
    case OpKind::kConcat: return " dim=" + std::to_string(a.dim);
    case OpKind::kSplit: return " dim=" + std::to_string(a.dim) + " sizes=" + to_string(a.sizes);
    case OpKind::kReshape: return " shape=" + to_string(a.sizes);
    case OpKind::kPermute: return " dims=" + to_string(a.sizes);
    case OpKind::kClamp: return " lo=" + number(a.lo) + " hi=" + number(a.hi);
    case OpKind::kMulScalar: return " scalar=" + number(a.scalar);
    case OpKind::kRmsNorm:
      return " shape=" + to_string(a.sizes) + " eps=" + number(a.eps) + (a.has_weight ? " weighted" : "");
    case OpKind::kInputIterator:
      return " of " + to_string(a.sizes) + " imap=" + describe_grid_map(a.grid_map) +
             " fmap=" + std::to_string(a.forloop_dim);
    case OpKind::kOutputSaver:
      return " into " + to_string(a.sizes) + " omap=" + describe_grid_map(a.grid_map) +
             (a.forloop_dim >= 0 ? " loop dim=" + std::to_string(a.forloop_dim) : "");
    case OpKind::kAccumSumToDimx: return " dimx=" + std::to_string(a.sizes.at(0));
    case OpKind::kAccumReduceRms: return a.eps != 0 ? " eps=" + number(a.eps) : "";
    default: return "";
  }
}

std::string describe(const KernelGraph &graph) {
  std::ostringstream out;
  out << "kernel graph: " << graph.inputs().size() << " input(s), " << graph.outputs().size() << " output(s), "
      << graph.operators().size() << " operator(s)\n";
  list(out, graph, "  ", "t");
  out << "  outputs:";
  for (TensorId id : graph.outputs()) out << " t" << id;
  out << "\n";
  return out.str();
}

}  // namespace yirage
