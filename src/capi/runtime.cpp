// yirage.h: contexts, backends, devices, compiled kernels and their measurement.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>

#include "capi/runtime_handles.hpp"
#include "capi/status.hpp"
#include "runtime/measure.hpp"
#include "target/target_abi.hpp"

namespace {

using yirage::capi::copy_string;
using yirage::capi::require_non_null;
using yirage::capi::require_struct_size;

using yirage::capi::checked;

yirage_context_s &checked_context(const char *function, const yirage_context *context) {
  return checked(function, "context", context, yirage::capi::HandleKind::kContext, "yirage_context");
}

const yirage_kernel_s &checked_kernel(const char *function, const yirage_kernel *kernel) {
  return checked(function, "kernel", kernel, yirage::capi::HandleKind::kKernel, "yirage_kernel");
}

// The checks both runs share, then run(compiled graph, inputs, outputs); errors name `function`.
template <class Run>
yirage_status run_kernel(const char *function, const yirage_kernel *kernel, const DLTensor *const *inputs,
                         size_t n_inputs, DLTensor *const *outputs, size_t n_outputs, Run &&run) {
  return yirage::capi::guard([&] {
    const yirage_kernel_s &k = checked_kernel(function, kernel);
    // The counts first: the arrays are read only as far as the graph's counts.
    const yirage::KernelGraph &g = k.compiled->graph();
    if (n_inputs != g.inputs().size() || n_outputs != g.outputs().size()) {
      yirage::invalid_argument(std::string(function) + ": the kernel takes " + std::to_string(g.inputs().size()) +
                               " inputs and " + std::to_string(g.outputs().size()) + " outputs; " +
                               std::to_string(n_inputs) + " and " + std::to_string(n_outputs) + " were given");
    }
    if (n_inputs > 0) require_non_null(function, "inputs", inputs);
    if (n_outputs > 0) require_non_null(function, "outputs", outputs);
    const std::vector<const DLTensor *> in(inputs, inputs + n_inputs), out(outputs, outputs + n_outputs);
    try {
      run(*k.compiled, in, out);
    } catch (const yirage::Error &e) {
      throw yirage::Error(e.code(), std::string(function) + ": " + e.what());
    }
  });
}

// Device handles are created on first request and live as long as the context.
std::mutex device_mutex;

}  // namespace

namespace yirage::capi {

const yirage_device_s &checked_device(const char *function, const yirage_device *device) {
  return checked(function, "device", device, HandleKind::kDevice, "yirage_device");
}

}  // namespace yirage::capi

extern "C" {

void yirage_context_options_init(yirage_context_options *options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->search_default_paths = 1;
}

yirage_status yirage_context_create(const yirage_context_options *options, yirage_context **out_context) {
  const char *function = "yirage_context_create";
  return yirage::capi::guard([&] {
    require_non_null(function, "out_context", out_context);
    yirage::runtime::ContextOptions o;
    if (options != nullptr) {
      require_struct_size(function, "options", options->struct_size, sizeof(yirage_context_options));
      if (options->num_plugin_paths > 0) {
        require_non_null(function, "options->plugin_paths", options->plugin_paths);
      }
      for (size_t i = 0; i < options->num_plugin_paths; ++i) {
        if (options->plugin_paths[i] == nullptr) {
          yirage::invalid_argument(std::string(function) + ": plugin_paths[" + std::to_string(i) + "] is NULL");
        }
        o.plugin_paths.push_back(options->plugin_paths[i]);
      }
      o.search_default_paths = options->search_default_paths != 0;
      if (options->cache_dir) o.cache_dir = options->cache_dir;
    }
    auto handle = std::make_unique<yirage_context_s>();
    handle->context = std::make_shared<const yirage::runtime::Context>(o);
    for (const std::string &line : handle->context->load_errors()) {
      handle->load_errors += line + "\n";
    }
    yirage::capi::register_handle(handle.get(), yirage::capi::HandleKind::kContext);
    *out_context = handle.release();
  });
}

void yirage_context_release(yirage_context *context) {
  if (context == nullptr || !yirage::capi::is_live(context, yirage::capi::HandleKind::kContext)) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(device_mutex);
    for (const auto &device : context->devices) yirage::capi::unregister_handle(device.get());
  }
  yirage::capi::unregister_handle(context);
  delete context;
}

yirage_status yirage_context_load_errors(const yirage_context *context, const char **out_text) {
  const char *function = "yirage_context_load_errors";
  return yirage::capi::guard([&] {
    const yirage_context_s &c = checked_context(function, context);
    require_non_null(function, "out_text", out_text);
    *out_text = c.load_errors.c_str();
  });
}

yirage_status yirage_context_num_backends(const yirage_context *context, size_t *out_count) {
  const char *function = "yirage_context_num_backends";
  return yirage::capi::guard([&] {
    const yirage_context_s &c = checked_context(function, context);
    require_non_null(function, "out_count", out_count);
    *out_count = c.context->plugins().size();
  });
}

