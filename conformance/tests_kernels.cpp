// Kernel tests: every kernel-level operator in every dtype on random shapes (odd sizes, size-1
// dims), the six fused benchmark µGraphs, Mirage's sum_todimx accumulator, rms_norm on rows near
// the dtypes' limits, concurrent compiles and launches, and timers. Each result is checked against the reference
// executor (float64) on fresh random inputs, outputs poisoned first, guard bytes after every output, inputs read back
// unchanged.
#include <functional>
#include <optional>
#include <random>
#include <thread>

#include "benchmark_ugraphs.hpp"
#include "ragged_graphs.hpp"
#include "runtime/measure.hpp"
#include "search/loop_split.hpp"
#include "serialize/kernel_program.hpp"
#include "suite.hpp"

namespace yirage::conformance {
namespace {

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

// FNV-1a of the test's name: every test draws its own shapes and values, the same in every run.
uint64_t seed_of(const std::string &name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Asks the plugin whether it supports each operator of `graph`: UNSUPPORTED ends the test as
// NotSupported with the plugin's reason; any other error fails it.
void need_support(Session &s, const KernelGraph &graph) {
  for (size_t i : serialize::kernel_operators(graph)) {
    const std::vector<uint8_t> program = serialize::kernel_program_to_bytes(serialize::make_kernel_program(graph, i));
    yirage_backend_error error = new_error();
    const yirage_status status = s.api().supports(s.instance(), s.device(), program.data(), program.size(), &error);
    if (status == YIRAGE_ERROR_UNSUPPORTED) not_supported(error.message);
    expect_ok(status, error, std::string("supports(") + op_name(graph.operators()[i].kind) + ")");
  }
}

runtime::MeasureOptions checked_options(uint64_t seed) {
  runtime::MeasureOptions options;
  options.seed = seed;
  options.guard_bytes = 64;
  options.check_inputs_unchanged = true;
  return options;
}

// Runs `candidate` on the device and compares it with `reference` evaluated by the executor
// (with the Measurer's range checks where the reference has an rms_norm: runtime/measure.hpp).
void check_graph(Session &s, const KernelGraph &reference, const KernelGraph &candidate, const std::string &what,
                 const runtime::MeasureOptions &options) {
  need_support(s, candidate);
  runtime::Measurer measurer(s.plugin(), s.device(), reference, options);
  const runtime::Measurement m = measurer.measure(candidate, false);
  expect(m.correct, what + ": " + m.error);
}
void check_graph(Session &s, const KernelGraph &reference, const KernelGraph &candidate, uint64_t seed,
                 const std::string &what) {
  check_graph(s, reference, candidate, what, checked_options(seed));
}

// ---- operators on random shapes ----

// A random size in [lo, hi] that is not a power of two.
int64_t odd_size(std::mt19937_64 &rng, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> pick(lo, hi);
  for (;;) {
    const int64_t n = pick(rng);
    if ((n & (n - 1)) != 0) return n;
  }
}

// Builds a one-operator graph; `variant` 0 draws odd sizes, 1 uses size-1 dims.
using Builder = std::function<void(KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng)>;

struct OpCase {
  const char *name;
  Builder build;
};

Builder unary_case(std::function<TensorId(KernelGraph &, TensorId)> op) {
  return [op](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
    const Dims dims = variant == 0 ? Dims{odd_size(rng, 2, 9), odd_size(rng, 3, 40), odd_size(rng, 3, 70)}
                                   : Dims{1, odd_size(rng, 3, 99), 1};
    g.mark_output(op(g, g.new_input(dims, dt)));
  };
}

Builder binary_case(OpKind kind) {
  return [kind](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
    const int64_t p = odd_size(rng, 2, 9), q = odd_size(rng, 3, 30), r = odd_size(rng, 3, 70);
    // Broadcasting on both sides, then a size-1 tensor against a row.
    const Dims a = variant == 0 ? Dims{p, 1, r} : Dims{1, 1};
    const Dims b = variant == 0 ? Dims{1, q, r} : Dims{1, r};
    g.mark_output(g.binary(kind, g.new_input(a, dt), g.new_input(b, dt)));
  };
}

Builder reduction_case(OpKind kind) {
  return [kind](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
    const Dims dims = variant == 0 ? Dims{odd_size(rng, 2, 9), odd_size(rng, 3, 30), odd_size(rng, 3, 70)}
                                   : Dims{1, odd_size(rng, 3, 99), 1};
    const int64_t dim = variant == 0 ? static_cast<int64_t>(rng() % 3) : 1;
    g.mark_output(g.reduction(kind, g.new_input(dims, dt), dim));
  };
}

std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  for (OpKind kind : {OpKind::kExp, OpKind::kSilu, OpKind::kGelu, OpKind::kRelu, OpKind::kSqrt, OpKind::kSquare,
                      OpKind::kSigmoid, OpKind::kLog, OpKind::kNeg}) {
    // sqrt and log of negative inputs are NaN on both sides: the check covers that too.
    cases.push_back({op_name(kind), unary_case([kind](KernelGraph &g, TensorId x) { return g.unary(kind, x); })});
  }
  cases.push_back(
      {op_name(OpKind::kClamp), unary_case([](KernelGraph &g, TensorId x) { return g.clamp(x, -0.25, 0.5); })});
  cases.push_back(
      {op_name(OpKind::kMulScalar), unary_case([](KernelGraph &g, TensorId x) { return g.mul_scalar(x, -1.375); })});
  for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kMax}) {
    cases.push_back({op_name(kind), binary_case(kind)});
  }
  cases.push_back({"elementwise_16byte_vectors", [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // Unary and same-shape binary operators on whole 16-byte groups (elements a
                     // multiple of 8), which backends may load and store as vectors; one output
                     // each. Variant 1: a single row.
                     const int64_t cols = 8 * odd_size(rng, 3, 90);
                     const Dims dims = variant == 0 ? Dims{odd_size(rng, 3, 40), cols} : Dims{1, cols};
                     const TensorId a = g.new_input(dims, dt), b = g.new_input(dims, dt);
                     for (OpKind kind : {OpKind::kExp, OpKind::kSilu, OpKind::kGelu, OpKind::kSquare}) {
                       g.mark_output(g.unary(kind, a));
                     }
                     g.mark_output(g.mul_scalar(a, -1.375));
                     g.mark_output(g.clamp(b, -0.25, 0.5));
                     for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMax}) {
                       g.mark_output(g.binary(kind, a, b));
                     }
                   }});
  cases.push_back({"elementwise_broadcast_vectors", [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // Broadcast operands against rows of whole 16-byte groups, which backends may
                     // still load as vectors: a row's scalar (softmax's division by its sum) and
                     // rows of a tensor repeated over the batch; variant 1: both at once, a
                     // column against a row.
                     const int64_t rows = odd_size(rng, 3, 40), cols = 8 * odd_size(rng, 3, 90);
                     const TensorId column = g.new_input({rows, 1}, dt), row = g.new_input({1, cols}, dt);
                     if (variant == 1) {
                       for (OpKind kind : {OpKind::kAdd, OpKind::kDiv}) g.mark_output(g.binary(kind, column, row));
                       return;
                     }
                     const TensorId a = g.new_input({rows, cols}, dt);
                     for (OpKind kind : {OpKind::kDiv, OpKind::kSub}) g.mark_output(g.binary(kind, a, column));
                     for (OpKind kind : {OpKind::kAdd, OpKind::kMax}) g.mark_output(g.binary(kind, row, a));
                   }});
  cases.push_back({op_name(OpKind::kMatmul), [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // Batch broadcast, odd sizes, n beyond a typical 128-wide tile.
                     const int64_t m = odd_size(rng, 2, 40), k = odd_size(rng, 2, 90), n = odd_size(rng, 129, 300);
                     const Dims a = variant == 0 ? Dims{3, m, k} : Dims{1, 1, k};
                     const Dims b = variant == 0 ? Dims{1, k, n} : Dims{1, k, 1};
                     g.mark_output(g.matmul(g.new_input(a, dt), g.new_input(b, dt)));
                   }});
  cases.push_back({"matmul_16byte_rows", [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // B rows of whole 16-byte groups (n a multiple of 8): the layout of weight
                     // products, which backends may load as vectors. Broadcast and batched B.
                     const int64_t m = odd_size(rng, 2, 20), k = odd_size(rng, 100, 700), n = 8 * odd_size(rng, 5, 40);
                     const Dims a = variant == 0 ? Dims{3, m, k} : Dims{2, m, k};
                     const Dims b = variant == 0 ? Dims{1, k, n} : Dims{2, k, 8};
                     g.mark_output(g.matmul(g.new_input(a, dt), g.new_input(b, dt)));
                   }});
  cases.push_back({"matmul_long_k", [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // A few rows against a long k (weight products at small batch), which
                     // backends may split over many warps or blocks or give to matrix units.
                     // Variant 0: k a multiple of 16 and n of 32 (whole steps and tiles, with an
                     // odd count of them) against three A of 5-7, 9-15 and 17-31 rows (one
                     // matrix tile's rows in part, more than 8, more than 16); variant 1: 3 rows,
                     // k and n leaving partial steps and column tiles, a batched B.
                     if (variant == 0) {
                       const int64_t k = 16 * odd_size(rng, 130, 310), n = 32 * odd_size(rng, 3, 12);
                       const TensorId b = g.new_input({k, n}, dt);
                       for (const auto &[lo, hi] : {std::pair<int64_t, int64_t>{5, 7}, {9, 15}, {17, 31}}) {
                         g.mark_output(g.matmul(g.new_input({odd_size(rng, lo, hi), k}, dt), b));
                       }
                       return;
                     }
                     const int64_t k = odd_size(rng, 2100, 5000), n = 8 * odd_size(rng, 5, 40);
                     g.mark_output(g.matmul(g.new_input({2, 3, k}, dt), g.new_input({2, k, n}, dt)));
                   }});
  cases.push_back({"matmul_many_rows", [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // Many rows against compact 16-byte groups (prefill's projections), which
                     // backends may tile: partial row, column and k tiles (k and n multiples of 8,
                     // not of a tile); variant 1 batched, A broadcast across B's batch.
                     const int64_t m = odd_size(rng, 60, 300), k = 8 * odd_size(rng, 9, 61),
                                   n = 8 * odd_size(rng, 9, 41);
                     const Dims a = variant == 0 ? Dims{m, k} : Dims{1, m, k};
                     const Dims b = variant == 0 ? Dims{k, n} : Dims{3, k, n};
                     g.mark_output(g.matmul(g.new_input(a, dt), g.new_input(b, dt)));
                   }});
  cases.push_back({op_name(OpKind::kReduction), reduction_case(OpKind::kReduction)});
  cases.push_back({op_name(OpKind::kReductionMax), reduction_case(OpKind::kReductionMax)});
  cases.push_back({"reduction_layouts", [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // Sums and maxima over layouts that backends may reduce in different ways:
                     // variant 0 a few long contiguous rows (a block per row) and rows of whole
                     // 16-byte groups (vectors); variant 1 an outer dim under many contiguous
                     // outputs (a thread per output).
                     const bool rows = variant == 0;
                     const TensorId x = rows ? g.new_input({odd_size(rng, 2, 5), odd_size(rng, 2100, 5000)}, dt)
                                             : g.new_input({2, odd_size(rng, 3, 40), odd_size(rng, 33, 200)}, dt);
                     const TensorId v = g.new_input({odd_size(rng, 3, 40), 8 * odd_size(rng, 3, 90)}, dt);
                     for (OpKind kind : {OpKind::kReduction, OpKind::kReductionMax}) {
                       g.mark_output(g.reduction(kind, x, 1));
                       if (rows) g.mark_output(g.reduction(kind, v, 1));
                     }
                   }});
  cases.push_back({op_name(OpKind::kRmsNorm), [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     const int64_t n = odd_size(rng, 3, 300);
                     if (variant == 0) {
                       const TensorId x = g.new_input({odd_size(rng, 2, 20), n}, dt);
                       g.mark_output(g.rms_norm(x, {n}, 1e-6, g.new_input({n}, dt)));
                     } else {
                       const TensorId x = g.new_input({1, 1, n}, dt);
                       g.mark_output(g.rms_norm(x, {1, n}, 1e-5, std::nullopt));
                     }
                   }});
  cases.push_back({op_name(OpKind::kConcat), [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     const int64_t p = variant == 0 ? odd_size(rng, 2, 20) : 1;
                     const int64_t q = variant == 0 ? odd_size(rng, 2, 50) : 1;
                     const int64_t r = variant == 0 ? odd_size(rng, 2, 50) : 1;
                     g.mark_output(g.concat(g.new_input({p, q}, dt), g.new_input({p, r}, dt), 1));
                   }});
  cases.push_back({op_name(OpKind::kSplit), [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     const int64_t q = variant == 0 ? odd_size(rng, 2, 50) : 1;
                     const int64_t r = variant == 0 ? odd_size(rng, 2, 50) : 1;
                     const TensorId x = g.new_input({variant == 0 ? odd_size(rng, 2, 20) : 1, q + r}, dt);
                     for (TensorId part : g.split(x, 1, {q, r})) g.mark_output(part);
                   }});
  cases.push_back({op_name(OpKind::kReshape), [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // Variant 0: [p, q·r] as [r, q, p] (elements move between dims); 1: size-1 dims.
                     const int64_t p = odd_size(rng, 2, 20), q = odd_size(rng, 2, 30), r = odd_size(rng, 2, 30);
                     if (variant == 0) {
                       g.mark_output(g.reshape(g.new_input({p, q * r}, dt), {r, q, -1}));
                     } else {
                       g.mark_output(g.reshape(g.new_input({1, q}, dt), {q, 1, 1}));
                     }
                   }});
  cases.push_back({op_name(OpKind::kPermute), [](KernelGraph &g, DType dt, int variant, std::mt19937_64 &rng) {
                     // Variant 0: heads first ([p, q, r] as [q, p, r]) and a rotation of all dims;
                     // 1: size-1 dims around a transpose.
                     const int64_t p = odd_size(rng, 2, 20), q = odd_size(rng, 2, 30), r = odd_size(rng, 2, 30);
                     if (variant == 0) {
                       const TensorId x = g.new_input({p, q, r}, dt);
                       g.mark_output(g.permute(x, {1, 0, 2}));
                       g.mark_output(g.permute(x, {2, 0, 1}));
                     } else {
                       g.mark_output(g.transpose(g.new_input({1, q, 1, r}, dt), 1, 3));
                     }
                   }});
  return cases;
}

