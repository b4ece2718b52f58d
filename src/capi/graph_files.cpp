// yirage.h: graph files and byte buffers (blobs).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "ir/describe.hpp"
#include "ir/dot.hpp"
#include "serialize/graph_file.hpp"

namespace {

using yirage::capi::adopt_graph;
using yirage::capi::guard;
using yirage::capi::require_non_null;
using yirage::serialize::GraphFormat;

[[noreturn]] void file_error(const std::string &what, const std::string &path, int error) {
  throw yirage::Error(error == ENOENT ? yirage::ErrorCode::kNotFound : yirage::ErrorCode::kInvalidArgument,
                      what + " '" + path + "': " + std::strerror(error));
}

bool ends_with(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// *out_text = a new blob holding render(graph) and a terminating NUL.
yirage_status text_blob(const char *function, const yirage_graph *graph,
                        std::string (*render)(const yirage::KernelGraph &), yirage_blob **out_text) {
  return guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    require_non_null(function, "out_text", out_text);
    const std::string text = render(g.graph);
    auto blob = std::make_unique<yirage_blob_s>();
    blob->bytes.assign(text.begin(), text.end());
    blob->bytes.push_back('\0');
    yirage::capi::register_handle(blob.get(), yirage::capi::HandleKind::kBlob);
    *out_text = blob.release();
  });
}

}  // namespace

extern "C" {

const void *yirage_blob_data(const yirage_blob *blob) {
  if (blob == nullptr || !yirage::capi::is_live(blob, yirage::capi::HandleKind::kBlob)) {
    return nullptr;
  }
  return blob->bytes.data();
}

size_t yirage_blob_size(const yirage_blob *blob) {
  if (blob == nullptr || !yirage::capi::is_live(blob, yirage::capi::HandleKind::kBlob)) return 0;
  return blob->bytes.size();
}

void yirage_blob_release(yirage_blob *blob) {
  if (blob == nullptr || !yirage::capi::is_live(blob, yirage::capi::HandleKind::kBlob)) return;
  yirage::capi::unregister_handle(blob);
  delete blob;
}

yirage_status yirage_graph_serialize(const yirage_graph *graph, yirage_graph_format format, yirage_blob **out_blob) {
  const char *function = "yirage_graph_serialize";
  return guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    require_non_null(function, "out_blob", out_blob);
    if (format != YIRAGE_GRAPH_FORMAT_BINARY && format != YIRAGE_GRAPH_FORMAT_JSON) {
      yirage::invalid_argument(std::string(function) + ": format " + std::to_string(static_cast<int>(format)) +
                               " is not a yirage_graph_format");
    }
    auto blob = std::make_unique<yirage_blob_s>();
    blob->bytes = yirage::serialize::graph_to_bytes(
        g.graph, format == YIRAGE_GRAPH_FORMAT_JSON ? GraphFormat::kJson : GraphFormat::kBinary);
    yirage::capi::register_handle(blob.get(), yirage::capi::HandleKind::kBlob);
    *out_blob = blob.release();
  });
}

yirage_status yirage_graph_describe(const yirage_graph *graph, yirage_blob **out_text) {
  return text_blob("yirage_graph_describe", graph, yirage::describe, out_text);
}

yirage_status yirage_graph_to_dot(const yirage_graph *graph, yirage_blob **out_text) {
  return text_blob("yirage_graph_to_dot", graph, yirage::to_dot, out_text);
}

yirage_status yirage_graph_deserialize(const void *data, size_t size, yirage_graph **out_graph) {
  const char *function = "yirage_graph_deserialize";
  return guard([&] {
    require_non_null(function, "out_graph", out_graph);
    *out_graph = adopt_graph(yirage::serialize::graph_from_bytes(data, size));
  });
}

yirage_status yirage_graph_save(const yirage_graph *graph, const char *path) {
  const char *function = "yirage_graph_save";
  return guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    require_non_null(function, "path", path);
    const std::string target(path);
    const std::vector<uint8_t> bytes = yirage::serialize::graph_to_bytes(
        g.graph, ends_with(target, ".json") ? GraphFormat::kJson : GraphFormat::kBinary);
    const std::string temporary = target + ".tmp";
    FILE *file = std::fopen(temporary.c_str(), "wb");
    if (file == nullptr) file_error(std::string(function) + ": cannot create", temporary, errno);
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    const int write_errno = errno;
    if (std::fclose(file) != 0 || !written) {
      std::remove(temporary.c_str());
      file_error(std::string(function) + ": cannot write", temporary, write_errno);
    }
    if (std::rename(temporary.c_str(), target.c_str()) != 0) {
      const int rename_errno = errno;
      std::remove(temporary.c_str());
      file_error(std::string(function) + ": cannot rename to", target, rename_errno);
    }
  });
}

yirage_status yirage_graph_load(const char *path, yirage_graph **out_graph) {
  const char *function = "yirage_graph_load";
  return guard([&] {
    require_non_null(function, "path", path);
    require_non_null(function, "out_graph", out_graph);
    FILE *file = std::fopen(path, "rb");
    if (file == nullptr) file_error(std::string(function) + ": cannot open", path, errno);
    // What it is before reading it: a folder is named as one, and a regular file's size is
    // checked first (a pipe or device is read up to the loader's limit).
    struct stat info {};
    if (fstat(fileno(file), &info) != 0) {
      const int stat_errno = errno;
      std::fclose(file);
      file_error(std::string(function) + ": cannot stat", path, stat_errno);
    }
    if (S_ISDIR(info.st_mode)) {
      std::fclose(file);
      yirage::invalid_argument(std::string(function) + ": '" + path + "' is a directory, not a graph file");
    }
    if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > yirage::serialize::kMaxGraphFileBytes) {
      std::fclose(file);
      throw yirage::Error(yirage::ErrorCode::kCorruptData, std::string(function) + ": '" + path + "' has " +
                                                               std::to_string(info.st_size) +
                                                               " bytes; graph files are at most 1 GiB");
    }
    std::vector<uint8_t> bytes;
    uint8_t chunk[65536];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) {
      bytes.insert(bytes.end(), chunk, chunk + n);
      if (bytes.size() > yirage::serialize::kMaxGraphFileBytes) break;  // the loader refuses it with a message
    }
    const bool failed = std::ferror(file) != 0;
    std::fclose(file);
    if (failed) file_error(std::string(function) + ": cannot read", path, EIO);
    *out_graph = adopt_graph(yirage::serialize::graph_from_bytes(bytes.data(), bytes.size()));
  });
}

}  // extern "C"
