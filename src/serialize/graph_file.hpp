// Kernel graphs (customized operators and their µGraphs included) to and from bytes: the binary
// flatbuffers form (schemas/yirage_graph.fbs) and its JSON form. Loading never trusts its input:
// the flatbuffers verifier runs first, then every operator is rebuilt through the validating
// builders (ir/rebuild.hpp); anything wrong is Error(kCorruptData) with a message, or
// kVersionMismatch for a newer schema.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::serialize {

// 2: an output saver may write a dtype other than its tile's; 3: the accum_sum_todimx operator;
// 4: the kernel-level views reshape and permute.
inline constexpr uint32_t kGraphSchemaVersion = 4;

enum class GraphFormat { kBinary, kJson };

// Deterministic: the same graph always gives the same bytes.
std::vector<uint8_t> graph_to_bytes(const KernelGraph &graph, GraphFormat format);

// Detects the format: the binary file identifier "YRGF", or JSON text starting with '{'.
KernelGraph graph_from_bytes(const void *data, size_t size);

// The largest graph file graph_from_bytes reads (larger ones are CORRUPT_DATA).
constexpr size_t kMaxGraphFileBytes = size_t{1} << 30;

}  // namespace yirage::serialize
