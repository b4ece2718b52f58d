#include "compiler.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "util/error.hpp"
#include "util/file_cache.hpp"
#include "util/subprocess.hpp"

namespace yirage::cpu {
namespace {

const char *kKeySymbol = "yirage_cpu_kernel_key";

std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

// dlopen + the two symbols; nullptr (and `why`) when the file is not a valid kernel for `key`.
std::unique_ptr<LoadedKernel> load(const std::string &path, const std::string &symbol, const std::string &key,
                                   std::string &why) {
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

// The cached object of `key` in `folder`, never dlopened unless intact (dlopen of a truncated
// ELF can kill the process with SIGBUS); nullptr when missing, and `why` when present but bad.
std::unique_ptr<LoadedKernel> load_cached(const std::string &folder, const std::string &symbol, const std::string &key,
                                          std::string &why) {
  const std::string path = folder + "/" + key + ".so";
  if (!util::cached_file_intact(path, &why)) return nullptr;
  return load(path, symbol, key, why);
}

}  // namespace

LoadedKernel::~LoadedKernel() {
  dlclose(handle_);
}

std::string default_cache_dir() {
  return util::default_cache_dir("cpu");
}

Compiler::Compiler(std::string cache_dir, CompilerLog log) : cache_dir_(std::move(cache_dir)), log_(std::move(log)) {
  compiler_ = !env("YIRAGE_CPU_CXX").empty() ? env("YIRAGE_CPU_CXX") : !env("CXX").empty() ? env("CXX") : "c++";
}

Compiler::~Compiler() {
  if (private_dir_.empty()) return;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(private_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ignored;
    if (it->path().extension() != ".cpp") std::filesystem::remove(it->path(), ignored);
  }
  rmdir(private_dir_.c_str());  // stays while a failed build's source is kept there
}

const std::string &Compiler::identity() {
  std::call_once(identity_once_, [this] {
    const util::ProcessOutcome version = util::run_process({compiler_, "--version"});
    identity_ = version.output;
    if (version.status == 127) {
      identity_error_ =
          "cpu: no C++ compiler: '" + compiler_ + "' could not be run (install g++, or set YIRAGE_CPU_CXX)";
    } else if (version.status != 0) {
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

void Compiler::warn_unwritable(const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(private_mutex_);
    if (warned_) return;
    warned_ = true;
  }
  if (log_) log_(YIRAGE_BACKEND_LOG_WARNING, message);
}

std::string Compiler::private_dir(std::string &why) {
  std::lock_guard<std::mutex> lock(private_mutex_);
  if (private_dir_.empty()) {
    const std::string tmp = !env("TMPDIR").empty() ? env("TMPDIR") : "/tmp";
    std::string name = tmp + "/yirage-cpu-XXXXXX";
    if (mkdtemp(name.data()) == nullptr) {
      why = "mkdtemp in " + tmp + ": " + std::strerror(errno);
      return "";
    }
    private_dir_ = name;
  }
  return private_dir_;
}

std::string Compiler::create_source(const std::string &key, const std::string &text, std::string &out_folder) {
  std::error_code ec;
  std::filesystem::create_directories(cache_dir_, ec);
  std::string why = ec ? "cannot create it: " + ec.message() : "";
  if (!ec) {
    const std::string stem = cache_dir_ + "/" + key + "." + util::unique_suffix();
    try {
      util::write_new_file(stem + ".cpp", text);
      out_folder = cache_dir_;
      return stem;
    } catch (const Error &e) {
      why = e.what();
    }
  }
  std::string private_why;
  const std::string folder = private_dir(private_why);
  if (folder.empty()) {
    throw Error(ErrorCode::kBackend, "cpu: cannot write the kernel cache " + cache_dir_ + " (" + why +
                                         ") nor a private folder (" + private_why + ")");
  }
  warn_unwritable("cpu: the kernel cache " + cache_dir_ + " cannot be written (" + why +
                  "): its kernels are used; missing ones are built in " + folder +
                  ", which goes with this plugin instance");
  const std::string stem = folder + "/" + key + "." + util::unique_suffix();
  try {
    util::write_new_file(stem + ".cpp", text);
  } catch (const Error &e) {
    throw Error(ErrorCode::kBackend, std::string("cpu: ") + e.what());
  }
  out_folder = folder;
  return stem;
}

std::vector<std::string> Compiler::kernel_flags(int optimization_level) {
  std::vector<std::string> flags = {"-std=c++17",
                                    "-O" + std::to_string(optimization_level),
                                    "-march=native",
                                    "-fPIC",
                                    "-shared",
                                    "-fno-math-errno",
                                    "-fno-trapping-math",
                                    "-fno-signed-zeros",
                                    "-fassociative-math",
                                    "-fvisibility=hidden",
                                    "-w"};
#if defined(__x86_64__)
  // Whole AVX-512 registers where the host has them (GCC keeps to 256 bits on most AVX-512
  // chips): float16 elementwise loops, converted by integer arithmetic, ran 1.4-1.7x faster.
  flags.insert(flags.begin() + 3, "-mprefer-vector-width=512");
#endif
  return flags;
}

CompileOutcome Compiler::compile(const std::string &source, const std::string &symbol, int optimization_level) {
  const std::vector<std::string> flags = kernel_flags(optimization_level);
  std::string flag_text;
  for (const std::string &f : flags) flag_text += f + " ";
  const std::string key = util::hash_hex(source + '\0' + identity() + '\0' + flag_text);
  CompileOutcome outcome;
  // The cache, then this compiler's private folder (where an unwritable cache's misses went).
  std::string private_folder;
  {
    std::lock_guard<std::mutex> lock(private_mutex_);
    private_folder = private_dir_;
  }
  for (const std::string &folder : {cache_dir_, private_folder}) {
    if (folder.empty()) continue;
    std::string why;
    outcome.kernel = load_cached(folder, symbol, key, why);
    if (outcome.kernel) {
      outcome.cache_hit = true;
      return outcome;
    }
    // A corrupt or foreign entry, or something that is no file: rebuilt, and replaced.
    if (!why.empty() && log_) log_(YIRAGE_BACKEND_LOG_WARNING, "cpu: rebuilding " + folder + "/" + key + ".so: " + why);
  }
  std::ostringstream text;
  text << source << "\nextern \"C\" __attribute__((visibility(\"default\"))) const char " << kKeySymbol << "[] = \""
       << key << "\";\n";
  std::string folder;
  const std::string stem = create_source(key, text.str(), folder);
  const std::string source_path = stem + ".cpp", object_tmp = stem + ".so";
  std::vector<std::string> argv = {compiler_};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", object_tmp, source_path});
  const util::ProcessOutcome built = util::run_process(argv);
  std::error_code ec;
  if (built.status != 0) {
    std::filesystem::remove(object_tmp, ec);
    throw Error(ErrorCode::kBackend, "cpu: compiling the generated kernel failed (exit status " +
                                         std::to_string(built.status) + "; source kept at " + source_path +
                                         ")\ncommand: " + util::command_line(argv) + "\n" + built.output);
  }
  std::filesystem::remove(source_path, ec);
  // Loaded before it is stored: a cache that cannot take it costs the next process a build, not
  // this one its kernel (the loaded object stays mapped after its file is renamed or removed).
  std::string why;
  outcome.kernel = load(object_tmp, symbol, key, why);
  if (!outcome.kernel) {
    std::filesystem::remove(object_tmp, ec);
    throw Error(ErrorCode::kBackend, "cpu: cannot load " + object_tmp + ": " + why);
  }
  try {
    util::commit_cached(object_tmp, folder + "/" + key + ".so");
  } catch (const Error &e) {
    warn_unwritable("cpu: the kernel cache " + folder + " cannot be written (" + e.what() +
                    "): kernels are built and used without being kept");
  }
  return outcome;
}

}  // namespace yirage::cpu
