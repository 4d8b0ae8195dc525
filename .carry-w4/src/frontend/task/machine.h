// The machine model of the task language (Cypress §3.1): processor levels, memories, their
// capacities, and what each level can run — one table per machine, read by the mapping checks
// and the task compiler instead of constants spread over passes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/task.h"

namespace tessel::task {

// Processor levels, largest first. `grid` is the whole launch (Cypress's host level: it runs
// inner variants only, whose pranges become the grid of blocks).
enum class Processor { grid, block, warpgroup, warp, thread };
// Memories. `none`: the tensor must never be materialized (copy elimination must remove it).
enum class Memory { none, global, shared, reg };

struct ProcessorInfo {
  Processor level;
  std::string_view name;
  int64_t threads;  // CUDA threads in one instance (grid: 0, unbounded)
};

struct MemoryInfo {
  Memory memory;
  std::string_view name;
  // Bytes one instance of `owner` has (0: not checked). For registers, the bytes one thread has.
  int64_t capacity_bytes;
  Processor owner;
  // The largest processor level that can name a tensor in this memory (global: grid; shared:
  // block; registers: block, as the tile IR's register tensors are spread over a block's threads).
  Processor widest_user;
};

struct Machine {
  std::string name;
  std::vector<ProcessorInfo> processors;
  std::vector<MemoryInfo> memories;
  // Leaf operations and the largest / smallest level that can run each (mma on sm_90a is wgmma:
  // a warpgroup, or a block of warpgroups).
  struct Capability {
    LeafOp::Kind op;
    Processor widest, narrowest;
  };
  std::vector<Capability> capabilities;
  // An mma operand in shared memory must have rows of a multiple of this many bytes (wgmma reads
  // 16-bit operands from 128-byte swizzled K-major rows as tessel lays them out; 0: no rule).
  int64_t mma_shared_row_bytes = 0;
  // The rows of the accumulator one warpgroup's mma covers at a time (wgmma's M = 64; 0: no rule).
  int64_t mma_warpgroup_rows = 0;
  // The memories each mma operand may be read from (A, B) or accumulated in (C); empty: any.
  std::vector<Memory> mma_a_memories, mma_b_memories, mma_c_memories;

  const ProcessorInfo& processor(Processor p) const;
  const MemoryInfo& memory(Memory m) const;
  // Whether `level` can run a leaf operation of kind `op`.
  bool can_run(Processor level, LeafOp::Kind op) const;
  std::string levels_for(LeafOp::Kind op) const;  // "warpgroup or block", for messages
};

// The H100 (sm_90a): grid > block > warpgroup (128 threads) > warp (32) > thread; 227 KiB of shared
// memory per block, 255 32-bit registers per thread.
const Machine& h100();

std::string_view processor_name(Processor p);
std::string_view memory_name(Memory m);
std::optional<Processor> parse_processor(std::string_view name);
std::optional<Memory> parse_memory(std::string_view name);
std::string_view leaf_op_name(LeafOp::Kind k);
int64_t element_bytes(ScalarKind k);

}  // namespace tessel::task