void check_op(Session &s, const OpCase &op, DType dt, const std::string &name) {
  s.need_dtype(dt);
  std::mt19937_64 rng(seed_of(name));
  for (int variant : {0, 1}) {
    KernelGraph g;
    op.build(g, dt, variant, rng);
    check_graph(s, g, g, seed_of(name) + static_cast<uint64_t>(variant), variant == 0 ? "odd sizes" : "size-1 dims");
  }
}

// ---- the fused benchmark µGraphs ----

void check_fused(Session &s, const std::string &benchmark, DType dt, const std::string &name, int64_t b = 2,
                 int64_t scale = 16) {
  s.need_dtype(dt);
  const KernelGraph unfused = bench::build_unfused(benchmark, b, dt, scale);
  const KernelGraph fused = bench::build_fused(benchmark, b, dt, scale);
  check_graph(s, unfused, fused, seed_of(name), benchmark + " fused against unfused");
}

// A fused µGraph with its loop split over `parts` blocks (search/loop_split.hpp): a kernel writing
// float32 partial sums, then one adding them up; run apart and marked to run as one program
// (launch_with_next: a plugin of ABI 1.4 may take the two as one, CUDA in one launch).
void check_split_loop(Session &s, const std::string &benchmark, DType dt, const std::string &name, int64_t b,
                      int64_t scale, int64_t parts) {
  s.need_dtype(dt);
  const KernelGraph fused = bench::build_fused(benchmark, b, dt, scale);
  std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, parts);
  expect(split.has_value(), benchmark + "'s fused µGraph does not split over " + std::to_string(parts) + " blocks");
  const std::string what = benchmark + " split over " + std::to_string(parts) + " blocks against unfused";
  const KernelGraph unfused = bench::build_unfused(benchmark, b, dt, scale);
  check_graph(s, unfused, *split, seed_of(name), what);
  split->set_launch_with_next(serialize::kernel_operators(*split).front(), true);
  check_graph(s, unfused, *split, seed_of(name) + 1, what + ", marked to run as one program");
}

