#include "serialize/graph_file.hpp"

#include <flatbuffers/idl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "serialize/flatbuffers_read.hpp"
#include "util/error.hpp"
#include "yirage_graph_generated.h"
#include "yirage_schema_text.hpp"

namespace yirage::serialize {

namespace {

[[noreturn]] void corrupt(const std::string &message) {
  throw Error(ErrorCode::kCorruptData, "graph file: " + message);
}

// ---- writing -------------------------------------------------------------------------------

flatbuffers::Offset<fb::Operator> write_operator(flatbuffers::FlatBufferBuilder &b, const Operator &op,
                                                 bool with_dtype);

// An output saver's dtype is written only where it differs from its tile's, so that files of
// version 1 (which had none) load and save bit for bit.
bool retyped_saver(const BlockGraph &bg, const Operator &op) {
  return op.kind == OpKind::kOutputSaver && op.attributes.dtype != bg.tensor(op.inputs[0]).dtype;
}

flatbuffers::Offset<fb::BlockGraph> write_block_graph(flatbuffers::FlatBufferBuilder &b, const BlockGraph &bg) {
  std::vector<flatbuffers::Offset<fb::Operator>> ops;
  for (const Operator &op : bg.operators()) {
    ops.push_back(write_operator(b, op, op.kind == OpKind::kInputIterator || retyped_saver(bg, op)));
  }
  const auto &c = bg.config();
  const std::vector<int64_t> grid(c.grid.begin(), c.grid.end());
  return fb::CreateBlockGraph(b, b.CreateVector(grid), c.block_threads, c.forloop_range, c.shared_memory_limit,
                              c.max_threads_per_block, b.CreateVector(ops));
}

flatbuffers::Offset<fb::Operator> write_operator(flatbuffers::FlatBufferBuilder &b, const Operator &op,
                                                 bool with_dtype) {
  const OpAttributes &at = op.attributes;
  // Children first: flatbuffers builds bottom-up.
  const auto block = op.block_graph ? write_block_graph(b, *op.block_graph) : 0;
  const auto inputs = op.inputs.empty() ? 0 : b.CreateVector(op.inputs);
  const auto sizes = at.sizes.empty() ? 0 : b.CreateVector(at.sizes);
  const bool mapped = op.kind == OpKind::kInputIterator || op.kind == OpKind::kOutputSaver;
  const auto grid_map = mapped ? b.CreateVector(std::vector<int32_t>(at.grid_map.begin(), at.grid_map.end())) : 0;
  fb::OperatorBuilder w(b);
  w.add_kind(static_cast<fb::OpKind>(op.kind));
  if (!inputs.IsNull()) w.add_inputs(inputs);
  w.add_dim(at.dim);
  w.add_scalar(at.scalar);
  w.add_lo(at.lo);
  w.add_hi(at.hi);
  w.add_eps(at.eps);
  if (!sizes.IsNull()) w.add_sizes(sizes);
  w.add_has_weight(at.has_weight);
  if (mapped) w.add_grid_map(grid_map);
  w.add_forloop_dim(at.forloop_dim);
  if (with_dtype) w.add_dtype(static_cast<fb::DType>(at.dtype));
  if (!block.IsNull()) w.add_block_graph(block);
  if (at.launch_with_next) w.add_launch_with_next(true);
  return w.Finish();
}

// ---- reading -------------------------------------------------------------------------------

Operator read_operator(const fb::Operator &in) {
  Operator op;
  op.kind = static_cast<OpKind>(in.kind());
  op.attributes.dim = in.dim();
  op.attributes.scalar = in.scalar();
  op.attributes.lo = in.lo();
  op.attributes.hi = in.hi();
  op.attributes.eps = in.eps();
  const std::vector<int64_t> sizes = vector_of(in.sizes());
  op.attributes.sizes = Dims(sizes.begin(), sizes.end());
  op.attributes.has_weight = in.has_weight();
  if (in.grid_map() != nullptr) {
    const std::vector<int32_t> map = vector_of(in.grid_map());
    if (map.size() != 3) corrupt("a grid_map must have 3 entries");
    for (size_t a = 0; a < 3; ++a) op.attributes.grid_map[a] = map[a];
  }
  op.attributes.forloop_dim = in.forloop_dim();
  op.attributes.dtype = static_cast<DType>(in.dtype());
  op.attributes.launch_with_next = in.launch_with_next();
  return op;
}

// Adds the file's operators to `graph` in order, numbering their outputs as the file format
// says; `add` adds one operator (with inputs already renumbered) and returns its outputs.
template <class Graph, class Add>
std::vector<TensorId> read_operators(Graph &graph, const flatbuffers::Vector<flatbuffers::Offset<fb::Operator>> *ops,
                                     const std::string &where, Add add) {
  std::vector<TensorId> ids;  // file tensor number → tensor id in `graph`
  if (ops == nullptr) return ids;
  for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
    const fb::Operator &in = *ops->Get(i);
    const std::string at =
        where + "operator " + std::to_string(i) + " (" + op_name(static_cast<OpKind>(in.kind())) + ")";
    std::vector<TensorId> inputs;
    for (int32_t number : vector_of(in.inputs())) {
      if (number < 0 || static_cast<size_t>(number) >= ids.size()) {
        corrupt(at + ": input " + std::to_string(number) + " is not a tensor defined before it");
      }
      inputs.push_back(ids[static_cast<size_t>(number)]);
    }
    try {
      for (TensorId out : add(graph, in, inputs)) ids.push_back(out);
    } catch (const Error &e) {
      if (e.code() != ErrorCode::kInvalidArgument) throw;
      corrupt(at + ": " + e.what());
    }
  }
  return ids;
}

std::shared_ptr<const BlockGraph> read_block_graph(const fb::BlockGraph *in, const std::string &where) {
  if (in == nullptr) corrupt(where + ": a customized operator without a block graph");
  const std::vector<int64_t> grid = vector_of(in->grid());
  if (grid.size() != 3) corrupt(where + ": a block graph's grid must have 3 entries");
  BlockGraphConfig config;
  for (size_t a = 0; a < 3; ++a) config.grid[a] = grid[a];
  config.block_threads = in->block_threads();
  config.forloop_range = in->forloop_range();
  config.shared_memory_limit = in->shared_memory_limit();
  config.max_threads_per_block = in->max_threads_per_block();
  std::unique_ptr<BlockGraph> bg;
  try {
    bg = std::make_unique<BlockGraph>(config);
  } catch (const Error &e) {
    corrupt(where + ": " + e.what());
  }
  read_operators(*bg, in->operators(), where + ", block graph ",
                 [](BlockGraph &g, const fb::Operator &op, const std::vector<TensorId> &inputs) {
                   if (op.block_graph() != nullptr) {
                     corrupt("a block graph operator cannot hold a block graph");
                   }
                   Operator value = read_operator(op);
                   // A saver without a dtype (every saver of a version-1 file) writes its tile's.
                   if (value.kind == OpKind::kOutputSaver && op.dtype() == fb::DType::Invalid && inputs.size() == 1) {
                     value.attributes.dtype = g.tensor(inputs[0]).dtype;
                   }
                   std::vector<TensorId> outputs = add_operator(g, value, inputs);
                   // A saver's sizes follow from its tile, omap and loop; the file's must agree.
                   const Dims &written = g.operators().back().attributes.sizes;
                   if (value.kind == OpKind::kOutputSaver && value.attributes.sizes != written) {
                     invalid_argument("its sizes " + to_string(value.attributes.sizes) +
                                      " disagree with its tile, omap and loop, which write " + to_string(written));
                   }
                   return outputs;
                 });
  return bg;
}

KernelGraph read_graph(const fb::Graph &in) {
  if (in.schema_version() > kGraphSchemaVersion) {
    throw Error(ErrorCode::kVersionMismatch, "graph file: schema version " + std::to_string(in.schema_version()) +
                                                 " is newer than this library's " +
                                                 std::to_string(kGraphSchemaVersion));
  }
  KernelGraph graph;
  const std::vector<TensorId> ids = read_operators(
      graph, in.operators(), "", [](KernelGraph &g, const fb::Operator &op, const std::vector<TensorId> &inputs) {
        Operator value = read_operator(op);
        if (value.kind == OpKind::kCustomized) {
          value.block_graph = read_block_graph(op.block_graph(), "customized operator");
        } else if (op.block_graph() != nullptr) {
          corrupt("only a customized operator holds a block graph");
        }
        return add_operator(g, value, inputs);
      });
  for (int32_t number : vector_of(in.outputs())) {
    if (number < 0 || static_cast<size_t>(number) >= ids.size()) {
      corrupt("output " + std::to_string(number) + " is not a tensor of the graph");
    }
    try {
      graph.mark_output(ids[static_cast<size_t>(number)]);
    } catch (const Error &e) {
      corrupt(std::string("outputs: ") + e.what());
    }
  }
  return graph;
}

// Verifies and reads a binary graph from an aligned copy (serialize/flatbuffers_read.hpp):
// callers' buffers (and the JSON parser's output) may be unaligned.
KernelGraph read_binary(const uint8_t *bytes, size_t size) {
  const std::vector<uint64_t> aligned = aligned_copy(bytes, size);
  const auto *data = reinterpret_cast<const uint8_t *>(aligned.data());
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/32, /*max_tables=*/1u << 22);
  if (!fb::VerifyGraphBuffer(verifier)) {
    corrupt("the flatbuffers verifier rejected it (truncated or damaged)");
  }
  return read_graph(*fb::GetGraph(data));
}

