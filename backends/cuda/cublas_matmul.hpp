// A kernel-level matmul (C = A·B, row-major, batch dims equal or broadcast) as cuBLASLt runs
// it, or a µGraph that is one product of many rows with at most a residual added (D = A·B + C:
// codegen::cuda::ugraph_gemm_form). The plan (descriptors, and the algorithms cuBLASLt's
// heuristic offers for 16-byte aligned operands) is made once per executable; the plugin times
// them against its own generated kernel when it compiles the program and launches the fastest
// (plugin.cpp).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver.hpp"
#include "serialize/kernel_program.hpp"
#include "stream_workspaces.hpp"

namespace yirage::cuda {

class CublasMatmul {
 public:
  // The plan for `program`'s matmul with up to `max_algorithms` of cuBLASLt's algorithms, or
  // nullptr where it is no matmul (nor such a µGraph), its operands form no single strided batch
  // (one broadcast over some batch dims only), or cuBLASLt offers none. Throws NativeError on a failed cuBLASLt call.
  static std::unique_ptr<CublasMatmul> plan(const CublasLt &lt, const serialize::KernelProgram &program,
                                            int max_algorithms);
  ~CublasMatmul();
  CublasMatmul(const CublasMatmul &) = delete;
  CublasMatmul &operator=(const CublasMatmul &) = delete;

  int algorithms() const { return static_cast<int>(found_.size()); }
  size_t workspace_bytes(int algorithm) const { return found_[static_cast<size_t>(algorithm)].workspaceSize; }
  // "[256,4096]·[4096,1536] float16" (batches folded in), for logs.
  const std::string &shape() const { return shape_; }

  // Enqueues the product on `stream` with `algorithm` and a workspace of workspace_bytes(algorithm);
  // `pointers`: the program's inputs, then its output. Every pointer must be 16-byte aligned
  // (aligned() says).
  void run(int algorithm, const std::vector<CUdeviceptr> &pointers, CUdeviceptr workspace, CUstream stream) const;
  static bool aligned(CUdeviceptr pointer) { return pointer % 16 == 0; }

  // Keeps `algorithm` for launch(), which gives each stream a workspace of its own (runs on two
  // streams at once must not share one), allocated at its first launch on that stream.
  void choose(int algorithm) { chosen_ = algorithm; }
  int chosen() const { return chosen_; }
  // `memory`: the stream whose workspace the launch takes (`stream` itself, or the stream a
  // recording made on `stream` will replay on).
  void launch(const Driver &driver, const std::vector<CUdeviceptr> &pointers, CUstream stream, CUstream memory);
  // Frees the workspaces; the plan's device context must be current.
  void free_workspaces(const Driver &driver);

 private:
  explicit CublasMatmul(const CublasLt &lt) : lt_(lt) {}

  // Which of the program's inputs are A, B and the residual (-1: none; D = A·B).
  struct Operands {
    size_t a = 0, b = 1;
    int residual = -1;
  };

  const CublasLt &lt_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  // In cuBLAS's column-major roles: its A is our B, its B our A (Cᵀ = Bᵀ·Aᵀ).
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> found_;
  std::string shape_;
  Operands operands_;
  int chosen_ = -1;
  StreamWorkspaces workspaces_{"a cuBLASLt workspace", false};
};

}  // namespace yirage::cuda