// A program of several operators (plugin ABI 1.4): gqa's loop split over 4 blocks and the sum of
// its parts, marked to run as one. A plugin that takes the program (supports() OK) must run it
// right as one, launch after launch; one that declines says why (NotSupported), and the host
// runs it apart (check_split_loop).
void check_operator_group(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  const KernelGraph fused = bench::build_fused("gqa", 1, dt, 2);
  std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, 4);
  expect(split.has_value(), "gqa's fused µGraph does not split over 4 blocks");
  const std::vector<size_t> kernels = serialize::kernel_operators(*split);
  split->set_launch_with_next(kernels.front(), true);
  const std::vector<uint8_t> program =
      serialize::kernel_program_to_bytes(serialize::make_group_program(*split, kernels).program);
  yirage_backend_error error = new_error();
  const yirage_status status = s.api().supports(s.instance(), s.device(), program.data(), program.size(), &error);
  if (status == YIRAGE_ERROR_UNSUPPORTED) not_supported(error.message);
  expect_ok(status, error, "supports(a loop split and its sum)");
  expect((s.device_info().raw.flags & YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS) != 0,
         "supports() takes a program of two operators, but the device does not say it takes operator groups");
  const runtime::CompiledGraph grouped(s.plugin(), s.device(), *split);
  expect(grouped.stats().grouped_operators == 2 && grouped.stats().kernels == 1,
         "the plugin takes the two operators as one program, but the host ran " +
             std::to_string(grouped.stats().kernels) + " kernels");
  const KernelGraph unfused = bench::build_unfused("gqa", 1, dt, 2);  // the Measurer keeps a reference
  runtime::Measurer measurer(s.plugin(), s.device(), unfused, checked_options(seed_of(name)));
  for (int run = 0; run < 3; ++run) {  // the tiles' counters are left at zero for the next launch
    const runtime::Measurement m = measurer.measure(grouped, false);
    expect(m.correct, "gqa split over 4 blocks as one program, run " + std::to_string(run + 1) + ": " + m.error);
  }
}

