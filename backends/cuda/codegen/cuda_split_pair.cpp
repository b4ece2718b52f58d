#include "cuda/codegen/cuda_split_pair.hpp"

#include "cuda/codegen/cuda_ugraph.hpp"
#include "ir/block_graph.hpp"
#include "ir/split_pair.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {
namespace {

constexpr int64_t kWorkspaceAlignment = 256;
constexpr int64_t kSharedAlignmentFloats = 256;  // 1024 bytes: what swizzled stages need

int64_t round_up(int64_t n, int64_t to) {
  return (n + to - 1) / to * to;
}

[[noreturn]] void unsupported(const std::string &why) {
  throw Error(ErrorCode::kUnsupported, "cuda: a program of two operators: " + why);
}

const char *const kAxes[3] = {"x", "y", "z"};

}  // namespace

SplitPairKernel emit_split_pair(Printer &p, const serialize::KernelProgram &program, const CudaTarget &target) {
  const KernelGraph &g = program.graph;
  const std::optional<SplitPair> pair = split_pair(g);
  if (!pair) {
    unsupported("one launch runs only a loop split over blocks and the sum of its parts (ir/split_pair.hpp)");
  }
  const Operator &chunks = g.operators()[pair->chunks];
  const BlockGraph &a = *chunks.block_graph;

  SplitPairKernel kernel;
  kernel.grid = a.config().grid;
  // The workspace: a counter per tile, then the partial sums.
  std::vector<int64_t> partial_at;
  kernel.workspace_bytes = round_up(pair->tile_count() * 4, kWorkspaceAlignment);
  for (TensorId t : chunks.outputs) {
    partial_at.push_back(kernel.workspace_bytes);
    const Tensor &partial = g.tensor(t);
    kernel.workspace_bytes += round_up(static_cast<int64_t>(tensor_bytes(partial)), kWorkspaceAlignment);
  }
  // Written as the parts' outputs; read by the sum without __restrict__ (which lets the compiler
  // take the non-coherent path for data the kernel does not write itself).
  auto bind_partials = [&](const std::string &prefix, const std::string &type, const std::string &qualifier) {
    for (size_t i = 0; i < partial_at.size(); ++i) {
      p.line(type + " *" + qualifier + "const " + prefix + std::to_string(i) + " = reinterpret_cast<" + type +
             " *>(yr_ws + " + std::to_string(partial_at[i]) + ");");
    }
  };

  p.line("extern __shared__ __align__(1024) float yr_smem[];");
  // The parts: the first operator's body, its outputs (out0…) the partial sums.
  std::vector<DType> input_dtypes, partial_dtypes, output_dtypes;
  for (TensorId id : g.inputs()) input_dtypes.push_back(g.tensor(id).dtype);
  for (TensorId id : chunks.outputs) partial_dtypes.push_back(g.tensor(id).dtype);
  for (TensorId id : g.outputs()) output_dtypes.push_back(g.tensor(id).dtype);
  p.open("");
  p.line("// The loop's part blockIdx." + std::string(kAxes[pair->axis]) + " of " + std::to_string(pair->parts) + ".");
  bind_partials("out", "float", "__restrict__ ");
  const UGraphBodySettings first = ugraph_body_settings(a, input_dtypes, target);
  BodyPlacement placement;
  placement.smem_offset_floats = 0;
  const CustomizedBody made_a =
      emit_customized_body(p, a, first.threads, partial_dtypes, first.tensor_cores, first.target, placement);
  p.close();

  // The tile's counter: its blocks' partials are visible once it reaches parts − 1.
  std::string tile = "0";
  for (int x = 2; x >= 0; --x) {
    if (x == pair->axis || pair->tiles[static_cast<size_t>(x)] == 1) continue;
    tile = "(" + tile + ") * " + std::to_string(pair->tiles[static_cast<size_t>(x)]) + " + blockIdx." + kAxes[x];
  }
  // The flag lives in the dynamic arena, after the parts' memory (static shared memory beside the
  // 1024-byte-aligned arena could take up to 1 KiB more than the launch asks for).
  const int64_t flag_at = (made_a.shared_bytes + 3) / 4;
  p.line("__threadfence();");
  p.line("__syncthreads();");
  p.line("bool &yr_last_block = *reinterpret_cast<bool *>(yr_smem + " + std::to_string(flag_at) + ");");
  p.open("if (threadIdx.x == 0)");
  p.line("unsigned *const count = reinterpret_cast<unsigned *>(yr_ws) + " + tile + ";");
  p.line("yr_last_block = atomicAdd(count, 1u) == " + std::to_string(pair->parts) + "u - 1u;");
  p.line("if (yr_last_block) *count = 0u;  // for the next launch");
  p.close();
  p.line("__syncthreads();");
  p.line("if (!yr_last_block) return;");
  p.line("__threadfence();");

  // The sum of this tile: the second operator on the unsplit grid, its inputs (in0…) the
  // partial sums.
  BlockGraph sum = [&] {
    try {
      return unsplit_sum(g, *pair);
    } catch (const Error &e) {
      if (e.code() != ErrorCode::kInvalidArgument) throw;
      unsupported(std::string("the sum of a tile's parts as one block: ") + e.what());
    }
  }();
  p.open("");
  bind_partials("in", "const float", "");
  // The bodies read kernel inputs with yr_stream16 (the non-coherent path), yr_ld and yr_ld16u
  // (through L1) and yr_cp4 (cp.async.ca, through L1); here those names are loads through L2 only
  // (yr_cp16 is cp.async.cg already). The partial sums are float32 (split_pair).
  p.line("const auto yr_stream16 = [](const float *p) { return yr_coherent16(p); };");
  p.line("const auto yr_ld = [](const float *p) { return yr_coherent(p); };");
  p.line(
      "const auto yr_ld16u = [](const float *p, float *v) { for (int c = 0; c < 4; ++c) v[c] = yr_coherent(p + c); };");
  p.line("const auto yr_cp4 = [](void *dst, const void *src, bool present = true) {");
  p.line("  *static_cast<float *>(dst) = present ? yr_coherent(static_cast<const float *>(src)) : 0.0f;");
  p.line("};");
  p.line("(void)yr_stream16; (void)yr_ld; (void)yr_ld16u; (void)yr_cp4;");
  for (size_t x = 0; x < 3; ++x) {
    placement.block[x] = static_cast<int>(x) == pair->axis ? "0" : std::string("blockIdx.") + kAxes[x];
  }
  placement.smem_offset_floats = round_up(flag_at + 1, kSharedAlignmentFloats);
  const UGraphBodySettings second = ugraph_body_settings(sum, partial_dtypes, target);
  const CustomizedBody made_b =
      emit_customized_body(p, sum, made_a.threads, output_dtypes, second.tensor_cores, second.target, placement);
  if (made_b.threads != made_a.threads) {
    unsupported("the sum's body takes " + std::to_string(made_b.threads) + " threads a block, the parts' " +
                std::to_string(made_a.threads));
  }
  p.close();
  kernel.threads = made_a.threads;
  kernel.shared_bytes = placement.smem_offset_floats * 4 + made_b.shared_bytes;
  return kernel;
}

}  // namespace yirage::codegen::cuda
