#include "runtime/context.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
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

Context::Context(const ContextOptions &options) : cache_dir_(options.cache_dir) {
  for (const std::string &path : options.plugin_paths) {
    if (!add(Plugin::load(path, cache_dir_))) {
      load_errors_.push_back(path + ": a plugin named like it is already loaded; ignored");
    }
  }
  if (!options.search_default_paths) return;
  for (const std::string &folder : plugin_search_folders()) scan_folder(folder);
}

void Context::scan_folder(const std::string &folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return;
  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libyirage-backend-", 0) == 0 && name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());  // a stable order, whatever the file system says
  for (const std::string &file : files) {
    try {
      if (!add(Plugin::load(file, cache_dir_))) {
        load_errors_.push_back(file + ": shadowed by an earlier plugin of the same name");
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