// `graph`'s kernels all marked to run as one program: a plugin that takes the program must run
// it right, launch after launch (its state between launches kept right), against `reference`;
// one that declines says why.
void check_whole_group(Session &s, KernelGraph graph, const KernelGraph &reference, const std::string &name,
                       const std::string &what) {
  const std::vector<size_t> kernels = serialize::kernel_operators(graph);
  for (size_t k = 0; k + 1 < kernels.size(); ++k) graph.set_launch_with_next(kernels[k], true);
  const std::vector<uint8_t> program =
      serialize::kernel_program_to_bytes(serialize::make_group_program(graph, kernels).program);
  yirage_backend_error error = new_error();
  const yirage_status status = s.api().supports(s.instance(), s.device(), program.data(), program.size(), &error);
  if (status == YIRAGE_ERROR_UNSUPPORTED) not_supported(error.message);
  expect_ok(status, error, "supports(" + what + ", " + std::to_string(kernels.size()) + " operators)");
  const runtime::CompiledGraph grouped(s.plugin(), s.device(), graph);
  expect(grouped.stats().grouped_operators == static_cast<int64_t>(kernels.size()) && grouped.stats().kernels == 1,
         "the plugin takes " + what + " as one program, but the host ran " + std::to_string(grouped.stats().kernels) +
             " kernels");
  runtime::Measurer measurer(s.plugin(), s.device(), reference, checked_options(seed_of(name)));
  for (int run = 0; run < 3; ++run) {
    const runtime::Measurement m = measurer.measure(grouped, false);
    expect(m.correct, what + " as one program, run " + std::to_string(run + 1) + ": " + m.error);
  }
}

// A chain of a customized operator and pre-defined ones (rmsnorm_linear's µGraph, then silu, a
// product with the µGraph's result and a row sum), the µGraph's result read by the host too.
// The CPU plugin takes it as one parallel region.
void check_operator_chain(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  KernelGraph chain = bench::build_fused("rmsnorm_linear", 2, dt, 16);
  const TensorId y = chain.outputs().at(0);
  const TensorId gated = chain.binary(OpKind::kMul, chain.unary(OpKind::kSilu, y), y);
  chain.mark_output(chain.reduction(OpKind::kReduction, gated, 1));
  const KernelGraph reference = chain;  // the Measurer keeps a reference
  check_whole_group(s, chain, reference, name, "a µGraph and pre-defined operators");
}

// A chain of three µGraphs (bench::build_ugraph_chain): a tensor only the chain reads, one the
// host reads too, tiles read whole and tiles read in part; then its first two alone (ending in
// weight products, where 16-bit). CUDA runs them as one persistent kernel.
void check_ugraph_chain(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  const KernelGraph reference = bench::build_ugraph_chain(false, dt);
  check_whole_group(s, bench::build_ugraph_chain(true, dt), reference, name, "a chain of three µGraphs");
  const KernelGraph products = bench::build_ugraph_chain(false, dt, false);
  check_whole_group(s, bench::build_ugraph_chain(true, dt, false), products, name + ".products",
                    "a chain of two µGraphs");
}

