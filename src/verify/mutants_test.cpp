// The fingerprint against mutants of the six hand-written fused µGraphs: wrong imap / fmap /
// omap, a dropped operator, another operator kind, swapped operands, another accumulator, another
// reduction dim, another grid or loop size. Each valid mutant is judged independently by the
// float64 reference executor; the fingerprint must agree with it on every one — rejecting all
// that compute something else (at least 200 of them) and accepting those that, by algebra,
// still compute the same thing (e.g. operands of a commutative operator swapped). Mutations:
// also an operand replaced by another tile of the same shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "benchmark_ugraphs.hpp"
#include "ir/rebuild.hpp"
#include "reference/executor.hpp"
#include "testing/test_support.hpp"
#include "util/error.hpp"
#include "verify/equivalence.hpp"

namespace yirage::verify {
namespace {

struct Mutant {
  std::string description;
  KernelGraph graph;
};

const OpKind kUnaryKinds[] = {OpKind::kExp,    OpKind::kSilu,    OpKind::kGelu, OpKind::kRelu, OpKind::kSqrt,
                              OpKind::kSquare, OpKind::kSigmoid, OpKind::kLog,  OpKind::kNeg};
const OpKind kBinaryKinds[] = {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kMax};
const OpKind kAccumulators[] = {OpKind::kAccumSum,       OpKind::kAccumReduceSum, OpKind::kAccumReduceMean,
                                OpKind::kAccumReduceRms, OpKind::kAccumMax,       OpKind::kAccumSumToDimx};

// One edit of one block-graph operator (or of the config), and what to call it.
struct Edit {
  std::string description;
  OperatorEdit edit;
  BlockGraphConfig config;
};

std::vector<Edit> edits_of(const BlockGraph &bg) {
  std::vector<Edit> edits;
  const BlockGraphConfig base = bg.config();
  auto add = [&](std::string what, size_t target, std::function<bool(Operator &)> change) {
    edits.push_back({std::move(what),
                     [target, change](size_t index, Operator &op) { return index != target || change(op); }, base});
  };
  for (size_t i = 0; i < bg.operators().size(); ++i) {
    const Operator &op = bg.operators()[i];
    const std::string at = std::string(op_name(op.kind)) + " #" + std::to_string(i);
    const int rank = op.kind == OpKind::kOutputSaver ? static_cast<int>(bg.tensor(op.inputs[0]).dims.size())
                                                     : static_cast<int>(op.attributes.sizes.size());
    if (op.kind == OpKind::kInputIterator || op.kind == OpKind::kOutputSaver) {
      for (size_t axis = 0; axis < 3; ++axis) {
        for (int v = -1; v < rank; ++v) {
          if (v == op.attributes.grid_map[axis]) continue;
          add(at + ": map[" + std::to_string(axis) + "] = " + std::to_string(v), i, [=](Operator &o) {
            o.attributes.grid_map[axis] = v;
            return true;
          });
        }
      }
      for (int v = -1; v < rank; ++v) {
        if (v == op.attributes.forloop_dim) continue;
        add(at + ": forloop dim = " + std::to_string(v), i, [=](Operator &o) {
          o.attributes.forloop_dim = v;
          return true;
        });
      }
      continue;
    }
    add(at + ": dropped", i, [](Operator &) { return false; });
    // Wrong operand: any earlier tile of the same shape in place of each operand.
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      for (TensorId t = 0; t < op.outputs.front(); ++t) {
        if (t == op.inputs[k] || bg.tensor(t).dims != bg.tensor(op.inputs[k]).dims) continue;
        add(at + ": operand " + std::to_string(k) + " <- tensor " + std::to_string(t), i, [=](Operator &o) {
          o.inputs[k] = t;
          return true;
        });
      }
    }
    if (is_unary(op.kind) && op.kind != OpKind::kClamp && op.kind != OpKind::kMulScalar) {
      for (OpKind k : kUnaryKinds) {
        if (k != op.kind)
          add(at + " -> " + op_name(k), i, [=](Operator &o) {
            o.kind = k;
            return true;
          });
      }
    }
    if (is_binary(op.kind)) {
      for (OpKind k : kBinaryKinds) {
        if (k != op.kind)
          add(at + " -> " + op_name(k), i, [=](Operator &o) {
            o.kind = k;
            return true;
          });
      }
    }
    if (is_binary(op.kind) || op.kind == OpKind::kMatmul || op.kind == OpKind::kAccumRescale) {
      add(at + ": operands swapped", i, [](Operator &o) {
        std::swap(o.inputs[0], o.inputs[1]);
        return true;
      });
    }
    if (is_accumulator(op.kind) && op.kind != OpKind::kAccumRescale) {
      for (OpKind k : kAccumulators) {
        if (k != op.kind)
          add(at + " -> " + op_name(k), i, [=](Operator &o) {
            o.kind = k;
            return true;
          });
      }
    }
    if (op.kind == OpKind::kAccumSumToDimx) {
      for (int64_t dimx : {op.attributes.sizes[0] / 2, op.attributes.sizes[0] * 2}) {
        add(at + ": dimx " + std::to_string(dimx), i, [=](Operator &o) {
          o.attributes.sizes = {dimx};
          return true;
        });
      }
    }
    if (op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax) {
      const int r = static_cast<int>(bg.tensor(op.inputs[0]).dims.size());
      for (int d = 0; d < r; ++d) {
        if (d != op.attributes.dim) {
          add(at + ": dim " + std::to_string(d), i, [=](Operator &o) {
            o.attributes.dim = d;
            return true;
          });
        }
      }
    }
    if (op.kind == OpKind::kRmsNorm) {
      add(at + ": eps 0.5", i, [](Operator &o) {
        o.attributes.eps = 0.5;
        return true;
      });
    }
  }
  for (int64_t factor : {2, 4}) {
    for (size_t axis = 0; axis < 2; ++axis) {
      BlockGraphConfig more = base, fewer = base;
      more.grid[axis] *= factor;
      fewer.grid[axis] = std::max<int64_t>(1, base.grid[axis] / factor);
      edits.push_back({"grid[" + std::to_string(axis) + "] x" + std::to_string(factor), nullptr, more});
      edits.push_back({"grid[" + std::to_string(axis) + "] /" + std::to_string(factor), nullptr, fewer});
    }
    BlockGraphConfig more = base, fewer = base;
    more.forloop_range *= factor;
    fewer.forloop_range = std::max<int64_t>(1, base.forloop_range / factor);
    edits.push_back({"forloop x" + std::to_string(factor), nullptr, more});
    edits.push_back({"forloop /" + std::to_string(factor), nullptr, fewer});
  }
  return edits;
}

// Every valid mutant of the (single) customized operator of `fused`.
std::vector<Mutant> mutants_of(const KernelGraph &fused) {
  const BlockGraph *original = nullptr;
  for (const Operator &op : fused.operators()) {
    if (op.kind == OpKind::kCustomized) original = op.block_graph.get();
  }
  std::vector<Mutant> mutants;
  for (const Edit &e : edits_of(*original)) {
    try {
      auto bg = std::make_shared<const BlockGraph>(rebuild(*original, e.config, e.edit));
      KernelGraph g = rebuild(fused, [&](size_t, Operator &op) {
        if (op.kind == OpKind::kCustomized) op.block_graph = bg;
        return true;
      });
      mutants.push_back({e.description, std::move(g)});
    } catch (const Error &) {
      // An invalid mutant (a shape or map the builders refuse) is not a candidate at all.
    }
  }
  return mutants;
}

// Whether the float64 reference executor says the two graphs compute different functions.
bool reference_differs(const KernelGraph &a, const KernelGraph &b) {
  if (a.tensor(a.outputs()[0]).dims != b.tensor(b.outputs()[0]).dims) return true;
  const std::vector<reference::Values> inputs = testing::random_inputs(a, 11);
  const reference::Values x = reference::evaluate(a, inputs, 1)[0];
  const reference::Values y = reference::evaluate(b, inputs, 1)[0];
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(std::fabs(x[i] - y[i]) <= 1e-9 * (1 + std::fabs(x[i])))) return true;  // NaN differs
  }
  return false;
}

