// libFuzzer target: kernel programs, the bytes every in-tree plugin parses in supports(),
// estimate() and compile() (serialize/kernel_program.hpp), then hands to its code generator;
// programs of several operators (read as the CUDA plugin reads them) included.
// Whatever the bytes, the reader either returns a program or throws CORRUPT_DATA,
// VERSION_MISMATCH or UNSUPPORTED; a program it accepts writes back to bytes that read the same;
// the CPU and CUDA generators (sm_80 and sm_90a, on an H100's shared memory) either return source
// or throw UNSUPPORTED. Anything else (another error, a crash, a sanitizer report) is a bug.
#include <cstdint>
#include <cstdlib>

#include "cpu/codegen/cpu_source.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "serialize/kernel_program.hpp"
#include "util/error.hpp"

namespace {

using yirage::Error;
using yirage::ErrorCode;
namespace codegen = yirage::codegen;
namespace serialize = yirage::serialize;

// Runs `generate`; only UNSUPPORTED may come out of it.
template <typename F>
void generates_or_refuses(F generate) {
  try {
    generate();
  } catch (const Error &e) {
    if (e.code() != ErrorCode::kUnsupported) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  serialize::KernelProgram program;
  try {
    program = serialize::kernel_program_from_bytes(data, size, serialize::ProgramOperators::kSeveral);
  } catch (const Error &e) {
    const ErrorCode code = e.code();
    if (code != ErrorCode::kCorruptData && code != ErrorCode::kVersionMismatch && code != ErrorCode::kUnsupported) {
      std::abort();
    }
    return 0;
  }
  const std::vector<uint8_t> again = serialize::kernel_program_to_bytes(program);
  const serialize::KernelProgram reread =
      serialize::kernel_program_from_bytes(again.data(), again.size(), serialize::ProgramOperators::kSeveral);
  if (serialize::kernel_program_to_bytes(reread) != again) std::abort();

  // The CPU plugin reads programs of one operator only.
  if (program.operator_count() == 1) generates_or_refuses([&] { codegen::cpu_source(program); });
  for (int cc : {80, 90}) {
    codegen::CudaTarget target;
    target.compute_capability = cc;
    target.max_shared_bytes = 227 * 1024;
    target.multiprocessors = 132;
    target.shared_bytes_per_multiprocessor = 228 * 1024;
    generates_or_refuses([&] { codegen::cuda_source(program, target); });
  }
  return 0;
}