// gqa (Q [2, 256, 64], K [2, 64, 4096]) in blocks of 128 query rows, and of 64 split over 16
// key chunks (what the search picks at b = 1), against 128 keys per iteration: the shapes of
// the CUDA backend's warpgroup-mma attention on sm_90a (cuda_attention.hpp); and qknorm, whose
// rms_norm of Q that backend applies as Q's fragments are loaded.
void check_attention_blocks(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  for (const std::string graph : {"gqa", "qknorm"}) {
    const KernelGraph full = bench::build_fused(graph, 1, dt, 1);
    const BlockGraph &hand = *full.operators().back().block_graph;
    for (const auto &[blocks, parts] : {std::pair<int64_t, int64_t>{2, 1}, {4, 16}}) {
      BlockGraphConfig config = hand.config();
      config.grid = {2, blocks, 1};
      config.forloop_range = 32;
      const KernelGraph fused = bench::with_config(full, config);
      std::optional<KernelGraph> tried = fused;
      if (parts > 1) tried = search::split_loop(fused, fused.operators().size() - 1, parts);
      expect(tried.has_value(), graph + "'s µGraph does not split over " + std::to_string(parts) + " blocks");
      check_graph(s, bench::build_unfused(graph, 1, dt, 1), *tried,
                  seed_of(name + graph) + static_cast<uint64_t>(blocks),
                  graph + " in " + std::to_string(256 / blocks) + "-row blocks" +
                      (parts > 1 ? ", split over " + std::to_string(parts) : ""));
    }
  }
}

// The gated MLP's µGraph in blocks of 64 bytes of weight columns (32 of 16-bit weights, 16 of
// float32; at full size the grid the search keeps): the CUDA backend streams both weights in one
// weight-product kernel, silu and the gate in registers (backends/cuda/codegen/cuda_matmul.hpp).
void check_weight_product_ugraph(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  const KernelGraph fused = bench::build_fused("gated_mlp", 1, dt, 16);
  BlockGraphConfig config = fused.operators().back().block_graph->config();
  const int64_t columns = fused.tensor(fused.inputs()[1]).dims[1];
  config.grid = {columns * static_cast<int64_t>(dtype_size(dt)) / 64, 1, 1};
  check_graph(s, bench::build_unfused("gated_mlp", 1, dt, 16), bench::with_config(fused, config), seed_of(name),
              "gated_mlp in blocks of 64 bytes of weight columns against unfused");
}

// Block-level reductions and rms_norm on odd shapes, against the same operators at kernel level.
void check_block_reductions(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  check_graph(s, bench::build_block_reductions(false, dt), bench::build_block_reductions(true, dt), seed_of(name),
              "block-level reductions against kernel-level ones");
}

// A row chain without a for-loop (rms_norm, row sums and maxima, broadcasts), which the CUDA
// backend keeps in registers, against the same operators at kernel level.
void check_row_chain(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  check_graph(s, bench::build_row_chain(false, dt), bench::build_row_chain(true, dt), seed_of(name),
              "row chain against kernel-level operators");
}

// Mirage's sum_todimx (accum_sum_todimx) folding partial results laid side by side, against the
// same sums at kernel level.
void check_sum_to_dimx(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  check_graph(s, bench::build_sum_to_dimx(false, dt), bench::build_sum_to_dimx(true, dt), seed_of(name),
              "accum_sum_todimx against the slices added at kernel level");
}

// µGraphs with ragged tiles (grids and loops that do not divide their dims; ragged_graphs.hpp)
// against their unfused graphs: the absent elements past each dim must be read as zero, never
// saved, and count for nothing in every reduction.
void check_ragged_tiles(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  for (const std::string &graph : bench::ragged_names()) {
    check_graph(s, bench::build_ragged(graph, false, dt), bench::build_ragged(graph, true, dt), seed_of(name + graph),
                "ragged tiles, " + graph);
  }
}

// A weighted rms_norm with eps before a product, fused as the search fuses it: the weight's
// view multiplies X's tiles in the loop, the rms accumulator adds eps.
void check_weighted_norm_product(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  for (int64_t rows : {3, 8}) {
    check_graph(
        s, bench::build_weighted_norm_product(false, dt, rows), bench::build_weighted_norm_product(true, dt, rows),
        seed_of(name) + static_cast<uint64_t>(rows),
        "weighted rms_norm (eps 1e-5) then a product, fused, against unfused, " + std::to_string(rows) + " rows");
  }
}

// Products of a few rows by weights (FMAs at 1 and 3 rows, the tensor cores at 12; a partial last
// column tile), each compiled once and run three times: the CUDA backend splits the first's k
// over blocks, whose counters must be back at zero after every run.
void check_decode_products(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  struct Shape {
    int64_t m, k, n;
  };
  for (const Shape &shape : {Shape{1, 2048, 520}, Shape{3, 1536, 264}, Shape{12, 1024, 512}}) {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input({shape.m, shape.k}, dt), g.new_input({shape.k, shape.n}, dt)));
    need_support(s, g);
    const std::string what = std::to_string(shape.m) + " x " + std::to_string(shape.k) + " by " +
                             std::to_string(shape.k) + " x " + std::to_string(shape.n);
    const runtime::CompiledGraph compiled(s.plugin(), s.device(), g);
    runtime::Measurer measurer(s.plugin(), s.device(), g, checked_options(seed_of(name + what)));
    for (int run = 0; run < 3; ++run) {
      const runtime::Measurement m = measurer.measure(compiled, false);
      expect(m.correct, what + ", run " + std::to_string(run + 1) + ": " + m.error);
    }
  }
}

