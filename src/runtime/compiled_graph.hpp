// A kernel graph compiled for one device of one backend (yirage_kernel): every live operator
// becomes one kernel program compiled by the plugin (identical programs share one executable),
// except that operators chained by launch_with_next become one program where the device takes
// programs of several operators (plugin ABI 1.4) and its supports() takes that one; run in graph
// order; every intermediate tensor gets its own device buffer. Runs queued on one
// stream run in its order and share one set of those buffers; runs on different streams would
// overwrite each other's, so each stream gets its own set, allocated at the first run on it (the
// default stream's at compile time): a run allocates nothing else but the wrappers of the
// caller's tensors.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "ir/kernel_graph.hpp"
#include "runtime/plugin.hpp"
#include "serialize/kernel_program.hpp"

namespace yirage::runtime {

// Owned plugin objects, released through the plugin's table.
struct BufferRelease {
  const yirage_backend_api *api;
  void operator()(yirage_backend_buffer *b) const { api->buffer_release(b); }
};
using Buffer = std::unique_ptr<yirage_backend_buffer, BufferRelease>;

struct ExecutableRelease {
  const yirage_backend_api *api;
  void operator()(yirage_backend_executable *e) const { api->executable_release(e); }
};
using Executable = std::shared_ptr<yirage_backend_executable>;

Buffer allocate_buffer(const Plugin &plugin, int32_t device, size_t bytes);

// Asks the backend (its supports(), which generates code but compiles nothing) whether it can
// build each of `graph`'s kernels; throws its first refusal (kUnsupported with its reason, e.g.
// tiles that need more shared memory than the device has).
void check_buildable(const Plugin &plugin, int32_t device, const KernelGraph &graph);

// The backend's estimate of kernel program `program` (yirage_backend_kernel_estimate) as it
// answers it: every field "no opinion" (-1) where the plugin has no estimate entry, and those it
// leaves so. Throws its refusal as Error(kUnsupported) and any other failure as Error(kBackend) (a
// kernel the host made: the plugin's fault). profiling::estimates_from reads the answer for the
// search.
yirage_backend_kernel_estimate backend_estimate(const Plugin &plugin, int32_t device,
                                                const serialize::KernelProgram &program);

// The most operators one program holds: a longer run of operators marked to run as one is cut
// into programs of at most this many. A program's compile grows with its operators (the CPU's
// C++ takes seconds for a few hundred) while the launches it saves are a few microseconds each.
inline constexpr size_t kMaxGroupOperators = 16;

// `graph` with runs of consecutive kernel operators that device `device` takes as one program
// marked launch_with_next (plugin ABI 1.4: the device says it takes operator groups, and its
// supports() takes the run): from the first kernel on, each run as long as the device takes it
// (the whole run up to the next view that aliases its input or kMaxGroupOperators, else grown
// one operator at a time; such views run in none), the next starting after it. nullopt where it takes none. The search
// measures both forms.
std::optional<KernelGraph> with_operator_groups(const Plugin &plugin, int32_t device, const KernelGraph &graph);

struct CompileStats {
  int kernels = 0;            // launches per run
  int grouped_operators = 0;  // operators run inside programs of several (plugin ABI 1.4)
  int executables = 0;        // distinct programs compiled
  double seconds = 0;         // wall time of compile
};

class CompiledGraph {
 public:
  // Throws what the plugin reports (kUnsupported, kBackend with a build log, …).
  CompiledGraph(const Plugin &plugin, int32_t device, const KernelGraph &graph, int optimization_level = 3);

  const KernelGraph &graph() const { return graph_; }
  const Plugin &plugin() const { return plugin_; }
  int32_t device() const { return device_; }
  const CompileStats &stats() const { return stats_; }

