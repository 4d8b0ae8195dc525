#include "runtime/kernel_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace tessel::runtime {
namespace {

std::string fresh_directory(const std::string& name) {
  std::string dir = ::testing::TempDir() + "tessel_cache_" + name + "_" +
                    std::to_string(::testing::UnitTest::GetInstance()->random_seed());
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(KernelCache, StoreThenLoadReturnsSameBytes) {
  KernelCache cache(fresh_directory("roundtrip"));
  std::string payload("\x7f" "ELF\0binary\xff", 12);
  EXPECT_FALSE(cache.load("abc").has_value());
  ASSERT_TRUE(cache.store("abc", payload));
  auto loaded = cache.load("abc");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, payload);
}

TEST(KernelCache, CorruptEntriesAreDetectedAndRemoved) {
  KernelCache cache(fresh_directory("corrupt"));
  std::string payload(5000, 'x');
  // Each corruption: flip a payload byte, truncate, break the header, empty file.
  std::vector<std::function<void(std::string&)>> corruptions = {
      [](std::string& bytes) { bytes[bytes.size() - 10] ^= 1; },
      [](std::string& bytes) { bytes.resize(bytes.size() - 1); },
      [](std::string& bytes) { bytes[0] = 'X'; },
      [](std::string& bytes) { bytes.clear(); },
  };
  for (auto& corrupt : corruptions) {
    ASSERT_TRUE(cache.store("key", payload));
    std::string path = cache.path_for("key");
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    corrupt(bytes);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << bytes;
    }
    EXPECT_FALSE(cache.load("key").has_value());
    EXPECT_FALSE(std::filesystem::exists(path)) << "a corrupt entry must be removed";
  }
}

TEST(KernelCache, ConcurrentWritersLeaveOneValidEntry) {
  KernelCache cache(fresh_directory("concurrent"));
  std::string payload(100000, 'p');
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i) writers.emplace_back([&] { cache.store("same", payload); });
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(cache.load("same").value_or(""), payload);
  int files = 0;
  for (auto& entry : std::filesystem::directory_iterator(cache.directory())) {
    ++files;
    EXPECT_EQ(entry.path().extension(), ".cubin") << "temporary files must not be left behind";
  }
  EXPECT_EQ(files, 1);
}

TEST(KernelCache, DefaultDirectoryHonoursEnvironment) {
  setenv("TESSEL_CACHE_DIR", "/tmp/somewhere-else", 1);
  EXPECT_EQ(KernelCache::default_directory(), "/tmp/somewhere-else");
  unsetenv("TESSEL_CACHE_DIR");
  setenv("HOME", "/home/user", 1);
  EXPECT_EQ(KernelCache::default_directory(), "/home/user/.cache/tessel");
}

TEST(KernelCache, UnwritableDirectoryIsNotAnError) {
  KernelCache cache("/proc/tessel-cannot-write-here");
  EXPECT_FALSE(cache.store("k", "payload"));
  EXPECT_FALSE(cache.load("k").has_value());
}

}  // namespace
}  // namespace tessel::runtime
