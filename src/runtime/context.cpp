#include "runtime/context.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

namespace yirage::runtime {

std::string installed_plugin_dir() {
  const std::filesystem::path configured = YIRAGE_PLUGIN_DIR;
  if (configured.is_absolute()) return configured.string();
  // A relocatable install (a Python wheel): the folder is relative to the file this code was
  // loaded from, libyirage.so.1, wherever that now is.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&installed_plugin_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  return (std::filesystem::path(info.dli_fname).parent_path() / configured).string();
}

std::vector<std::string> plugin_search_folders() {
  std::vector<std::string> folders;
  if (const char *env = std::getenv("YIRAGE_BACKEND_PATH")) {
    std::stringstream list(env);
    for (std::string folder; std::getline(list, folder, ':');) {
      if (!folder.empty()) folders.push_back(folder);
    }
  }
  if (std::string installed = installed_plugin_dir(); !installed.empty()) folders.push_back(installed);
  return folders;
}

std::vector<std::string> plugin_files(const std::string &folder) {
  std::error_code ec;
  std::vector<std::string> files;
  if (!std::filesystem::is_directory(folder, ec)) return files;
  for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libyirage-backend-", 0) == 0 && name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());  // a stable order, whatever the file system says
  return files;
}

namespace {

bool isolated_probe(PluginProbe probe) {
  if (probe != PluginProbe::kFromEnvironment) return probe == PluginProbe::kIsolated;
  const char *env = std::getenv("YIRAGE_PLUGIN_PROBE");
  const std::string mode = env ? env : "";
  if (mode.empty() || mode == "in-process") return false;
  if (mode == "isolated") return true;
  invalid_argument("YIRAGE_PLUGIN_PROBE must be isolated or in-process, not '" + mode + "'");
}

double probe_timeout(double seconds) {
  if (seconds > 0) return seconds;
  const char *env = std::getenv("YIRAGE_PLUGIN_PROBE_TIMEOUT");
  if (env == nullptr || *env == '\0') return 10;
  char *end = nullptr;
  const double value = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(value > 0) || value > 1e6) {
    invalid_argument(std::string("YIRAGE_PLUGIN_PROBE_TIMEOUT must be a positive number of seconds, not '") + env +
                     "'");
  }
  return value;
}

}  // namespace

Context::Context(const ContextOptions &options) : cache_dir_(options.cache_dir) {
  const bool isolated = isolated_probe(options.probe);
  const double timeout = isolated ? probe_timeout(options.probe_timeout_seconds) : 0;
  std::vector<std::string> scanned;
  if (options.search_default_paths) {
    for (const std::string &folder : plugin_search_folders()) {
      for (std::string &file : plugin_files(folder)) scanned.push_back(std::move(file));
    }
  }
  // The probe's verdict on each file, explicit paths first; all nothing when loading in-process.
  std::vector<std::string> all = options.plugin_paths;
  all.insert(all.end(), scanned.begin(), scanned.end());
  const std::vector<std::optional<Error>> refused =
      isolated ? probe_plugins(all, cache_dir_, timeout) : std::vector<std::optional<Error>>(all.size());
  for (size_t i = 0; i < options.plugin_paths.size(); ++i) {
    if (refused[i]) throw *refused[i];
    if (!add(Plugin::load(all[i], cache_dir_))) {
      load_errors_.push_back(all[i] + ": a plugin named like it is already loaded; ignored");
    }
  }
  for (size_t i = options.plugin_paths.size(); i < all.size(); ++i) {
    if (refused[i]) {
      load_errors_.push_back(refused[i]->what());
      continue;
    }
    try {
      if (!add(Plugin::load(all[i], cache_dir_))) {
        load_errors_.push_back(all[i] + ": shadowed by an earlier plugin of the same name");
      }
    } catch (const Error &e) {
      load_errors_.push_back(e.what());
    }
  }
}

bool Context::add(std::unique_ptr<Plugin> plugin) {
  for (const auto &p : plugins_) {
    if (p->name() == plugin->name()) return false;
  }
  plugins_.push_back(std::move(plugin));
  return true;
}

const Plugin &Context::plugin(const std::string &name) const {
  for (const auto &p : plugins_) {
    if (p->name() == name) return *p;
  }
  std::string names;
  for (const auto &p : plugins_) names += (names.empty() ? "" : ", ") + p->name();
  throw Error(ErrorCode::kNotFound,
              "no backend named '" + name + "' (loaded: " + (names.empty() ? "none" : names) + ")");
}

}  // namespace yirage::runtime