  // Checks every tensor (shape, dtype, device, compact strides, non-NULL data) against the
  // graph, then enqueues the kernels on `stream`. Nothing is launched if a check fails (or if
  // the intermediates of a stream new to this graph cannot be allocated). Safe from several
  // threads: runs of a graph of several kernels on one stream take turns queueing them (on a
  // synchronous backend, the CPU's, running them), so that they do not interleave.
  void run(const std::vector<const DLTensor *> &inputs, const std::vector<const DLTensor *> &outputs,
           void *stream) const;
  // Runs on host tensors (kDLCPU, checked as run checks them) whatever the device: the inputs
  // are copied into buffers of the device, the kernels run on its default stream, the outputs
  // are copied back; returns when they are. On a device whose tensors are host tensors, run and
  // synchronize.
  void run_host(const std::vector<const DLTensor *> &inputs, const std::vector<const DLTensor *> &outputs) const;
  // The same on plugin buffers (each at least its tensor's size).
  void run_buffers(const std::vector<yirage_backend_buffer *> &inputs,
                   const std::vector<yirage_backend_buffer *> &outputs, void *stream) const;
  void synchronize(void *stream) const;
  // Recordings held (plugin ABI 1.3): one per stream and buffer set run at least twice.
  size_t recordings() const;
  // How a run launches: one line per launch (its operators, and whether they are one program),
  // then whether runs are replayed as a recording. yirage_kernel_describe returns it.
  std::string launch_plan() const;

 private:
  // A kernel launch, or (no executable) a reshape whose result is its input's buffer.
  struct Step {
    Executable executable;
    std::vector<TensorId> inputs, outputs;
    std::vector<size_t> operators;  // the graph's operators it runs
  };

  // A caller's tensor as memory: its first byte and size (spans list the inputs, then the outputs).
  struct Span {
    char *begin;
    size_t bytes;
  };
  // Checks the tensors against the graph for a run on `where` (a device, or the host) and that
  // no output overlaps another tensor; errors start with `function`.
  std::vector<Span> checked_spans(const std::string &function, const std::vector<const DLTensor *> &inputs,
                                  const std::vector<const DLTensor *> &outputs,
                                  const yirage_backend_device_info &where) const;

  // Runs on the checked spans (the inputs', then the outputs') wrapped as buffers.
  void run_wrapped(const std::vector<Span> &spans, size_t num_inputs, void *stream) const;

  // The intermediate tensors' buffers of the runs on one stream.
  struct Intermediates {
    std::mutex queueing;          // held while a run enqueues its kernels
    std::vector<Buffer> buffers;  // indexed by TensorId; null for graph inputs/outputs
  };
  std::unique_ptr<Intermediates> allocate_intermediates() const;
  Intermediates &intermediates_of(void *stream) const;

  // Recordings (plugin ABI 1.3): a graph of several kernels run twice on one stream with the
  // same buffers is recorded at its second run and replayed in one submission from then on.
  using Recording = std::shared_ptr<yirage_backend_recording>;  // released through the plugin
  struct RecordingKey {
    void *stream;
    std::vector<void *> addresses;  // the inputs' and outputs' native addresses
    auto operator<=>(const RecordingKey &) const = default;
  };
  struct Recorded {
    int runs = 0;         // runs seen with this key
    Recording recording;  // from the second
  };
  // Enqueues the steps on `stream` with the tensors' buffers `where` (by TensorId).
  void launch_steps(std::vector<yirage_backend_buffer *> &where, void *stream) const;
  // The run through a recording where one is, or is made now; false: launch the steps.
  bool run_recorded(std::vector<yirage_backend_buffer *> &where, const std::vector<yirage_backend_buffer *> &inputs,
                    const std::vector<yirage_backend_buffer *> &outputs, void *stream) const;

  const Plugin &plugin_;
  int32_t device_;
  KernelGraph graph_;
  std::vector<Step> steps_;
  bool has_intermediates_ = false;
  mutable std::mutex streams_mutex_;                                        // guards intermediates_
  mutable std::map<void *, std::unique_ptr<Intermediates>> intermediates_;  // by stream
  bool records_ = false;  // the plugin records, there are several launches, not switched off
  mutable std::atomic<bool> recording_failed_{false};  // one recording failed: launch from then on
  mutable std::mutex recordings_mutex_;                // guards recordings_
  mutable std::map<RecordingKey, Recorded> recordings_;
  CompileStats stats_;
};

}  // namespace yirage::runtime
