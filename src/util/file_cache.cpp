#include "util/file_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "util/error.hpp"

namespace yirage::util {
namespace {

std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

// Closes the descriptor on every path out.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
};

std::string not_regular(mode_t mode) {
  return S_ISLNK(mode) ? "a symbolic link (cache entries are never followed)" : "not a regular file";
}

std::string byte_count(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  return std::to_string(bytes) + " bytes";
}

// What reading a cache file found.
struct FileRead {
  bool missing = false;
  std::optional<std::string> bytes;
  std::string why_not;  // when present but not read
};

// The whole of `path` when it is a regular file of at most `max_bytes`. Symbolic links are not
// followed and nothing else (a device, a pipe, a folder) is opened for reading: lstat first, so
// that no device is ever opened, then fstat on what was opened, so that nothing swapped in
// between is read.
FileRead read_regular_file(const std::string &path, uint64_t max_bytes) {
  FileRead read;
  struct stat named {};
  if (lstat(path.c_str(), &named) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      read.missing = true;
    } else {
      read.why_not = std::strerror(errno);
    }
    return read;
  }
  if (!S_ISREG(named.st_mode)) {
    read.why_not = not_regular(named.st_mode);
    return read;
  }
  if (static_cast<uint64_t>(named.st_size) > max_bytes) {
    read.why_not = byte_count(static_cast<uint64_t>(named.st_size)) + ", over " + byte_count(max_bytes);
    return read;
  }
  const FileDescriptor file{open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  struct stat opened {};
  if (file.fd < 0 || fstat(file.fd, &opened) != 0) {
    read.why_not = std::strerror(errno);
    return read;
  }
  if (!S_ISREG(opened.st_mode) || opened.st_ino != named.st_ino || opened.st_dev != named.st_dev ||
      static_cast<uint64_t>(opened.st_size) > max_bytes) {
    read.why_not = "replaced while being read";
    return read;
  }
  std::string bytes(static_cast<size_t>(opened.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read.why_not = std::strerror(errno);
      return read;
    }
    if (n == 0) break;  // truncated meanwhile: the checksum says so
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  read.bytes = std::move(bytes);
  return read;
}

// The size a checksum file records ("<size> <hash>"), or nullopt when it is not one.
std::optional<uint64_t> recorded_size(const std::string &sum) {
  if (sum.empty() || sum[0] < '0' || sum[0] > '9') return std::nullopt;
  char *end = nullptr;
  errno = 0;
  const unsigned long long size = std::strtoull(sum.c_str(), &end, 10);
  if (end == sum.c_str() || *end != ' ' || errno != 0) return std::nullopt;
  return size;
}

}  // namespace

std::string hash_hex(const std::string &text) {
  uint64_t h1 = 1469598103934665603ull, h2 = 0x9ae16a3b2f90404full;
  for (unsigned char c : text) {
    h1 = (h1 ^ c) * 1099511628211ull;
    h2 = (h2 ^ c) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return out;
}

std::string default_cache_dir(const std::string &backend) {
  if (!env("YIRAGE_CACHE_DIR").empty()) return env("YIRAGE_CACHE_DIR") + "/" + backend;
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/yirage/" + backend;
  if (!env("HOME").empty()) return env("HOME") + "/.cache/yirage/" + backend;
  return "/tmp/yirage-cache/" + backend;
}

std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(getpid()) + "." + std::to_string(counter++);
}

std::string checksum_of(const std::string &bytes) {
  return std::to_string(bytes.size()) + " " + hash_hex(bytes);
}

void write_new_file(const std::string &path, const std::string &bytes) {
  const FileDescriptor file{open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (file.fd < 0) throw Error(ErrorCode::kBackend, "cannot create " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      unlink(path.c_str());
      throw Error(ErrorCode::kBackend, "cannot write " + path + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
}

std::optional<std::string> read_cached(const std::string &path, std::string *why_not, uint64_t max_bytes) {
  auto refuse = [&](const std::string &why) -> std::optional<std::string> {
    if (why_not) *why_not = why;
    return std::nullopt;
  };
  if (why_not) why_not->clear();
  // The entry first: a missing one is a plain miss, an oversized one is refused unread.
  struct stat named {};
  if (lstat(path.c_str(), &named) != 0)
    return errno == ENOENT || errno == ENOTDIR ? std::nullopt : refuse(std::strerror(errno));
  if (!S_ISREG(named.st_mode)) return refuse(not_regular(named.st_mode));
  if (static_cast<uint64_t>(named.st_size) > max_bytes) {
    return refuse(byte_count(static_cast<uint64_t>(named.st_size)) + ", over " + byte_count(max_bytes));
  }
  // "<size> <32 hex digits>": a checksum file of more than a line is not one.
  const FileRead sum = read_regular_file(path + ".sum", 64);
  if (sum.missing) return refuse("it has no checksum file");
  if (!sum.bytes) return refuse("its checksum file: " + sum.why_not);
  const std::optional<uint64_t> size = recorded_size(*sum.bytes);
  if (!size) return refuse("its checksum file is not one");
  if (static_cast<uint64_t>(named.st_size) != *size) return refuse("its size does not match its checksum file");
  FileRead entry = read_regular_file(path, *size);
  if (!entry.bytes) return refuse(entry.missing ? "removed while being read" : entry.why_not);
  if (*sum.bytes != checksum_of(*entry.bytes)) return refuse("its checksum does not match");
  return std::move(entry.bytes);
}

bool cached_file_intact(const std::string &path, std::string *why_not) {
  return read_cached(path, why_not).has_value();
}

void commit_cached(const std::string &temporary, const std::string &path) {
  try {
    const FileRead built = read_regular_file(temporary, kMaxCachedBytes);
    if (!built.bytes) {
      throw Error(ErrorCode::kBackend, "cannot read " + temporary + ": " + (built.missing ? "missing" : built.why_not));
    }
    write_new_file(temporary + ".sum", checksum_of(*built.bytes));
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (!ec) std::filesystem::rename(temporary + ".sum", path + ".sum", ec);
    if (ec) throw Error(ErrorCode::kBackend, "cannot move " + temporary + " to " + path + ": " + ec.message());
  } catch (const Error &) {
    unlink(temporary.c_str());
    unlink((temporary + ".sum").c_str());
    throw;
  }
}

void store_cached(const std::string &path, const std::string &bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string temporary = path + "." + unique_suffix();
  write_new_file(temporary, bytes);
  commit_cached(temporary, path);
}

}  // namespace yirage::util