TEST(FingerprintMutants, AgreeWithTheReferenceOnEveryMutant) {
  int rejected = 0, accepted = 0, unsupported = 0, total_valid = 0;
  for (const std::string &name : bench::benchmark_names()) {
    const KernelGraph fused = bench::build_fused(name, 1, DType::kFloat16, 16);
    for (const Mutant &m : mutants_of(fused)) {
      ++total_valid;
      const bool differs = reference_differs(fused, m.graph);
      EquivalenceResult result;
      try {
        result = check_equivalence(fused, m.graph, EquivalenceOptions{3, 5, 1});
      } catch (const Error &e) {
        ASSERT_EQ(e.code(), ErrorCode::kUnsupported) << name << ": " << m.description;
        ++unsupported;  // e.g. exp turned into something applied after an exp
        continue;
      }
      EXPECT_EQ(result.equivalent, !differs) << name << ": " << m.description << " (reference says "
                                             << (differs ? "different" : "same") << "; " << result.reason << ")";
      (result.equivalent ? accepted : rejected) += 1;
    }
  }
  std::printf("%d valid mutants: %d rejected, %d accepted as equivalent, %d unsupported\n", total_valid, rejected,
              accepted, unsupported);
  EXPECT_GE(rejected, 200);
}

// Mirage's attention µGraphs end with sum_todimx: partial sums Σ exp(Q·K)·V of 4 blocks laid side
// by side in A [4, 32] (8 columns each) are added up, and divided by the sums of B [4, 4].
KernelGraph sum_to_dimx_fused() {
  KernelGraph g;
  const TensorId a = g.new_input({4, 32}, DType::kFloat32);
  const TensorId b = g.new_input({4, 4}, DType::kFloat32);
  BlockGraphConfig c;
  c.grid = {2, 1, 1};
  c.forloop_range = 2;
  auto bg = std::make_shared<BlockGraph>(c);
  const TensorId at = bg->new_input({4, 32}, DType::kFloat32, {0, -1, -1}, 1);
  const TensorId bt = bg->new_input({4, 4}, DType::kFloat32, {0, -1, -1}, 1);
  const TensorId sum = bg->accumulate_to_dimx(at, 8);
  bg->new_output(bg->binary(OpKind::kDiv, sum, bg->accumulate(OpKind::kAccumReduceSum, bt)), {0, -1, -1}, -1);
  g.mark_output(g.customized({a, b}, bg)[0]);
  return g;
}

