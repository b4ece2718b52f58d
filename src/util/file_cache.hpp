// The on-disk cache the in-tree plugins (their kernels) and the host's target (its measured
// figures) share: keys, the default folder, and files that are only ever trusted when their
// checksum matches (a truncated shared object can take a process down in dlopen; a truncated
// cubin makes the driver fail in odd ways). Files are written under a
// unique temporary name and renamed into place, so processes sharing a cache never see half a
// file.
#pragma once

#include <optional>
#include <string>

namespace yirage::util {

// FNV-1a twice with different offsets: 128 bits as 32 hex digits, stable across runs and
// platforms.
std::string hash_hex(const std::string &text);

// $YIRAGE_CACHE_DIR/<backend>, else $XDG_CACHE_HOME/yirage/<backend>, else
// $HOME/.cache/yirage/<backend>, else /tmp/yirage-cache/<backend>.
std::string default_cache_dir(const std::string &backend);

// The whole file ("" when it cannot be read).
std::string read_file(const std::string &path);

// A name no other thread or process uses at the same time ("<pid>.<n>").
std::string unique_suffix();

// The checksum file's content for `bytes`: their size and hash.
std::string checksum_of(const std::string &bytes);

// Whether `path` and its checksum file `path.sum` agree.
bool cached_file_intact(const std::string &path);

// The file's bytes when it is intact; nullopt when missing, truncated or overwritten.
std::optional<std::string> read_cached(const std::string &path);

// Writes `bytes` and its checksum under temporary names, then renames them into place (file
// first: a reader in between sees a mismatch). Creates the folder. Throws Error(kBackend).
void store_cached(const std::string &path, const std::string &bytes);

// Writes the checksum of the file already at `temporary`, then renames both to `path`.
void commit_cached(const std::string &temporary, const std::string &path);

}  // namespace yirage::util
