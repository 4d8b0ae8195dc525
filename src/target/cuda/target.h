// Targets: which instruction atoms an architecture (sm_80, sm_90a) offers for a copy, mma or
// reduce.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "target/cuda/atoms.h"

namespace tessel::target::cuda {

class Target {
 public:
  // "sm_80" or "sm_90a"; UserError for another name.
  static Target named(const std::string& name);
  static Target sm80() { return Target("sm_80", 80); }
  static Target sm90a() { return Target("sm_90a", 90); }

  const std::string& name() const { return name_; }
  int sm() const { return sm_; }
  bool has(const Atom& atom) const { return atom.min_sm <= sm_; }
  // The opt-in shared memory one block may use, static plus dynamic, in bytes
  // (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 227 KiB on sm_90a, 163 KiB on sm_80).
  int64_t shared_memory_per_block() const { return sm_ >= 90 ? 232448 : 166912; }
  // What each of `blocks` blocks resident on one SM may use: the SM's shared memory
  // (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: 228 KiB on sm_90a, 164 KiB on
  // sm_80) shared among them, less the 1 KiB the hardware reserves for each block
  // (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK). For one block it is the opt-in limit.
  int64_t shared_memory_per_block(int64_t blocks) const {
    const int64_t per_sm = shared_memory_per_block() + kReservedSharedPerBlock;
    return blocks <= 1 ? shared_memory_per_block() : per_sm / blocks - kReservedSharedPerBlock;
  }
  static constexpr int64_t kReservedSharedPerBlock = 1024;

  // Every copy atom from `src` to `dst` for `elem_bits`-bit elements, widest first: vector ld/st
  // (global/shared <-> register), cp.async (global -> shared), ldmatrix / stmatrix (16-bit only,
  // shared <-> register), TMA is not listed here (its box depends on the tile: tma_copy).
  std::vector<Atom> copy_atoms(ir::MemorySpace src, ir::MemorySpace dst, int elem_bits) const;
  // Every mma atom for inputs of type `ab` and accumulator `acc`: wgmma (sm_90a: every N that is
  // a multiple of 8, A in shared and in registers), then mma.sync (m16n8k32 for fp8 from sm_89).
  std::vector<Atom> mma_atoms(ir::ScalarKind ab, ir::ScalarKind acc) const;
  // Every atom this target has (with 16-bit elements for the element-generic copies), for listing.
  std::vector<Atom> all_atoms() const;

 private:
  Target(std::string name, int sm) : name_(std::move(name)), sm_(sm) {}
  std::string name_;
  int sm_;
};

}  // namespace tessel::target::cuda
