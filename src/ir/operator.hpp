// The kernel-level operator set (ARCHITECTURE.md §3) and the attributes operators carry.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/shape.hpp"

namespace yirage {

// Values are stored in graph files: append only, never renumber.
enum class OpKind : int32_t {
  kInput = 1,
  kMatmul = 2,
  // Elementwise unary.
  kExp = 10,
  kSilu = 11,
  kGelu = 12,
  kRelu = 13,
  kSqrt = 14,
  kSquare = 15,
  kSigmoid = 16,
  kLog = 17,
  kNeg = 18,
  kClamp = 19,
  kMulScalar = 20,
  // Elementwise binary.
  kAdd = 30,
  kSub = 31,
  kMul = 32,
  kDiv = 33,
  kPow = 34,
  kMax = 35,
  // Reductions and normalization.
  kReduction = 50,
  kReductionMax = 51,
  kRmsNorm = 60,
  // Layout.
  kConcat = 70,
  kSplit = 71,
  // Views (kernel level only): the same elements in another shape or dim order, materialised
  // compact row-major by the kernel that computes them.
  kReshape = 72,  // sizes: the new dims (equal element count, row-major order kept)
  kPermute = 73,  // sizes: the dim order; output dim i is X's dim sizes[i]
  // A fused kernel: a thread-block graph run on a grid (kernel level only).
  kCustomized = 100,
  // Thread-block level only (ARCHITECTURE.md §3).
  kInputIterator = 200,    // a tile of a kernel input per block (imap) and iteration (fmap)
  kOutputSaver = 201,      // writes a tile of a kernel output per block (omap)
  kAccumSum = 210,         // Σ over iterations
  kAccumReduceSum = 211,   // Σ over iterations, then Σ over the last dim (it becomes 1)
  kAccumReduceMean = 212,  // that sum / (iterations · last dim)
  kAccumReduceRms = 213,   // sqrt(Σ over iterations and last dim of x² / (iterations · last dim))
  kAccumMax = 214,         // elementwise max over iterations
  kAccumRescale = 215,     // online softmax: Σ_i x_i · exp(m_i − max_i m_i)
  // Mirage's "sum_todimx": Σ over iterations, then the last dim (n) folded to dimx = sizes[0]
  // by adding its n / dimx slices of dimx: out[..., j] = Σ_i Σ_k x_i[..., k·dimx + j].
  kAccumSumToDimx = 216,
};

const char *op_name(OpKind kind);
bool is_unary(OpKind kind);        // exp … mul_scalar: one input, same shape out
bool is_binary(OpKind kind);       // add … max: two inputs, broadcast shape out
bool is_accumulator(OpKind kind);  // kAccumSum … kAccumSumToDimx
bool is_view(OpKind kind);         // reshape, permute

// For each grid axis (x, y, z): the tensor dim partitioned across that axis's blocks, or -1.
using GridMap = std::array<int32_t, 3>;
inline constexpr GridMap kReplicated = {-1, -1, -1};

class BlockGraph;

// Attributes used by some operators; the others leave them at their defaults.
struct OpAttributes {
  int dim = 0;        // reduction, concat, split: the (non-negative) dim acted on
  double scalar = 0;  // mul_scalar
  double lo = 0;      // clamp
  double hi = 0;      // clamp
  double eps = 0;     // rms_norm
  // split: part sizes; rms_norm: the normalized (trailing) shape; input iterator / output
  // saver: the dims of the kernel-level tensor read / written; accum_sum_todimx: {dimx};
  // reshape: the new dims; permute: the dim order.
  Dims sizes;
  bool has_weight = false;         // rms_norm: inputs[1] is the weight
  GridMap grid_map = kReplicated;  // input iterator: imap; output saver: omap
  int32_t forloop_dim = -1;        // input iterator: fmap; output saver of per-iteration tiles
  DType dtype = DType::kFloat32;   // input, input iterator: the element type read; output
                                   // saver: the element type written
  // A kernel graph's operator that runs in one program with the next kernel operator (plugin
  // ABI 1.4) where the backend takes the pair; apart where it does not. It changes how a graph
  // is launched, not what it computes (KernelGraph::set_launch_with_next).
  bool launch_with_next = false;

  bool operator==(const OpAttributes &) const = default;
};

struct Operator {
  OpKind kind;
  std::vector<int32_t> inputs;   // tensor ids
  std::vector<int32_t> outputs;  // tensor ids
  OpAttributes attributes;
  // kCustomized: the fused kernel's thread-block graph (immutable, shared by copies).
  std::shared_ptr<const BlockGraph> block_graph;
};

}  // namespace yirage
