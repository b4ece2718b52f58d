#include "spirv_compiler.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>

#include "util/error.hpp"
#include "util/file_cache.hpp"
#include "util/subprocess.hpp"

namespace yirage::level_zero {
namespace {

std::string env_or(const char *name, const char *fallback) {
  const char *value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// A private folder for one compile's files, removed with this object.
class WorkFolder {
 public:
  WorkFolder() {
    const std::string tmp = env_or("TMPDIR", "/tmp");
    std::string name = tmp + "/yirage-spirv-XXXXXX";
    if (mkdtemp(name.data()) == nullptr) {
      throw Error(ErrorCode::kBackend,
                  "level_zero: cannot make a folder for the SPIR-V tools in " + tmp + ": " + std::strerror(errno));
    }
    path_ = name;
  }
  ~WorkFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  WorkFolder(const WorkFolder &) = delete;
  WorkFolder &operator=(const WorkFolder &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// The bytes llvm-spirv wrote.
std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw Error(ErrorCode::kBackend, "level_zero: cannot read " + path);
  if (bytes.empty()) throw Error(ErrorCode::kBackend, "level_zero: llvm-spirv wrote no module to " + path);
  return bytes;
}

}  // namespace

SpirvCompiler::SpirvCompiler(std::string cache_dir)
    : cache_dir_(std::move(cache_dir)),
      clang_(env_or("YIRAGE_LEVEL_ZERO_CLANG", "clang-15")),
      llvm_spirv_(env_or("YIRAGE_LEVEL_ZERO_LLVM_SPIRV", "llvm-spirv-15")) {}

std::vector<std::string> SpirvCompiler::clang_command(const std::string &input, const std::string &bitcode) const {
  return {clang_, "-cl-std=CL2.0", "-target", "spir64", "-O2", "-Xclang", "-disable-llvm-passes", "-emit-llvm",
          "-c",   input,           "-o",      bitcode};
}

std::vector<std::string> SpirvCompiler::llvm_spirv_command(const std::string &bitcode,
                                                           const std::string &output) const {
  return {llvm_spirv_, "--spirv-max-version=1.0", bitcode, "-o", output};
}

const std::string &SpirvCompiler::identity() {
  std::call_once(identity_once_, [this] {
    for (const auto &[tool, package, variable] :
         {std::tuple<std::string, const char *, const char *>{clang_, "clang-15", "YIRAGE_LEVEL_ZERO_CLANG"},
          {llvm_spirv_, "llvm-spirv-15", "YIRAGE_LEVEL_ZERO_LLVM_SPIRV"}}) {
      const util::ProcessOutcome version = util::run_process({tool, "--version"});
      if (version.status == 127) {
        identity_error_ = "level_zero: '" + tool + "' could not be run (" + version.output + "; Debian: " + package +
                          ", or set " + variable + ")";
        return;
      }
      if (version.status != 0) {
        identity_error_ = "level_zero: '" + tool + " --version' failed: " + version.output;
        return;
      }
      identity_ += version.output + '\0';
    }
  });
  if (!identity_error_.empty()) {
    throw Error(
        identity_error_.find("could not be run") != std::string::npos ? ErrorCode::kNotFound : ErrorCode::kBackend,
        identity_error_);
  }
  return identity_;
}

std::string SpirvCompiler::compile(const std::string &source, const SpirvLog &log) {
  const std::string key =
      util::hash_hex(source + '\0' + identity() + util::command_line(clang_command("k.cl", "k.bc")) + '\0' +
                     util::command_line(llvm_spirv_command("k.bc", "k.spv")));
  const std::string path = cache_dir_ + "/" + key + ".spv";
  std::string why;
  if (auto cached = util::read_cached(path, &why)) return *cached;
  if (!why.empty()) log("level_zero: rebuilding " + path + ": " + why);

  WorkFolder work;
  const std::string input = work.path() + "/k.cl", bitcode = work.path() + "/k.bc", output = work.path() + "/k.spv";
  util::write_new_file(input, source);
  for (const std::vector<std::string> &command : {clang_command(input, bitcode), llvm_spirv_command(bitcode, output)}) {
    const util::ProcessOutcome run = util::run_process(command);
    if (run.status == 0) continue;
    std::string kept = " (the source could not be kept)";
    try {
      util::store_cached(cache_dir_ + "/" + key + ".cl", source);
      kept = "; source kept at " + cache_dir_ + "/" + key + ".cl";
    } catch (const Error &) {
    }
    throw Error(ErrorCode::kBackend, "level_zero: compiling the generated OpenCL C to SPIR-V failed (exit status " +
                                         std::to_string(run.status) + kept +
                                         ")\ncommand: " + util::command_line(command) + "\n" + run.output);
  }
  const std::string module = read_file(output);
  try {
    util::store_cached(cache_dir_ + "/" + key + ".cl", source);
    util::store_cached(path, module);
  } catch (const Error &e) {
    log("level_zero: the kernel cache " + cache_dir_ + " cannot be written (" + e.what() +
        "): SPIR-V modules are built and used without being kept");
  }
  return module;
}

}  // namespace yirage::level_zero
