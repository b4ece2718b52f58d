#include "cublas_matmul.hpp"

#include <cstdint>

#include "cuda/codegen/cuda_gemm.hpp"
#include "ir/block_graph.hpp"
#include "ir/dtype.hpp"

namespace yirage::cuda {
namespace {

int64_t product(const Dims &dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return CUDA_R_16F;
    case DType::kBFloat16: return CUDA_R_16BF;
    case DType::kFloat32: return CUDA_R_32F;
  }
  throw Error(ErrorCode::kInternal, "cuda: cuBLASLt: unknown dtype");
}

// A column-major rows × cols layout with leading dimension `ld`, `batch` of them `stride` apart.
cublasLtMatrixLayout_t layout(const CublasLt &lt, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld,
                              int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  lt.check(lt.cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
           "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const auto count = static_cast<int32_t>(batch);
    cublasStatus_t s = lt.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    if (s == CUBLAS_STATUS_SUCCESS) {
      s = lt.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
      lt.cublasLtMatrixLayoutDestroy(l);
      lt.check(s, "cublasLtMatrixLayoutSetAttribute");
    }
  }
  return l;
}

void *pointer_of(CUdeviceptr p) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
}

}  // namespace

std::unique_ptr<CublasMatmul> CublasMatmul::plan(const CublasLt &lt, const serialize::KernelProgram &program,
                                                 int max_algorithms) {
  if (program.operator_count() != 1) return nullptr;
  const Operator &op = program.op();
  Operands operands;
  Dims a_dims, b_dims, c_dims;
  DType dtype = DType::kFloat32;
  if (op.kind == OpKind::kMatmul) {
    a_dims = program.graph.tensor(op.inputs[0]).dims;
    b_dims = program.graph.tensor(op.inputs[1]).dims;
    c_dims = program.graph.tensor(op.outputs[0]).dims;
    dtype = program.graph.tensor(op.outputs[0]).dtype;
  } else if (op.kind == OpKind::kCustomized) {
    // A µGraph that is one product of many rows (codegen::cuda::ugraph_gemm_form), with at most
    // a residual of the output's type added: D = A·B + C, C the residual.
    const std::optional<codegen::cuda::UGraphGemm> form = codegen::cuda::ugraph_gemm_form(*op.block_graph);
    if (!form || form->chain.size() > 1) return nullptr;
    const auto &iterators = op.block_graph->operators();
    const DType out_type = program.graph.tensor(op.outputs.at(0)).dtype;
    if (form->chain.size() == 1) {
      const codegen::cuda::UGraphGemm::Step &step = form->chain[0];
      if (step.op->kind != OpKind::kAdd || iterators[step.other].attributes.dtype != out_type) return nullptr;
      operands.residual = static_cast<int>(step.other);
    }
    operands.a = form->a_input;
    operands.b = form->b_input;
    a_dims = iterators[form->a_input].attributes.sizes;
    b_dims = iterators[form->b_input].attributes.sizes;
    c_dims = program.graph.tensor(op.outputs.at(0)).dims;
    dtype = out_type;
  } else {
    return nullptr;
  }
  const size_t rank = c_dims.size();
  const int64_t m = c_dims[rank - 2], n = c_dims[rank - 1], k = a_dims[rank - 1];
  const int64_t batch = product(c_dims, 0, rank - 2);
  const int64_t batch_a = product(a_dims, 0, rank - 2), batch_b = product(b_dims, 0, rank - 2);
  // One GEMM of batch·m rows where B is shared; else a strided batch, A possibly shared.
  int64_t rows = m, count = batch, stride_a = m * k, stride_b = k * n;
  if (batch_b == 1) {
    rows = batch * m;
    count = 1;
  } else if (batch_a == 1 && batch_b == batch) {
    stride_a = 0;
  } else if (batch_a != batch || batch_b != batch) {
    return nullptr;  // broadcast over some batch dims only
  }
  std::unique_ptr<CublasMatmul> plan(new CublasMatmul(lt));
  plan->operands_ = operands;
  const cudaDataType_t type = cuda_type(dtype);
  lt.check(lt.cublasLtCreate(&plan->handle_), "cublasLtCreate");
  lt.check(lt.cublasLtMatmulDescCreate(&plan->desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  plan->a_ = layout(lt, type, n, k, n, count, stride_b);
  plan->b_ = layout(lt, type, k, rows, k, count, stride_a);
  plan->c_ = layout(lt, type, n, rows, n, count, m * n);
  plan->shape_ = (count > 1 ? std::to_string(count) + " × " : std::string()) + "[" + std::to_string(rows) + "," +
                 std::to_string(k) + "]·[" + std::to_string(k) + "," + std::to_string(n) + "] " + dtype_name(dtype) +
                 (operands.residual >= 0 ? " + a residual" : "");

  cublasLtMatmulPreference_t preference = nullptr;
  lt.check(lt.cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const uint64_t workspace = uint64_t{32} << 20;  // what cuBLAS asks for on Hopper
  const uint32_t alignment = 16;
  cublasStatus_t s = lt.cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                             &workspace, sizeof workspace);
  for (auto which : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                     CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    if (s == CUBLAS_STATUS_SUCCESS) {
      s = lt.cublasLtMatmulPreferenceSetAttribute(preference, which, &alignment, sizeof alignment);
    }
  }
  plan->found_.resize(static_cast<size_t>(max_algorithms));
  int returned = 0;
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = lt.cublasLtMatmulAlgoGetHeuristic(plan->handle_, plan->desc_, plan->a_, plan->b_, plan->c_, plan->c_,
                                          preference, max_algorithms, plan->found_.data(), &returned);
  }
  lt.cublasLtMatmulPreferenceDestroy(preference);
  // No algorithm for these shapes is an answer, not a failure: the generated kernel runs.
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || (s == CUBLAS_STATUS_SUCCESS && returned == 0)) return nullptr;
  lt.check(s, "cublasLtMatmulAlgoGetHeuristic");
  plan->found_.resize(static_cast<size_t>(returned));
  return plan;
}

