// What a plugin's estimate entry writes into the host's yirage_backend_kernel_estimate: each
// field the host's struct_size holds (a host of an older minor passes a shorter struct, whose
// bytes beyond are not the plugin's to write).
#pragma once

#include <cstddef>
#include <string>

#include "util/error.hpp"
#include "yirage_backend.h"

namespace yirage::backend {

// Writes `answer`'s fields that `out`'s struct_size holds; throws Error(kInvalidArgument) naming
// `plugin` where the struct is shorter than ABI 1.1's.
inline void write_kernel_estimate(const std::string &plugin, yirage_backend_kernel_estimate &out,
                                  const yirage_backend_kernel_estimate &answer) {
  constexpr size_t abi_1_1 = offsetof(yirage_backend_kernel_estimate, loop_waits) + sizeof out.loop_waits;
  constexpr size_t abi_1_6 =
      offsetof(yirage_backend_kernel_estimate, max_resident_blocks) + sizeof out.max_resident_blocks;
  constexpr size_t abi_1_7 = offsetof(yirage_backend_kernel_estimate, whole_product) + sizeof out.whole_product;
  if (out.struct_size < abi_1_1) {
    throw Error(ErrorCode::kInvalidArgument, plugin + ": estimate: out_estimate->struct_size " +
                                                 std::to_string(out.struct_size) + " is below ABI 1.1's " +
                                                 std::to_string(abi_1_1));
  }
  out.loop_waits = answer.loop_waits;
  if (out.struct_size >= abi_1_6) {
    out.shared_memory_seconds = answer.shared_memory_seconds;
    out.dependent_launch_seconds = answer.dependent_launch_seconds;
    out.max_resident_blocks = answer.max_resident_blocks;
  }
  if (out.struct_size >= abi_1_7) out.whole_product = answer.whole_product;
}

}  // namespace yirage::backend
