#include "search/terms.hpp"

#include <sstream>

#include "util/error.hpp"

namespace yirage::search {

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Elements reduced by a reduction over `dim` of a tensor of `dims`.
int64_t extent(const Dims &dims, int dim) {
  return dims.at(static_cast<size_t>(dim));
}

}  // namespace

Expr operator_term(const OperatorGraph &graph, const Operator &op, const std::vector<Expr> &in, int64_t forloop_range,
                   size_t output) {
  auto dims_of = [&](size_t i) -> const Dims & { return graph.tensor(op.inputs.at(i)).dims; };
  const OpAttributes &at = op.attributes;
  switch (op.kind) {
    case OpKind::kInputIterator:
    case OpKind::kOutputSaver: return in.at(0);
    case OpKind::kMatmul: return expr_sum(dims_of(0).back(), expr_mul({in[0], in[1]}));
    case OpKind::kExp: return expr_fn("exp", {in[0]});
    case OpKind::kSilu: return expr_fn("silu", {in[0]});
    case OpKind::kGelu: return expr_fn("gelu", {in[0]});
    case OpKind::kRelu: return expr_fn("relu", {in[0]});
    case OpKind::kSqrt: return expr_fn("sqrt", {in[0]});
    case OpKind::kSigmoid: return expr_fn("sigmoid", {in[0]});
    case OpKind::kLog: return expr_fn("log", {in[0]});
    case OpKind::kSquare: return expr_mul({in[0], in[0]});
    case OpKind::kNeg: return expr_neg(in[0]);
    case OpKind::kClamp: return expr_fn("clamp[" + number(at.lo) + "," + number(at.hi) + "]", {in[0]});
    case OpKind::kMulScalar: return expr_mul({in[0], expr_const(number(at.scalar))});
    case OpKind::kAdd: return expr_add({in[0], in[1]});
    case OpKind::kSub: return expr_add({in[0], expr_neg(in[1])});
    case OpKind::kMul: return expr_mul({in[0], in[1]});
    case OpKind::kDiv: return expr_div(in[0], in[1]);
    case OpKind::kPow: return expr_fn("pow", {in[0], in[1]});
    case OpKind::kMax: return expr_fn("max", {in[0], in[1]});
    case OpKind::kReduction: return expr_sum(extent(dims_of(0), at.dim), in[0]);
    case OpKind::kReductionMax: return expr_fn("max_over", {in[0]}, extent(dims_of(0), at.dim));
    case OpKind::kRmsNorm: {
      const Expr normalized = expr_div(in[0], expr_rms(num_elements(at.sizes), in[0]));
      return at.has_weight ? expr_mul({normalized, in[1]}) : normalized;
    }
    case OpKind::kAccumSum: return expr_sum(forloop_range, in[0]);
    case OpKind::kAccumReduceSum: return expr_sum(forloop_range * dims_of(0).back(), in[0]);
    case OpKind::kAccumReduceMean: {
      const int64_t n = forloop_range * dims_of(0).back();
      return expr_div(expr_sum(n, in[0]), expr_const(std::to_string(n)));
    }
    case OpKind::kAccumReduceRms: return expr_rms(forloop_range * dims_of(0).back(), in[0]);
    case OpKind::kAccumMax: return expr_fn("max_over", {in[0]}, forloop_range);
    case OpKind::kAccumRescale: return expr_fn("rescale", {in[0], in[1]}, forloop_range);
    // Each element sums forloop_range · n / dimx values of x (Mirage's abstract expression too).
    case OpKind::kAccumSumToDimx: return expr_sum(forloop_range * dims_of(0).back() / at.sizes.at(0), in[0]);
    case OpKind::kConcat: return expr_fn("concat" + std::to_string(at.dim), {in[0], in[1]});
    case OpKind::kSplit: return expr_fn("split" + std::to_string(at.dim) + "_" + std::to_string(output), {in[0]});
    // Terms forget shapes and layout, so a view is its operand's term; fingerprints, which see
    // every element's place, tell a wrong permutation from the right one.
    case OpKind::kReshape:
    case OpKind::kPermute: return in.at(0);
    case OpKind::kInput:
    case OpKind::kCustomized: break;
  }
  throw Error(ErrorCode::kUnsupported, std::string("terms: no rule for ") + op_name(op.kind));
}

namespace {

// Fills `terms` operator by operator; stops (returning false) where `go_on`, asked after each
// operator's terms are in, says no.
template <class Graph, class GoOn>
bool fill_terms(const Graph &graph, std::vector<Expr> &terms, int64_t forloop_range, const std::vector<Expr> &inputs,
                GoOn go_on) {
  size_t next_input = 0;
  for (const Operator &op : graph.operators()) {
    if (op.kind == OpKind::kInput) {
      terms[static_cast<size_t>(op.outputs[0])] = expr_var(static_cast<int64_t>(next_input++));
      continue;
    }
    std::vector<Expr> in;
    for (TensorId t : op.inputs) in.push_back(terms[static_cast<size_t>(t)]);
    if (op.kind == OpKind::kInputIterator) {
      in = {inputs.at(next_input++)};
    }
    if (op.kind == OpKind::kCustomized) {
      const std::vector<Expr> inner = block_terms(*op.block_graph, in);
      const auto &saved = op.block_graph->outputs();
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        terms[static_cast<size_t>(op.outputs[o])] = inner[static_cast<size_t>(saved[o])];
      }
    } else {
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        terms[static_cast<size_t>(op.outputs[o])] = operator_term(graph, op, in, forloop_range, o);
      }
    }
    if (!go_on(op)) return false;
  }
  return true;
}

bool always(const Operator &) {
  return true;
}

}  // namespace

std::vector<Expr> kernel_terms(const KernelGraph &graph) {
  std::vector<Expr> terms(graph.num_tensors());
  fill_terms(graph, terms, 1, {}, always);
  return terms;
}

std::optional<std::vector<Expr>> kernel_terms_within(const KernelGraph &graph, const std::function<bool()> &stop) {
  std::vector<Expr> terms(graph.num_tensors());
  size_t text_bytes = 0;
  const bool done = fill_terms(graph, terms, 1, {}, [&](const Operator &op) {
    for (TensorId t : op.outputs) text_bytes += terms[static_cast<size_t>(t)]->text.size();
    return text_bytes <= kMaxTermTextBytes && !stop();
  });
  if (!done) return std::nullopt;
  return terms;
}

std::vector<Expr> block_terms(const BlockGraph &graph, const std::vector<Expr> &inputs) {
  std::vector<Expr> terms(graph.num_tensors());
  fill_terms(graph, terms, graph.config().forloop_range, inputs, always);
  return terms;
}

}  // namespace yirage::search
