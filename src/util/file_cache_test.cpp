// The checksummed cache files (file_cache.hpp): what is never read (a symbolic link, a device, a
// pipe, a folder, a file larger than its checksum file says or than the limit), that such an
// entry is replaced by the next write, and that a write that fails leaves no temporary behind.
#include "util/file_cache.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "testing/bounded_child.hpp"
#include "util/error.hpp"

namespace yirage::util {
namespace {

namespace fs = std::filesystem;

class FileCache : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = (fs::temp_directory_path() / "yirage-file-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(name.data()), nullptr);
    folder_ = name;
  }
  void TearDown() override { fs::remove_all(folder_); }

  // The names in the folder, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto &e : fs::directory_iterator(folder_)) found.push_back(e.path().filename().string());
    std::sort(found.begin(), found.end());
    return found;
  }

  std::string folder_;
};

// A miss with a reason that names `expected`; "" when so.
std::string refused(const std::string &path, const std::string &expected) {
  std::string why;
  if (read_cached(path, &why)) return path + " was read";
  if (why.find(expected) == std::string::npos) return path + ": '" + why + "' does not say '" + expected + "'";
  return "";
}

TEST_F(FileCache, StoresAndReadsAnEntry) {
  const std::string path = folder_ + "/sub/entry.bin";
  EXPECT_FALSE(read_cached(path));
  std::string why = "stale";
  EXPECT_FALSE(read_cached(path, &why));
  EXPECT_EQ(why, "");  // missing: a plain miss, nothing to say
  store_cached(path, "kernel bytes");
  EXPECT_EQ(read_cached(path, &why), std::optional<std::string>("kernel bytes"));
  EXPECT_TRUE(cached_file_intact(path));
}

// An entry that links to /dev/zero (or whose checksum file does) is a miss at once, and the next
// write replaces the link, not what it names.
TEST_F(FileCache, AnEntryLinkedToADeviceIsAMissAndIsReplaced) {
  const std::string path = folder_ + "/entry.so";
  store_cached(path, "object");
  fs::remove(path);
  fs::create_symlink("/dev/zero", path);
  yirage::testing::run_in_child([&] { return refused(path, "symbolic link"); });
  store_cached(path, "rebuilt");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path)));
  EXPECT_EQ(read_cached(path), std::optional<std::string>("rebuilt"));

  fs::remove(path + ".sum");
  fs::create_symlink("/dev/zero", path + ".sum");
  yirage::testing::run_in_child([&] { return refused(path, "checksum file: a symbolic link"); });
  store_cached(path, "rebuilt again");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path + ".sum")));
  EXPECT_EQ(read_cached(path), std::optional<std::string>("rebuilt again"));
  // A link to a regular file is not followed either.
  std::ofstream(folder_ + "/elsewhere") << "object";
  fs::remove(path);
  fs::create_symlink(folder_ + "/elsewhere", path);
  EXPECT_EQ(refused(path, "symbolic link"), "");
}

// A checksum file of gigabytes (sparse: it takes no room) is not read, and a rebuild replaces it;
// an entry larger than its checksum file says, or than the limit, is not read either.
TEST_F(FileCache, OversizedFilesAreMissesWithoutBeingRead) {
  const std::string path = folder_ + "/entry.so";
  store_cached(path, "object");
  fs::resize_file(path + ".sum", uintmax_t{3} << 30);
  yirage::testing::run_in_child([&] { return refused(path, "checksum file: 3 GiB, over 64 bytes"); });
  store_cached(path, "rebuilt");
  EXPECT_EQ(read_cached(path), std::optional<std::string>("rebuilt"));

  fs::resize_file(path, uintmax_t{3} << 30);
  yirage::testing::run_in_child([&] { return refused(path, "3 GiB, over 1 GiB"); });
  yirage::testing::run_in_child([&] {
    std::string why;
    return read_cached(path, &why, uintmax_t{4} << 30)          ? "read"
           : why == "its size does not match its checksum file" ? ""
                                                                : why;
  });
}

// A pipe, a device or a folder where an entry should be is a miss, never opened for reading (a
// pipe would block the reader forever).
TEST_F(FileCache, AnythingButARegularFileIsAMiss) {
  const std::string pipe = folder_ + "/pipe.so", folder = folder_ + "/folder.so";
  ASSERT_EQ(mkfifo(pipe.c_str(), 0644), 0);
  std::ofstream(pipe + ".sum") << checksum_of("");
  fs::create_directory(folder);
  std::ofstream(folder + ".sum") << checksum_of("");
  yirage::testing::run_in_child([&] { return refused(pipe, "not a regular file"); });
  yirage::testing::run_in_child([&] { return refused(folder, "not a regular file"); });
  store_cached(pipe, "object");
  EXPECT_EQ(read_cached(pipe), std::optional<std::string>("object"));
}

// A write that fails (the entry's name is taken by a folder, or the cache's folder cannot be
// created) throws and leaves no temporary behind.
TEST_F(FileCache, AFailedWriteLeavesNoTemporaries) {
  const std::string path = folder_ + "/entry.so";
  fs::create_directories(path + "/taken");
  try {
    store_cached(path, "object");
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
    EXPECT_NE(std::string(e.what()).find("cannot move"), std::string::npos) << e.what();
  }
  EXPECT_EQ(names(), std::vector<std::string>{"entry.so"});

  std::ofstream(folder_ + "/file") << "a file, not a folder";
  EXPECT_THROW(store_cached(folder_ + "/file/cache/entry.so", "object"), Error);
  EXPECT_EQ(names(), (std::vector<std::string>{"entry.so", "file"}));

  // commit_cached removes the caller's temporary too.
  const std::string temporary = folder_ + "/built." + unique_suffix();
  write_new_file(temporary, "object");
  EXPECT_THROW(commit_cached(temporary, path), Error);
  EXPECT_EQ(names(), (std::vector<std::string>{"entry.so", "file"}));
}

}  // namespace
}  // namespace yirage::util
