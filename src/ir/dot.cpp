#include "ir/dot.hpp"

#include <sstream>

#include "ir/block_graph.hpp"
#include "ir/describe.hpp"

namespace yirage {
namespace {

// Colours after Mirage's visualizer: green for the kernel level, blue for the block level.
constexpr const char *kTensorFill = "#e0edd5";
constexpr const char *kKernelOpFill = "#70a148";
constexpr const char *kKernelEdge = "#527536";
constexpr const char *kBlockFill = "#dbe8f5";
constexpr const char *kLoopFill = "#f2f7fc";
constexpr const char *kBlockOpFill = "#5a8fcb";
constexpr const char *kIteratorFill = "#4273b1";
constexpr const char *kAccumulatorFill = "#f5c342";
constexpr const char *kBlockEdge = "#4273b1";

// `text` as a quoted DOT string; newlines become line breaks (`\n` centres the line before it,
// `\l` left-justifies it).
std::string quoted(const std::string &text, const char *line_break = "\\n") {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += line_break;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string tensor_text(const Tensor &t) {
  return to_string(t.dims) + " " + dtype_name(t.dtype);
}

// The operator's name and, on a second line, its attributes.
std::string op_label(const Operator &op) {
  const std::string attributes = describe_attributes(op);
  return std::string(op_name(op.kind)) + (attributes.empty() ? "" : "\n" + attributes.substr(1));
}

std::string block_op_label(const BlockGraph &g, const Operator &op) {
  const OpAttributes &a = op.attributes;
  const std::string name = op_name(op.kind);
  switch (op.kind) {
    case OpKind::kInputIterator:
      return name + "\nreads " + to_string(a.sizes) + " " + dtype_name(a.dtype) +
             "\nimap=" + describe_grid_map(a.grid_map) + " fmap=" + std::to_string(a.forloop_dim);
    case OpKind::kOutputSaver:
      return name + "\nwrites " + to_string(a.sizes) + " " + dtype_name(a.dtype) +
             "\nomap=" + describe_grid_map(a.grid_map) +
             (a.forloop_dim >= 0 ? " loop dim=" + std::to_string(a.forloop_dim) : "");
    default:
      if (is_accumulator(op.kind)) {
        const std::string folded =
            op.kind == OpKind::kAccumSumToDimx ? "\nlast dim to " + std::to_string(a.sizes.at(0)) : "";
        return name + "\nover " + std::to_string(g.config().forloop_range) + " iterations" + folded;
      }
      return op_label(op);
  }
}

// The phase an operator runs in: its result's, or for an output saver the phase of the tile saved.
LoopPhase phase(const BlockGraph &g, const Operator &op) {
  return g.tensor(op.outputs.empty() ? op.inputs.at(0) : op.outputs[0]).phase;
}

class DotWriter {
 public:
  explicit DotWriter(const KernelGraph &graph) : graph_(graph) {}

  std::string write() {
    out_ << "digraph yirage {\n"
         << "  graph [fontname=\"Helvetica\", fontsize=12, newrank=true, nodesep=0.3, ranksep=0.35];\n"
         << "  node [fontname=\"Helvetica\", fontsize=11, shape=box, style=\"rounded,filled\", penwidth=0];\n"
         << "  edge [fontname=\"Helvetica\", fontsize=9, color=" << quoted(kKernelEdge) << ", arrowsize=0.7];\n";
    write_tensors();
    const std::vector<Operator> &ops = graph_.operators();
    for (size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].kind == OpKind::kCustomized) {
        write_customized(k, ops[k]);
      } else if (ops[k].kind != OpKind::kInput) {
        out_ << "  k" << k << " [label=" << quoted(op_label(ops[k])) << ", fillcolor=" << quoted(kKernelOpFill)
             << ", fontcolor=white];\n";
        for (TensorId in : ops[k].inputs) edges_ << "  t" << in << " -> k" << k << ";\n";
        for (TensorId t : ops[k].outputs) edges_ << "  k" << k << " -> t" << t << ";\n";
      }
    }
    out_ << edges_.str() << "}\n";
    return out_.str();
  }

