// The analytic cost model that ranks verified candidates before any is compiled (ARCHITECTURE.md
// §5): for each kernel, bytes moved per memory level over that level's bandwidth (in whole cache
// lines) and FLOPs over the target's peak — whichever bound is larger — plus the waits of its
// blocks' for-loops, the time its blocks move tiles through shared memory where the backend says
// (BackendEstimates), and one launch overhead (what the backend says a launch behind a customized
// kernel adds, where it overlaps them). A
// customized kernel's grid sets how much of the device is busy: compute time scales with the
// share of compute units in use (wave quantization included), memory time saturates once half
// of them issue loads. It is a ranking heuristic, not
// a prediction: the final choice is made by measuring on the device.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel_graph.hpp"
#include "target/target.hpp"

namespace yirage::search {

struct KernelCost {
  std::string name;         // the operator, e.g. "matmul" or "customized 96x1x1 loop 64"
  double dram_bytes = 0;    // device memory traffic
  double l2_bytes = 0;      // re-reads served by L2 (tiles read by several blocks)
  double matrix_flops = 0;  // matmul work, at the matrix-unit peak
  double vector_flops = 0;  // everything else, at the vector peak
  // Matmul work whose tiles the matrix units cannot take (a tile's columns not a multiple of the
  // unit's n): scalar multiply-adds on the vector units, kScalarMatmulInstructions each.
  double scalar_matmul_flops = 0;
  // CPU targets: the matmul micro-kernel's cycles on one core (cpu_matmul_cost.hpp), counted
  // instead of matrix_flops at the peak.
  double core_cycles = 0;
  int64_t blocks = 1;
  int64_t slots = 0;  // blocks resident at once on the device; 0 for a library kernel
  int64_t waves = 1;
  // The waits of the blocks' serial for-loops, added to the rest (GPU targets; cost_model.cpp).
  double serial_seconds = 0;
  // The blocks' moves through shared memory as the backend's code makes them: its seconds per
  // block times the blocks each compute unit takes in turn, added to the rest.
  double shared_memory_seconds = 0;
  // The launch charged: the target's launch overhead, or the backend's dependent launch where a
  // customized kernel follows another (dependent_launch).
  double launch_seconds = 0;
  std::optional<double> dependent_launch;  // the backend's, for a customized kernel
  // Share of the device doing useful work over the kernel's run (1 for a library kernel).
  double utilization = 1;
  double seconds = 0;
};

struct CostEstimate {
  bool feasible = true;
  std::string infeasible_reason;  // e.g. a block graph over the target's shared memory
  double seconds = 0;             // sum over kernels, launch overheads included
  std::vector<KernelCost> kernels;
};

// The backend's word on the kernel of a customized operator (yirage_backend_kernel_estimate):
// how often each block waits for its tiles over its for-loop, the seconds one block spends
// moving tiles through its compute unit's shared memory, what its launch costs after another
// customized kernel, how many of its blocks a compute unit holds at most, and whether it runs as
// one product of its whole inputs; nullopt where it has no opinion.
struct BackendKernelEstimate {
  std::optional<int64_t> loop_waits;
  std::optional<double> shared_memory_seconds;
  std::optional<double> dependent_launch_seconds;
  std::optional<int64_t> max_resident_blocks;
  std::optional<bool> whole_product;
};
// The backend's estimate of customized operator `op` of a graph.
using BackendEstimates = std::function<BackendKernelEstimate(const KernelGraph &graph, size_t op)>;

// `backend` may be null: the model then counts waits itself and charges no shared-memory time
// (cost_model.cpp).
CostEstimate estimate_cost(const KernelGraph &graph, const targets::TargetProperties &target,
                           const BackendEstimates &backend = {});

}  // namespace yirage::search
