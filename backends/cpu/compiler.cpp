#include "compiler.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "util/error.hpp"
#include "util/file_cache.hpp"

extern char **environ;

namespace yirage::cpu {
namespace {

const char *kKeySymbol = "yirage_cpu_kernel_key";

std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

// Runs argv with stdout and stderr going to `log_path`; returns the exit status, 127 when the
// program could not be started, or -1 when it died of a signal.
int run(const std::vector<std::string> &argv, const std::string &log_path) {
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return -1;
}

// dlopen + the two symbols; nullptr (and `why`) when the file is not a valid kernel for `key`.
std::unique_ptr<LoadedKernel> load(const std::string &path, const std::string &symbol, const std::string &key,
                                   std::string &why) {
  if (!util::cached_file_intact(path)) {
    why = "its checksum does not match";
    return nullptr;
  }
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char *e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  const auto *stored = static_cast<const char *>(dlsym(handle, kKeySymbol));
  auto function = reinterpret_cast<KernelFunction>(dlsym(handle, symbol.c_str()));
  if (stored == nullptr || function == nullptr || key != stored) {
    why = "the object does not hold kernel " + key;
    dlclose(handle);
    return nullptr;
  }
  return std::make_unique<LoadedKernel>(handle, function);
}

}  // namespace

LoadedKernel::~LoadedKernel() {
  dlclose(handle_);
}

std::string default_cache_dir() {
  return util::default_cache_dir("cpu");
}

Compiler::Compiler(std::string cache_dir) : cache_dir_(std::move(cache_dir)) {
  compiler_ = !env("YIRAGE_CPU_CXX").empty() ? env("YIRAGE_CPU_CXX") : !env("CXX").empty() ? env("CXX") : "c++";
}

const std::string &Compiler::identity() {
  std::call_once(identity_once_, [this] {
    std::error_code ec;
    std::filesystem::create_directories(cache_dir_, ec);
    if (ec) {
      identity_error_ = "cpu: cannot create the kernel cache " + cache_dir_ + ": " + ec.message();
      return;
    }
    const std::string log = cache_dir_ + "/version." + util::unique_suffix() + ".txt";
    const int status = run({compiler_, "--version"}, log);
    identity_ = util::read_file(log);
    std::filesystem::remove(log, ec);
    if (status == 127) {
      identity_error_ =
          "cpu: no C++ compiler: '" + compiler_ + "' could not be run (install g++, or set YIRAGE_CPU_CXX)";
    } else if (status != 0) {
      identity_error_ = "cpu: the C++ compiler '" + compiler_ + "' failed on --version: " + identity_;
    }
  });
  if (!identity_error_.empty()) {
    throw Error(
        identity_error_.find("no C++ compiler") != std::string::npos ? ErrorCode::kNotFound : ErrorCode::kBackend,
        identity_error_);
  }
  return identity_;
}

CompileOutcome Compiler::compile(const std::string &source, const std::string &symbol, int optimization_level) {
  const std::vector<std::string> flags = {"-std=c++17",
                                          "-O" + std::to_string(optimization_level),
                                          "-march=native",
                                          "-fopenmp",
                                          "-fPIC",
                                          "-shared",
                                          "-fno-math-errno",
                                          "-fno-trapping-math",
                                          "-fno-signed-zeros",
                                          "-fassociative-math",
                                          "-fvisibility=hidden",
                                          "-w"};
  std::string flag_text;
  for (const std::string &f : flags) flag_text += f + " ";
  const std::string key = util::hash_hex(source + '\0' + identity() + '\0' + flag_text);
  const std::string object = cache_dir_ + "/" + key + ".so";
  std::string why;
  CompileOutcome outcome;
  if (access(object.c_str(), R_OK) == 0) {
    outcome.kernel = load(object, symbol, key, why);
    if (outcome.kernel) {
      outcome.cache_hit = true;
      return outcome;
    }
    // A corrupt or foreign file: rebuild it.
  }
  const std::string stem = cache_dir_ + "/" + key + "." + util::unique_suffix();
  const std::string source_path = stem + ".cpp", object_tmp = stem + ".so", log_path = stem + ".log";
  {
    std::ofstream out(source_path, std::ios::binary);
    out << source << "\nextern \"C\" __attribute__((visibility(\"default\"))) const char " << kKeySymbol << "[] = \""
        << key << "\";\n";
    if (!out) throw Error(ErrorCode::kBackend, "cpu: cannot write " + source_path);
  }
  std::vector<std::string> argv = {compiler_};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", object_tmp, source_path});
  const int status = run(argv, log_path);
  const std::string log = util::read_file(log_path);
  std::error_code ec;
  std::filesystem::remove(log_path, ec);
  if (status != 0) {
    std::filesystem::remove(object_tmp, ec);
    std::string command;
    for (const std::string &a : argv) command += a + " ";
    throw Error(ErrorCode::kBackend, "cpu: compiling the generated kernel failed (exit status " +
                                         std::to_string(status) + "; source kept at " + source_path +
                                         ")\ncommand: " + command + "\n" + log);
  }
  std::filesystem::remove(source_path, ec);
  util::commit_cached(object_tmp, object);
  outcome.kernel = load(object, symbol, key, why);
  if (!outcome.kernel) throw Error(ErrorCode::kBackend, "cpu: cannot load " + object + ": " + why);
  return outcome;
}

}  // namespace yirage::cpu
