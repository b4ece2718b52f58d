// Writes the six benchmark graphs (float16) as JSON graph files into a folder: <name>.json (the
// user's unfused graph at b = 1), <name>_fused.json (the hand-fused µGraph at b = 1) and, for the
// graphs with a batch parameter, <name>_b8.json (the unfused graph at b = 8; the benchmarks run
// both batches); and rotary embeddings (rope_graphs.hpp) in float16 and bfloat16: rope.json,
// rope_bf16.json, rope_q_projection[_bf16].json, rope_q_projection_matrix[_bf16].json,
// rope_attention[_bf16].json; and a decoder layer (decoder_layer.hpp): decoder_layer.json,
// decoder_layer_bf16.json.
// examples/graphs/ holds its output; a test checks that it is up to date.
// Usage: export_graphs FOLDER
#include <cstdio>
#include <fstream>

#include "benchmark_ugraphs.hpp"
#include "decoder_layer.hpp"
#include "rope_graphs.hpp"
#include "serialize/graph_file.hpp"

namespace {

bool write_graph(const yirage::KernelGraph &graph, const std::string &path) {
  const auto bytes = yirage::serialize::graph_to_bytes(graph, yirage::serialize::GraphFormat::kJson);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  using namespace yirage::bench;
  const std::string folder = argv[1];
  const auto f16 = yirage::DType::kFloat16;
  for (const std::string &name : benchmark_names()) {
    bool ok = write_graph(build_unfused(name, 1, f16), folder + "/" + name + ".json") &&
              write_graph(build_fused(name, 1, f16), folder + "/" + name + "_fused.json");
    if (ok && takes_batch(name)) ok = write_graph(build_unfused(name, 8, f16), folder + "/" + name + "_b8.json");
    if (!ok) return 1;
  }
  const auto bf16 = yirage::DType::kBFloat16;
  const bool ok = write_graph(build_rope(f16), folder + "/rope.json") &&
                  write_graph(build_rope(bf16), folder + "/rope_bf16.json") &&
                  write_graph(build_rope_q_projection(f16), folder + "/rope_q_projection.json") &&
                  write_graph(build_rope_q_projection(bf16), folder + "/rope_q_projection_bf16.json") &&
                  write_graph(build_rope_q_projection_matrix(f16), folder + "/rope_q_projection_matrix.json") &&
                  write_graph(build_rope_q_projection_matrix(bf16), folder + "/rope_q_projection_matrix_bf16.json") &&
                  write_graph(build_rope_attention(f16), folder + "/rope_attention.json") &&
                  write_graph(build_rope_attention(bf16), folder + "/rope_attention_bf16.json") &&
                  write_graph(build_decoder_layer(f16), folder + "/decoder_layer.json") &&
                  write_graph(build_decoder_layer(bf16), folder + "/decoder_layer_bf16.json");
  return ok ? 0 : 1;
}
