// yirage-cuda-cost-features [--target NAME|FILE.json|cpu[:THREADS]] GRAPH...: for each graph file,
// the cost model's estimate on an H100 (or the built-in GPU target NAME, or the target in a JSON
// file) as the search computes it through the CUDA plugin (its loop waits and shared-memory time included), or with
// --target cpu on this host as the CPU plugin's search computes it on THREADS threads (default
// the host's cores; the plugin gives no loop waits), kernel by kernel, as one
// JSON object per line; on stderr, each customized kernel the CUDA generator refuses (the plugin's
// supports() would, and the search drops the candidate) and why. A study tool (benchmarks/models/cost_model.py): it
// lets the model be compared with the candidates a search measured on the device, here, without the device.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "cuda/codegen/cuda_source.hpp"
#include "ir/block_graph.hpp"
#include "profiling/search_on_device.hpp"
#include "search/cost_model.hpp"
#include "serialize/graph_file.hpp"
#include "serialize/kernel_program.hpp"
#include "target/target.hpp"
#include "util/error.hpp"

using namespace yirage;

namespace {

// What the plugin passes the generator on an H100 (backends/cuda/plugin.cpp).
constexpr codegen::CudaTarget kH100{90, 227 * 1024, 132, 233472};

KernelGraph load(const char *path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kNotFound, std::string("cannot read ") + path);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return serialize::graph_from_bytes(bytes.data(), bytes.size());
}

// What the plugin's estimate entry says of each kernel, on a device whose launches take `launch`
// seconds; `path`: the graph's file, for the message where the generator refuses a kernel (the
// plugin would refuse it in supports(): the search drops such candidates).
search::BackendEstimates cuda_estimates(double launch, const char *path) {
  return profiling::estimates_from(
      "cuda code generator",
      [launch, path](const serialize::KernelProgram &program) {
        try {
          return codegen::cuda_source(program, kH100).estimate(launch);
        } catch (const Error &e) {
          std::fprintf(stderr, "%s: the CUDA generator refuses a kernel: %s\n", path, e.what());
          throw Error(ErrorCode::kUnsupported, e.what());
        }
      },
      YIRAGE_BACKEND_MAX_READ_ONCE_WAITS);
}

// The target of `--target NAME`: a built-in one's name (h100, h200, …), a target JSON file, or
// cpu[:THREADS].
targets::TargetProperties target_named(const std::string &name) {
  if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
    std::ifstream in(name);
    if (!in) throw Error(ErrorCode::kNotFound, "cannot read " + name);
    return targets::target_from_json(std::string((std::istreambuf_iterator<char>(in)), {}));
  }
  if (name == "cpu" || name.rfind("cpu:", 0) == 0) {
    const std::string count = name.size() > 4 ? name.substr(4) : "0";
    if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos || count.size() > 6) {
      throw Error(ErrorCode::kInvalidArgument, "--target " + name + ": want cpu or cpu:THREADS");
    }
    return targets::cpu_target_on_threads(targets::host_cpu_target(), std::stoll(count));
  }
  return targets::builtin_target(name);
}

}  // namespace

int main(int argc, char **argv) {
  const bool named = argc > 2 && std::string(argv[1]) == "--target";
  targets::TargetProperties target;
  try {
    target = target_named(named ? argv[2] : "h100");
  } catch (const Error &e) {
    std::fprintf(stderr, "yirage-cuda-cost-features: %s\n", e.what());
    return 2;
  }
  const bool cpu = target.kind == targets::TargetKind::kCpu;
  // What the CUDA plugin reports, unless a target file says otherwise (a study of the model).
  if (!cpu && target.loop_iteration_seconds == 0) target.loop_iteration_seconds = codegen::kCudaLoopIterationSeconds;
  for (int i = named ? 3 : 1; i < argc; ++i) {
    const char *path = argv[i];
    const search::BackendEstimates backend =
        cpu ? search::BackendEstimates() : cuda_estimates(target.launch_overhead_seconds, path);
    try {
      const search::CostEstimate e = search::estimate_cost(load(argv[i]), target, backend);
      std::ostringstream line;
      line.precision(9);
      line << "{\"graph\": \"" << argv[i] << "\", \"seconds\": " << e.seconds << ", \"kernels\": [";
      for (size_t k = 0; k < e.kernels.size(); ++k) {
        const search::KernelCost &c = e.kernels[k];
        line << (k ? ", " : "") << "{\"name\": \"" << c.name << "\", \"dram_bytes\": " << c.dram_bytes
             << ", \"l2_bytes\": " << c.l2_bytes << ", \"matrix_flops\": " << c.matrix_flops
             << ", \"vector_flops\": " << c.vector_flops << ", \"scalar_matmul_flops\": " << c.scalar_matmul_flops
             << ", \"blocks\": " << c.blocks << ", \"slots\": " << c.slots << ", \"waves\": " << c.waves
             << ", \"serial_seconds\": " << c.serial_seconds
             << ", \"shared_memory_seconds\": " << c.shared_memory_seconds
             << ", \"launch_seconds\": " << c.launch_seconds << ", \"utilization\": " << c.utilization
             << ", \"seconds\": " << c.seconds << "}";
      }
      line << "]}";
      std::puts(line.str().c_str());
    } catch (const Error &e) {
      std::fprintf(stderr, "%s: %s\n", argv[i], e.what());
      return 1;
    }
  }
  return 0;
}
