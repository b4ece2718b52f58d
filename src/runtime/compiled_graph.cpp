#include "runtime/compiled_graph.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "ir/block_graph.hpp"
#include "runtime/host_tensor.hpp"
#include "serialize/kernel_program.hpp"
#include "util/log.hpp"

namespace yirage::runtime {
namespace {

// Buffer sets recorded per compiled graph; a new one beyond them drops them all.
constexpr size_t kMaxRecordings = 8;

bool is_output(const KernelGraph &graph, TensorId id) {
  for (TensorId out : graph.outputs()) {
    if (out == id) return true;
  }
  return false;
}

// Checks a caller's tensor against `expected` on the kernel's device; returns its data pointer.
// `role` names it in errors ("run: input 1"); it is called only on the way to one, so that a
// run builds no strings.
template <class Role>
void *checked_data(const Role &role, const DLTensor *t, const Tensor &expected,
                   const yirage_backend_device_info &device) {
  if (t == nullptr) invalid_argument(role() + " is NULL");
  if (t->ndim != static_cast<int32_t>(expected.dims.size())) {
    invalid_argument(role() + " has " + std::to_string(t->ndim) + " dims, expected " +
                     std::to_string(expected.dims.size()) + " (" + to_string(expected.dims) + ")");
  }
  if (t->ndim > 0 && t->shape == nullptr) invalid_argument(role() + ": shape is NULL");
  if (!std::equal(expected.dims.begin(), expected.dims.end(), t->shape)) {
    invalid_argument(role() + " has shape " + to_string(Dims(t->shape, t->shape + t->ndim)) + ", expected " +
                     to_string(expected.dims));
  }
  const std::optional<DType> dtype = dtype_from_dlpack(t->dtype);
  if (!dtype || *dtype != expected.dtype) check_dlpack_dtype(role(), t->dtype, expected.dtype);
  if (dlpack_device_type(t->device) != device.dlpack_device_type || t->device.device_id != device.dlpack_device_id) {
    invalid_argument(role() + " is on DLPack device (" + std::to_string(dlpack_device_type(t->device)) + ", " +
                     std::to_string(t->device.device_id) + "), the kernel's device is (" +
                     std::to_string(device.dlpack_device_type) + ", " + std::to_string(device.dlpack_device_id) + ")");
  }
  if (t->strides != nullptr) {
    int64_t compact = 1;  // the row-major stride of dim d, from the last dim up
    for (int32_t d = t->ndim; d-- > 0;) {
      const int64_t extent = expected.dims[static_cast<size_t>(d)];
      if (extent != 1 && t->strides[d] != compact) {
        throw Error(ErrorCode::kUnsupported,
                    role() + " is strided; kernels take compact row-major tensors (copy it first)");
      }
      compact *= extent;
    }
  }
  if (t->data == nullptr && num_elements(expected.dims) > 0) invalid_argument(role() + ": data is NULL");
  return static_cast<char *>(t->data) + t->byte_offset;
}

// The program running `ops` of `graph` as one, where device `device` takes it (its supports());
// nullopt for any refusal, logged: the operators then run apart, which is always right.
std::optional<serialize::GroupProgram> accepted_group(const Plugin &plugin, int32_t device, const KernelGraph &graph,
                                                      const std::vector<size_t> &ops,
                                                      const serialize::GraphReaders &readers) {
  serialize::GroupProgram group = serialize::make_group_program(graph, ops, readers);
  const std::vector<uint8_t> bytes = serialize::kernel_program_to_bytes(group.program);
  try {
    plugin.call("supports", plugin.api().supports, plugin.instance(), device, static_cast<const void *>(bytes.data()),
                bytes.size());
    return group;
  } catch (const Error &e) {
    util::log_line(util::LogLevel::kDebug, std::string("compile: operators ") + std::to_string(ops.front()) + "–" +
                                               std::to_string(ops.back()) + " run apart: " + e.what());
    return std::nullopt;
  }
}

// The program running the kernel operators from kernels[k] on that launch_with_next chains
// (views that alias their input break the chain; at most kMaxGroupOperators, the rest chained on
// from there) as one, where the device takes it; nullopt where no chain starts there or the
// device runs it apart.
std::optional<serialize::GroupProgram> chained_group(const Plugin &plugin, int32_t device, const KernelGraph &graph,
                                                     const serialize::GraphReaders &readers,
                                                     const std::vector<size_t> &kernels, size_t k) {
  size_t count = 1;
  while (count < kMaxGroupOperators && k + count < kernels.size() &&
         graph.operators()[kernels[k + count - 1]].attributes.launch_with_next &&
         !aliases_its_input(graph, graph.operators()[kernels[k + count]])) {
    ++count;
  }
  if (count == 1 || !plugin.takes_operator_groups(device)) return std::nullopt;
  const std::vector<size_t> ops(kernels.begin() + static_cast<std::ptrdiff_t>(k),
                                kernels.begin() + static_cast<std::ptrdiff_t>(k + count));
  return accepted_group(plugin, device, graph, ops, readers);
}

}  // namespace

Buffer allocate_buffer(const Plugin &plugin, int32_t device, size_t bytes) {
  yirage_backend_buffer *raw = nullptr;
  plugin.call("buffer_alloc", plugin.api().buffer_alloc, plugin.instance(), device, bytes, &raw);
  return Buffer(raw, BufferRelease{&plugin.api()});
}

void check_buildable(const Plugin &plugin, int32_t device, const KernelGraph &graph) {
  for (size_t i : serialize::kernel_operators(graph)) {
    const std::vector<uint8_t> program = serialize::kernel_program_to_bytes(serialize::make_kernel_program(graph, i));
    plugin.call("supports", plugin.api().supports, plugin.instance(), device, static_cast<const void *>(program.data()),
                program.size());
  }
}

std::optional<KernelGraph> with_operator_groups(const Plugin &plugin, int32_t device, const KernelGraph &graph) {
  if (!plugin.takes_operator_groups(device)) return std::nullopt;
  const std::vector<size_t> kernels = serialize::kernel_operators(graph);
  const serialize::GraphReaders readers(graph);
  KernelGraph grouped = graph;
  for (size_t i : kernels) grouped.set_launch_with_next(i, false);
  const auto aliases = [&](size_t k) { return aliases_its_input(graph, graph.operators()[kernels[k]]); };
  const auto accepted = [&](size_t first, size_t last) {
    const std::vector<size_t> ops(kernels.begin() + static_cast<std::ptrdiff_t>(first),
                                  kernels.begin() + static_cast<std::ptrdiff_t>(last + 1));
    return accepted_group(plugin, device, graph, ops, readers).has_value();
  };
  bool any = false;
  for (size_t first = 0; first + 1 < kernels.size();) {
    if (aliases(first)) {
      ++first;
      continue;
    }
    // The run up to the next view that aliases its input, whole where the device takes it (one
    // question: the CPU takes any), else grown one operator at a time from a pair (CUDA takes a
    // pair at most) until the device declines.
    size_t end = first;
    while (end + 1 < kernels.size() && end + 1 < first + kMaxGroupOperators && !aliases(end + 1)) ++end;
    size_t last = first;
    if (end > first && accepted(first, end)) {
      last = end;
    } else {
      while (last + 1 < end && accepted(first, last + 1)) ++last;
    }
    for (size_t k = first; k < last; ++k) grouped.set_launch_with_next(kernels[k], true);
    any = any || last > first;
    first = last + 1;
  }
  if (!any) return std::nullopt;
  return grouped;
}

yirage_backend_kernel_estimate backend_estimate(const Plugin &plugin, int32_t device,
                                                const serialize::KernelProgram &program) {
  yirage_backend_kernel_estimate out{};
  out.struct_size = sizeof out;
  out.loop_waits = -1;
  out.shared_memory_seconds = -1;
  out.dependent_launch_seconds = -1;
  out.max_resident_blocks = -1;
  out.whole_product = -1;
  const auto estimate = plugin.estimate_entry();
  if (estimate == nullptr) return out;
  const std::vector<uint8_t> bytes = serialize::kernel_program_to_bytes(program);
  try {
    plugin.call("estimate", estimate, plugin.instance(), device, static_cast<const void *>(bytes.data()), bytes.size(),
                &out);
  } catch (const Error &e) {
    if (e.code() == ErrorCode::kUnsupported) throw;
    throw Error(ErrorCode::kBackend, e.what());
  }
  return out;
}

CompiledGraph::CompiledGraph(const Plugin &plugin, int32_t device, const KernelGraph &graph, int optimization_level)
    : plugin_(plugin), device_(device), graph_(graph) {
  const auto started = std::chrono::steady_clock::now();
  plugin.device(device);  // throws for a bad index
  if (graph_.outputs().empty()) invalid_argument("compile: the graph has no outputs");
  const yirage_backend_api &api = plugin.api();
  yirage_backend_compile_options options{};
  options.struct_size = sizeof options;
  options.optimization_level = optimization_level;
  std::map<std::vector<uint8_t>, Executable> compiled;
  // Identical programs share an executable: the key is the program without its name.
  auto executable_of = [&](serialize::KernelProgram program) {
    const std::string name = std::move(program.name);
    program.name.clear();
    Executable &executable = compiled[serialize::kernel_program_to_bytes(program)];
    if (!executable) {
      program.name = name;
      const std::vector<uint8_t> bytes = serialize::kernel_program_to_bytes(program);
      yirage_backend_executable *raw = nullptr;
      plugin.call("compile", api.compile, plugin.instance(), device, static_cast<const void *>(bytes.data()),
                  bytes.size(), static_cast<const yirage_backend_compile_options *>(&options), &raw);
      executable = Executable(raw, ExecutableRelease{&api});
      ++stats_.executables;
    }
    return executable;
  };
  const std::vector<size_t> kernels = serialize::kernel_operators(graph_);
  const bool any_group = std::any_of(kernels.begin(), kernels.end(),
                                     [&](size_t i) { return graph_.operators()[i].attributes.launch_with_next; });
  const std::optional<serialize::GraphReaders> readers =
      any_group ? std::optional<serialize::GraphReaders>(graph_) : std::nullopt;
  for (size_t k = 0; k < kernels.size();) {
    const Operator &op = graph_.operators()[kernels[k]];
    // A reshape keeps a compact tensor's bytes as they are: its result aliases its input (no
    // kernel reads or writes in place). One written into a caller's output is copied.
    if (aliases_its_input(graph_, op)) {
      steps_.push_back({nullptr, op.inputs, op.outputs, {kernels[k]}});
      ++k;
      continue;
    }
    std::optional<serialize::GroupProgram> group =
        readers ? chained_group(plugin, device, graph_, *readers, kernels, k) : std::nullopt;
    // A group the plugin took in supports() but cannot compile as one (a CUDA persistent kernel of
    // which no block fits on a multiprocessor: only the compiled kernel tells) runs apart.
    Executable grouped_executable;
    const size_t grouped = group ? group->program.operator_count() : 0;
    if (group) {
      try {
        grouped_executable = executable_of(std::move(group->program));
      } catch (const Error &e) {
        if (e.code() != ErrorCode::kUnsupported) throw;
        util::log_line(util::LogLevel::kDebug, "operators " + std::to_string(kernels[k]) + " to " +
                                                   std::to_string(kernels[k + grouped - 1]) +
                                                   " run apart, not as one program: " + e.what());
        group.reset();
      }
    }
    if (group) {
      const std::vector<size_t> run(kernels.begin() + static_cast<std::ptrdiff_t>(k),
                                    kernels.begin() + static_cast<std::ptrdiff_t>(k + grouped));
      steps_.push_back({std::move(grouped_executable), group->inputs, group->outputs, run});
      stats_.grouped_operators += static_cast<int>(grouped);
      k += grouped;
    } else {
      steps_.push_back(
          {executable_of(serialize::make_kernel_program(graph_, kernels[k])), op.inputs, op.outputs, {kernels[k]}});
      ++k;
    }
  }
  const Intermediates &default_stream = *(intermediates_[nullptr] = allocate_intermediates());
  for (const Buffer &b : default_stream.buffers) has_intermediates_ |= b != nullptr;
  // Recorded where the plugin records and a run launches several kernels; YIRAGE_RECORDINGS=0
  // launches them one by one (for comparisons).
  const char *recordings = std::getenv("YIRAGE_RECORDINGS");
  stats_.kernels = static_cast<int>(
      std::count_if(steps_.begin(), steps_.end(), [](const Step &step) { return step.executable != nullptr; }));
  records_ = stats_.kernels >= 2 && plugin_.records() && (recordings == nullptr || std::string(recordings) != "0");
  stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

std::string CompiledGraph::launch_plan() const {
  std::ostringstream out;
  const char *const backend = plugin_.name().c_str();
  out << stats_.kernels << (stats_.kernels == 1 ? " launch" : " launches") << " a run on " << backend << " device "
      << device_ << ":\n";
  int launch = 0;
  for (const Step &step : steps_) {
    std::string ops;
    for (size_t i : step.operators) {
      ops += (ops.empty() ? "" : ", ") + std::to_string(i) + " (" + op_name(graph_.operators()[i].kind) + ")";
    }
    if (!step.executable) {
      out << "  no launch: operator " << ops << " is a view of its input's memory\n";
    } else if (step.operators.size() > 1) {
      out << "  launch " << ++launch << ": operators " << ops << " as one program\n";
    } else {
      out << "  launch " << ++launch << ": operator " << ops << "\n";
    }
  }
  if (records_ && recording_failed_) {
    out << "runs launch their kernels one by one: recording them failed once\n";
  } else if (records_) {
    out << "runs on one stream and set of buffers are recorded at their second run and replayed in one "
           "submission from then on\n";
  } else if (stats_.kernels >= 2) {
    const char *recordings = std::getenv("YIRAGE_RECORDINGS");
    out << "runs are not recorded: "
        << (recordings != nullptr && std::string(recordings) == "0" ? "YIRAGE_RECORDINGS=0"
                                                                    : "the backend does not record launches")
        << "\n";
  }
  return out.str();
}

std::unique_ptr<CompiledGraph::Intermediates> CompiledGraph::allocate_intermediates() const {
  auto set = std::make_unique<Intermediates>();
  set->buffers.resize(graph_.num_tensors());
  for (const Step &step : steps_) {
    if (!step.executable) continue;  // an alias
    for (TensorId id : step.outputs) {
      if (!is_output(graph_, id)) {
        set->buffers[static_cast<size_t>(id)] = allocate_buffer(plugin_, device_, tensor_bytes(graph_.tensor(id)));
      }
    }
  }
  return set;
}

CompiledGraph::Intermediates &CompiledGraph::intermediates_of(void *stream) const {
  const std::lock_guard<std::mutex> lock(streams_mutex_);
  std::unique_ptr<Intermediates> &set = intermediates_[stream];
  if (!set) {
    try {
      set = allocate_intermediates();
    } catch (...) {
      intermediates_.erase(stream);  // the next run on this stream tries again
      throw;
    }
  }
  return *set;
}

std::vector<CompiledGraph::Span> CompiledGraph::checked_spans(const std::string &function,
                                                              const std::vector<const DLTensor *> &inputs,
                                                              const std::vector<const DLTensor *> &outputs,
                                                              const yirage_backend_device_info &where) const {
  if (inputs.size() != graph_.inputs().size() || outputs.size() != graph_.outputs().size()) {
    invalid_argument(function + ": the kernel takes " + std::to_string(graph_.inputs().size()) + " inputs and " +
                     std::to_string(graph_.outputs().size()) + " outputs; " + std::to_string(inputs.size()) + " and " +
                     std::to_string(outputs.size()) + " were given");
  }
  // The inputs' spans, then the outputs'.
  std::vector<Span> spans;
  spans.reserve(inputs.size() + outputs.size());
  auto role = [&](size_t k) {
    return k < inputs.size() ? "input " + std::to_string(k) : "output " + std::to_string(k - inputs.size());
  };
  for (size_t k = 0; k < inputs.size() + outputs.size(); ++k) {
    const bool input = k < inputs.size();
    const Tensor &expected = graph_.tensor(input ? graph_.inputs()[k] : graph_.outputs()[k - inputs.size()]);
    const void *data = checked_data([&] { return function + ": " + role(k); },
                                    input ? inputs[k] : outputs[k - inputs.size()], expected, where);
    spans.push_back({static_cast<char *>(const_cast<void *>(data)), tensor_bytes(expected)});
  }
  // A kernel reads its inputs while it writes its outputs, in no defined order: an output that
  // shares memory with an input or another output would give results no one can predict.
  for (size_t o = inputs.size(); o < spans.size(); ++o) {
    const Span &a = spans[o];
    for (size_t i = 0; i < o; ++i) {
      const Span &b = spans[i];
      const bool overlap = a.bytes > 0 && b.bytes > 0 && a.begin < b.begin + b.bytes && b.begin < a.begin + a.bytes;
      if (overlap) {
        invalid_argument(function + ": " + role(o) + " overlaps " + role(i) +
                         " in memory (outputs must not share memory with inputs or other "
                         "outputs)");
      }
    }
  }
  return spans;
}

void CompiledGraph::run(const std::vector<const DLTensor *> &inputs, const std::vector<const DLTensor *> &outputs,
                        void *stream) const {
  run_wrapped(checked_spans("run", inputs, outputs, plugin_.device(device_).raw), inputs.size(), stream);
}

void CompiledGraph::run_wrapped(const std::vector<Span> &spans, size_t num_inputs, void *stream) const {
  std::vector<Buffer> wrapped;
  std::vector<yirage_backend_buffer *> in, out;
  wrapped.reserve(spans.size());
  in.reserve(num_inputs);
  out.reserve(spans.size() - num_inputs);
  for (size_t i = 0; i < spans.size(); ++i) {
    yirage_backend_buffer *raw = nullptr;
    plugin_.call("buffer_wrap", plugin_.api().buffer_wrap, plugin_.instance(), device_,
                 static_cast<void *>(spans[i].begin), spans[i].bytes, &raw);
    wrapped.emplace_back(raw, BufferRelease{&plugin_.api()});
    (i < num_inputs ? in : out).push_back(raw);
  }
  run_buffers(in, out, stream);
}

void CompiledGraph::run_host(const std::vector<const DLTensor *> &inputs,
                             const std::vector<const DLTensor *> &outputs) const {
  const yirage_backend_device_info &device = plugin_.device(device_).raw;
  yirage_backend_device_info host = device;
  host.dlpack_device_type = kDLCPU;
  host.dlpack_device_id = 0;
  const std::vector<Span> spans = checked_spans("run_host", inputs, outputs, host);
  if (device.dlpack_device_type == kDLCPU) {
    run_wrapped(spans, inputs.size(), nullptr);
    synchronize(nullptr);
    return;
  }
  std::vector<Buffer> staged;
  std::vector<yirage_backend_buffer *> in, out;
  for (size_t i = 0; i < spans.size(); ++i) {
    staged.push_back(allocate_buffer(plugin_, device_, spans[i].bytes));
    if (i < inputs.size()) {
      plugin_.call("buffer_write", plugin_.api().buffer_write, staged.back().get(), size_t{0},
                   static_cast<const void *>(spans[i].begin), spans[i].bytes);
    }
    (i < inputs.size() ? in : out).push_back(staged.back().get());
  }
  run_buffers(in, out, nullptr);
  synchronize(nullptr);
  for (size_t o = 0; o < out.size(); ++o) {
    const Span &span = spans[inputs.size() + o];
    plugin_.call("buffer_read", plugin_.api().buffer_read, out[o], size_t{0}, static_cast<void *>(span.begin),
                 span.bytes);
  }
}

void CompiledGraph::run_buffers(const std::vector<yirage_backend_buffer *> &inputs,
                                const std::vector<yirage_backend_buffer *> &outputs, void *stream) const {
  // A graph of one kernel has no intermediates: its runs need neither a set nor turns.
  std::unique_lock<std::mutex> turn;
  std::vector<yirage_backend_buffer *> where(graph_.num_tensors(), nullptr);
  if (has_intermediates_) {
    Intermediates &set = intermediates_of(stream);
    turn = std::unique_lock<std::mutex>(set.queueing);
    for (size_t i = 0; i < graph_.num_tensors(); ++i) where[i] = set.buffers[i].get();
  }
  for (size_t i = 0; i < inputs.size(); ++i) where[static_cast<size_t>(graph_.inputs()[i])] = inputs[i];
  // Graph outputs are distinct computed tensors (KernelGraph::mark_output refuses inputs and
  // repeats), so each is written in place by the kernel that computes it.
  for (size_t o = 0; o < outputs.size(); ++o) {
    where[static_cast<size_t>(graph_.outputs()[o])] = outputs[o];
  }
  if (records_ && !recording_failed_ && run_recorded(where, inputs, outputs, stream)) return;
  launch_steps(where, stream);
}

void CompiledGraph::launch_steps(std::vector<yirage_backend_buffer *> &where, void *stream) const {
  const yirage_backend_api &api = plugin_.api();
  for (const Step &step : steps_) {
    if (!step.executable) {
      where[static_cast<size_t>(step.outputs[0])] = where[static_cast<size_t>(step.inputs[0])];
      continue;
    }
    std::vector<yirage_backend_buffer *> in(step.inputs.size()), out(step.outputs.size());
    for (size_t i = 0; i < in.size(); ++i) in[i] = where[static_cast<size_t>(step.inputs[i])];
    for (size_t o = 0; o < out.size(); ++o) out[o] = where[static_cast<size_t>(step.outputs[o])];
    plugin_.call("launch", api.launch, step.executable.get(), stream,
                 static_cast<yirage_backend_buffer *const *>(in.data()), in.size(),
                 static_cast<yirage_backend_buffer *const *>(out.data()), out.size());
  }
}

bool CompiledGraph::run_recorded(std::vector<yirage_backend_buffer *> &where,
                                 const std::vector<yirage_backend_buffer *> &inputs,
                                 const std::vector<yirage_backend_buffer *> &outputs, void *stream) const {
  const yirage_backend_api &api = plugin_.api();
  RecordingKey key{stream, {}};
  for (const std::vector<yirage_backend_buffer *> *buffers : {&inputs, &outputs}) {
    for (yirage_backend_buffer *b : *buffers) {
      void *native = nullptr;
      plugin_.call("buffer_native", api.buffer_native, b, &native);
      key.addresses.push_back(native);
    }
  }
  Recording replay;  // shared: a replay may outlive the map's entry (cleared by another thread)
  {
    const std::lock_guard<std::mutex> lock(recordings_mutex_);
    auto found = recordings_.find(key);
    if (found == recordings_.end()) {
      // A few buffer sets per stream are kept; a new one beyond them replaces them all.
      if (recordings_.size() >= kMaxRecordings) recordings_.clear();
      found = recordings_.emplace(key, Recorded{}).first;
    }
    Recorded &r = found->second;
    if (r.recording) {
      replay = r.recording;
    } else if (++r.runs < 2) {
      return false;  // a first run with these buffers: launched as it is
    }
  }
  if (!replay) {
    // The second run with these buffers: recorded, then replayed. A failure anywhere leaves
    // this graph launching kernel by kernel (nothing recorded has run).
    void *recording_stream = nullptr;
    yirage_backend_recording *made = nullptr;
    const auto give_up = [&](const Error &e) {
      recording_failed_ = true;
      util::log_line(util::LogLevel::kInfo,
                     std::string("yirage: this graph's kernels are launched one by one: ") + e.what());
      return false;
    };
    try {
      plugin_.call("recording_begin", api.recording_begin, plugin_.instance(), device_, stream, &recording_stream);
    } catch (const Error &e) {
      return give_up(e);
    }
    try {
      launch_steps(where, recording_stream);
    } catch (const Error &e) {
      yirage_backend_error ignored{sizeof ignored, YIRAGE_OK, 0, {0}};
      if (api.recording_end(plugin_.instance(), device_, recording_stream, &made, &ignored) == YIRAGE_OK) {
        api.recording_release(made);
      }
      return give_up(e);
    }
    try {
      plugin_.call("recording_end", api.recording_end, plugin_.instance(), device_, recording_stream, &made);
    } catch (const Error &e) {
      return give_up(e);
    }
    replay = Recording(made, api.recording_release);
    const std::lock_guard<std::mutex> lock(recordings_mutex_);
    Recorded &r = recordings_[key];
    if (!r.recording) r.recording = replay;
  }
  plugin_.call("recording_replay", api.recording_replay, replay.get());
  return true;
}

size_t CompiledGraph::recordings() const {
  const std::lock_guard<std::mutex> lock(recordings_mutex_);
  return static_cast<size_t>(std::count_if(recordings_.begin(), recordings_.end(),
                                           [](const auto &r) { return r.second.recording != nullptr; }));
}

void CompiledGraph::synchronize(void *stream) const {
  plugin_.call("synchronize", plugin_.api().synchronize, plugin_.instance(), device_, stream);
}

}  // namespace yirage::runtime