flatbuffers::Parser &schema_parser(flatbuffers::Parser &parser) {
  parser.opts.strict_json = true;
  parser.opts.indent_step = 2;
  if (!parser.Parse(kGraphSchemaText)) {
    throw Error(ErrorCode::kInternal, "graph schema does not parse: " + parser.error_);
  }
  return parser;
}

}  // namespace

std::vector<uint8_t> graph_to_bytes(const KernelGraph &graph, GraphFormat format) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Operator>> ops;
  // A file is of the oldest version whose readers know everything in it: version 1 readers know
  // all but a saver's own dtype (2), accum_sum_todimx (3) and the views reshape and permute (4).
  uint32_t version = 1;
  for (const Operator &op : graph.operators()) {
    ops.push_back(write_operator(b, op, op.kind == OpKind::kInput));
    if (is_view(op.kind)) version = 4;
    if (op.block_graph) {
      for (const Operator &bop : op.block_graph->operators()) {
        if (retyped_saver(*op.block_graph, bop)) version = std::max(version, 2u);
        if (bop.kind == OpKind::kAccumSumToDimx) version = std::max(version, 3u);
      }
    }
  }
  const auto operators = b.CreateVector(ops);
  const auto outputs = b.CreateVector(graph.outputs());
  b.Finish(fb::CreateGraph(b, version, operators, outputs), fb::GraphIdentifier());
  if (format == GraphFormat::kBinary) {
    return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  }
  flatbuffers::Parser parser;
  std::string text;
  if (!flatbuffers::GenerateText(schema_parser(parser), b.GetBufferPointer(), &text)) {
    throw Error(ErrorCode::kInternal, "graph file: could not write JSON");
  }
  return std::vector<uint8_t>(text.begin(), text.end());
}

KernelGraph graph_from_bytes(const void *data, size_t size) {
  if (data == nullptr && size > 0) invalid_argument("graph file: data is NULL");
  if (size > kMaxGraphFileBytes) corrupt("larger than 1 GiB");
  const auto *bytes = static_cast<const uint8_t *>(data);
  if (size >= 8 && fb::GraphBufferHasIdentifier(bytes)) return read_binary(bytes, size);
  size_t first = 0;
  while (first < size && std::strchr(" \t\r\n", bytes[first]) != nullptr && bytes[first] != 0) {
    ++first;
  }
  if (first == size || bytes[first] != '{') {
    corrupt("neither a binary graph file (identifier YRGF) nor JSON");
  }
  // The parser needs NUL-terminated text; a NUL inside is refused rather than truncated at.
  const std::string text(reinterpret_cast<const char *>(bytes), size);
  if (text.find('\0') != std::string::npos) corrupt("JSON text contains a NUL byte");
  flatbuffers::Parser parser;
  if (!schema_parser(parser).ParseJson(text.c_str())) corrupt("JSON: " + parser.error_);
  return read_binary(parser.builder_.GetBufferPointer(), parser.builder_.GetSize());
}

}  // namespace yirage::serialize
