// yirage.h: device buffers (yirage_buffer) and the DLPack tensors made from them.
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "capi/runtime_handles.hpp"
#include "capi/status.hpp"
#include "ir/dtype.hpp"
#include "ir/shape.hpp"
#include "runtime/host_tensor.hpp"

namespace {

using yirage::capi::require_non_null;

const yirage_buffer_s &checked_buffer(const char *function, const yirage_buffer *buffer) {
  return yirage::capi::checked(function, "buffer", buffer, yirage::capi::HandleKind::kBuffer, "yirage_buffer");
}

void check_range(const char *function, const yirage_buffer_s::Storage &s, size_t offset, size_t bytes) {
  if (offset > s.bytes || bytes > s.bytes - offset) {
    yirage::invalid_argument(std::string(function) + ": bytes [" + std::to_string(offset) + ", " +
                             std::to_string(offset) + " + " + std::to_string(bytes) + ") are outside the buffer's " +
                             std::to_string(s.bytes));
  }
}

// What a DLManagedTensor made by yirage_buffer_to_dlpack owns: the storage and its shape.
struct Export {
  DLManagedTensor managed{};
  std::shared_ptr<yirage_buffer_s::Storage> storage;
  std::vector<int64_t> shape;
};

void delete_export(DLManagedTensor *managed) {
  delete static_cast<Export *>(managed->manager_ctx);
}

}  // namespace

extern "C" {

yirage_status yirage_buffer_alloc(const yirage_device *device, size_t bytes, yirage_buffer **out_buffer) {
  const char *function = "yirage_buffer_alloc";
  return yirage::capi::guard([&] {
    const yirage_device_s &d = yirage::capi::checked_device(function, device);
    require_non_null(function, "out_buffer", out_buffer);
    auto storage = std::make_shared<yirage_buffer_s::Storage>();
    storage->context = d.context;
    storage->plugin = d.plugin;
    storage->device = d.index;
    storage->bytes = bytes;
    try {
      storage->buffer = yirage::runtime::allocate_buffer(*d.plugin, d.index, bytes);
    } catch (const yirage::Error &e) {
      throw yirage::Error(e.code(), std::string(function) + ": " + e.what());
    }
    auto handle = std::make_unique<yirage_buffer_s>(yirage_buffer_s{std::move(storage)});
    yirage::capi::register_handle(handle.get(), yirage::capi::HandleKind::kBuffer);
    *out_buffer = handle.release();
  });
}

void yirage_buffer_release(yirage_buffer *buffer) {
  if (buffer == nullptr || !yirage::capi::is_live(buffer, yirage::capi::HandleKind::kBuffer)) return;
  yirage::capi::unregister_handle(buffer);
  delete buffer;
}

yirage_status yirage_buffer_size(const yirage_buffer *buffer, size_t *out_bytes) {
  const char *function = "yirage_buffer_size";
  return yirage::capi::guard([&] {
    const yirage_buffer_s &b = checked_buffer(function, buffer);
    require_non_null(function, "out_bytes", out_bytes);
    *out_bytes = b.storage->bytes;
  });
}

yirage_status yirage_buffer_write(yirage_buffer *buffer, size_t offset, const void *source, size_t bytes) {
  const char *function = "yirage_buffer_write";
  return yirage::capi::guard([&] {
    const yirage_buffer_s::Storage &s = *checked_buffer(function, buffer).storage;
    if (bytes > 0) require_non_null(function, "source", source);
    check_range(function, s, offset, bytes);
    s.plugin->call(function, s.plugin->api().buffer_write, s.buffer.get(), offset, source, bytes);
  });
}

yirage_status yirage_buffer_read(const yirage_buffer *buffer, size_t offset, void *destination, size_t bytes) {
  const char *function = "yirage_buffer_read";
  return yirage::capi::guard([&] {
    const yirage_buffer_s::Storage &s = *checked_buffer(function, buffer).storage;
    if (bytes > 0) require_non_null(function, "destination", destination);
    check_range(function, s, offset, bytes);
    s.plugin->call(function, s.plugin->api().buffer_read, s.buffer.get(), offset, destination, bytes);
  });
}

yirage_status yirage_buffer_to_dlpack(const yirage_buffer *buffer, const int64_t *shape, int32_t ndim,
                                      yirage_dtype dtype, DLManagedTensor **out_tensor) {
  const char *function = "yirage_buffer_to_dlpack";
  return yirage::capi::guard([&] {
    const yirage_buffer_s &b = checked_buffer(function, buffer);
    require_non_null(function, "out_tensor", out_tensor);
    if (ndim < 0 || ndim > yirage::kMaxRank) {
      yirage::invalid_argument(std::string(function) + ": ndim " + std::to_string(ndim) + " is outside 0.." +
                               std::to_string(yirage::kMaxRank));
    }
    if (ndim > 0) require_non_null(function, "shape", shape);
    if (!yirage::is_valid_dtype(static_cast<int32_t>(dtype))) {
      yirage::invalid_argument(std::string(function) + ": dtype " + std::to_string(static_cast<int32_t>(dtype)) +
                               " is not a yirage_dtype");
    }
    const auto d = static_cast<yirage::DType>(dtype);
    // The size in bytes, refusing negative extents and overflow before comparing.
    size_t bytes = yirage::dtype_size(d);
    for (int32_t i = 0; i < ndim; ++i) {
      if (shape[i] < 0) {
        yirage::invalid_argument(std::string(function) + ": shape[" + std::to_string(i) + "] is " +
                                 std::to_string(shape[i]));
      }
      const auto extent = static_cast<size_t>(shape[i]);
      bytes = extent == 0 ? 0 : (bytes > std::numeric_limits<size_t>::max() / extent ? SIZE_MAX : bytes * extent);
    }
    const yirage_buffer_s::Storage &s = *b.storage;
    if (bytes > s.bytes) {
      yirage::invalid_argument(std::string(function) + ": the tensor needs " +
                               (bytes == SIZE_MAX ? std::string("more than 2^64") : std::to_string(bytes)) +
                               " bytes; the buffer has " + std::to_string(s.bytes));
    }
    const auto native = s.plugin->buffer_native_entry();
    if (native == nullptr) {
      throw yirage::Error(yirage::ErrorCode::kUnsupported,
                          std::string(function) + ": the " + s.plugin->name() +
                              " plugin cannot say where its buffers are (it has no buffer_native entry, plugin ABI "
                              "1.2)");
    }
    void *data = nullptr;
    s.plugin->call(function, native, s.buffer.get(), &data);
    auto owned = std::make_unique<Export>();
    owned->storage = b.storage;
    owned->shape.assign(shape, shape + ndim);
    const yirage_backend_device_info &info = s.plugin->device(s.device).raw;
    DLTensor &t = owned->managed.dl_tensor;
    t.data = data;
    t.device = DLDevice{static_cast<DLDeviceType>(info.dlpack_device_type), info.dlpack_device_id};
    t.ndim = ndim;
    t.dtype = yirage::dtype_to_dlpack(d);
    t.shape = owned->shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    owned->managed.manager_ctx = owned.get();
    owned->managed.deleter = delete_export;
    *out_tensor = &owned.release()->managed;
  });
}

}  // extern "C"
