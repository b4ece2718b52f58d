#include "cuda/codegen/cuda_persistent.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_matmul.hpp"
#include "cuda/codegen/cuda_ugraph.hpp"
#include "ir/block_graph.hpp"
#include "ir/ragged_tiles.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {
namespace {

constexpr int64_t kAlignment = 256;    // of the workspace's parts, in bytes
constexpr int64_t kControlWords = 64;  // the control words' part: 256 bytes
constexpr int64_t kCountsAt = 4;       // each operator's count of finished blocks, from word 4 on
const char *const kAxes[3] = {"x", "y", "z"};

int64_t round_up(int64_t n, int64_t to) {
  return (n + to - 1) / to * to;
}

[[noreturn]] void unsupported(const std::string &why) {
  throw Error(ErrorCode::kUnsupported, "cuda: a program of several operators in one launch: " + why);
}

int64_t blocks_of(const BlockGraph &bg) {
  const auto &g = bg.config().grid;
  return g[0] * g[1] * g[2];
}

// Where an operator reads a tensor that an earlier operator of the program writes.
struct Dependency {
  size_t producer = 0;  // operator index in the program (0-based, inputs not counted)
  size_t saver = 0;     // the producer's output saver writing the tensor
  size_t reader = 0;    // the consumer's input iterator reading it
};

// The producer blocks whose tiles block (yr_bx, yr_by, yr_bz) of `consumer` reads through input
// iterator `reader`, per producer grid axis: C++ expressions of the first and last, inclusive. A
// producer axis that lays out the tensor's dim `d` in tiles of s elements: its blocks lo..hi cover
// what the consumer reads along `d` (the whole dim where no consumer axis splits it). An axis of a
// per-iteration saver (its loop lays tiles out too) is waited for whole.
std::array<std::pair<std::string, std::string>, 3> producer_box(const BlockGraph &producer, const Operator &saver,
                                                                const BlockGraph &consumer, const Operator &reader) {
  std::array<std::pair<std::string, std::string>, 3> box;
  for (size_t a = 0; a < 3; ++a) {
    const int64_t blocks = producer.config().grid[a];
    box[a] = {"0", std::to_string(blocks - 1)};
    const int32_t dim = saver.attributes.grid_map[a];
    if (blocks == 1 || dim < 0 || saver.attributes.forloop_dim == dim) continue;
    const int64_t written = block_stride(producer, saver, static_cast<size_t>(dim));
    for (size_t c = 0; c < 3; ++c) {
      if (consumer.config().grid[c] == 1 || reader.attributes.grid_map[c] != dim) continue;
      const std::string read = std::to_string(block_stride(consumer, reader, static_cast<size_t>(dim)));
      const std::string start = "yr_b" + std::string(kAxes[c]) + " * " + read;
      const std::string w = std::to_string(written);
      box[a] = {"(" + start + ") / " + w,
                "yr_min64(" + std::to_string(blocks - 1) + ", (" + start + " + " + read + " - 1) / " + w + ")"};
    }
  }
  return box;
}

// The wait of operator `k`'s block for the tiles of operator `producer` (its tasks from
// `first_task` on, on grid `grid`) in `box` that it reads as input `input`. For all of them, its
// first thread waits for the producer's count of finished blocks; for some, the block's threads
// share their flags (one thread reading them in turn, each read a trip to L2, made the chains of
// benchmarks/gpu/persistent.py up to twice as slow). A wait that times out abandons the launch
// (yr_ok false). `hang`: the watchdog's test wait, for a value no launch writes.
void emit_wait(Printer &p, const std::array<std::pair<std::string, std::string>, 3> &box,
               const std::array<int64_t, 3> &grid, int64_t first_task, const std::string &threads, size_t k,
               size_t producer, size_t input, bool hang) {
  p.open("");
  const bool whole = box[0] == std::pair<std::string, std::string>{"0", std::to_string(grid[0] - 1)} &&
                     box[1] == std::pair<std::string, std::string>{"0", std::to_string(grid[1] - 1)} &&
                     box[2] == std::pair<std::string, std::string>{"0", std::to_string(grid[2] - 1)};
  if (whole) {
    const std::string count = "yr_epoch * " + std::to_string(grid[0] * grid[1] * grid[2]) + "u";
    p.line("// All of operator " + std::to_string(producer) + "'s tiles, for input " + std::to_string(input) + ".");
    p.open("if (threadIdx.x == 0 && yr_ok && !yr_wait_word(yr_ctl + " +
           std::to_string(kCountsAt + static_cast<int64_t>(producer)) + ", " + count + (hang ? " + 1u" : "") +
           ", yr_ctl + 3, yr_deadline))");
    p.line("yr_ok = false;");
    p.line("yr_abandon(yr_ctl + 3, yr_watch, yr_task, " + std::to_string(k) + "u, " + std::to_string(producer) +
           "u, 0xffffffffu);");
    p.close();
    p.close();
    return;
  }
  p.line("// Operator " + std::to_string(producer) + "'s tiles of input " + std::to_string(input) + ".");
  p.line("const int64_t x0 = " + box[0].first + ", x1 = " + box[0].second + ";");
  p.line("const int64_t y0 = " + box[1].first + ", y1 = " + box[1].second + ";");
  p.line("const int64_t z0 = " + box[2].first + ", z1 = " + box[2].second + ";");
  p.line("const int64_t nx = x1 - x0 + 1, ny = y1 - y0 + 1, n = nx * ny * (z1 - z0 + 1);");
  p.open("for (int64_t i = threadIdx.x; i < n && yr_ok; i += " + threads + ")");
  p.line("const int64_t tile = ((z0 + i / (nx * ny)) * " + std::to_string(grid[1]) + " + y0 + i / nx % ny) * " +
         std::to_string(grid[0]) + " + x0 + i % nx;");
  p.open("if (!yr_wait_word(yr_done + " + std::to_string(first_task) + " + tile, " +
         (hang ? "yr_epoch + 1u" : "yr_epoch") + ", yr_ctl + 3, yr_deadline))");
  p.line("yr_ok = false;");
  p.line("yr_abandon(yr_ctl + 3, yr_watch, yr_task, " + std::to_string(k) + "u, " + std::to_string(producer) +
         "u, static_cast<unsigned>(tile));");
  p.close();
  p.close();
  p.close();
}

// A µGraph's weight-product code (ugraph_weight_products), where it is one.
struct WeightProductBody {
  std::optional<MatmulLaunch> launch;
  Printer before{3}, body{3};
};

}  // namespace