// The same with A's columns added as `groups`: {k·8 + j} for slices (what sum_todimx means),
// {4·j + k} for groups of neighbours (what it does not).
KernelGraph sum_to_dimx_unfused(bool slices) {
  KernelGraph g;
  const TensorId a = g.new_input({4, 32}, DType::kFloat32);
  const TensorId b = g.new_input({4, 4}, DType::kFloat32);
  const std::vector<TensorId> columns = g.split(a, 1, Dims(32, 1));
  TensorId out = -1;
  for (int64_t j = 0; j < 8; ++j) {
    TensorId sum = -1;
    for (int64_t k = 0; k < 4; ++k) {
      const TensorId c = columns[static_cast<size_t>(slices ? k * 8 + j : 4 * j + k)];
      sum = sum < 0 ? c : g.binary(OpKind::kAdd, sum, c);
    }
    out = out < 0 ? sum : g.concat(out, sum, 1);
  }
  g.mark_output(g.binary(OpKind::kDiv, out, g.reduction(OpKind::kReduction, b, 1)));
  return g;
}

TEST(FingerprintMutants, SumToDimxAddsSlicesNotGroups) {
  const KernelGraph fused = sum_to_dimx_fused();
  const KernelGraph slices = sum_to_dimx_unfused(true), groups = sum_to_dimx_unfused(false);
  ASSERT_FALSE(reference_differs(slices, fused));
  ASSERT_TRUE(reference_differs(groups, fused));
  EXPECT_TRUE(check_equivalence(slices, fused, EquivalenceOptions{3, 5, 1}).equivalent);
  EXPECT_FALSE(check_equivalence(groups, fused, EquivalenceOptions{3, 5, 1}).equivalent);
  int rejected = 0, valid = 0;
  for (const Mutant &m : mutants_of(fused)) {
    ++valid;
    const bool differs = reference_differs(fused, m.graph);
    const EquivalenceResult result = check_equivalence(fused, m.graph, EquivalenceOptions{3, 5, 1});
    EXPECT_EQ(result.equivalent, !differs) << m.description << " (" << result.reason << ")";
    rejected += result.equivalent ? 0 : 1;
  }
  std::printf("%d valid mutants of the sum_todimx µGraph: %d rejected\n", valid, rejected);
  EXPECT_GE(rejected, 20);
}

