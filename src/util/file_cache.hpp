// The on-disk cache the in-tree plugins (their kernels) and the host's target (its measured
// figures) share: keys, the default folder, and files that are only ever trusted when their
// checksum matches (a truncated shared object can take a process down in dlopen; a truncated
// cubin makes the driver fail in odd ways). Files are written under a
// unique temporary name and renamed into place, so processes sharing a cache never see half a
// file.
//
// Reading never follows an entry that is a symbolic link and never reads anything but a regular
// file, and never more bytes than the checksum file records (an entry linked to /dev/zero, or a
// checksum file of gigabytes, is a miss, not an endless read). Such an entry is a miss; writing
// the entry again replaces it (the link itself, not what it names). A write that fails removes
// its temporaries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace yirage::util {

// FNV-1a twice with different offsets: 128 bits as 32 hex digits, stable across runs and
// platforms.
std::string hash_hex(const std::string &text);

// $YIRAGE_CACHE_DIR/<backend>, else $XDG_CACHE_HOME/yirage/<backend>, else
// $HOME/.cache/yirage/<backend>, else /tmp/yirage-cache/<backend>.
std::string default_cache_dir(const std::string &backend);

// A name no other thread or process uses at the same time ("<pid>.<n>").
std::string unique_suffix();

// The checksum file's content for `bytes`: their size and hash.
std::string checksum_of(const std::string &bytes);

// The most bytes read_cached reads by default: kernels and cubins are a few MB.
constexpr uint64_t kMaxCachedBytes = uint64_t{1} << 30;

// The file's bytes when it is intact: a regular file (not a symbolic link) of at most
// `max_bytes`, whose checksum file `path.sum` records its size and hash. nullopt when missing,
// truncated, overwritten or not a file; `why_not`, when given, says why a present entry was not
// used (left empty when there is none).
std::optional<std::string> read_cached(const std::string &path, std::string *why_not = nullptr,
                                       uint64_t max_bytes = kMaxCachedBytes);

// Whether `path` and its checksum file `path.sum` agree (read_cached's rules).
bool cached_file_intact(const std::string &path, std::string *why_not = nullptr);

// Creates `path`, which must not exist (not even as a symbolic link), holding `bytes`. On
// failure leaves nothing behind and throws Error(kBackend) saying why.
void write_new_file(const std::string &path, const std::string &bytes);

// Writes `bytes` and its checksum under temporary names, then renames them into place (file
// first: a reader in between sees a mismatch). Creates the folder. On failure removes the
// temporaries and throws Error(kBackend).
void store_cached(const std::string &path, const std::string &bytes);

// Writes the checksum of the file already at `temporary`, then renames both to `path`. On
// failure removes `temporary` and its checksum file and throws Error(kBackend).
void commit_cached(const std::string &temporary, const std::string &path);

}  // namespace yirage::util
