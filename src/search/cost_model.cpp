#include "search/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "ir/block_graph.hpp"
#include "search/cpu_matmul_cost.hpp"

namespace yirage::search {

namespace {

// Instructions a block-level matmul's scalar code issues per multiply-add where the matrix units
// cannot take its tiles: both operands loaded from shared memory, 16-bit ones converted, then the
// FMA, with the tile's few columns leaving lanes idle. Any of 6 to 16 ranks the models suite's
// measured candidates as well (benchmarks/models/RESULTS.md).
constexpr double kScalarMatmulInstructions = 10;

// Cycles one step along k takes in the CUDA generator's scalar code for a block's product
// (cuda_tile_matmul.cpp): a thread an output, four partial sums in flight, or, where the tile's
// rows hold whole float4s, a thread four outputs, one float4 sum (each step waits on the last).
// Fitted to products of 7 to 28 columns measured on an H200 (benchmarks/models/RESULTS.md):
// 17-19 ns and 33-34 ns a step at its 1.98 GHz; half or twice these rank the suite the same.
constexpr double kScalarStepCycles = 36;
constexpr double kFloat4StepCycles = 66;

// Bytes a block's tile occupies in memory without a gap: its innermost dims while they span the
// whole tensor's, times the first one that does not.
double contiguous_run_bytes(const Tensor &tile, const Tensor &whole) {
  double run = static_cast<double>(dtype_size(tile.dtype));
  for (size_t d = tile.dims.size(); d-- > 0;) {
    run *= static_cast<double>(tile.dims[d]);
    if (tile.dims[d] != whole.dims[d]) break;
  }
  return run;
}

// The share of an input tile's re-reads that blocks resident at the same time make: blocks
// that differ only along the grid axes its imap replicates read the same tiles at about the same
// iteration, so a re-read by a block of the same wave finds the tile in L2 even where the whole
// input does not fit there. Blocks start in waves of `slots` in linear order (x fastest); a
// group of sharing blocks spans `span` consecutive indices and is cut by a wave's end with
// probability (span - 1) / slots.
double same_wave_rereads(const BlockGraphConfig &config, const GridMap &imap, int64_t slots, int64_t waves) {
  if (waves <= 1) return 1;
  double stride = 1, span = 1;
  for (size_t axis = 0; axis < 3; ++axis) {
    const auto n = static_cast<double>(config.grid[axis]);
    if (n > 1 && imap[axis] < 0) span += stride * (n - 1);
    stride *= n;
  }
  return std::max(0.0, 1 - (span - 1) / static_cast<double>(slots));
}

double bytes_of(const Tensor &t) {
  return static_cast<double>(num_elements(t.dims)) * static_cast<double>(dtype_size(t.dtype));
}

// A core's cycles per second on a CPU target, from its peak (target.cpp: cores × clock × lanes ×
// 2 FMA units × 2 FLOPs).
double cpu_cycles_per_second(const targets::TargetProperties &t) {
  return t.peak_flops_float32 / static_cast<double>(t.compute_units * t.warp_width * 4);
}

// A CPU matmul reading B in place (a µGraph's tile read through a view, or a kernel-level product
// of fewer rows than a block's, which the generated loop runs) walks `rows` of B's rows (k) side
// by side, a page apart: past the hardware prefetcher's few dozen streams and the TLB's reach, it
// waits on DRAM. Its B's DRAM bytes count this many times. Measured on decode products: a µGraph
// reading 128 rows an iteration took 1.3-1.7x the time of 16 rows, and the kernel-level product
// (all k = 4096 rows) 1.3-2.9x the time of the best µGraph on the same bytes
// (benchmarks/cpu/README.md); the exponent is fitted on the saved candidates (0.4 to 0.6 rank
// them the same; 0.3, fitted on the µGraphs alone, ranked the kernel-level products first).
double cpu_rows_walk(double rows) {
  return std::pow(std::max(1.0, rows / 32), 0.4);
}

// On a CPU target, a matmul's micro-kernel cycles, and the reads of B beyond `counted` bytes
// already charged for it (B read in place, once per block of A's rows): to DRAM where B does not
// fit a core's cache.
// `gemm`: whether the plugin sends it to its small-GEMM (cpu_printer.cpp, print_matmul).
void add_cpu_matmul(const OperatorGraph &g, const Operator &op, double times, double counted, bool gemm,
                    const targets::TargetProperties &t, KernelCost &cost) {
  const Tensor &a = g.tensor(op.inputs[0]), &b = g.tensor(op.inputs[1]), &out = g.tensor(op.outputs.at(0));
  const size_t rank = out.dims.size();
  const int64_t m = out.dims[rank - 2], n = out.dims[rank - 1], k = a.dims.back();
  const CpuMatmulCost c = cpu_matmul_cost(num_elements(out.dims) / (m * n), m, n, k, dtype_size(a.dtype),
                                          dtype_size(b.dtype), dtype_size(out.dtype), t.warp_width, gemm);
  cost.core_cycles += times * c.cycles;
  const double rereads = std::max(0.0, times * c.b_bytes - counted);
  (bytes_of(b) <= static_cast<double>(t.shared_memory_per_block) ? cost.l2_bytes : cost.dram_bytes) += rereads;
}

// How long a block's product `op` in scalar code takes, run `times` times: its threads take its
// outputs (four adjacent ones where its rows hold whole float4s) in rounds of the block's threads,
// each output's sum a chain of k dependent steps. Where a tile has few outputs, this chain, not
// the FLOP rate, is the product's time: on an H200, x[8, 3584] · W over 128 blocks of [8, 28]
// tiles took 120 µs, where the scalar rate gives 31.
double scalar_matmul_chain_seconds(const BlockGraph &bg, const Operator &op, double times, int64_t threads,
                                   const targets::TargetProperties &t) {
  const Tensor &out = bg.tensor(op.outputs.at(0));
  const bool float4s = out.dims.back() % 4 == 0;
  const double items = static_cast<double>(num_elements(out.dims)) / (float4s ? 4 : 1);
  const double rounds = std::ceil(items / static_cast<double>(threads));
  const auto k = static_cast<double>(bg.tensor(op.inputs[0]).dims.back());
  // A GPU core's clock from its float32 rate: 128 lanes a compute unit, an FMA (2 FLOPs) a cycle.
  const double clock = t.vector_flops_float32 / (static_cast<double>(t.compute_units) * 128 * 2);
  return times * rounds * k * (float4s ? kFloat4StepCycles : kScalarStepCycles) / clock;
}

// FLOPs of one compute operator, split into matrix-unit and vector work. `b_counted`: the bytes
// of a matmul's B already charged as loads, where B is read in place (else the CPU model takes
// it as in cache); `gemm`: a CPU matmul goes to the plugin's small-GEMM.
void add_flops(const OperatorGraph &g, const Operator &op, double times, const targets::TargetProperties &t,
               KernelCost &cost, bool gemm, std::optional<double> b_counted = std::nullopt) {
  const Tensor &out = g.tensor(op.outputs.empty() ? op.inputs.at(0) : op.outputs[0]);
  const auto n = static_cast<double>(num_elements(out.dims));
  if (op.kind == OpKind::kMatmul) {
    const Dims &a = g.tensor(op.inputs[0]).dims;
    cost.matrix_flops += times * 2 * n * static_cast<double>(a.back());
    if (t.kind == targets::TargetKind::kCpu) {
      add_cpu_matmul(g, op, times, b_counted.value_or(INFINITY), gemm, t, cost);
    }
  } else if (is_unary(op.kind) || is_binary(op.kind)) {
    const bool transcendental = op.kind == OpKind::kExp || op.kind == OpKind::kSilu || op.kind == OpKind::kGelu ||
                                op.kind == OpKind::kSigmoid || op.kind == OpKind::kLog || op.kind == OpKind::kPow;
    cost.vector_flops += times * n * (transcendental ? 8 : 1);
  } else if (op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax || is_accumulator(op.kind)) {
    cost.vector_flops += times * static_cast<double>(num_elements(g.tensor(op.inputs[0]).dims));
  } else if (op.kind == OpKind::kRmsNorm) {
    cost.vector_flops += times * 4 * n;
  }
}

// Time at full device rate for `dram`, `l2` and `compute` seconds' worth of work done by
// `blocks` blocks at once: DRAM bandwidth saturates once half of the compute units issue loads;
// compute and L2 re-reads scale with the compute units in use (each takes in at most its share
// of the L2 bandwidth, so that a few blocks re-reading much data take long: docs/targets.md).
double wave_seconds(double dram, double l2, double compute, double blocks, const targets::TargetProperties &t) {
  const double busy = std::min(1.0, blocks / static_cast<double>(t.compute_units));
  return std::max(dram / std::min(1.0, 2 * busy) + l2 / busy, compute / busy);
}

// On a CPU target, the bytes a customized kernel's blocks move through their arena of tiles
// (backends/cpu: a block runs its operators one after another, each over whole tiles of floats):
// each loaded tile written, each computed tile written and read by its readers, each saved tile
// read. Tiles computed inside their reader's loop (inlined_tensors) and tiles read in place
// (`in_place`) take none. The caches serve these passes, at the L2's rate per core; a block's
// µGraph of many operators over large tiles is bound by them (a row softmax of 16 × 4096 rows a
// block: seven passes of 256 KB).
double cpu_arena_bytes(const BlockGraph &bg, double blocks, double iterations, const std::vector<bool> &in_place) {
  const std::vector<bool> inlined = inlined_tensors(bg);
  const auto times = [&](TensorId t) {
    return blocks * (bg.tensor(t).phase == LoopPhase::kPerIteration ? iterations : 1);
  };
  const auto floats = [&](TensorId t) { return 4 * static_cast<double>(num_elements(bg.tensor(t).dims)); };
  double bytes = 0;
  for (const Operator &op : bg.operators()) {
    for (TensorId out : op.outputs) {
      if (!inlined[static_cast<size_t>(out)] && !in_place[static_cast<size_t>(out)]) bytes += floats(out) * times(out);
    }
    if (op.kind == OpKind::kInputIterator) continue;
    // An accumulator reads each iteration's input; another operator its inputs as often as it runs.
    const TensorId at = op.outputs.empty() || is_accumulator(op.kind) ? op.inputs.at(0) : op.outputs[0];
    for (TensorId in : op.inputs) {
      if (!inlined[static_cast<size_t>(in)] && !in_place[static_cast<size_t>(in)]) bytes += floats(in) * times(at);
    }
  }
  return bytes;
}

// The element type a kernel's matrix work runs at: its operands', its first input's (a split
// loop's chunks write float32 partial sums of 16-bit products: at float32's peak they were
// estimated compute-bound, every split alike).
DType operand_dtype(const KernelGraph &g, const Operator &op) {
  return g.tensor(op.inputs.empty() ? op.outputs.at(0) : op.inputs[0]).dtype;
}

// Library kernels (slots 0) are taken to use the whole device; a customized kernel runs its
// blocks in waves of `slots`, the last one partial (wave quantization).
double kernel_seconds(KernelCost &c, const targets::TargetProperties &t, DType dtype) {
  const double dram = c.dram_bytes / t.memory_bandwidth, l2 = c.l2_bytes / t.l2_bandwidth, memory = dram + l2;
  const double peak = t.supports(dtype) ? t.peak_flops(dtype) : t.vector_flops_float32;
  const double matrix = t.kind == targets::TargetKind::kCpu
                            ? c.core_cycles / (cpu_cycles_per_second(t) * static_cast<double>(t.compute_units))
                            : c.matrix_flops / peak;
  const double compute =
      matrix + (c.vector_flops + c.scalar_matmul_flops * kScalarMatmulInstructions) / t.vector_flops_float32;
  if (c.slots == 0) return std::max(memory, compute) + c.launch_seconds;
  const auto blocks = static_cast<double>(c.blocks);
  const int64_t full_waves = c.blocks / c.slots, rest = c.blocks % c.slots;
  const double per_block = 1 / blocks;  // share of the work each block does
  const auto slots = static_cast<double>(c.slots);
  auto wave = [&](double n) {  // a wave of n blocks
    return wave_seconds(dram * n * per_block, l2 * n * per_block, compute * n * per_block, n, t);
  };
  double seconds = static_cast<double>(full_waves) * wave(slots);
  if (rest > 0) seconds += wave(static_cast<double>(rest));
  seconds += c.serial_seconds + c.shared_memory_seconds;
  c.utilization = std::max(memory, compute) / seconds;
  return seconds + c.launch_seconds;
}

// The bytes of a kernel that reads each of its distinct inputs and writes its outputs once.
double bytes_moved_once(const KernelGraph &g, const Operator &op) {
  double bytes = 0;
  std::vector<TensorId> seen;
  for (TensorId in : op.inputs) {
    if (std::find(seen.begin(), seen.end(), in) != seen.end()) continue;
    seen.push_back(in);
    bytes += bytes_of(g.tensor(in));
  }
  for (TensorId out : op.outputs) bytes += bytes_of(g.tensor(out));
  return bytes;
}

KernelCost predefined_kernel(const KernelGraph &g, const Operator &op, const targets::TargetProperties &t) {
  KernelCost c;
  c.launch_seconds = t.launch_overhead_seconds;
  c.name = op_name(op.kind);
  c.dram_bytes += bytes_moved_once(g, op);
  bool gemm = false;  // read by the CPU model only
  if (op.kind == OpKind::kMatmul && t.kind == targets::TargetKind::kCpu) {
    const Tensor &a = g.tensor(op.inputs[0]), &b = g.tensor(op.inputs[1]), &out = g.tensor(op.outputs.at(0));
    gemm = cpu_kernel_product_gemm(out.dims[out.dims.size() - 2], a.dims.back(), a.dtype != DType::kFloat32,
                                   b.dtype != DType::kFloat32, out.dtype != DType::kFloat32);
    if (!gemm) c.dram_bytes += (cpu_rows_walk(static_cast<double>(a.dims.back())) - 1) * bytes_of(b);
  }
  add_flops(g, op, 1, t, c, gemm,
            op.kind == OpKind::kMatmul ? std::optional<double>(bytes_of(g.tensor(op.inputs[1]))) : std::nullopt);
  return c;
}

// A customized operator its backend runs as one product of its whole inputs
// (BackendKernelEstimate::whole_product: a GEMM, the µGraph's grid and loop not kept): a
// kernel-level matmul of those tensors on the whole device, its inputs and outputs moved once,
// its operators' FLOPs those of the µGraph's over all blocks and iterations (its sum over the
// loop, the product's own).
KernelCost whole_product_kernel(const KernelGraph &g, const Operator &op, const targets::TargetProperties &t,
                                KernelCost c) {
  const BlockGraph &bg = *op.block_graph;
  const BlockGraphConfig &config = bg.config();
  const auto blocks = static_cast<double>(config.grid[0] * config.grid[1] * config.grid[2]);
  c.name += " as one product";
  c.slots = 0;
  c.waves = 1;
  c.dram_bytes += bytes_moved_once(g, op);
  for (const Operator &bop : bg.operators()) {
    // The sum over the loop is the product's own (in the matrix units' accumulators).
    if (bop.kind == OpKind::kInputIterator || bop.kind == OpKind::kOutputSaver || is_accumulator(bop.kind)) continue;
    const bool every_iteration = bg.tensor(bop.outputs[0]).phase == LoopPhase::kPerIteration;
    add_flops(bg, bop, blocks * (every_iteration ? static_cast<double>(config.forloop_range) : 1), t, c, false);
  }
  return c;
}

// Customized operator `index` of `g`, or an explanation of why it cannot run on the target.
KernelCost customized_kernel(const KernelGraph &g, size_t index, const targets::TargetProperties &t,
                             const BackendEstimates &backend, std::string &infeasible) {
  const Operator &op = g.operators()[index];
  const BlockGraph &bg = *op.block_graph;
  const BlockGraphConfig &config = bg.config();
  KernelCost c;
  c.launch_seconds = t.launch_overhead_seconds;
  c.blocks = config.grid[0] * config.grid[1] * config.grid[2];
  c.name = "customized " + std::to_string(config.grid[0]) + "x" + std::to_string(config.grid[1]) + "x" +
           std::to_string(config.grid[2]) + " loop " + std::to_string(config.forloop_range);
  const int64_t shared = bg.shared_memory_bytes();
  if (shared > t.shared_memory_per_block) {
    infeasible = c.name + " needs " + std::to_string(shared) + " bytes of shared memory per block; " + t.name +
                 " has " + std::to_string(t.shared_memory_per_block);
    return c;
  }
  if (config.block_threads > t.max_threads_per_block) {
    infeasible = c.name + " has " + std::to_string(config.block_threads) + " threads per block; " + t.name +
                 " allows " + std::to_string(t.max_threads_per_block);
    return c;
  }
  // The backend may know a tighter limit than the target's figures give (its code's registers).
  const BackendKernelEstimate said = backend ? backend(g, index) : BackendKernelEstimate{};
  if (said.whole_product.value_or(false)) return whole_product_kernel(g, op, t, c);
  const int64_t resident = std::max<int64_t>(
      1, std::min({t.max_blocks_per_compute_unit, t.threads_per_compute_unit / config.block_threads,
                   shared > 0 ? t.shared_memory_per_compute_unit / shared : t.max_blocks_per_compute_unit,
                   said.max_resident_blocks.value_or(t.max_blocks_per_compute_unit)}));
  c.slots = t.compute_units * resident;
  c.waves = (c.blocks + c.slots - 1) / c.slots;

  const auto blocks = static_cast<double>(c.blocks);
  const auto iterations = static_cast<double>(config.forloop_range);
  // A block runs its for-loop serially and every iteration waits at least once for its tile
  // loads and its barriers, a latency the bandwidth and FLOP terms cannot see. The backend says
  // how long with its code (loop_iteration_seconds); a kernel takes waves × iterations × that on
  // top of its data and arithmetic time (a block waiting does neither), which steers the search
  // away from long, narrow loops where it is large. A loop that
  // only adds up its input tiles (a split loop's sum of parts) has no iteration waiting for
  // another: its loads can all be in flight at once, one wait in all (the CUDA backend's sum of
  // 16 parts costs far less than 16 of its iterations). The backend may know better how its code
  // waits: the CUDA backend streams loops that only multiply weight tiles (gated_mlp's, 32
  // iterations) with every load in flight, one wait in all.
  const auto waits = static_cast<double>(said.loop_waits ? *said.loop_waits : bg.loop_waits());
  c.serial_seconds = static_cast<double>(c.waves) * waits * t.loop_iteration_seconds;
  // Code that keeps its tiles in shared memory between operators takes time to move them there,
  // which the bandwidth terms cannot see (the CUDA backend's generic code: attention with two
  // heads a block measured 2 to 3.5 times its estimate without it); only the backend knows how
  // its code moves them. A compute unit's blocks share its shared memory: they take turns.
  if (said.shared_memory_seconds) {
    const int64_t turns = (c.blocks + t.compute_units - 1) / t.compute_units;
    c.shared_memory_seconds = static_cast<double>(turns) * *said.shared_memory_seconds;
  }
  c.dependent_launch = said.dependent_launch_seconds;
  const auto &ops = bg.operators();
  // The CPU plugin reads some input tiles in place, from the kernel's tensor (cpu_in_place_tiles):
  // the bytes of their loads, by tile. Other targets copy every tile.
  const bool cpu = t.kind == targets::TargetKind::kCpu;
  const DType dtype = operand_dtype(g, op);
  const bool matrix_units = !cpu && t.supports(dtype) && t.peak_flops(dtype) > t.vector_flops_float32;
  const std::vector<bool> in_place = cpu ? cpu_in_place_tiles(bg) : std::vector<bool>(bg.num_tensors(), false);
  std::map<TensorId, double> in_place_loads;
  const auto read_as_b = [&](TensorId tile) {
    return std::any_of(ops.begin(), ops.end(),
                       [&](const Operator &o) { return o.kind == OpKind::kMatmul && o.inputs[1] == tile; });
  };
  double chain_seconds = 0;  // a block's products in scalar code, one after another
  for (size_t i = 0, input = 0; i < ops.size(); ++i) {
    const Operator &bop = ops[i];
    if (bop.kind == OpKind::kInputIterator) {
      // Every block loads its tiles; each kernel input comes from DRAM once, and the other loads
      // are re-reads that L2 serves when the input fits in it.
      const Tensor &tile = bg.tensor(bop.outputs[0]);
      const Tensor &whole = g.tensor(op.inputs[input++]);
      // Memory moves in units: device memory in its access units, L2 to the cores in cache lines.
      // A tile whose rows are shorter (a few columns of a weight) moves whole units all the same:
      // each of its rows takes whole access units from DRAM and the rest of its lines from L2.
      const double run = contiguous_run_bytes(tile, whole);
      const auto rounded = [run](int64_t unit) {
        const auto u = static_cast<double>(unit);
        return std::ceil(run / u) * u / run;
      };
      const double exact = bytes_of(tile) * blocks * (tile.phase == LoopPhase::kPerIteration ? iterations : 1);
      const double loads = exact * rounded(t.cache_line()), from_memory = rounded(t.memory_access());
      const double unique = bytes_of(whole), rereads = std::max(0.0, exact - unique);
      double streams = 1;
      if (in_place[static_cast<size_t>(bop.outputs[0])]) {
        in_place_loads[bop.outputs[0]] = loads;
        if (tile.dims.size() >= 2 && read_as_b(bop.outputs[0])) {
          streams = cpu_rows_walk(static_cast<double>(tile.dims[tile.dims.size() - 2]));
        }
      }
      c.dram_bytes += unique * from_memory * streams;
      if (unique <= static_cast<double>(t.l2_bytes)) {
        c.l2_bytes += rereads;
      } else {
        const double cached = rereads * same_wave_rereads(config, bop.attributes.grid_map, c.slots, c.waves);
        c.l2_bytes += cached;
        c.dram_bytes += (rereads - cached) * from_memory;
      }
      c.l2_bytes += loads - exact * from_memory;
    } else if (bop.kind != OpKind::kOutputSaver) {
      const LoopPhase phase = bg.tensor(bop.outputs.empty() ? bop.inputs[0] : bop.outputs[0]).phase;
      const bool every_iteration = phase == LoopPhase::kPerIteration || is_accumulator(bop.kind);
      std::optional<double> b_counted;
      bool gemm = false;
      if (bop.kind == OpKind::kMatmul) {
        if (in_place_loads.count(bop.inputs[1])) b_counted = in_place_loads[bop.inputs[1]];
        // A block's product goes to the small-GEMM unless an operand is a 16-bit tile read in place.
        gemm = std::none_of(bop.inputs.begin(), bop.inputs.end(), [&](TensorId in) {
          return in_place[static_cast<size_t>(in)] && bg.tensor(in).dtype != DType::kFloat32;
        });
      }
      const double matrix_before = c.matrix_flops;
      add_flops(bg, bop, blocks * (every_iteration ? iterations : 1), t, c, gemm, b_counted);
      // A GPU's matrix units take a block's product only in whole tiles of their n columns (the
      // CUDA generator's tensor-core paths need n % 8 == 0): other products run as scalar code.
      // Where the kernel's dtype has no matrix rate above the vector one (float32 on NVIDIA),
      // every product is scalar code at that rate already.
      const int64_t unit_n = t.matrix_unit[1];
      if (bop.kind == OpKind::kMatmul && matrix_units && unit_n > 0 &&
          bg.tensor(bop.outputs[0]).dims.back() % unit_n != 0) {
        c.scalar_matmul_flops += c.matrix_flops - matrix_before;
        c.matrix_flops = matrix_before;
        chain_seconds +=
            scalar_matmul_chain_seconds(bg, bop, every_iteration ? iterations : 1, config.block_threads, t);
      }
    }
  }
  c.serial_seconds += static_cast<double>(c.waves) * chain_seconds;
  for (TensorId out : op.outputs) c.dram_bytes += bytes_of(g.tensor(out));
  if (cpu) c.l2_bytes += cpu_arena_bytes(bg, blocks, iterations, in_place);
  return c;
}

}  // namespace

CostEstimate estimate_cost(const KernelGraph &graph, const targets::TargetProperties &target,
                           const BackendEstimates &backend) {
  CostEstimate estimate;
  bool after_customized = false;  // the kernel before is a customized one
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    const Operator &op = graph.operators()[i];
    if (op.kind == OpKind::kInput || aliases_its_input(graph, op)) continue;  // no kernel runs
    KernelCost kernel;
    if (op.kind == OpKind::kCustomized) {
      std::string infeasible;
      kernel = customized_kernel(graph, i, target, backend, infeasible);
      if (!infeasible.empty()) {
        estimate.feasible = false;
        estimate.infeasible_reason = infeasible;
        estimate.seconds = INFINITY;
        return estimate;
      }
      // A launch the backend overlaps with the customized kernel before it (the CUDA plugin's
      // programmatic dependent launch: a split loop's sum of parts behind its chunks).
      if (after_customized && kernel.dependent_launch) kernel.launch_seconds = *kernel.dependent_launch;
    } else {
      kernel = predefined_kernel(graph, op, target);
    }
    after_customized = op.kind == OpKind::kCustomized;
    kernel.seconds = kernel_seconds(kernel, target, operand_dtype(graph, op));
    estimate.seconds += kernel.seconds;
    estimate.kernels.push_back(std::move(kernel));
  }
  return estimate;
}

}  // namespace yirage::search
