// Writes the six benchmark graphs (b = 1, float16) as JSON graph files into a folder:
// <name>.json (the user's unfused graph) and <name>_fused.json (the hand-fused µGraph).
// examples/graphs/ holds its output; a test checks that it is up to date.
// Usage: export_graphs FOLDER
#include <cstdio>
#include <fstream>

#include "benchmark_ugraphs.hpp"
#include "serialize/graph_file.hpp"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  for (const std::string &name : yirage::bench::benchmark_names()) {
    for (bool fused : {false, true}) {
      const auto graph = fused ? yirage::bench::build_fused(name, 1, yirage::DType::kFloat16)
                               : yirage::bench::build_unfused(name, 1, yirage::DType::kFloat16);
      const auto bytes =
          yirage::serialize::graph_to_bytes(graph, yirage::serialize::GraphFormat::kJson);
      const std::string path =
          std::string(argv[1]) + "/" + name + (fused ? "_fused" : "") + ".json";
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char *>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        return 1;
      }
    }
  }
  return 0;
}
