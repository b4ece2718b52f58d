// The set of loaded backend plugins (yirage_context). Plugins come from explicit paths, from
// the folders in $YIRAGE_BACKEND_PATH (colon-separated) and from the install's plugin folder.
// A plugin found by scanning that fails to load is recorded in load_errors() and skipped; an
// explicit path that fails to load is an error. When two plugins share a name, the first loaded
// wins (explicit paths, then YIRAGE_BACKEND_PATH, then the install folder) and the other is
// recorded as shadowed.
//
// By default each plugin is loaded in this process directly: fast, but a plugin that crashes,
// exits or hangs while loading takes the host with it. With PluginProbe::kIsolated
// ($YIRAGE_PLUGIN_PROBE=isolated) each is first loaded in a child process (probe_plugins, in
// parallel); one whose probe crashes, exits, hangs past the timeout or fails is skipped with
// the reason as its load error (an explicit path: thrown), and the rest are then loaded here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/plugin.hpp"

namespace yirage::runtime {

enum class PluginProbe {
  kFromEnvironment,  // $YIRAGE_PLUGIN_PROBE: "isolated", "in-process"; unset or empty: in-process
  kInProcess,
  kIsolated,
};

struct ContextOptions {
  std::vector<std::string> plugin_paths;  // files loaded first; failures are errors
  bool search_default_paths = true;       // $YIRAGE_BACKEND_PATH and the install folder
  std::string cache_dir;                  // given to plugins; empty: each plugin's default
  PluginProbe probe = PluginProbe::kFromEnvironment;
  // The isolated probe's limit per plugin; 0: $YIRAGE_PLUGIN_PROBE_TIMEOUT, else 10 s.
  double probe_timeout_seconds = 0;
};

class Context {
 public:
  // Throws kInvalidArgument for a YIRAGE_PLUGIN_PROBE or YIRAGE_PLUGIN_PROBE_TIMEOUT it cannot
  // read, and what loading an explicit path throws.
  explicit Context(const ContextOptions &options);

  const std::vector<std::unique_ptr<Plugin>> &plugins() const { return plugins_; }
  // Throws kNotFound listing the loaded backends.
  const Plugin &plugin(const std::string &name) const;
  const std::vector<std::string> &load_errors() const { return load_errors_; }

 private:
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

// The plugin files in `folder` (libyirage-backend-*.so), sorted; none if it is not a folder.
std::vector<std::string> plugin_files(const std::string &folder);

}  // namespace yirage::runtime
