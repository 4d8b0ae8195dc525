// The H100 machine model as data (machine.h).
#include "frontend/task/machine.h"

namespace tessel::task {

const Machine& h100() {
  using P = Processor;
  using M = Memory;
  using K = LeafOp::Kind;
  static const Machine machine = {
      "H100 (sm_90a)",
      {
          {P::grid, "grid", 0},
          {P::block, "block", 1024},
          {P::warpgroup, "warpgroup", 128},
          {P::warp, "warp", 32},
          {P::thread, "thread", 1},
      },
      {
          {M::none, "none", 0, P::grid, P::grid},
          {M::global, "global", 0, P::grid, P::grid},
          // 227 KiB: the most one block may opt into (cudaFuncAttributeMaxDynamicSharedMemorySize).
          {M::shared, "shared", 227 * 1024, P::block, P::block},
          // 255 registers of 4 bytes a thread (the register file is 64K registers an SM).
          {M::reg, "register", 255 * 4, P::thread, P::block},
      },
      {
          {K::fill, P::block, P::thread},
          {K::copy, P::block, P::thread},
          {K::elementwise, P::block, P::thread},
          {K::reduce_sum, P::block, P::thread},
          {K::reduce_max, P::block, P::thread},
          {K::mask, P::block, P::thread},
          {K::mask_causal, P::block, P::thread},
          // wgmma: issued by a warpgroup; a block-level mma is spread over its warpgroups.
          {K::mma, P::block, P::warpgroup},
      },
      128,
      64,
      // wgmma: A from shared memory or registers (the RS form), B from shared memory only, the
      // accumulator in registers.
      {M::shared, M::reg},
      {M::shared},
      {M::reg},
  };
  return machine;
}

const ProcessorInfo& Machine::processor(Processor p) const {
  for (const ProcessorInfo& info : processors)
    if (info.level == p) return info;
  TESSEL_ASSERT(false, "processor level missing from the machine table");
}

const MemoryInfo& Machine::memory(Memory m) const {
  for (const MemoryInfo& info : memories)
    if (info.memory == m) return info;
  TESSEL_ASSERT(false, "memory missing from the machine table");
}

bool Machine::can_run(Processor level, LeafOp::Kind op) const {
  for (const Capability& c : capabilities)
    if (c.op == op) return level >= c.widest && level <= c.narrowest;
  return false;
}

std::string Machine::levels_for(LeafOp::Kind op) const {
  for (const Capability& c : capabilities) {
    if (c.op != op) continue;
    std::string out;
    for (int l = static_cast<int>(c.narrowest); l >= static_cast<int>(c.widest); --l) {
      if (!out.empty()) out += l == static_cast<int>(c.widest) ? " or " : ", ";
      out += processor_name(static_cast<Processor>(l));
    }
    return out;
  }
  return "none";
}

std::string_view processor_name(Processor p) {
  return h100().processor(p).name;
}
std::string_view memory_name(Memory m) {
  return h100().memory(m).name;
}
std::optional<Processor> parse_processor(std::string_view name) {
  for (const ProcessorInfo& info : h100().processors)
    if (info.name == name) return info.level;
  return std::nullopt;
}
std::optional<Memory> parse_memory(std::string_view name) {
  for (const MemoryInfo& info : h100().memories)
    if (info.name == name) return info.memory;
  return std::nullopt;
}

std::string_view leaf_op_name(LeafOp::Kind k) {
  switch (k) {
    case LeafOp::Kind::fill:
      return "fill";
    case LeafOp::Kind::copy:
      return "copy";
    case LeafOp::Kind::mma:
      return "mma";
    case LeafOp::Kind::elementwise:
      return "elementwise";
    case LeafOp::Kind::reduce_sum:
      return "reduce_sum";
    case LeafOp::Kind::reduce_max:
      return "reduce_max";
    case LeafOp::Kind::mask:
      return "mask";
    case LeafOp::Kind::mask_causal:
      return "mask_causal";
  }
  return "?";
}

int64_t element_bytes(ScalarKind k) {
  switch (k) {
    case ScalarKind::f64:
    case ScalarKind::i64:
      return 8;
    case ScalarKind::f32:
    case ScalarKind::i32:
      return 4;
    case ScalarKind::f16:
    case ScalarKind::bf16:
    case ScalarKind::i16:
      return 2;
    default:
      return 1;
  }
}

}  // namespace tessel::task
