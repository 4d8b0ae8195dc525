// The on-disk form of a whole compiled kernel (lowered IR, emitted CUDA and its parameters, cubin).
//
// tessel::compile stores one entry per compile key in the runtime's KernelCache, so that a compile
// of a kernel already on disk, in a new process, skips the passes, the emitter and NVRTC: it reads
// one file, checks its checksum (KernelCache) and parses the lowered IR (the launch checks and the
// grid need it). The format is length-prefixed fields behind a magic line; anything that does not
// read back exactly (a truncated field, an unknown parameter kind, a type that does not parse)
// makes deserialize() return nullopt, and the caller drops the entry and compiles again.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "target/cuda/emit.h"

namespace tessel::compiled_entry {

// Part of every key of these entries: bump it whenever the format changes.
inline constexpr const char* kFormat =
    "tessel-compiled v5";  // v2: optional TMA descriptors; v3: clusters; v4: workspaces;
                           // v5: overlapping launches

struct Entry {
  std::string lowered_ir;  // what the emitter consumed (ir::print of the lowered module)
  target::cuda::EmittedKernel emitted;
  std::string cubin;      // empty when the kernel was compiled without one (compile_cubin = false)
  std::string cubin_key;  // runtime::compile_cache_key of the source (CompiledKernel::cache_key)
};

std::string serialize(const Entry& entry);
// The entry `bytes` holds, or nullopt when they are not exactly one well-formed entry.
std::optional<Entry> deserialize(std::string_view bytes);

}  // namespace tessel::compiled_entry