// ---- rows near the limits of a dtype's range ----

// rms_norm of x (`dims`, over the last dim; times a weight where `weighted`) at kernel level, or
// (`blocks` > 0) as a µGraph of that many blocks along dim 0 without a for-loop.
KernelGraph norm_graph(const Dims &dims, DType dt, double eps, bool weighted, int64_t blocks) {
  KernelGraph g;
  const int64_t n = dims.back();
  const TensorId x = g.new_input(dims, dt);
  const std::optional<TensorId> w = weighted ? std::optional<TensorId>(g.new_input({n}, dt)) : std::nullopt;
  if (blocks == 0) {
    g.mark_output(g.rms_norm(x, {n}, eps, w));
    return g;
  }
  BlockGraphConfig config;
  config.grid = {blocks, 1, 1};
  config.block_threads = 128;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input(dims, dt, {0, -1, -1}, -1);
  const std::optional<TensorId> wt =
      weighted ? std::optional<TensorId>(bg->new_input({n}, dt, kReplicated, -1)) : std::nullopt;
  bg->new_output(bg->rms_norm(xt, {n}, eps, wt), {0, -1, -1}, -1);
  std::vector<TensorId> inputs = {x};
  if (w) inputs.push_back(*w);
  g.mark_output(g.customized(inputs, bg)[0]);
  return g;
}

// rms_norm on rows of values near the dtype's largest and smallest magnitudes (float32 and
// bfloat16: up to 2^126, 2^-120 and 2^-130, the last all subnormal, so that 1 / rms exceeds
// float32; float16: 2^15, 2^-14 and 2^-20), whose squares leave float32's range: at kernel level (odd rows and rows of
// whole 16-byte vectors, with a weight and eps, and a row of two dims without), inside blocks (the block's threads
// share rows of 37), on rows of 256 without a for-loop (which CUDA keeps in registers), and the rms accumulator of
// rmsnorm_linear's µGraph (X up to 2^±100; float16 as above), each against the kernel-level graph. The weight and W are
// not scaled. docs/verification.md, "Numeric checks near the range limits".
void check_norm_limits(Session &s, DType dt, const std::string &name) {
  s.need_dtype(dt);
  const bool wide = dt != DType::kFloat16;
  const double factors[] = {wide ? 0x1p126 : 0x1p15, wide ? 0x1p-120 : 0x1p-14, wide ? 0x1p-130 : 0x1p-20};
  std::mt19937_64 rng(seed_of(name));
  const int64_t n = odd_size(rng, 3, 300);
  struct Case {
    const char *what;
    KernelGraph reference, candidate;
  };
  const KernelGraph weighted = norm_graph({odd_size(rng, 2, 20), n}, dt, 1e-6, true, 0);
  const KernelGraph plain = norm_graph({3, n}, dt, 0, false, 0);
  std::vector<Case> cases;
  cases.push_back({"kernel-level rms_norm with a weight", weighted, weighted});
  // Rows of whole 16-byte vectors, which the CUDA backend loads with their weight as vectors.
  const KernelGraph vectors = norm_graph({odd_size(rng, 2, 20), 8 * n}, dt, 1e-6, true, 0);
  cases.push_back({"kernel-level rms_norm with a weight on rows of whole vectors", vectors, vectors});
  cases.push_back({"kernel-level rms_norm without eps", plain, plain});
  cases.push_back({"block-level rms_norm with a weight", norm_graph({6, 5, 37}, dt, 1e-5, true, 0),
                   norm_graph({6, 5, 37}, dt, 1e-5, true, 3)});
  cases.push_back({"block-level rms_norm without eps", norm_graph({6, 5, 37}, dt, 0, false, 0),
                   norm_graph({6, 5, 37}, dt, 0, false, 3)});
  cases.push_back(
      {"rms_norm on rows of 256", norm_graph({6, 3, 256}, dt, 0, false, 0), norm_graph({6, 3, 256}, dt, 0, false, 3)});
  for (size_t c = 0; c < cases.size(); ++c) {
    for (double factor : factors) {
      runtime::MeasureOptions options = checked_options(seed_of(name) + c);
      options.input_scales = {factor};  // x; the weight stays in [-1, 1]
      options.range_checks = false;
      char what[160];
      std::snprintf(what, sizeof what, "%s, x scaled by %g", cases[c].what, factor);
      check_graph(s, cases[c].reference, cases[c].candidate, what, options);
    }
  }
  for (double factor : {wide ? 0x1p100 : 0x1p15, wide ? 0x1p-100 : 0x1p-14}) {
    runtime::MeasureOptions options = checked_options(seed_of(name + "weighted"));
    options.input_scales = {factor};  // X; w and W stay in [-1, 1]
    options.range_checks = false;
    char what[160];
    std::snprintf(what, sizeof what, "a weighted norm's µGraph (the rms accumulator with eps), X scaled by %g", factor);
    check_graph(s, bench::build_weighted_norm_product(false, dt), bench::build_weighted_norm_product(true, dt), what,
                options);
  }
  for (double factor : {wide ? 0x1p100 : 0x1p15, wide ? 0x1p-100 : 0x1p-14}) {
    runtime::MeasureOptions options = checked_options(seed_of(name + "rmsnorm_linear"));
    options.input_scales = {factor};  // X; W stays in [-1, 1]
    options.range_checks = false;
    char what[160];
    std::snprintf(what, sizeof what, "rmsnorm_linear's µGraph (the rms accumulator), X scaled by %g", factor);
    check_graph(s, bench::build_unfused("rmsnorm_linear", 1, dt, 16), bench::build_fused("rmsnorm_linear", 1, dt, 16),
                what, options);
  }
}

