// The set of loaded backend plugins (yirage_context). Plugins come from explicit paths, from
// the folders in $YIRAGE_BACKEND_PATH (colon-separated) and from the install's plugin folder.
// A plugin found by scanning that fails to load is recorded in load_errors() and skipped; an
// explicit path that fails to load is an error. When two plugins share a name, the first loaded
// wins (explicit paths, then YIRAGE_BACKEND_PATH, then the install folder) and the other is
// recorded as shadowed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/plugin.hpp"

namespace yirage::runtime {

struct ContextOptions {
  std::vector<std::string> plugin_paths;  // files loaded first; failures are errors
  bool search_default_paths = true;       // $YIRAGE_BACKEND_PATH and the install folder
  std::string cache_dir;                  // given to plugins; empty: each plugin's default
};

class Context {
 public:
  explicit Context(const ContextOptions &options);

  const std::vector<std::unique_ptr<Plugin>> &plugins() const { return plugins_; }
  // Throws kNotFound listing the loaded backends.
  const Plugin &plugin(const std::string &name) const;
  const std::vector<std::string> &load_errors() const { return load_errors_; }

 private:
  void scan_folder(const std::string &folder);
  bool add(std::unique_ptr<Plugin> plugin);

  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<std::string> load_errors_;
  std::string cache_dir_;
};

// The install's plugin folder: YIRAGE_PLUGIN_DIR (compiled in) when absolute; when relative (a
// wheel's libyirage.so.1 and plugins move with the package), resolved against the folder of the
// file holding this code, found with dladdr. Empty if that file cannot be found.
std::string installed_plugin_dir();

// The folders scanned for plugins, in order: $YIRAGE_BACKEND_PATH's, then the install's.
std::vector<std::string> plugin_search_folders();

}  // namespace yirage::runtime