yirage_status yirage_context_backend_info(const yirage_context *context, size_t index, yirage_backend_info *out_info) {
  const char *function = "yirage_context_backend_info";
  return yirage::capi::guard([&] {
    const yirage_context_s &c = checked_context(function, context);
    require_non_null(function, "out_info", out_info);
    require_struct_size(function, "out_info", out_info->struct_size, sizeof(yirage_backend_info));
    const auto &plugins = c.context->plugins();
    if (index >= plugins.size()) {
      throw yirage::Error(yirage::ErrorCode::kNotFound, std::string(function) + ": index " + std::to_string(index) +
                                                            " is out of range (" + std::to_string(plugins.size()) +
                                                            " backends)");
    }
    const yirage::runtime::Plugin &p = *plugins[index];
    copy_string(out_info->name, p.name());
    copy_string(out_info->version, p.version());
    copy_string(out_info->path, p.path());
    out_info->num_devices = p.device_count();
    copy_string(out_info->unavailable_reason, p.device_count() ? "" : p.unavailable_reason());
  });
}

yirage_status yirage_context_get_device(const yirage_context *context, const char *backend, int32_t index,
                                        const yirage_device **out_device) {
  const char *function = "yirage_context_get_device";
  return yirage::capi::guard([&] {
    yirage_context_s &c = checked_context(function, context);
    require_non_null(function, "backend", backend);
    require_non_null(function, "out_device", out_device);
    const yirage::runtime::Plugin &plugin = c.context->plugin(backend);
    plugin.device(index);  // NOT_FOUND with the reason
    std::lock_guard<std::mutex> lock(device_mutex);
    for (const auto &d : c.devices) {
      if (d->plugin == &plugin && d->index == index) {
        *out_device = d.get();
        return;
      }
    }
    auto device = std::make_unique<yirage_device_s>(yirage_device_s{c.context, &plugin, index});
    c.devices.reserve(c.devices.size() + 1);
    yirage::capi::register_handle(device.get(), yirage::capi::HandleKind::kDevice);
    c.devices.push_back(std::move(device));
    *out_device = c.devices.back().get();
  });
}

yirage_status yirage_device_get_info(const yirage_device *device, yirage_device_info *out_info) {
  const char *function = "yirage_device_get_info";
  return yirage::capi::guard([&] {
    const yirage_device_s &d = yirage::capi::checked_device(function, device);
    require_non_null(function, "out_info", out_info);
    require_struct_size(function, "out_info", out_info->struct_size, sizeof(yirage_device_info));
    const yirage::runtime::DeviceInfo &info = d.plugin->device(d.index);
    copy_string(out_info->backend, d.plugin->name());
    out_info->index = d.index;
    copy_string(out_info->name, info.name);
    out_info->target.struct_size = sizeof out_info->target;
    yirage::targets::target_to_c(info.target, out_info->target);
    out_info->dtypes = info.raw.dtypes;
    out_info->dlpack_device_type = info.raw.dlpack_device_type;
    out_info->dlpack_device_id = info.raw.dlpack_device_id;
  });
}

void yirage_compile_options_init(yirage_compile_options *options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->optimization_level = 3;
}

yirage_status yirage_compile(const yirage_graph *graph, const yirage_device *device,
                             const yirage_compile_options *options, yirage_kernel **out_kernel) {
  const char *function = "yirage_compile";
  return yirage::capi::guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    const yirage_device_s &d = yirage::capi::checked_device(function, device);
    require_non_null(function, "out_kernel", out_kernel);
    int level = 3;
    if (options != nullptr) {
      require_struct_size(function, "options", options->struct_size, sizeof(yirage_compile_options));
      if (options->optimization_level < 0 || options->optimization_level > 3) {
        yirage::invalid_argument(std::string(function) + ": optimization_level must be 0..3, not " +
                                 std::to_string(options->optimization_level));
      }
      level = options->optimization_level;
    }
    auto handle = std::make_unique<yirage_kernel_s>();
    handle->context = d.context;
    handle->compiled = std::make_unique<yirage::runtime::CompiledGraph>(*d.plugin, d.index, g.graph, level);
    yirage::capi::register_handle(handle.get(), yirage::capi::HandleKind::kKernel);
    *out_kernel = handle.release();
  });
}

void yirage_kernel_release(yirage_kernel *kernel) {
  if (kernel == nullptr || !yirage::capi::is_live(kernel, yirage::capi::HandleKind::kKernel)) return;
  yirage::capi::unregister_handle(kernel);
  delete kernel;
}

yirage_status yirage_kernel_run(const yirage_kernel *kernel, const DLTensor *const *inputs, size_t n_inputs,
                                DLTensor *const *outputs, size_t n_outputs, void *stream) {
  return run_kernel("yirage_kernel_run", kernel, inputs, n_inputs, outputs, n_outputs,
                    [&](const auto &compiled, const auto &in, const auto &out) { compiled.run(in, out, stream); });
}