std::string persistent_helpers() {
  return R"(// The persistent kernel's flags (cuda_persistent.hpp): relaxed loads, release stores, the clock.
static __device__ __forceinline__ int64_t yr_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned yr_ld_relaxed(const unsigned *p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ void yr_st_release(unsigned *p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
static __device__ __forceinline__ unsigned long long yr_clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Waits until *word (a tile's flag, an operator's count) holds `value` (relaxed reads: the caller
// fences once after all its waits); false where the launch was abandoned (*abandoned set by
// another block) or `deadline` (yr_clock_ns) passed first.
static __device__ bool yr_wait_word(const unsigned *word, unsigned value, const unsigned *abandoned,
                                    unsigned long long deadline) {
  while (yr_ld_relaxed(word) != value) {
    if (*reinterpret_cast<const volatile unsigned *>(abandoned) != 0u || yr_clock_ns() > deadline) return false;
    __nanosleep(100);
  }
  return true;
}
// Abandons the launch; the first block to do so says why in the plugin's watch record.
static __device__ void yr_abandon(unsigned *abandoned, unsigned *watch, unsigned task, unsigned op,
                                  unsigned waited_for, unsigned tile) {
  if (atomicCAS(abandoned, 0u, 1u) != 0u) return;
  volatile unsigned *const w = watch;
  w[1] = task;
  w[2] = op;
  w[3] = waited_for;
  w[4] = tile;
  __threadfence_system();
  w[0] = 1u;
  __threadfence_system();
}
)";
}

PersistentKernel emit_persistent(Printer &before_wait, Printer &out, const serialize::KernelProgram &program,
                                 const CudaTarget &target) {
  if (target.dialect != CudaDialect::kCuda || target.compute_capability < 70) {
    unsupported("a persistent kernel needs sm_70 or newer (relaxed loads at gpu scope, __nanosleep)");
  }
  const KernelGraph &g = program.graph;
  const size_t first = g.inputs().size();
  std::vector<const Operator *> ops;
  for (size_t i = first; i < g.operators().size(); ++i) {
    const Operator &op = g.operators()[i];
    if (op.kind != OpKind::kCustomized) {
      unsupported("operator " + std::to_string(i - first) + " (" + op_name(op.kind) +
                  ") is not a µGraph: one launch runs only µGraphs (cuda_persistent.hpp)");
    }
    ops.push_back(&op);
  }
  if (static_cast<int64_t>(ops.size()) > kControlWords - kCountsAt) {
    unsupported(std::to_string(ops.size()) + " operators: a persistent kernel counts at most " +
                std::to_string(kControlWords - kCountsAt));
  }

  // Where each tensor lives: the program's inputs and outputs are the kernel's parameters, the
  // tensors only the program reads are in the workspace. Which operator writes each.
  PersistentKernel kernel;
  const int64_t flags_at = kControlWords * 4;
  std::vector<int64_t> first_task;
  for (const Operator *op : ops) {
    first_task.push_back(kernel.tasks);
    kernel.tasks += blocks_of(*op->block_graph);
    kernel.widest = std::max(kernel.widest, blocks_of(*op->block_graph));
  }
  kernel.workspace_bytes = flags_at + round_up(kernel.tasks * 4, kAlignment);
  std::map<TensorId, std::string> place;
  std::map<TensorId, std::pair<size_t, size_t>> written_by;  // operator, output index
  for (size_t i = 0; i < g.inputs().size(); ++i) place[g.inputs()[i]] = "yr_in" + std::to_string(i);
  for (size_t i = 0; i < g.outputs().size(); ++i) place[g.outputs()[i]] = "yr_out" + std::to_string(i);
  for (size_t k = 0; k < ops.size(); ++k) {
    for (size_t o = 0; o < ops[k]->outputs.size(); ++o) {
      const TensorId t = ops[k]->outputs[o];
      written_by[t] = {k, o};
      if (place.count(t) != 0) continue;
      place[t] = "(yr_ws + " + std::to_string(kernel.workspace_bytes) + ")";
      kernel.workspace_bytes += round_up(static_cast<int64_t>(tensor_bytes(g.tensor(t))), kAlignment);
    }
  }

  // A µGraph that is weight products runs their own code (cuda_matmul.hpp: every warp streams
  // its slice of k), any other the general body. One thread count for every body: the most the
  // weight products take where there are any (the general bodies take any count), else the most
  // the general bodies ask for; weight products of another count take the general body.
  std::vector<UGraphBodySettings> settings;
  std::vector<WeightProductBody> products;
  int64_t product_threads = 0;
  for (const Operator *op : ops) {
    std::vector<DType> input_dtypes;
    std::vector<Ref> in, out;
    for (size_t i = 0; i < op->inputs.size(); ++i) {
      input_dtypes.push_back(g.tensor(op->inputs[i]).dtype);
      in.push_back({"in" + std::to_string(i), g.tensor(op->inputs[i]).dims, {}});
    }
    for (size_t o = 0; o < op->outputs.size(); ++o) {
      out.push_back({"out" + std::to_string(o), g.tensor(op->outputs[o]).dims, {}});
    }
    settings.push_back(ugraph_body_settings(*op->block_graph, input_dtypes, target));
    kernel.threads = std::max(kernel.threads, settings.back().threads);
    WeightProductBody made;
    made.launch = ugraph_weight_products(made.before, made.body, *op->block_graph, in, out, target, "yr_b");
    if (made.launch) product_threads = std::max(product_threads, made.launch->threads);
    products.push_back(std::move(made));
  }
  if (product_threads > 0) kernel.threads = product_threads;
  const auto runs_products = [&](size_t k) {
    const std::optional<MatmulLaunch> &launch = products[k].launch;
    return launch && launch->threads == kernel.threads && launch->shared_bytes == 0;
  };
  const std::string T = std::to_string(kernel.threads), total = std::to_string(kernel.tasks);
  // An operator's tensors bound to their places, as its body names them (in0…, out0…).
  const auto bind = [&](Printer &q, const Operator &op) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const std::string type = element_type(g.tensor(op.inputs[i]).dtype);
      q.line("const " + type + " *const in" + std::to_string(i) + " = reinterpret_cast<const " + type + " *>(" +
             place.at(op.inputs[i]) + ");");
    }
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      const std::string type = element_type(g.tensor(op.outputs[o]).dtype);
      q.line(type + " *const out" + std::to_string(o) + " = reinterpret_cast<" + type + " *>(" +
             place.at(op.outputs[o]) + ");");
    }
  };
  // What the first operator's own kernel does before it waits for the kernel before it, where it
  // is weight products (their first rows prefetched into L2), here too, for the task the block
  // most likely takes (blocks take tasks about in their order): a launch after another kernel
  // then streams as the operator's own kernel would.
  if (runs_products(0)) {
    before_wait.open("if (blockIdx.x < " + std::to_string(blocks_of(*ops[0]->block_graph)) + ")");
    before_wait.line("const int64_t yr_b = blockIdx.x;");
    bind(before_wait, *ops[0]);
    before_wait.text(products[0].before.str());
    before_wait.close();
  }

  // The task loop is printed first: the task's index lives in the dynamic arena after the bodies'
  // memory, whose size the bodies tell.
  Printer loop(1);
  Printer &p = loop;
  p.open("for (;;)");
  p.open("if (threadIdx.x == 0)");
  p.line("yr_task_at = *reinterpret_cast<volatile unsigned *>(yr_ctl + 3) != 0u ? " + total +
         "u : atomicAdd(yr_ctl, 1u);");
  p.close();
  p.line("__syncthreads();");
  p.line("const unsigned yr_task = yr_task_at;");
  p.line("if (yr_task >= " + total + "u) break;");
  p.line("unsigned yr_op = 0;");
  int64_t arena = 0;
  bool hang_planted = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    const Operator &op = *ops[k];
    const BlockGraph &bg = *op.block_graph;
    const auto &grid = bg.config().grid;
    const std::vector<int32_t> readers = bg.operator_indices(OpKind::kInputIterator);
    p.open(std::string(k == 0 ? "if" : "else if") + " (yr_task < " + std::to_string(first_task[k] + blocks_of(bg)) +
           "u)");
    p.line("// Operator " + std::to_string(k) + ": block yr_task - " + std::to_string(first_task[k]) + ".");
    p.line("yr_op = " + std::to_string(k) + "u;");
    p.line("const int64_t yr_b = yr_task - " + std::to_string(first_task[k]) + ";");
    p.line("const int64_t yr_bx = yr_b % " + std::to_string(grid[0]) + ", yr_by = yr_b / " + std::to_string(grid[0]) +
           " % " + std::to_string(grid[1]) + ", yr_bz = yr_b / " + std::to_string(grid[0] * grid[1]) + ";");
    p.line("(void)yr_bx; (void)yr_by; (void)yr_bz;");
    bool reads_written = false;
    for (TensorId t : op.inputs) reads_written = reads_written || written_by.count(t) != 0;
    std::vector<DType> output_dtypes;
    for (TensorId t : op.outputs) output_dtypes.push_back(g.tensor(t).dtype);
    p.open("");
    bind(p, op);
    if (reads_written) {
      // Tiles other blocks of this launch wrote are read through L2, never the non-coherent path.
      p.line("const auto yr_stream16 = [](const auto *p) { return yr_coherent16(p); };");
      p.line("(void)yr_stream16;");
    }
    const bool weight_products = runs_products(k);
    if (weight_products) {
      // What the weight products' kernel does before it waits for the kernel before it (their
      // weights' first rows prefetched into L2) comes before the waits here too.
      p.line("// Weight products: every warp streams its slice of k.");
      p.text(products[k].before.str());
    }
    // The tiles it reads that earlier operators write.
    if (reads_written) {
      p.line("bool yr_ok = true;");
      p.line("const unsigned long long yr_deadline = yr_clock_ns() + " + std::to_string(target.wait_timeout_ms) +
             "ull * 1000000ull;");
    }
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const auto found = written_by.find(op.inputs[i]);
      if (found == written_by.end()) continue;
      const auto [producer, saver_index] = found->second;
      const BlockGraph &pg = *ops[producer]->block_graph;
      const Operator &saver =
          pg.operators()[static_cast<size_t>(pg.operator_indices(OpKind::kOutputSaver).at(saver_index))];
      const Operator &reader = bg.operators()[static_cast<size_t>(readers.at(i))];
      // YIRAGE_CUDA_TEST_HANG: the first wait is for a flag no launch sets (the watchdog's test).
      const bool hang = target.hang_for_tests && !hang_planted;
      hang_planted = hang_planted || target.hang_for_tests;
      emit_wait(p, producer_box(pg, saver, bg, reader), pg.config().grid, first_task[producer], T, k, producer, i,
                hang);
    }
    if (reads_written) {
      p.line("__threadfence();");
      p.line("if (__syncthreads_or(!yr_ok)) break;");
    }
    if (weight_products) {
      p.text(products[k].body.str());
    } else {
      BodyPlacement placement;
      placement.block = {"yr_bx", "yr_by", "yr_bz"};
      placement.smem_offset_floats = 0;
      const CustomizedBody made = emit_customized_body(p, bg, kernel.threads, output_dtypes, settings[k].tensor_cores,
                                                       settings[k].target, placement);
      if (made.threads != kernel.threads) {
        unsupported("operator " + std::to_string(k) + "'s body takes " + std::to_string(made.threads) +
                    " threads a block, the others' " + T);
      }
      // The next task's body reuses the shared memory, where mbarriers may not be left.
      if (made.mbarriers) {
        unsupported("operator " + std::to_string(k) +
                    "'s body keeps mbarriers in shared memory (warp-specialized loads), which the next task "
                    "would reuse");
      }
      arena = std::max(arena, made.shared_bytes);
    }
    p.close();
    p.close();
  }
  // The task is done: its flag and its operator's count say so, once every thread's writes are
  // visible.
  p.line("__syncthreads();");
  p.open("if (threadIdx.x == 0)");
  p.line("__threadfence();");
  p.line("yr_st_release(yr_done + yr_task, yr_epoch);");
  p.line("atomicAdd(yr_ctl + " + std::to_string(kCountsAt) + " + yr_op, 1u);");
  p.close();
  p.close();
  // The block is done; the last one readies the workspace for the next launch.
  p.open("if (threadIdx.x == 0)");
  p.line("__threadfence();");
  p.open("if (atomicAdd(yr_ctl + 1, 1u) == gridDim.x * gridDim.y * gridDim.z - 1u)");
  p.line("__threadfence();  // every other block's atomics before these stores");
  p.line("yr_ctl[0] = 0u;");
  p.line("yr_ctl[1] = 0u;");
  p.line("yr_ctl[3] = 0u;");
  p.line("yr_ctl[2] = yr_epoch;");
  // The counts as a whole launch leaves them (one that was abandoned left them short).
  for (size_t k = 0; k < ops.size(); ++k) {
    p.line("yr_ctl[" + std::to_string(kCountsAt + static_cast<int64_t>(k)) + "] = yr_epoch * " +
           std::to_string(blocks_of(*ops[k]->block_graph)) + "u;");
  }
  p.line("__threadfence();");
  p.close();
  p.close();
  const int64_t task_at = round_up(arena, 4) / 4;
  kernel.shared_bytes = (task_at + 1) * 4;
  out.line("extern __shared__ __align__(1024) float yr_smem[];");
  out.line(
      "unsigned *const yr_ctl = reinterpret_cast<unsigned *>(yr_ws);  // next task, blocks done, epoch, abandoned");
  out.line("unsigned *const yr_done = yr_ctl + " + std::to_string(kControlWords) + ";  // a flag per task");
  out.line("const unsigned yr_epoch = *reinterpret_cast<volatile unsigned *>(yr_ctl + 2) + 1u;");
  out.line("unsigned &yr_task_at = *reinterpret_cast<unsigned *>(yr_smem + " + std::to_string(task_at) + ");");
  out.text(loop.str());
  return kernel;
}

}  // namespace yirage::codegen::cuda