// Views: every permutation of a [3,3,3,3] tensor has its shape, so only the elements' places tell
// them apart; the fingerprint must accept exactly the permutation of the target (as the reference
// executor does) and reject the 23 others. Reshapes that keep the shape but move elements too.
TEST(FingerprintMutants, ViewsRejectWrongPermutationsAndReshapes) {
  auto permuted = [](const Dims &order) {
    KernelGraph g;
    const TensorId x = g.new_input({3, 3, 3, 3}, DType::kFloat16);
    const TensorId y = g.new_input({3, 3, 3, 3}, DType::kFloat16);
    g.mark_output(g.binary(OpKind::kMul, g.permute(x, order), y));
    return g;
  };
  const Dims want = {0, 2, 1, 3};
  const KernelGraph target = permuted(want);
  Dims order = {0, 1, 2, 3};
  int rejected = 0;
  do {
    const KernelGraph mutant = permuted(order);
    const bool equivalent = check_equivalence(target, mutant, EquivalenceOptions{3, 5, 1}).equivalent;
    EXPECT_EQ(equivalent, !reference_differs(target, mutant)) << to_string(order);
    EXPECT_EQ(equivalent, order == want) << to_string(order);
    rejected += equivalent ? 0 : 1;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(rejected, 23);

  // [4,6] as [6,4]: reshaped (row-major order kept) or transposed, directly or in two steps.
  auto viewed = [](auto view) {
    KernelGraph g;
    g.mark_output(g.unary(OpKind::kExp, view(g, g.new_input({4, 6}, DType::kFloat32))));
    return g;
  };
  const KernelGraph reshaped = viewed([](KernelGraph &g, TensorId x) { return g.reshape(x, {6, 4}); });
  const KernelGraph twice = viewed([](KernelGraph &g, TensorId x) {
    return g.reshape(g.reshape(x, {2, 12}), {6, -1});
  });
  const KernelGraph transposed = viewed([](KernelGraph &g, TensorId x) { return g.transpose(x, 0, 1); });
  const KernelGraph split_heads =  // [4,6] as [4,2,3], heads first, back to [6,4]: another order
      viewed([](KernelGraph &g, TensorId x) {
        return g.reshape(g.permute(g.reshape(x, {4, 2, 3}), {1, 0, 2}), {6, 4});
      });
  EXPECT_TRUE(check_equivalence(reshaped, twice, EquivalenceOptions{3, 5, 1}).equivalent);
  for (const KernelGraph *other : {&transposed, &split_heads}) {
    ASSERT_TRUE(reference_differs(reshaped, *other));
    EXPECT_FALSE(check_equivalence(reshaped, *other, EquivalenceOptions{3, 5, 1}).equivalent);
  }
  EXPECT_FALSE(check_equivalence(transposed, split_heads, EquivalenceOptions{3, 5, 1}).equivalent);
}

}  // namespace
}  // namespace yirage::verify
