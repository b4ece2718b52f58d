#include "cuda/codegen/cuda_load_pipeline.hpp"

#include <algorithm>

#include "cuda/codegen/cuda_printer.hpp"

namespace yirage::codegen::cuda {
namespace {

// 16-byte groups a thread converts from a stage at once: all of them read first, then stored
// (the compiler would not move those reads above the stores into the tile, which may alias them
// as far as it knows).
constexpr int64_t kMaxStageGroupsPerThread = 8;
// Elements a thread holds in registers between the reads and the stores of a plain stage fill.
constexpr int64_t kMaxPlainCopiesPerThread = 12;

}  // namespace

std::string LoadPipeline::base(const Operator &op, const std::string &it) const {
  return tile_base_text(plan_.bg, op, plan_.dims_of(op.outputs[0]), it);
}

// Where element `v` (one variable per dim of the tile; the last counts 16-byte groups of `group`
// elements, or elements where group is 1) goes in a stage.
std::string LoadPipeline::stage_index(const Stage &st, const std::vector<std::string> &v, int64_t group) const {
  if (!st.swizzled) {
    Dims strides = st.strides;
    strides.back() = group;
    return index_expr(v, strides);
  }
  const size_t n = v.size();
  const std::vector<std::string> lead(v.begin(), v.end() - 2);
  const Dims lead_strides(st.strides.begin(), st.strides.end() - 2);
  const std::string column = group == 1 ? v[n - 1] : v[n - 1] + " * " + std::to_string(group);
  return "(" + index_expr(lead, lead_strides) + " + yr_swizzled128(" + v[n - 2] + ", " + column + ", " +
         std::to_string(st.rows) + "))";
}

// Issues the copies of iteration `it` (when it is < the loop's range) and commits them as one
// group (empty past the end, so that the count of pending groups stays the iteration's).
// `copiers`: the threads that issue them (all the block's, or some warps' only).
void LoadPipeline::issue_stages(const std::string &it, const std::optional<ThreadShare> &copiers) {
  p_.open("if (" + it + " < " + std::to_string(plan_.bg.config().forloop_range) + ")");
  for (const Stage &st : plan_.stages) {
    if (st.plain) continue;  // fill_plain_stages
    const std::string tensor = "in" + std::to_string(st.input);
    const Dims &tile_dims = plan_.dims_of(st.op->outputs[0]);
    Dims gg = row_major_strides(st.op->attributes.sizes);
    gg.back() = st.group;
    const bool words = st.group == 1;  // 4-byte copies: any float tensor is aligned for them
    p_.open(words ? "" : "if (" + aligned_name(tensor) + ")");
    p_.line("const auto *src = " + tensor + " + " + base(*st.op, "(" + it + ")") + ";");
    p_.line("auto *stage = " + plan_.stage_ptr(st, it) + ";");
    const std::string copy = words ? "yr_cp4(stage + " : "yr_cp16(stage + ";
    // A ragged tile's groups past the tensor's end are zeros, read from nowhere.
    const std::vector<CopyBound> bounds = plan_.bounds(st.op->outputs[0], "(" + it + ")");
    shared_loop(
        p_, copiers.value_or(plan_.block_share()), groups_of(tile_dims, st.group), "t",
        [&](const std::vector<std::string> &v) {
          const std::string inside = inside_condition(bounds, v, st.group);
          if (inside.empty()) {
            p_.line(copy + stage_index(st, v, st.group) + ", src + " + index_expr(v, gg) + ");");
          } else {
            p_.line(copy + stage_index(st, v, st.group) + ", " + inside + " ? src + " + index_expr(v, gg) + " : src, " +
                    inside + ");");
          }
        },
        8);
    p_.close();
  }
  p_.close();
  p_.line("yr_cp_commit();");
}

// Attention's keys rounded up to whole 16s (Stage::dims): every slot's elements past the tile are
// zeros, written once before any copy (the copies never write them; the first read of a stage
// comes after a barrier).
void LoadPipeline::zero_stage_padding() {
  for (const Stage &st : plan_.stages) {
    const Dims &tile_dims = plan_.dims_of(st.op->outputs[0]);
    if (st.dims == tile_dims) continue;
    const std::string zero = std::string(element_type(st.op->attributes.dtype)) + "{0}";
    for (int64_t slot = 0; slot < plan_.depth; ++slot) {
      p_.open("");
      p_.line("auto *stage = " + plan_.stage_ptr(st, std::to_string(slot)) + ";");
      shared_loop(
          p_, plan_.block_share(), st.dims, "t",
          [&](const std::vector<std::string> &v) {
            std::string past;
            for (size_t d = 0; d < v.size(); ++d) {
              if (st.dims[d] != tile_dims[d]) {
                past += (past.empty() ? "" : " || ") + v[d] + " >= " + std::to_string(tile_dims[d]);
              }
            }
            p_.line("if (" + past + ") stage[" + stage_index(st, v, 1) + "] = " + zero + ";");
          },
          8);
      p_.close();
    }
  }
}

void LoadPipeline::start() {
  zero_stage_padding();
  if (plan_.producers > 0) {
    p_.open("if (threadIdx.x >= " + plan_.computing_threads() + ")");
    produce_stage("0");
    p_.close();
    return;
  }
  for (int64_t s = 0; s + 1 < plan_.depth; ++s) issue_stages(std::to_string(s));
}

void LoadPipeline::advance() {
  if (plan_.depth == 0) return;
  fill_plain_stages("it", plan_.block_share());
  p_.line("yr_cp_wait<" + std::to_string(plan_.depth - 2) + ">();");
  // wgmma reads its stages through the async proxy: each thread's copies are made visible to it
  // before the barrier.
  if (plan_.any_swizzled()) p_.line("yr_fence_proxy_async();");
  sync_();
}

// At the end of the iteration, after its work: a cp.async holds its address registers until its
// read is under way, and the instructions after it that reuse them wait; here that wait overlaps
// the one at the next iteration's barrier. Where the iteration's last tensor-core matmul leaves
// up to half the warps without work (attention's E·V: 4 column blocks for 8 warps), those warps
// issue the copies while the others finish it; with more idle warps than busy ones every thread
// copies (docs/backends/cuda.md).
void LoadPipeline::issue_next() {
  if (plan_.depth == 0) return;
  const std::string next = "it + " + std::to_string(plan_.depth - 1);
  const int64_t warps = plan_.block.warps(), idle = plan_.block.idle_warps;
  if (idle == 0 || idle > warps - idle) {
    issue_stages(next);
    return;
  }
  // The idle warps follow next_warp (mod warps): their threads, renumbered from 0.
  const int64_t first = plan_.block.next_warp % warps;
  const std::string copier = "copier";
  p_.line("const int " + copier + " = (static_cast<int>(threadIdx.x) + " + std::to_string((warps - first) * 32) +
          ") % " + std::to_string(plan_.block.threads) + ";");
  p_.open("if (" + copier + " < " + std::to_string(idle * 32) + ")");
  issue_stages(next, ThreadShare{"static_cast<int64_t>(" + copier + ")", std::to_string(idle * 32), idle * 32});
  p_.close();
  p_.open("else");
  p_.line("yr_cp_commit();  // an empty group: every thread commits one per iteration");
  p_.close();
}

// A stage the mma reads directly, of a tensor not 16-byte aligned or without 16-byte groups (no
// cp.async: Stage::plain), is filled by plain copies at the top of its own iteration, before the
// barrier that the iteration's copies wait on (so that it needs none of its own). No thread
// still reads that stage: the one read in the previous iteration is another (depth ≥ 2).
void LoadPipeline::fill_plain_stages(const std::string &it, const ThreadShare &copiers) {
  for (const Stage &st : plan_.stages) {
    if (st.plain) {
      fill_plain(st, it, copiers);
    } else if (plan_.is_direct(st.op->outputs[0])) {
      p_.open("if (!" + aligned_name("in" + std::to_string(st.input)) + ")");
      fill_plain(st, it, copiers);
      p_.close();
    }
  }
}

void LoadPipeline::fill_plain(const Stage &st, const std::string &it, const ThreadShare &copiers) {
  const Operator &op = *st.op;
  const std::string tensor = "in" + std::to_string(st.input);
  const Dims &tile_dims = plan_.dims_of(op.outputs[0]);
  p_.open("");
  p_.line("const auto *src = " + tensor + " + " + base(op, "(" + it + ")") + ";");
  p_.line("auto *stage = " + plan_.stage_ptr(st, it) + ";");
  const Dims sg = row_major_strides(op.attributes.sizes);
  const std::vector<CopyBound> bounds = plan_.bounds(op.outputs[0], "(" + it + ")");
  const std::string element = element_type(op.attributes.dtype);
  // Past the end: the tile's first element read (no branch around the read, so that every
  // read of a thread stays in flight at once), zero kept.
  auto value = [&](const std::vector<std::string> &v) {
    const std::string inside = inside_condition(bounds, v, 1);
    if (inside.empty()) return "src[" + index_expr(v, sg) + "]";
    return "yr_select(" + inside + ", src[" + inside + " ? " + index_expr(v, sg) + " : 0], " + element + "{0})";
  };
  // In chunks of the tile's first dim of more than 1, each a thread's reads first and then its
  // stores (the compiler would not move a read above a store into the stage, which may alias
  // the tensor as far as it knows: one memory latency per element), few enough per thread to
  // stay in registers beside attention's (more spill to local memory).
  const size_t d = static_cast<size_t>(
      std::find_if(tile_dims.begin(), tile_dims.end(), [](int64_t n) { return n > 1; }) - tile_dims.begin());
  const int64_t slots = copiers.threads > 0 ? per_thread(tile_dims, copiers.threads) : 0;
  if (slots == 0 || d == tile_dims.size()) {
    shared_loop(
        p_, copiers, tile_dims, "t",
        [&](const std::vector<std::string> &v) { p_.line("stage[" + stage_index(st, v, 1) + "] = " + value(v) + ";"); },
        8);
    p_.close();
    return;
  }
  const int64_t chunks = std::min(tile_dims[d], (slots + kMaxPlainCopiesPerThread - 1) / kMaxPlainCopiesPerThread);
  const int64_t rows = (tile_dims[d] + chunks - 1) / chunks;
  for (int64_t first = 0; first < tile_dims[d]; first += rows) {
    Dims chunk = tile_dims;
    chunk[d] = std::min(rows, tile_dims[d] - first);
    const int64_t held = per_thread(chunk, copiers.threads);
    // The chunk's index along d is the tile's less `first`.
    auto at = [&](std::vector<std::string> v) {
      if (first > 0) v[d] = "(" + v[d] + " + " + std::to_string(first) + ")";
      return v;
    };
    p_.open("");
    p_.line(element + " held[" + std::to_string(held) + "];");
    shared_loop(
        p_, copiers, chunk, "t", [&](const std::vector<std::string> &v) { p_.line("held[u] = " + value(at(v)) + ";"); },
        static_cast<int>(held));
    shared_loop(
        p_, copiers, chunk, "t",
        [&](const std::vector<std::string> &v) { p_.line("stage[" + stage_index(st, at(v), 1) + "] = held[u];"); },
        static_cast<int>(held));
    p_.close();
  }
  p_.close();
}

void LoadPipeline::read_staged(const Stage &st) {
  const Operator &op = *st.op;
  if (plan_.is_direct(op.outputs[0])) return;  // the mma reads the stage (fill_plain_stages)
  const Dims &tile_dims = plan_.dims_of(op.outputs[0]);
  const std::string tensor = "in" + std::to_string(st.input), t = plan_.tile(op.outputs[0]);
  const Dims groups = groups_of(tile_dims, st.group);
  Dims gt = plan_.tile_strides(op.outputs[0]), gc = st.strides;
  gt.back() = gc.back() = st.group;
  const ThreadShare share = plan_.block_share();
  p_.open("");
  p_.line("const auto *stage = " + plan_.stage_ptr(st, "it") + ";");
  if (st.group == 1) {  // float32 words
    shared_loop(
        p_, share, tile_dims, "t",
        [&](const std::vector<std::string> &v) {
          p_.line(t + "[" + index_expr(v, gt) + "] = stage[" + index_expr(v, gc) + "];");
        },
        kMaxStageGroupsPerThread);
    p_.close();
    return;
  }
  p_.open("if (" + aligned_name(tensor) + ")");
  const int64_t slots = per_thread(groups, plan_.block.threads);
  if (slots <= kMaxStageGroupsPerThread) {
    p_.line("uint4 raw[" + std::to_string(slots) + "];");
    shared_loop(
        p_, share, groups, "t",
        [&](const std::vector<std::string> &v) { p_.line("raw[u] = yr_raw16(stage + " + index_expr(v, gc) + ");"); },
        kMaxStageGroupsPerThread);
    shared_loop(
        p_, share, groups, "t",
        [&](const std::vector<std::string> &v) {
          store_group(p_, tensor, "raw[u]", t + " + " + index_expr(v, gt), st.group);
        },
        kMaxStageGroupsPerThread);
  } else {
    shared_loop(
        p_, share, groups, "t",
        [&](const std::vector<std::string> &v) {
          store_group(p_, tensor, "yr_raw16(stage + " + index_expr(v, gc) + ")", t + " + " + index_expr(v, gt),
                      st.group);
        },
        8);
  }
  p_.close();
  p_.open("else");
  p_.line("const auto *src = " + tensor + " + " + base(op, "it") + ";");
  transfer(
      p_, share, tensor, tile_dims, row_major_strides(op.attributes.sizes), plan_.tile_strides(op.outputs[0]), 1,
      [&](const std::string &g, const std::string &s) { p_.line(t + "[" + s + "] = yr_ld(src + " + g + ");"); },
      nullptr, plan_.bounds(op.outputs[0], "it"),
      [&](const std::string &s, int64_t count) { store_zeros(p_, t + " + " + s, count); });
  p_.close();
  p_.close();
}

// Each block's own tiles are issued first, the tiles every block reads after: the former come
// from DRAM, the latter soon from L2, so the longest loads start first and the others still
// return before them. Stores keep the µGraph's order.
void LoadPipeline::load_prefetched() {
  std::vector<PrefetchedTile> issue_order = plan_.prefetch;
  std::stable_partition(issue_order.begin(), issue_order.end(),
                        [&](const PrefetchedTile &tl) { return !plan_.read_by_every_block(*tl.op); });
  for (const PrefetchedTile &tl : issue_order) {
    const Dims &tile_dims = plan_.dims_of(tl.op->outputs[0]);
    const Dims groups = groups_of(tile_dims, tl.group);
    Dims gg = row_major_strides(tl.op->attributes.sizes);
    gg.back() = tl.group;
    const std::string tensor = "in" + std::to_string(tl.input), raw = "raw" + std::to_string(tl.input);
    p_.line("const auto *src" + std::to_string(tl.input) + " = " + tensor + " + " + base(*tl.op, "0") + ";");
    p_.line("uint4 " + raw + "[" + std::to_string(per_thread(groups, plan_.block.threads)) + "];");
    p_.open("if (" + aligned_name(tensor) + ")");
    const std::vector<CopyBound> bounds = plan_.bounds(tl.op->outputs[0], "0");
    shared_loop(
        p_, plan_.block_share(), groups, "t",
        [&](const std::vector<std::string> &v) {
          const std::string inside = inside_condition(bounds, v, tl.group);
          const std::string from = "src" + std::to_string(tl.input) + " + ";
          if (inside.empty()) {
            p_.line(raw + "[u] = yr_stream16(" + from + index_expr(v, gg) + ");");
          } else {  // as fill_plain_stages: no branch around the read
            p_.line(raw + "[u] = yr_select(" + inside + ", yr_stream16(" + from + "(" + inside + " ? " +
                    index_expr(v, gg) + " : 0)), make_uint4(0u, 0u, 0u, 0u));");
          }
        },
        8);
    p_.close();
  }
}

void LoadPipeline::store_prefetched(const std::function<void(TensorId)> &wrote) {
  for (const PrefetchedTile &tl : plan_.prefetch) {
    const TensorId id = tl.op->outputs[0];
    const std::string tensor = "in" + std::to_string(tl.input), t = plan_.tile(id);
    const std::string src = "src" + std::to_string(tl.input), raw = "raw" + std::to_string(tl.input);
    transfer(
        p_, plan_.block_share(), tensor, plan_.dims_of(id), row_major_strides(tl.op->attributes.sizes),
        plan_.tile_strides(id), tl.group,
        [&](const std::string &g, const std::string &s) {
          p_.line(t + "[" + s + "] = yr_ld(" + src + " + " + g + ");");
        },
        [&](const std::string &, const std::string &s) {
          store_group(p_, tensor, raw + "[u]", t + " + " + s, tl.group);
        },
        plan_.bounds(id, "0"), [&](const std::string &s, int64_t count) { store_zeros(p_, t + " + " + s, count); });
    wrote(id);
  }
}

void LoadPipeline::start_stage_barriers() {
  const std::string D = std::to_string(plan_.depth);
  p_.line("unsigned long long *const stage_full = reinterpret_cast<unsigned long long *>(" + plan_.stage_barriers +
          "), *const stage_empty = stage_full + " + D + ";");
  p_.open("if (threadIdx.x == 0)");
  p_.open("for (int s = 0; s < " + D + "; ++s)");
  p_.line("yr_mbar_init(stage_full + s, " + std::to_string(plan_.producers) + ");");
  p_.line("yr_mbar_init(stage_empty + s, " + plan_.computing_threads() + ");");
  p_.close();
  p_.close();
  sync_();
}

// Stage `it`'s copies by the producers: cp.async where the tensor is 16-byte aligned, plain copies
// where not; one group committed either way.
void LoadPipeline::produce_stage(const std::string &it) {
  const ThreadShare producers = plan_.producer_share();
  p_.open("if (" + it + " < " + std::to_string(plan_.bg.config().forloop_range) + ")");
  fill_plain_stages(it, producers);
  p_.close();
  issue_stages(it, producers);
}

}  // namespace yirage::codegen::cuda