// ---- concurrency and timers ----

// Runs `body(i)` on two threads at once; the first failure fails the test.
void on_two_threads(const std::function<void(int)> &body) {
  std::string failures[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      try {
        body(i);
      } catch (const std::exception &e) {
        failures[i] = e.what();
      }
    });
  }
  for (std::thread &t : threads) t.join();
  for (int i = 0; i < 2; ++i) expect(failures[i].empty(), "thread " + std::to_string(i) + ": " + failures[i]);
}

// Two threads compile different programs at the same time and check what they get.
void concurrent_compiles(Session &s) {
  s.need_dtype(DType::kFloat32);
  KernelGraph graphs[2];
  graphs[0].mark_output(graphs[0].unary(OpKind::kGelu, graphs[0].new_input({37, 41}, DType::kFloat32)));
  graphs[1].mark_output(
      graphs[1].matmul(graphs[1].new_input({19, 23}, DType::kFloat32), graphs[1].new_input({23, 29}, DType::kFloat32)));
  const runtime::Plugin &plugin = s.plugin();
  const int32_t device = s.device();
  on_two_threads([&](int i) {
    runtime::Measurer measurer(plugin, device, graphs[i], checked_options(11 + i));
    const runtime::Measurement m = measurer.measure(graphs[i], false);
    if (!m.correct) throw std::runtime_error(m.error);
  });
}

// One compiled graph run from two threads at once, many times, on separate inputs and outputs
// and the default stream: one kernel, then three whose intermediates the runs must not share,
// then a product split over blocks whose workspace they share in the stream's order.
void concurrent_launches(Session &s) {
  s.need_dtype(DType::kFloat32);
  KernelGraph one, three;
  one.mark_output(one.rms_norm(one.new_input({17, 333}, DType::kFloat32), {333}, 1e-6, std::nullopt));
  const TensorId x = three.new_input({17, 333}, DType::kFloat32);
  const TensorId normed = three.rms_norm(three.unary(OpKind::kExp, x), {333}, 1e-6, std::nullopt);
  three.mark_output(three.binary(OpKind::kMul, normed, x));
  // A product whose k the CUDA backend splits over blocks: the runs share the stream's workspace.
  KernelGraph product;
  product.mark_output(
      product.matmul(product.new_input({1, 2048}, DType::kFloat32), product.new_input({2048, 520}, DType::kFloat32)));
  for (const KernelGraph *g : {&one, &three, &product}) {
    const runtime::CompiledGraph compiled(s.plugin(), s.device(), *g);
    on_two_threads([&](int i) {
      runtime::Measurer measurer(compiled.plugin(), compiled.device(), *g, checked_options(21 + i));
      for (int r = 0; r < 20; ++r) {
        const runtime::Measurement m = measurer.measure(compiled, false);
        if (!m.correct) throw std::runtime_error("run " + std::to_string(r) + ": " + m.error);
      }
    });
  }
}

// Recordings (plugin ABI 1.3): a graph of several kernels timed, so run again and again on the
// same buffers, is recorded and replayed; the measurer checks a replay as it checks the first
// run. A stream recording_begin did not give is refused, the out-parameter untouched.
void recordings(Session &s) {
  if (!s.plugin().records()) not_supported("the plugin does not record launches (optional, ABI 1.3)");
  s.need_dtype(DType::kFloat32);
  KernelGraph g;
  const TensorId x = g.new_input({17, 333}, DType::kFloat32);
  const TensorId normed = g.rms_norm(g.unary(OpKind::kExp, x), {333}, 1e-6, std::nullopt);
  g.mark_output(g.binary(OpKind::kMul, normed, x));
  // A product whose k the CUDA backend splits over blocks (its kernel takes a workspace, which a
  // recording must take from the stream it replays on), then another kernel.
  KernelGraph product;
  const TensorId p =
      product.matmul(product.new_input({1, 2048}, DType::kFloat32), product.new_input({2048, 520}, DType::kFloat32));
  product.mark_output(product.unary(OpKind::kExp, product.mul_scalar(p, 0.01)));
  for (const KernelGraph *graph : {&g, &product}) {
    const runtime::CompiledGraph compiled(s.plugin(), s.device(), *graph);
    expect(compiled.stats().kernels >= 2, "the graph compiled into one kernel: nothing to record");
    runtime::Measurer measurer(s.plugin(), s.device(), *graph, checked_options(31));
    const runtime::Measurement m = measurer.measure(compiled, true);
    expect(m.correct, m.error);
    expect(compiled.recordings() == 1,
           "timed runs on one buffer set left " + std::to_string(compiled.recordings()) + " recordings, not 1");
  }
  const yirage_backend_api &api = s.api();
  int not_a_stream = 0;
  yirage_backend_recording *untouched = reinterpret_cast<yirage_backend_recording *>(&not_a_stream);
  yirage_backend_recording *out = untouched;
  yirage_backend_error error = new_error();
  expect(api.recording_end(s.instance(), s.device(), &not_a_stream, &out, &error) == YIRAGE_ERROR_INVALID_ARGUMENT,
         "recording_end accepted a stream recording_begin did not give");
  expect(out == untouched, "recording_end wrote its out-parameter on failure");
  api.recording_release(nullptr);
}