 private:
  // One box per kernel tensor; graph inputs and outputs say which they are.
  void write_tensors() {
    for (size_t id = 0; id < graph_.num_tensors(); ++id) {
      std::string roles;
      for (size_t i = 0; i < graph_.inputs().size(); ++i) {
        if (graph_.inputs()[i] == static_cast<TensorId>(id)) roles += ", input " + std::to_string(i);
      }
      bool output = false;
      for (size_t i = 0; i < graph_.outputs().size(); ++i) {
        if (graph_.outputs()[i] != static_cast<TensorId>(id)) continue;
        roles += ", output " + std::to_string(i);
        output = true;
      }
      const std::string name = "t" + std::to_string(id);
      out_ << "  " << name << " [label="
           << quoted(name + (roles.empty() ? "" : ":" + roles.substr(1)) + "\n" + tensor_text(graph_.tensor(id)))
           << ", style=filled, fillcolor=" << quoted(kTensorFill);
      if (output) out_ << ", penwidth=2, color=" << quoted(kKernelEdge);
      out_ << "];\n";
    }
  }

  // The µGraph of customized operator `k` as a cluster, its per-iteration part in a nested one.
  void write_customized(size_t k, const Operator &op) {
    const BlockGraph &g = *op.block_graph;
    const BlockGraphConfig &c = g.config();
    const std::string prefix = "k" + std::to_string(k) + "_";
    std::string produces;
    for (TensorId t : op.outputs) produces += (produces.empty() ? "t" : ", t") + std::to_string(t);
    out_ << "  subgraph cluster_k" << k << " {\n"
         << "    label="
         << quoted("customized -> " + produces + ": grid " + std::to_string(c.grid[0]) + "x" +
                       std::to_string(c.grid[1]) + "x" + std::to_string(c.grid[2]) + ", " +
                       std::to_string(c.block_threads) + " threads per block\nfor-loop " +
                       std::to_string(c.forloop_range) + ", " + std::to_string(g.shared_memory_bytes()) +
                       " bytes of tiles\n",
                   "\\l")
         << ";\n    labeljust=l; style=filled; fillcolor=" << quoted(kBlockFill) << "; color=" << quoted(kBlockEdge)
         << ";\n";
    const std::vector<Operator> &ops = g.operators();
    for (LoopPhase placed : {LoopPhase::kInvariant, LoopPhase::kPerIteration, LoopPhase::kAfterLoop}) {
      const bool loop = placed == LoopPhase::kPerIteration;
      bool any = false;
      for (size_t j = 0; j < ops.size(); ++j) {
        if (phase(g, ops[j]) != placed) continue;
        if (loop && !any) {
          out_ << "    subgraph cluster_k" << k << "_loop {\n"
               << "      label=" << quoted("for-loop: " + std::to_string(c.forloop_range) + " iterations")
               << "; labeljust=l; style=\"dashed,filled\"; fillcolor=" << quoted(kLoopFill) << ";\n";
        }
        any = true;
        const char *fill = ops[j].kind == OpKind::kInputIterator || ops[j].kind == OpKind::kOutputSaver ? kIteratorFill
                           : is_accumulator(ops[j].kind) ? kAccumulatorFill
                                                         : kBlockOpFill;
        out_ << (loop ? "      " : "    ") << prefix << "op" << j << " [label=" << quoted(block_op_label(g, ops[j]))
             << ", fillcolor=" << quoted(fill) << (is_accumulator(ops[j].kind) ? "" : ", fontcolor=white") << "];\n";
      }
      if (loop && any) out_ << "    }\n";
    }
    out_ << "  }\n";
    write_block_edges(op, prefix);
  }

  void write_block_edges(const Operator &op, const std::string &prefix) {
    const BlockGraph &g = *op.block_graph;
    const std::vector<Operator> &ops = g.operators();
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      edges_ << "  t" << op.inputs.at(i) << " -> " << prefix << "op" << g.tensor(g.inputs()[i]).producer << ";\n";
    }
    const std::vector<int32_t> savers = g.operator_indices(OpKind::kOutputSaver);
    for (size_t i = 0; i < savers.size(); ++i) {
      edges_ << "  " << prefix << "op" << savers[i] << " -> t" << op.outputs.at(i) << ";\n";
    }
    for (size_t j = 0; j < ops.size(); ++j) {
      for (TensorId s : ops[j].inputs) {
        const Tensor &tile = g.tensor(s);
        edges_ << "  " << prefix << "op" << tile.producer << " -> " << prefix << "op" << j
               << " [label=" << quoted("s" + std::to_string(s) + " " + to_string(tile.dims))
               << ", color=" << quoted(kBlockEdge) << "];\n";
      }
    }
  }

  const KernelGraph &graph_;
  std::ostringstream out_;
  std::ostringstream edges_;
};

}  // namespace

std::string to_dot(const KernelGraph &graph) {
  return DotWriter(graph).write();
}

}  // namespace yirage
