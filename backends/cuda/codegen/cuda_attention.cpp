#include "cuda/codegen/cuda_attention.hpp"

#include <algorithm>

#include "codegen/lower_operator.hpp"
#include "cuda/codegen/cuda_loops.hpp"
#include "cuda/codegen/cuda_wgmma.hpp"

namespace yirage::codegen::cuda {

void RegisterAttention::emit_turns_start(Printer &p) const {
  if (!takes_turns()) return;
  p.line("const int att_wg = att_warp >> 2;");
  p.line("if (att_wg == " + std::to_string(warpgroup_count() - 1) +
         ") asm volatile(\"bar.arrive 2, 256;\" ::: \"memory\");");
}

bool RegisterAttention::fits(int64_t block_warps) {
  if (rows < 1 || depth % 16 != 0 || cols % 16 != 0 || keys % 16 != 0) return false;
  row_tiles = (rows + 15) / 16;
  if (row_tiles > block_warps) return false;
  shares = std::min<int64_t>(block_warps / row_tiles, keys / 16);
  while ((keys / 16) % shares != 0) --shares;
  warps = row_tiles * shares;
  return true;
}

bool RegisterAttention::fits_warpgroups(int64_t block_warps) {
  if (rows % 64 != 0 || rows / 16 > block_warps || depth % 16 != 0 || cols % 64 != 0 || cols > 256 || keys % 64 != 0 ||
      keys > 128) {
    return false;
  }
  row_tiles = rows / 16;
  shares = 1;
  warps = row_tiles;  // the block's other warps issue the copies
  warpgroups = true;
  return true;
}

void RegisterAttention::emit_registers(Printer &p, const std::string &q, int64_t q_stride,
                                       std::optional<double> q_norm_eps) const {
  const std::string M = std::to_string(rows), QS = std::to_string(q_stride), S = std::to_string(depth / 16);
  const std::string T = std::to_string(row_tiles);
  p.line(
      "const int att_lane = threadIdx.x & 31, att_warp = threadIdx.x >> 5, att_grp = att_lane >> 2, att_tig = att_lane "
      "& 3;");
  // The warp's first row and its share of the keys.
  p.line("const int att_row = att_warp % " + T + " * 16, att_share = att_warp / " + T + ";");
  p.line("unsigned att_q[" + S + "][4];");
  p.line("float att_o[" + std::to_string(cols / 8) + "][4] = {};");
  // wgmma's scores: declared once (its first mma of an iteration overwrites them).
  if (warpgroups) p.line("float att_s[" + std::to_string(keys_per_warp() / 8) + "][4] = {};");
  // The rows' offsets in log2 units (−∞ until a row sees a score above −∞) and those its exps
  // subtract (0 while the offset is −∞: exp(−∞) is 0 then, not NaN).
  p.line("float att_m0 = -INFINITY, att_m1 = -INFINITY, att_b0 = 0.0f, att_b1 = 0.0f;");
  p.line("float att_l0 = 0.0f, att_l1 = 0.0f;");
  p.open("");
  p.line("const bool in0 = att_row + att_grp < " + M + ", in1 = att_row + att_grp + 8 < " + M + ";");
  // Per k16 step: the lane's values of rows grp (0, 1, 8, 9 columns on) and grp + 8, in the
  // order of the A operand's registers.
  p.line("float x[" + S + "][8];");
  p.line("#pragma unroll");
  p.open("for (int s = 0; s < " + S + "; ++s)");
  p.line("const float *r0 = " + q + " + (att_row + att_grp) * " + QS + " + s * 16 + 2 * att_tig;");
  p.line("const float *r1 = r0 + 8 * " + QS + ";");
  p.line("#pragma unroll");
  p.line(
      "for (int h = 0; h < 2; ++h) { x[s][4 * h] = in0 ? r0[8 * h] : 0.0f; x[s][4 * h + 1] = in0 ? r0[8 * h + 1] : "
      "0.0f; "
      "x[s][4 * h + 2] = in1 ? r1[8 * h] : 0.0f; x[s][4 * h + 3] = in1 ? r1[8 * h + 1] : 0.0f; }");
  p.close();
  std::string scale0, scale1;
  if (q_norm_eps) {
    p.line("float t0 = 0.0f, t1 = 0.0f;");
    p.line("#pragma unroll");
    p.open("for (int s = 0; s < " + S + "; ++s)");
    p.line("t0 += x[s][0] * x[s][0] + x[s][1] * x[s][1] + x[s][4] * x[s][4] + x[s][5] * x[s][5];");
    p.line("t1 += x[s][2] * x[s][2] + x[s][3] * x[s][3] + x[s][6] * x[s][6] + x[s][7] * x[s][7];");
    p.close();
    p.open("for (int off = 1; off < 4; off *= 2)");
    p.line("t0 += __shfl_xor_sync(0xffffffffu, t0, off);");
    p.line("t1 += __shfl_xor_sync(0xffffffffu, t1, off);");
    p.close();
    // Where a row's mean square is out of float32's range (a row of 1e19s or 1e-23s), the warp
    // (together: the shuffles need every lane) does its rows again: each row's largest magnitude,
    // then its squares scaled by it (rms_scale).
    const double eps = *q_norm_eps;
    Expr m0 = var("t0") / float_const(static_cast<double>(depth)),
         m1 = var("t1") / float_const(static_cast<double>(depth));
    if (eps != 0) {
      m0 = m0 + float_const(eps);
      m1 = m1 + float_const(eps);
    }
    p.line("float inv0 = yr_rsqrt(" + c_text(m0) + "), inv1 = yr_rsqrt(" + c_text(m1) + ");");
    p.open("if (__any_sync(0xffffffffu, (in0 && !(" + c_text(rms_mean_in_range(m0)) + ")) || (in1 && !(" +
           c_text(rms_mean_in_range(m1)) + "))))");
    p.line("float p0 = 0.0f, p1 = 0.0f;");
    p.line("#pragma unroll");
    p.open("for (int s = 0; s < " + S + "; ++s)");
    p.line("p0 = yr_max(p0, yr_max(yr_max(fabsf(x[s][0]), fabsf(x[s][1])), yr_max(fabsf(x[s][4]), fabsf(x[s][5]))));");
    p.line("p1 = yr_max(p1, yr_max(yr_max(fabsf(x[s][2]), fabsf(x[s][3])), yr_max(fabsf(x[s][6]), fabsf(x[s][7]))));");
    p.close();
    p.open("for (int off = 1; off < 4; off *= 2)");
    p.line("p0 = yr_max(p0, __shfl_xor_sync(0xffffffffu, p0, off));");
    p.line("p1 = yr_max(p1, __shfl_xor_sync(0xffffffffu, p1, off));");
    p.close();
    // The lane's values scaled in place: the fragments below multiply by inv alone.
    p.line("const float s0 = " + c_text(rms_scale(var("p0"), eps)) + ", s1 = " + c_text(rms_scale(var("p1"), eps)) +
           ";");
    p.line("t0 = 0.0f;");
    p.line("t1 = 0.0f;");
    p.line("#pragma unroll");
    p.open("for (int s = 0; s < " + S + "; ++s)");
    p.line("#pragma unroll");
    p.open("for (int h = 0; h < 2; ++h)");
    p.line("x[s][4 * h] *= s0, x[s][4 * h + 1] *= s0, x[s][4 * h + 2] *= s1, x[s][4 * h + 3] *= s1;");
    p.line("t0 += x[s][4 * h] * x[s][4 * h] + x[s][4 * h + 1] * x[s][4 * h + 1];");
    p.line("t1 += x[s][4 * h + 2] * x[s][4 * h + 2] + x[s][4 * h + 3] * x[s][4 * h + 3];");
    p.close();
    p.close();
    p.open("for (int off = 1; off < 4; off *= 2)");
    p.line("t0 += __shfl_xor_sync(0xffffffffu, t0, off);");
    p.line("t1 += __shfl_xor_sync(0xffffffffu, t1, off);");
    p.close();
    p.line("inv0 = " + c_text(rms_scaled_inverse(var("t0"), depth, eps, var("s0"))) + ";");
    p.line("inv1 = " + c_text(rms_scaled_inverse(var("t1"), depth, eps, var("s1"))) + ";");
    p.close();
    scale0 = " * inv0";
    scale1 = " * inv1";
  }
  const std::string type = "static_cast<const " + element + " *>(nullptr)";
  auto pack = [&](int first, const std::string &scale) {
    const std::string a = "x[s][" + std::to_string(first) + "]", b = "x[s][" + std::to_string(first + 1) + "]";
    return "yr_pack2(" + type + ", " + a + scale + ", " + b + scale + ")";
  };
  p.line("#pragma unroll");
  p.open("for (int s = 0; s < " + S + "; ++s)");
  // Rows past the block's are zeros (not 0 · inv, which is NaN where eps is 0).
  p.line("att_q[s][0] = in0 ? " + pack(0, scale0) + " : 0u;");
  p.line("att_q[s][1] = in1 ? " + pack(2, scale1) + " : 0u;");
  p.line("att_q[s][2] = in0 ? " + pack(4, scale0) + " : 0u;");
  p.line("att_q[s][3] = in1 ? " + pack(6, scale1) + " : 0u;");
  p.close();
  p.close();
}

void RegisterAttention::emit_iteration(Printer &p, const std::string &k, int64_t k_stride, const std::string &v,
                                       int64_t v_stride) const {
  p.open("if (att_warp < " + std::to_string(warps) + ")");
  if (warpgroups) {
    emit_warpgroup_iteration(p, k, v);
  } else {
    emit_warp_iteration(p, k, k_stride, v, v_stride);
  }
  p.close();
}

void RegisterAttention::emit_warp_iteration(Printer &p, const std::string &k, int64_t k_stride, const std::string &v,
                                            int64_t v_stride) const {
  const int64_t steps = keys_per_warp() / 16;  // k16 steps of E·V, two 8-key tiles of A each
  const std::string KS = std::to_string(k_stride), VS = std::to_string(v_stride), KPW = std::to_string(keys_per_warp());
  // ldmatrix .trans of four 8×8 tiles, lanes 8·i…8·i + 7 addressing tile i's rows: rows k,
  // k + 8 of columns c, then the same rows of columns c + 8. t[0], t[1] are then the B
  // operands of columns c…c + 7 for a k16 step, t[2], t[3] those of c + 8…c + 15, each pair in
  // consecutive registers as the mma takes it (other orders cost register moves).
  p.line("const " + element + " *att_k = " + k + " + (((att_lane >> 3) & 1) * 8 + (att_lane & 7)) * " + KS +
         " + att_share * " + KPW + " + (att_lane >> 4) * 8;");
  p.line("float att_s[" + std::to_string(2 * steps) + "][4] = {};");
  p.line("#pragma unroll");
  p.open("for (int s = 0; s < " + std::to_string(depth / 16) + "; ++s)");
  p.line("#pragma unroll");
  p.open("for (int j = 0; j < " + std::to_string(steps) + "; ++j)");
  p.line("unsigned t[4];");
  p.line("yr_ldmatrix_t4(att_k + s * 16 * " + KS + " + j * 16, t);");
  p.line("yr_mma16(att_k, att_s[2 * j], att_q[s][0], att_q[s][1], att_q[s][2], att_q[s][3], t[0], t[1]);");
  p.line("yr_mma16(att_k, att_s[2 * j + 1], att_q[s][0], att_q[s][1], att_q[s][2], att_q[s][3], t[2], t[3]);");
  p.close();
  p.close();
  emit_softmax_update(p, 0, 2 * steps, "", nullptr);
  p.line("const " + element + " *att_v = " + v + " + (att_share * " + KPW +
         " + ((att_lane >> 3) & 1) * 8 + (att_lane & 7)) * " + VS + " + (att_lane >> 4) * 8;");
  p.line("#pragma unroll");
  p.open("for (int j = 0; j < " + std::to_string(steps) + "; ++j)");
  p.line("unsigned a[4];");
  emit_exp_step(p, "a");
  p.line("#pragma unroll");
  p.open("for (int c = 0; c < " + std::to_string(cols / 16) + "; ++c)");
  p.line("unsigned t[4];");
  p.line("yr_ldmatrix_t4(att_v + j * 16 * " + VS + " + c * 16, t);");
  p.line("yr_mma16(att_v, att_o[2 * c], a[0], a[1], a[2], a[3], t[0], t[1]);");
  p.line("yr_mma16(att_v, att_o[2 * c + 1], a[0], a[1], a[2], a[3], t[2], t[3]);");
  p.close();
  p.close();
}

void RegisterAttention::emit_warpgroup_iteration(Printer &p, const std::string &k, const std::string &v) const {
  const int64_t halves = keys_per_warp() / 64, chunks = 8, half_steps = 4;  // per half: 8-key chunks, k16 steps
  const std::string wait_one = halves > 1 ? "yr_wgmma_wait<1>();" : "yr_wgmma_wait<0>();";
  if (takes_turns()) p.line("asm volatile(\"bar.sync %0, 256;\" :: \"r\"(2 + att_wg) : \"memory\");");
  // The stages' descriptors once per iteration: an operand n elements into a stage has the
  // stage's descriptor plus 2n / 16 (the address field counts 16 bytes; shared memory lies
  // below 256 KiB, so the 14-bit field never carries): building each mma's descriptor from its
  // pointer was a large share of the iteration's instructions.
  p.line("const unsigned long long att_kd = yr_wgmma_desc(" + k + ", " + std::to_string(depth * 128) +
         ", 1024), att_vd = yr_wgmma_desc(" + v + ", " + std::to_string(keys * 128) + ", 1024);");
  p.line("yr_wgmma_fence();");
  for (int64_t h = 0; h < halves; ++h) {
    for (int64_t s = 0; s < depth / 16; ++s) {
      emit_wgmma(p, 64, "att_s", h * chunks, "att_q[" + std::to_string(s) + "]",
                 "att_kd + " + std::to_string((h * depth * 64 + s * 16 * 64) * 2 / 16), s > 0);
    }
    p.line("yr_wgmma_commit();");
  }
  if (takes_turns()) {
    const std::string G = std::to_string(warpgroup_count());
    p.line("if (att_wg != " + std::to_string(warpgroup_count() - 1) + " || it != " + std::to_string(issue_turns - 1) +
           ") asm volatile(\"bar.arrive %0, 256;\" :: \"r\"(2 + (att_wg + 1) % " + G + ") : \"memory\");");
  }
  for (int64_t h = 0; h < halves; ++h) {
    // Q·K of this half is done (one group, the next half's Q·K or the last E·V, may remain).
    p.line(wait_one);
    p.text(wgmma_operand_fence("att_s", h * chunks, chunks));
    // The sums may only be rescaled once no E·V writes them.
    const std::string drain = h == 0 ? "" : "yr_wgmma_wait<0>();\n" + wgmma_operand_fence("att_o", 0, cols / 8);
    const std::string a = "att_a" + std::to_string(h);
    p.line("unsigned " + a + "[" + std::to_string(half_steps) + "][4];");
    emit_softmax_update(p, h * chunks, (h + 1) * chunks, drain, [&] {
      p.line("#pragma unroll");
      p.open("for (int j = " + std::to_string(h * half_steps) + "; j < " + std::to_string((h + 1) * half_steps) +
             "; ++j)");
      emit_exp_step(p, a + "[j - " + std::to_string(h * half_steps) + "]");
      p.close();
    });
    p.line("yr_wgmma_fence();");
    for (int64_t j = 0; j < half_steps; ++j) {
      emit_wgmma(p, cols, "att_o", 0, a + "[" + std::to_string(j) + "]",
                 "att_vd + " + std::to_string((h * half_steps + j) * 16 * 64 * 2 / 16), true);
    }
    p.line("yr_wgmma_commit();");
  }
  p.line("yr_wgmma_wait<0>();");
  p.text(wgmma_operand_fence("att_o", 0, cols / 8));
}

void RegisterAttention::emit_softmax_update(Printer &p, int64_t first, int64_t last, const std::string &drain,
                                            const std::function<void()> &exps) const {
  const std::string log2e = kLog2e, N = std::to_string(last - first), F = std::to_string(first);
  p.open("");
  if (!keys_inside.empty()) {
    // The lane's keys of chunk j are 8j + 2·tig and the next, from its share's start on.
    const std::string KPW = std::to_string(keys_per_warp());
    p.line("const int att_kin = (" + keys_inside + ") - att_share * " + KPW + " - 2 * att_tig;");
    p.open("if (att_kin < " + std::to_string(last * 8) + ")");
    p.line("#pragma unroll");
    p.open("for (int j = " + F + "; j < " + std::to_string(last) + "; ++j)");
    p.line("if (8 * j >= att_kin) att_s[j][0] = att_s[j][2] = -INFINITY;");
    p.line("if (8 * j + 1 >= att_kin) att_s[j][1] = att_s[j][3] = -INFINITY;");
    p.close();
    p.close();
  }
  p.line("float att_x0[" + N + "], att_x1[" + N + "];");
  p.line("#pragma unroll");
  p.open("for (int j = 0; j < " + N + "; ++j)");
  p.line("att_x0[j] = fmaxf(att_s[" + F + " + j][0], att_s[" + F + " + j][1]);");
  p.line("att_x1[j] = fmaxf(att_s[" + F + " + j][2], att_s[" + F + " + j][3]);");
  p.close();
  p.line("#pragma unroll");
  p.open("for (int w = 1; w < " + N + "; w *= 2)");
  p.line("#pragma unroll");
  p.open("for (int j = 0; j + w < " + N + "; j += 2 * w)");
  p.line("att_x0[j] = fmaxf(att_x0[j], att_x0[j + w]);");
  p.line("att_x1[j] = fmaxf(att_x1[j], att_x1[j + w]);");
  p.close();
  p.close();
  const std::string slack = std::to_string(offset_slack) + ".0f";
  if (exps) {
    p.line("const float att_t0 = att_l0, att_t1 = att_l1;");
    exps();
  }
  p.open("if (__any_sync(0xffffffffu, att_x0[0] * " + log2e + " > att_m0 + " + slack + " || att_x1[0] * " + log2e +
         " > att_m1 + " + slack + "))");
  if (exps) p.line("att_l0 = att_t0, att_l1 = att_t1;");
  p.open("for (int off = 1; off < 4; off *= 2)");
  p.line("att_x0[0] = fmaxf(att_x0[0], __shfl_xor_sync(0xffffffffu, att_x0[0], off));");
  p.line("att_x1[0] = fmaxf(att_x1[0], __shfl_xor_sync(0xffffffffu, att_x1[0], off));");
  p.close();
  p.line("const float att_n0 = fmaxf(att_m0, att_x0[0] * " + log2e + "), att_n1 = fmaxf(att_m1, att_x1[0] * " + log2e +
         ");");
  p.line("att_b0 = att_n0 == -INFINITY ? 0.0f : att_n0;");
  p.line("att_b1 = att_n1 == -INFINITY ? 0.0f : att_n1;");
  p.line("const float att_r0 = yr_exp2(att_m0 - att_b0), att_r1 = yr_exp2(att_m1 - att_b1);");
  p.line("att_m0 = att_n0;");
  p.line("att_m1 = att_n1;");
  if (!drain.empty()) p.text(drain);
  p.line("att_l0 *= att_r0;");
  p.line("att_l1 *= att_r1;");
  p.line("#pragma unroll");
  p.open("for (int c = 0; c < " + std::to_string(cols / 8) + "; ++c)");
  p.line("att_o[c][0] *= att_r0;");
  p.line("att_o[c][1] *= att_r0;");
  p.line("att_o[c][2] *= att_r1;");
  p.line("att_o[c][3] *= att_r1;");
  p.close();
  if (exps) exps();
  p.close();
  p.close();
}

void RegisterAttention::emit_exp_step(Printer &p, const std::string &a) const {
  const std::string log2e = kLog2e;
  p.line("float e[2][4];");
  p.line("#pragma unroll");
  p.open("for (int h = 0; h < 2; ++h)");
  p.line("e[h][0] = yr_exp2(fmaf(att_s[2 * j + h][0], " + log2e + ", -att_b0));");
  p.line("e[h][1] = yr_exp2(fmaf(att_s[2 * j + h][1], " + log2e + ", -att_b0));");
  p.line("e[h][2] = yr_exp2(fmaf(att_s[2 * j + h][2], " + log2e + ", -att_b1));");
  p.line("e[h][3] = yr_exp2(fmaf(att_s[2 * j + h][3], " + log2e + ", -att_b1));");
  p.close();
  p.line("att_l0 += (e[0][0] + e[0][1]) + (e[1][0] + e[1][1]);");
  p.line("att_l1 += (e[0][2] + e[0][3]) + (e[1][2] + e[1][3]);");
  p.line("const " + element + " *type = nullptr;");
  p.line(a + "[0] = yr_pack2(type, e[0][0], e[0][1]);");
  p.line(a + "[1] = yr_pack2(type, e[0][2], e[0][3]);");
  p.line(a + "[2] = yr_pack2(type, e[1][0], e[1][1]);");
  p.line(a + "[3] = yr_pack2(type, e[1][2], e[1][3]);");
}

void RegisterAttention::emit_wgmma(Printer &p, int64_t n, const std::string &acc, int64_t first, const std::string &a,
                                   const std::string &desc, bool accumulate) const {
  p.line(wgmma_call(n, element == "yr_bf16" ? DType::kBFloat16 : DType::kFloat16, acc, first, a, desc, accumulate));
}

void RegisterAttention::emit_finish(Printer &p, const Destination &ev, const Destination &e_sum,
                                    const std::string &scratch) const {
  const std::string M = std::to_string(rows), C = std::to_string(cols), T = std::to_string(row_tiles);
  const std::string part = std::to_string(rows * cols);
  const std::string sums = "(" + scratch + " + " + std::to_string((shares - 1) * rows * cols) + ")";  // the shares' Σ E
  p.open("if (att_warp < " + std::to_string(warps) + ")");
  p.open("for (int off = 1; off < 4; off *= 2)");
  p.line("att_l0 += __shfl_xor_sync(0xffffffffu, att_l0, off);");
  p.line("att_l1 += __shfl_xor_sync(0xffffffffu, att_l1, off);");
  p.close();
  p.close();
  p.line("const float att_f0 = yr_exp2(att_m0), att_f1 = yr_exp2(att_m1);");
  // Rows grp (values 0, 1 of each accumulator) and grp + 8 (values 2, 3).
  auto each_row = [&](const std::function<void(const std::string &, int)> &body) {
    for (int r = 0; r < 2; ++r) {
      const std::string row = r == 0 ? "(att_row + att_grp)" : "(att_row + att_grp + 8)";
      p.open("if (" + row + " < " + M + ")");
      body(row, r);
      p.close();
    }
  };
  auto value = [](int r, int half) {
    return "att_o[c][" + std::to_string(2 * r + half) + "] * att_f" + std::to_string(r);
  };
  if (shares > 1) {
    p.open("if (att_warp >= " + T + " && att_warp < " + std::to_string(warps) + ")");
    p.line("float *att_part = " + scratch + " + (att_share - 1) * " + part + " + 2 * att_tig;");
    each_row([&](const std::string &row, int r) {
      p.line("#pragma unroll");
      p.open("for (int c = 0; c < " + std::to_string(cols / 8) + "; ++c)");
      p.line("*reinterpret_cast<float2 *>(att_part + " + row + " * " + C + " + c * 8) = make_float2(" + value(r, 0) +
             ", " + value(r, 1) + ");");
      p.close();
      p.line("if (att_tig == 0) " + sums + "[(att_share - 1) * " + M + " + " + row + "] = att_l" + std::to_string(r) +
             " * att_f" + std::to_string(r) + ";");
    });
    p.close();
    p.line("__syncthreads();");
  }
  p.open("if (att_warp < " + T + ")");
  each_row([&](const std::string &row, int r) {
    p.line("#pragma unroll");
    p.open("for (int c = 0; c < " + std::to_string(cols / 8) + "; ++c)");
    p.line("float x = " + value(r, 0) + ", y = " + value(r, 1) + ";");
    if (shares > 1) {
      p.line("#pragma unroll");
      p.open("for (int w = 0; w < " + std::to_string(shares - 1) + "; ++w)");
      p.line("const float2 s = *reinterpret_cast<const float2 *>(" + scratch + " + w * " + part + " + " + row + " * " +
             C + " + c * 8 + 2 * att_tig);");
      p.line("x += s.x;");
      p.line("y += s.y;");
      p.close();
    }
    const std::string at = ev.base + " + " + row + " * " + std::to_string(ev.row_stride) + " + c * 8 + 2 * att_tig";
    const std::string one_by_one = "{ yr_st(" + at + ", x); yr_st(" + at + " + 1, y); }";
    const std::string pair = "*reinterpret_cast<float2 *>(" + at + ") = make_float2(x, y);";
    if (ev.pairs.empty()) {
      p.line(one_by_one);
    } else if (ev.pairs == "true") {
      p.line(pair);
    } else {
      p.line("if (" + ev.pairs + ") " + pair);
      p.line("else " + one_by_one);
    }
    p.close();
    const std::string R = std::to_string(r);
    p.open("if (att_tig == 0)");
    p.line("float total = att_l" + R + " * att_f" + R + ";");
    if (shares > 1) {
      p.line("#pragma unroll");
      p.line("for (int w = 0; w < " + std::to_string(shares - 1) + "; ++w) total += " + sums + "[w * " + M + " + " +
             row + "];");
    }
    p.line("yr_st(" + e_sum.base + " + " + row + " * " + std::to_string(e_sum.row_stride) + ", total);");
    p.close();
  });
  p.close();
}

}  // namespace yirage::codegen::cuda
