#include "cublas_matmul.hpp"

#include <cstdint>

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

}  // namespace

std::unique_ptr<CublasMatmul> CublasMatmul::plan(const CublasLt &lt, const serialize::KernelProgram &program,
                                                 int max_algorithms) {
  const Operator &op = program.op();
  if (op.kind != OpKind::kMatmul) return nullptr;
  const Tensor &a = program.graph.tensor(op.inputs[0]);
  const Tensor &b = program.graph.tensor(op.inputs[1]);
  const Tensor &c = program.graph.tensor(op.outputs[0]);
  const size_t rank = c.dims.size();
  const int64_t m = c.dims[rank - 2], n = c.dims[rank - 1], k = a.dims[rank - 1];
  const int64_t batch = product(c.dims, 0, rank - 2);
  const int64_t batch_a = product(a.dims, 0, rank - 2), batch_b = product(b.dims, 0, rank - 2);
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
  const cudaDataType_t type = cuda_type(c.dtype);
  lt.check(lt.cublasLtCreate(&plan->handle_), "cublasLtCreate");
  lt.check(lt.cublasLtMatmulDescCreate(&plan->desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  plan->a_ = layout(lt, type, n, k, n, count, stride_b);
  plan->b_ = layout(lt, type, k, rows, k, count, stride_a);
  plan->c_ = layout(lt, type, n, rows, n, count, m * n);
  plan->shape_ = (count > 1 ? std::to_string(count) + " × " : std::string()) + "[" + std::to_string(rows) + "," +
                 std::to_string(k) + "]·[" + std::to_string(k) + "," + std::to_string(n) + "] " + dtype_name(c.dtype);

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

void CublasMatmul::run(int algorithm, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr workspace,
                       CUstream stream) const {
  const cublasLtMatmulHeuristicResult_t &found = found_[static_cast<size_t>(algorithm)];
  const float one = 1.0f, zero = 0.0f;
  auto pointer = [](CUdeviceptr p) { return reinterpret_cast<void *>(static_cast<uintptr_t>(p)); };
  lt_.check(
      lt_.cublasLtMatmul(handle_, desc_, &one, pointer(b), a_, pointer(a), b_, &zero, pointer(c), c_, pointer(c), c_,
                         &found.algo, pointer(workspace), found.workspaceSize, reinterpret_cast<cudaStream_t>(stream)),
      "cublasLtMatmul " + shape_);
}

void CublasMatmul::launch(const Driver &driver, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUstream stream,
                          CUstream memory) {
  const size_t bytes = workspace_bytes(chosen_);
  run(chosen_, a, b, c, bytes > 0 ? workspaces_.get(driver, memory, bytes) : 0, stream);
}

void CublasMatmul::free_workspaces(const Driver &driver) {
  workspaces_.free_all(driver);
}

}  // namespace yirage::cuda