CublasMatmul::~CublasMatmul() {
  if (c_) lt_.cublasLtMatrixLayoutDestroy(c_);
  if (b_) lt_.cublasLtMatrixLayoutDestroy(b_);
  if (a_) lt_.cublasLtMatrixLayoutDestroy(a_);
  if (desc_) lt_.cublasLtMatmulDescDestroy(desc_);
  if (handle_) lt_.cublasLtDestroy(handle_);
}

void CublasMatmul::run(int algorithm, const std::vector<CUdeviceptr> &pointers, CUdeviceptr workspace,
                       CUstream stream) const {
  const cublasLtMatmulHeuristicResult_t &found = found_[static_cast<size_t>(algorithm)];
  const bool residual = operands_.residual >= 0;
  const float one = 1.0f, beta = residual ? 1.0f : 0.0f;
  auto pointer = [&](size_t at) { return pointer_of(pointers.at(at)); };
  void *const d = pointer(pointers.size() - 1);
  void *const c = residual ? pointer(static_cast<size_t>(operands_.residual)) : d;
  lt_.check(lt_.cublasLtMatmul(handle_, desc_, &one, pointer(operands_.b), a_, pointer(operands_.a), b_, &beta, c, c_,
                               d, c_, &found.algo, pointer_of(workspace), found.workspaceSize,
                               reinterpret_cast<cudaStream_t>(stream)),
            "cublasLtMatmul " + shape_);
}

void CublasMatmul::launch(const Driver &driver, const std::vector<CUdeviceptr> &pointers, CUstream stream,
                          CUstream memory) {
  const size_t bytes = workspace_bytes(chosen_);
  run(chosen_, pointers, bytes > 0 ? workspaces_.get(driver, memory, bytes) : 0, stream);
}

void CublasMatmul::free_workspaces(const Driver &driver) {
  workspaces_.free_all(driver);
}

}  // namespace yirage::cuda
