#include "runtime/kernel_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/hash.h"

namespace tessel::runtime {
namespace {

constexpr const char* kMagic = "tessel-cubin v1";

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace

std::string KernelCache::default_directory() {
  if (const char* dir = std::getenv("TESSEL_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/tessel";
  }
  return "/tmp/tessel-cache";
}

KernelCache::KernelCache(std::string directory)
    : directory_(directory.empty() ? default_directory() : std::move(directory)) {}

std::string KernelCache::path_for(const std::string& key) const {
  return directory_ + "/" + key + ".cubin";
}

std::optional<std::string> KernelCache::load(const std::string& key) const {
  std::string path = path_for(key);
  std::optional<std::string> content = read_file(path);
  if (!content) return std::nullopt;
  auto corrupt = [&]() -> std::optional<std::string> {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return std::nullopt;
  };
  std::size_t newline = content->find('\n');
  if (newline == std::string::npos) return corrupt();
  std::istringstream header(content->substr(0, newline));
  std::string magic_word, version, checksum;
  std::size_t size = 0;
  if (!(header >> magic_word >> version >> checksum >> size)) return corrupt();
  if (magic_word + " " + version != kMagic) return corrupt();
  std::string payload = content->substr(newline + 1);
  if (payload.size() != size || sha256_hex(payload) != checksum) return corrupt();
  return payload;
}

void KernelCache::remove(const std::string& key) const {
  std::error_code ignored;
  std::filesystem::remove(path_for(key), ignored);
}

bool KernelCache::store(const std::string& key, const std::string& payload) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  static std::atomic<unsigned> counter{0};
  std::string temporary = path_for(key) + ".tmp." + std::to_string(getpid()) + "." +
                          std::to_string(counter.fetch_add(1));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << kMagic << " " << sha256_hex(payload) << " " << payload.size() << "\n" << payload;
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, path_for(key), error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return false;
  }
  return true;
}

}  // namespace tessel::runtime
