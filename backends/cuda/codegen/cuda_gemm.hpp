// A pre-defined matmul of many rows on tensor cores: the classic tiled GEMM. Each block computes
// a BM × BN tile of the output with eight warps (2 × 4, each a (BM/2) × (BN/4) tile of
// mma.m16n8k16 accumulators in float32 registers), taking k in steps of 64 through a ring of
// shared-memory stages that cp.async fills STAGES − 1 steps ahead; operands reach the tensor cores
// through ldmatrix (B transposed on the way) from rows padded by 16 bytes, so that neither the
// copies nor ldmatrix meet bank conflicts. Rows, columns and k past the tensors' ends are filled
// with zeros by the copies and never stored. Blocks walk the row tiles fastest, so that the blocks
// that run together share their tile of B (the weights, read from memory about once).
//
// On sm_90a the tiles are 128 × 256, 128 × 128 or 64 × 128 (the largest that gives every
// multiprocessor a block; mma.sync's tiles where none does) and two warpgroups multiply them
// with wgmma, each a 64-row slice, reading both operands from stages laid out as wgmma reads
// them (128-byte swizzle; A K-major, B MN-major); two blocks share a multiprocessor where their
// stages fit, and with four stages one stage's wgmma stays in flight while the next is issued.
//
// It takes 16-bit operands (float16, bfloat16) with compact rows (unit column stride, row
// strides and n and k multiples of 8: 16-byte groups), on sm_80 and newer. Pointers that are not
// 16-byte aligned (a view handed in through DLPack) take plain loads into the same stages. Few
// rows (the weight products of decoding) are the vector kernel's (cuda_matmul.hpp): that one
// reads the weights once for up to 16 rows, where a GEMM tile would be mostly empty.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_matmul.hpp"
#include "cuda/codegen/cuda_ref.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "ir/block_graph.hpp"

namespace yirage::codegen::cuda {

// The tile sizes of one GEMM: what tiled_gemm chose for a shape (for tests and the docs).
struct GemmTiles {
  int64_t bm = 0, bn = 0, stages = 0;
  bool warpgroups = false;  // wgmma (sm_90a): two warpgroups, wgm along the rows, wgn along the columns
  int64_t wgm = 0, wgn = 0;
  int64_t min_blocks = 1;    // __launch_bounds__'s blocks per multiprocessor
  int64_t blocks = 0;        // batch × row tiles × column tiles
  int64_t shared_bytes = 0;  // the stages
};

// The tiles tiled_gemm would use for o = a·b, or nullopt where it does not apply (see above).
std::optional<GemmTiles> gemm_tiles(const Ref &a, const Ref &b, const Ref &o, DType dtype, const CudaTarget &target);

// The C expression of the value a GEMM stores for an element, from that of its float sum and of
// the element's offset in the output (o = f(a·b), element by element).
using GemmEpilogue = std::function<std::string(const std::string &sum, const std::string &offset)>;

// Emits the kernel body of o = a·b as a tiled GEMM and returns its launch (blocks of 256 threads,
// the stages in dynamic shared memory), or nullopt without emitting anything where it does not
// apply. `epilogue`, where given, makes the values stored.
std::optional<MatmulLaunch> tiled_gemm(Printer &p, const Ref &a, const Ref &b, const Ref &o, DType dtype,
                                       const CudaTarget &target, const GemmEpilogue &epilogue = {});

// What ugraph_gemm_form finds in a µGraph that is one product of many rows (see ugraph_gemm).
struct UGraphGemm {
  size_t a_input = 0, b_input = 0;  // the kernel inputs A and B (the µGraph's iterators read them in order)
  size_t inputs = 0;                // the kernel's inputs, A and B included
  // The operators after the sum, in order: unary ones of the value so far, or binary ones of it
  // and kernel input `other` (of the output's shape; `value_first`: the value is the left operand).
  struct Step {
    const Operator *op = nullptr;
    size_t other = 0;
    bool value_first = true;
  };
  std::vector<Step> chain;
};

// The form of `bg` where it computes O = f(A · B) as ugraph_gemm takes it (below), else nullopt.
// The CUDA plugin also runs such a product (with at most a residual added) on cuBLASLt.
std::optional<UGraphGemm> ugraph_gemm_form(const BlockGraph &bg);

// µGraph `bg` (kernel inputs `in`, outputs `out`) as one tiled GEMM, when it computes
// O = f(A · B) and nothing else: A [m, k] and B [k, n] of one 16-bit type, each block a tile of
// A's rows (or all of them) and of B's columns (or all of them), k along the loop and summed over
// it, f a chain of elementwise operators of the sum: unary ones (GELU, SiLU, a scale...) and
// binary ones with inputs of O's shape, each block reading the tile it saves (a residual added),
// O saved in A's type. Its grid and loop are then the GEMM's own (as a pre-defined matmul of many
// rows: tiles of 64 to 256 on tensor cores): the µGraph's tiles were one way of writing the same
// sums. nullopt (nothing
// emitted) for any other µGraph, or where the GEMM does not apply (few rows: see above).
std::optional<MatmulLaunch> ugraph_gemm(Printer &p, const BlockGraph &bg, const std::vector<Ref> &in,
                                        const std::vector<Ref> &out, const CudaTarget &target);

}  // namespace yirage::codegen::cuda
