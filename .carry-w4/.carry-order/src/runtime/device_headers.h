// The device library (runtime/device/*.cuh), embedded in the binary at build time.
//
// NVRTC receives these as named headers, so generated code writes `#include "tessel_device.cuh"` and
// compiles the same wherever the binary runs, with no include path to find at run time.
#pragma once

#include <span>
#include <string_view>

namespace tessel::runtime {

struct EmbeddedHeader {
  std::string_view name;     // the bare file name, e.g. "mbarrier.cuh"
  std::string_view content;  // the file's bytes
};

// Every header of runtime/device/, sorted by name.
std::span<const EmbeddedHeader> device_headers();

// SHA-256 (hex) of every header's name and content, computed at build time: what cache keys hash
// instead of the headers themselves (hashing ~220 KB took ~1-2 ms of every cache hit).
std::string_view device_headers_digest();

}  // namespace tessel::runtime
