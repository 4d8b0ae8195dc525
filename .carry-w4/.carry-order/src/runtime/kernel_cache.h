// The on-disk cache of compiled kernels: cubins keyed by the hash of everything that made them.
//
// Layout: one file per entry, `<dir>/<key>.cubin`, whose content is a header line
// `tessel-cubin v1 <sha256 of payload> <payload size>\n` followed by the payload. Writes go to a
// temporary file in the same folder and are renamed into place, so readers never see a partial
// entry and concurrent writers of one key are harmless (both write the same bytes). A read that
// finds a bad header, a wrong size or a wrong checksum treats the entry as absent and deletes it,
// so the caller rebuilds it.
#pragma once

#include <optional>
#include <string>

namespace tessel::runtime {

class KernelCache {
 public:
  // `directory` is created on first store. Empty means the default: $TESSEL_CACHE_DIR if set, else
  // $HOME/.cache/tessel, else /tmp/tessel-cache.
  explicit KernelCache(std::string directory = "");

  const std::string& directory() const { return directory_; }
  std::string path_for(const std::string& key) const;

  // The payload stored under `key`, or nullopt when absent or corrupt (a corrupt entry is removed).
  std::optional<std::string> load(const std::string& key) const;
  // Stores `payload` under `key` atomically. Failure to write (read-only disk, ...) is not an
  // error: the cache is an optimization, so it returns false and the caller goes on.
  bool store(const std::string& key, const std::string& payload) const;
  // Deletes the entry under `key`, if any: for a caller that finds an entry whose checksum holds
  // but whose content it cannot use (e.g. a payload in a format it no longer reads).
  void remove(const std::string& key) const;

  static std::string default_directory();

 private:
  std::string directory_;
};

}  // namespace tessel::runtime