void timers(Session &s) {
  s.need_dtype(DType::kFloat32);
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({4096}, DType::kFloat32)));
  runtime::Measurer measurer(s.plugin(), s.device(), g, checked_options(5));
  const runtime::CompiledGraph compiled(s.plugin(), s.device(), g);
  const runtime::Measurement m = measurer.measure(compiled, true);
  expect(m.correct, m.error);
  expect(m.min_seconds >= 0 && m.median_seconds >= m.min_seconds && m.median_seconds < 10,
         "implausible timings: min " + std::to_string(m.min_seconds) + " s, median " +
             std::to_string(m.median_seconds) + " s");
}

}  // namespace

std::vector<uint8_t> exp_program(int64_t n) {
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({n}, DType::kFloat32)));
  return serialize::kernel_program_to_bytes(serialize::make_kernel_program(g, 1));
}

void add_kernel_tests(std::vector<TestCase> &tests) {
  for (const OpCase &op : op_cases()) {
    for (DType dt : kDTypes) {
      const std::string name = std::string("kernels.") + op.name + "." + dtype_name(dt);
      tests.push_back({name, [op, dt, name](Session &s) { check_op(s, op, dt, name); }});
    }
  }
  for (const std::string &benchmark : bench::benchmark_names()) {
    for (DType dt : kDTypes) {
      const std::string name = "kernels.fused." + benchmark + "." + dtype_name(dt);
      tests.push_back({name, [benchmark, dt, name](Session &s) { check_fused(s, benchmark, dt, name); }});
    }
  }
  // Attention at half size: 8 query rows per block against 128-key tiles, the tile shapes of
  // the fast paths (few-row tensor-core products, tiles of 32-float rows).
  for (DType dt : kDTypes) {
    const std::string name = std::string("kernels.fused_half.gqa.") + dtype_name(dt);
    tests.push_back({name, [dt, name](Session &s) { check_fused(s, "gqa", dt, name, 1, 2); }});
  }
  // The same attention and the gated MLP with their loops split across blocks.
  for (DType dt : kDTypes) {
    const std::string gqa = std::string("kernels.split_loop.gqa.") + dtype_name(dt);
    tests.push_back({gqa, [dt, gqa](Session &s) { check_split_loop(s, "gqa", dt, gqa, 1, 2, 4); }});
    const std::string mlp = std::string("kernels.split_loop.gated_mlp.") + dtype_name(dt);
    tests.push_back({mlp, [dt, mlp](Session &s) { check_split_loop(s, "gated_mlp", dt, mlp, 1, 16, 2); }});
  }
  for (DType dt : kDTypes) {
    const std::string name = std::string("kernels.operator_group.gqa.") + dtype_name(dt);
    tests.push_back({name, [dt, name](Session &s) { check_operator_group(s, dt, name); }});
    const std::string chain = std::string("kernels.operator_group.chain.") + dtype_name(dt);
    tests.push_back({chain, [dt, chain](Session &s) { check_operator_chain(s, dt, chain); }});
    const std::string ugraphs = std::string("kernels.operator_group.ugraphs.") + dtype_name(dt);
    tests.push_back({ugraphs, [dt, ugraphs](Session &s) { check_ugraph_chain(s, dt, ugraphs); }});
  }
  for (DType dt : kDTypes) {
    const std::string name = std::string("kernels.weight_product_ugraph.") + dtype_name(dt);
    tests.push_back({name, [dt, name](Session &s) { check_weight_product_ugraph(s, dt, name); }});
  }
  for (DType dt : kDTypes) {
    const std::string name = std::string("kernels.attention_blocks.") + dtype_name(dt);
    tests.push_back({name, [dt, name](Session &s) { check_attention_blocks(s, dt, name); }});
  }
  for (DType dt : kDTypes) {
    const std::string name = std::string("kernels.block_reductions.") + dtype_name(dt);
    tests.push_back({name, [dt, name](Session &s) { check_block_reductions(s, dt, name); }});
    const std::string rows = std::string("kernels.row_chain.") + dtype_name(dt);
    tests.push_back({rows, [dt, rows](Session &s) { check_row_chain(s, dt, rows); }});
  }
  for (DType dt : kDTypes) {
    const std::string name = std::string("kernels.sum_to_dimx.") + dtype_name(dt);
    tests.push_back({name, [dt, name](Session &s) { check_sum_to_dimx(s, dt, name); }});
    const std::string ragged = std::string("kernels.ragged_tiles.") + dtype_name(dt);
    tests.push_back({ragged, [dt, ragged](Session &s) { check_ragged_tiles(s, dt, ragged); }});
    const std::string norm = std::string("kernels.weighted_norm_product.") + dtype_name(dt);
    tests.push_back({norm, [dt, norm](Session &s) { check_weighted_norm_product(s, dt, norm); }});
    const std::string decode = std::string("kernels.decode_products.") + dtype_name(dt);
    tests.push_back({decode, [dt, decode](Session &s) { check_decode_products(s, dt, decode); }});
  }
  for (DType dt : kDTypes) {
    const std::string name = std::string("kernels.rms_norm_limits.") + dtype_name(dt);
    tests.push_back({name, [dt, name](Session &s) { check_norm_limits(s, dt, name); }});
  }
  tests.push_back({"concurrency.compiles", concurrent_compiles});
  tests.push_back({"concurrency.launches", concurrent_launches});
  tests.push_back({"recordings.replay", recordings});
  tests.push_back({"timers.elapsed", timers});
}

}  // namespace yirage::conformance
