#include "cuda/codegen/cuda_persistent.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_ugraph.hpp"
#include "ir/block_graph.hpp"
#include "ir/ragged_tiles.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {
namespace {

constexpr int64_t kAlignment = 256;    // of the workspace's parts, in bytes
constexpr int64_t kControlWords = 64;  // the control words' part: 256 bytes
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

}  // namespace

std::string persistent_helpers() {
  return R"(// The persistent kernel's flags (cuda_persistent.hpp): acquire loads, release stores, the clock.
static __device__ __forceinline__ int64_t yr_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned yr_ld_acquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
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
// Waits until the tile's flag holds `epoch`; false where the launch was abandoned (*abandoned set
// by another block) or `deadline` (yr_clock_ns) passed first.
static __device__ bool yr_wait_tile(const unsigned *flag, unsigned epoch, const unsigned *abandoned,
                                    unsigned long long deadline) {
  while (yr_ld_acquire(flag) != epoch) {
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

PersistentKernel emit_persistent(Printer &out, const serialize::KernelProgram &program, const CudaTarget &target) {
  if (target.dialect != CudaDialect::kCuda || target.compute_capability < 70) {
    unsupported("a persistent kernel needs sm_70 or newer (acquire loads, __nanosleep)");
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

  // Where each tensor lives: the program's inputs and outputs are the kernel's parameters, the
  // tensors only the program reads are in the workspace. Which operator writes each.
  PersistentKernel kernel;
  const int64_t flags_at = kControlWords * 4;
  std::vector<int64_t> first_task;
  for (const Operator *op : ops) {
    first_task.push_back(kernel.tasks);
    kernel.tasks += blocks_of(*op->block_graph);
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

  // One thread count for every body: the most any asks for.
  std::vector<UGraphBodySettings> settings;
  for (const Operator *op : ops) {
    std::vector<DType> input_dtypes;
    for (TensorId t : op->inputs) input_dtypes.push_back(g.tensor(t).dtype);
    settings.push_back(ugraph_body_settings(*op->block_graph, input_dtypes, target));
    kernel.threads = std::max(kernel.threads, settings.back().threads);
  }
  const std::string T = std::to_string(kernel.threads), total = std::to_string(kernel.tasks);

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
    p.line("const int64_t yr_b = yr_task - " + std::to_string(first_task[k]) + ";");
    p.line("const int64_t yr_bx = yr_b % " + std::to_string(grid[0]) + ", yr_by = yr_b / " + std::to_string(grid[0]) +
           " % " + std::to_string(grid[1]) + ", yr_bz = yr_b / " + std::to_string(grid[0] * grid[1]) + ";");
    p.line("(void)yr_bx; (void)yr_by; (void)yr_bz;");
    // The tiles it reads that earlier operators write.
    bool reads_written = false;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const auto found = written_by.find(op.inputs[i]);
      if (found == written_by.end()) continue;
      if (!reads_written) {
        p.line("bool yr_ok = true;");
        p.line("const unsigned long long yr_deadline = yr_clock_ns() + " + std::to_string(target.wait_timeout_ms) +
               "ull * 1000000ull;");
      }
      reads_written = true;
      const auto [producer, saver_index] = found->second;
      const BlockGraph &pg = *ops[producer]->block_graph;
      const Operator &saver =
          pg.operators()[static_cast<size_t>(pg.operator_indices(OpKind::kOutputSaver).at(saver_index))];
      const Operator &reader = bg.operators()[static_cast<size_t>(readers.at(i))];
      const auto box = producer_box(pg, saver, bg, reader);
      const auto &pgrid = pg.config().grid;
      p.open("");
      p.line("// Operator " + std::to_string(producer) + "'s tiles of input " + std::to_string(i) + ".");
      p.line("const int64_t x0 = " + box[0].first + ", x1 = " + box[0].second + ";");
      p.line("const int64_t y0 = " + box[1].first + ", y1 = " + box[1].second + ";");
      p.line("const int64_t z0 = " + box[2].first + ", z1 = " + box[2].second + ";");
      p.line("const int64_t nx = x1 - x0 + 1, ny = y1 - y0 + 1, n = nx * ny * (z1 - z0 + 1);");
      p.open("for (int64_t i = threadIdx.x; i < n && yr_ok; i += " + T + ")");
      p.line("const int64_t tile = ((z0 + i / (nx * ny)) * " + std::to_string(pgrid[1]) + " + y0 + i / nx % ny) * " +
             std::to_string(pgrid[0]) + " + x0 + i % nx;");
      // YIRAGE_CUDA_TEST_HANG: the first wait is for a flag no launch sets (the watchdog's test).
      const std::string epoch = target.hang_for_tests && !hang_planted ? "yr_epoch + 1u" : "yr_epoch";
      hang_planted = hang_planted || target.hang_for_tests;
      p.open("if (!yr_wait_tile(yr_done + " + std::to_string(first_task[producer]) + " + tile, " + epoch +
             ", yr_ctl + 3, yr_deadline))");
      p.line("yr_ok = false;");
      p.line("yr_abandon(yr_ctl + 3, yr_watch, yr_task, " + std::to_string(k) + "u, " + std::to_string(producer) +
             "u, static_cast<unsigned>(tile));");
      p.close();
      p.close();
      p.close();
    }
    if (reads_written) {
      p.line("__threadfence();");
      p.line("if (__syncthreads_or(!yr_ok)) break;");
    }
    // The body, its tensors bound to their places.
    p.open("");
    std::vector<DType> output_dtypes;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const Tensor &t = g.tensor(op.inputs[i]);
      const std::string type = element_type(t.dtype);
      const std::string &at = place.at(op.inputs[i]);
      p.line("const " + type + " *const in" + std::to_string(i) + " = reinterpret_cast<const " + type + " *>(" + at +
             ");");
    }
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      const Tensor &t = g.tensor(op.outputs[o]);
      output_dtypes.push_back(t.dtype);
      const std::string type = element_type(t.dtype);
      p.line(type + " *const out" + std::to_string(o) + " = reinterpret_cast<" + type + " *>(" +
             place.at(op.outputs[o]) + ");");
    }
    if (reads_written) {
      // Tiles other blocks of this launch wrote are read through L2, never the non-coherent path.
      p.line("const auto yr_stream16 = [](const auto *p) { return yr_coherent16(p); };");
      p.line("(void)yr_stream16;");
    }
    BodyPlacement placement;
    placement.block = {"yr_bx", "yr_by", "yr_bz"};
    placement.smem_offset_floats = 0;
    const CustomizedBody made = emit_customized_body(p, bg, kernel.threads, output_dtypes, settings[k].tensor_cores,
                                                     settings[k].target, placement);
    if (made.threads != kernel.threads) {
      unsupported("operator " + std::to_string(k) + "'s body takes " + std::to_string(made.threads) +
                  " threads a block, the others' " + T);
    }
    arena = std::max(arena, made.shared_bytes);
    p.close();
    p.close();
  }
  // The task is done: its flag says so, once every thread's writes are visible.
  p.line("__syncthreads();");
  p.open("if (threadIdx.x == 0)");
  p.line("__threadfence();");
  p.line("yr_st_release(yr_done + yr_task, yr_epoch);");
  p.close();
  p.close();
  // The block is done; the last one readies the workspace for the next launch.
  p.open("if (threadIdx.x == 0)");
  p.line("__threadfence();");
  p.open("if (atomicAdd(yr_ctl + 1, 1u) == gridDim.x * gridDim.y * gridDim.z - 1u)");
  p.line("yr_ctl[0] = 0u;");
  p.line("yr_ctl[1] = 0u;");
  p.line("yr_ctl[3] = 0u;");
  p.line("yr_ctl[2] = yr_epoch;");
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
