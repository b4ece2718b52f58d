#include "mfma_probe.hpp"

#include <array>

#include "cuda/codegen/cuda_prelude.hpp"
#include "cuda/codegen/cuda_tile_mfma.hpp"

namespace yirage::hip {
namespace {

constexpr int64_t kSide = 16, kMatrix = kSide * kSide;
// The products' operand types, in order: one per instruction.
constexpr std::array<DType, 3> kOperands = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};

codegen::cuda::Ref matrix(const std::string &base, size_t product, DType element) {
  codegen::cuda::Ref ref{
      "(" + base + " + " + std::to_string(static_cast<int64_t>(product) * kMatrix) + ")", {kSide, kSide}, {}};
  ref.widened_16bit = element != DType::kFloat32;
  ref.element = element;
  return ref;
}

}  // namespace

MfmaProbe mfma_probe() {
  MfmaProbe probe;
  codegen::Printer p;
  p.line(codegen::cuda::prelude(codegen::CudaDialect::kHip, 64));
  p.open(std::string("extern \"C\" __global__ void __launch_bounds__(64) ") + kMfmaProbeSymbol +
         "(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ O)");
  for (size_t c = 0; c < kOperands.size(); ++c) {
    codegen::cuda::mfma_tile_matmul(p, matrix("A", c, kOperands[c]), matrix("B", c, kOperands[c]),
                                    matrix("O", c, DType::kFloat32), 64);
  }
  p.close();
  probe.source = p.str();
  // Small integers (exact in every operand type), neither matrix symmetric (a transposed operand
  // shows); the
  // float32 product's A gets fractions of 2^-12 that 16-bit operands would lose. Every sum is
  // exact in float32.
  for (size_t c = 0; c < kOperands.size(); ++c) {
    for (int64_t i = 0; i < kSide; ++i) {
      for (int64_t k = 0; k < kSide; ++k) {
        const float fraction = kOperands[c] == DType::kFloat32 ? static_cast<float>((i + 2 * k) % 3) / 4096 : 0.0f;
        probe.a.push_back(static_cast<float>((3 * i + 5 * k + static_cast<int64_t>(c)) % 7 - 3) + fraction);
        probe.b.push_back(static_cast<float>((2 * i + 3 * k + static_cast<int64_t>(c)) % 5 - 2));
      }
    }
  }
  for (size_t c = 0; c < kOperands.size(); ++c) {
    const float *a = probe.a.data() + c * kMatrix, *b = probe.b.data() + c * kMatrix;
    for (int64_t i = 0; i < kSide; ++i) {
      for (int64_t j = 0; j < kSide; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < kSide; ++k) sum += static_cast<double>(a[i * kSide + k]) * b[k * kSide + j];
        probe.expected.push_back(static_cast<float>(sum));
      }
    }
  }
  return probe;
}

std::string run_mfma_probe(Runtime &runtime, const std::string &code_object, const MfmaProbe &probe) {
  const size_t bytes = probe.expected.size() * sizeof(float);
  std::array<uint64_t, 3> buffers = {0, 0, 0};
  void *module = nullptr;
  std::vector<float> got(probe.expected.size());
  try {
    for (uint64_t &buffer : buffers) buffer = runtime.allocate(bytes);
    runtime.copy_to_device(buffers[0], probe.a.data(), bytes);
    runtime.copy_to_device(buffers[1], probe.b.data(), bytes);
    module = runtime.load_module(code_object);
    void *function = runtime.function(module, kMfmaProbeSymbol, 0);
    void *args[] = {&buffers[0], &buffers[1], &buffers[2]};
    runtime.launch(function, {1, 1, 1}, 64, 0, nullptr, args);
    runtime.synchronize(nullptr);
    runtime.copy_to_host(got.data(), buffers[2], bytes);
  } catch (...) {
    if (module != nullptr) runtime.unload_module(module);
    for (uint64_t buffer : buffers) {
      if (buffer != 0) runtime.release(buffer);
    }
    throw;
  }
  runtime.unload_module(module);
  for (uint64_t buffer : buffers) runtime.release(buffer);
  static const char *const kNames[] = {"float16", "bfloat16", "float32"};
  for (size_t e = 0; e < got.size(); ++e) {
    if (got[e] != probe.expected[e]) {
      const size_t c = e / kMatrix, at = e % kMatrix;
      return std::string("the ") + kNames[c] + " product's element (" + std::to_string(at / kSide) + ", " +
             std::to_string(at % kSide) + ") is " + std::to_string(got[e]) + ", not " +
             std::to_string(probe.expected[e]);
    }
  }
  return "";
}

}  // namespace yirage::hip
