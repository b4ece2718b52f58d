#include "util/file_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.hpp"

namespace yirage::util {
namespace {

std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
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

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(getpid()) + "." + std::to_string(counter++);
}

std::string checksum_of(const std::string &bytes) {
  return std::to_string(bytes.size()) + " " + hash_hex(bytes);
}

bool cached_file_intact(const std::string &path) {
  const std::string sum = read_file(path + ".sum");
  return !sum.empty() && sum == checksum_of(read_file(path));
}

std::optional<std::string> read_cached(const std::string &path) {
  const std::string sum = read_file(path + ".sum");
  if (sum.empty()) return std::nullopt;
  std::string bytes = read_file(path);
  if (sum != checksum_of(bytes)) return std::nullopt;
  return bytes;
}

void commit_cached(const std::string &temporary, const std::string &path) {
  {
    std::ofstream sum(temporary + ".sum", std::ios::binary);
    sum << checksum_of(read_file(temporary));
    if (!sum) throw Error(ErrorCode::kBackend, "cannot write " + temporary + ".sum");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (!ec) std::filesystem::rename(temporary + ".sum", path + ".sum", ec);
  if (ec) throw Error(ErrorCode::kBackend, "cannot move " + temporary + ": " + ec.message());
}

void store_cached(const std::string &path, const std::string &bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string temporary = path + "." + unique_suffix();
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw Error(ErrorCode::kBackend, "cannot write " + temporary);
  }
  commit_cached(temporary, path);
}

}  // namespace yirage::util