yirage_status yirage_kernel_run_host(const yirage_kernel *kernel, const DLTensor *const *inputs, size_t n_inputs,
                                     DLTensor *const *outputs, size_t n_outputs) {
  return run_kernel("yirage_kernel_run_host", kernel, inputs, n_inputs, outputs, n_outputs,
                    [](const auto &compiled, const auto &in, const auto &out) { compiled.run_host(in, out); });
}

yirage_status yirage_kernel_synchronize(const yirage_kernel *kernel, void *stream) {
  const char *function = "yirage_kernel_synchronize";
  return yirage::capi::guard([&] { checked_kernel(function, kernel).compiled->synchronize(stream); });
}

namespace {
// yirage_measure_options as ABI 1.0 and 1.3 define it: older callers' struct_size is smaller.
constexpr size_t kMeasureOptionsSizeV1_0 = offsetof(yirage_measure_options, repeats) + sizeof(uint32_t);
constexpr size_t kMeasureOptionsSizeV1_3 = offsetof(yirage_measure_options, flush_bytes) + sizeof(uint64_t);
constexpr uint64_t kMaxFlushBytes = uint64_t{1} << 40;
}  // namespace

yirage_status yirage_kernel_describe(const yirage_kernel *kernel, yirage_blob **out_text) {
  const char *function = "yirage_kernel_describe";
  return yirage::capi::guard([&] {
    const yirage_kernel_s &k = checked_kernel(function, kernel);
    require_non_null(function, "out_text", out_text);
    const std::string text = k.compiled->launch_plan();
    std::vector<uint8_t> bytes(text.begin(), text.end());
    bytes.push_back('\0');
    *out_text = yirage::capi::adopt_blob(std::move(bytes));
  });
}

void yirage_measure_options_init(yirage_measure_options *options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  const yirage::runtime::MeasureOptions d;
  options->struct_size = sizeof *options;
  options->seed = d.seed;
  options->warmup = static_cast<uint32_t>(d.warmup);
  options->repeats = static_cast<uint32_t>(d.repeats);
}

yirage_status yirage_kernel_measure(const yirage_kernel *kernel, const yirage_graph *reference,
                                    const yirage_measure_options *options, yirage_measurement *out_measurement) {
  const char *function = "yirage_kernel_measure";
  return yirage::capi::guard([&] {
    const yirage_kernel_s &k = checked_kernel(function, kernel);
    const yirage::KernelGraph &ref =
        reference ? yirage::capi::checked_graph(function, reference).graph : k.compiled->graph();
    require_non_null(function, "out_measurement", out_measurement);
    require_struct_size(function, "out_measurement", out_measurement->struct_size, sizeof(yirage_measurement));
    yirage::runtime::MeasureOptions o;
    if (options != nullptr) {
      require_struct_size(function, "options", options->struct_size, kMeasureOptionsSizeV1_0);
      if (options->repeats < 1) yirage::invalid_argument(std::string(function) + ": repeats must be >= 1");
      o.seed = options->seed;
      o.warmup = static_cast<int>(std::min<uint32_t>(options->warmup, 1u << 20));
      o.repeats = static_cast<int>(std::min<uint32_t>(options->repeats, 1u << 20));
      if (options->struct_size >= kMeasureOptionsSizeV1_3) {
        if (options->flush_bytes > kMaxFlushBytes) {
          yirage::invalid_argument(std::string(function) + ": flush_bytes " + std::to_string(options->flush_bytes) +
                                   " is over 2^40");
        }
        o.flush_bytes = static_cast<int64_t>(options->flush_bytes);
      }
    }
    const yirage::KernelGraph &g = k.compiled->graph();
    if (ref.inputs().size() != g.inputs().size() || ref.outputs().size() != g.outputs().size()) {
      yirage::invalid_argument(std::string(function) + ": the reference's inputs and outputs differ from the kernel's");
    }
    auto same = [&](const char *role, const std::vector<yirage::TensorId> &a_ids,
                    const std::vector<yirage::TensorId> &b_ids) {
      for (size_t i = 0; i < a_ids.size(); ++i) {
        const auto &a = ref.tensor(a_ids[i]), &b = g.tensor(b_ids[i]);
        if (a.dims != b.dims || a.dtype != b.dtype) {
          yirage::invalid_argument(std::string(function) + ": " + role + " " + std::to_string(i) +
                                   " of the reference differs from the kernel's");
        }
      }
    };
    same("input", ref.inputs(), g.inputs());
    same("output", ref.outputs(), g.outputs());
    yirage::runtime::Measurer measurer(k.compiled->plugin(), k.compiled->device(), ref, o);
    const yirage::runtime::Measurement m = measurer.measure(*k.compiled);
    out_measurement->correct = m.correct ? 1 : 0;
    out_measurement->relative_error = m.max_relative_error;
    out_measurement->median_seconds = m.median_seconds;
    out_measurement->min_seconds = m.min_seconds;
    copy_string(out_measurement->error, m.error);
  });
}

}  // extern "C"
