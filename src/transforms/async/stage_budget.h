// StageBudget: the shared-memory budget rules that the pipelining passes share — how many bytes a
// ring slot costs, what the kernel holds outside its rings, and how deep each ring may be.
//
// Two passes size rings of shared tiles: pipeline-loops (a mainloop pipelined without warp
// specialization: `stages` slots per copied tile) and pipeline-arefs (an aref's `slots`, filled by
// a producer role). The ring is the same thing in both — S slots, each holding one buffer per
// staged tile — so the rules are one piece of code, stated in full in pipeline_loops.h: a tile
// costs its bytes rounded up to its alignment (the swizzle's repeat, 128 B for a TMA destination,
// else 16 B); the capacity is Target::shared_memory_per_block() minus kReserveBytes minus every
// other shared tensor of the kernel (and the f32 scratch of each `rearrange`); unpinned rings get
// the largest common cap S <= kMaxStages (kMaxStagesReadByThreads for a ring whose slots threads
// read; and <= their static trip count) that fits with the pinned ones. The pins and their
// checks (`stages`, `mma_in_flight` on the loop) are shared too, so both passes refuse the same
// things with the same words. A ring is named in messages as its loop is
// ("for %k"): that is where a person pins its depth.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "target/cuda/target.h"

namespace tessel::transforms {

// For barriers, the base round-up, reduction scratch and epilogue slack (pipeline_loops.h).
inline constexpr int64_t kReserveBytes = 8 * 1024;
// What a kernel needs beyond its tensors when it has no cross-thread op (reduce, broadcast,
// rearrange: the emitter gives those scratch) and stages its epilogue in tensors the IR shows
// (a warp-specialized kernel after stage-stores): 16 B of mbarriers per slot and ring (at most
// 8 slots x 2 barriers x 8 B here) and the round-up of the allocation's base to 1024 B (1008 B).
// 8 KiB would cost a warp-specialized 128x256 GEMM with a staged epilogue its fourth stage.
inline constexpr int64_t kTightReserveBytes = 2 * 1024;
// The reserve a kernel needs: kReserveBytes with a rearrange or a reduce that crosses warps
// (their scratch; a reduce whose rows each stay in one warp is shuffles only), else
// kTightReserveBytes plus the f32 scratch a broadcast may take (its source's elements x 4 B; none
// for a register-local one, whose threads each hold the elements they repeat).
int64_t reserve_bytes(const ir::Operation& kernel);
// The reserve of the pass that sizes the kernel's rings: pipeline-arefs (a kernel with arefs,
// after warp-specialize) reserve_bytes(kernel); pipeline-loops (a mainloop without roles) the
// whole kReserveBytes, as its epilogue is not staged in tensors the IR shows.
int64_t ring_reserve_bytes(const ir::Operation& kernel);
// The deepest ring an unpinned loop gets (the shared-memory budget usually binds first). Four had
// covered global latency on the H100; on the H200 (4.8 TB/s against 3.35, the same SMs) a
// memory-bound GEMM needs more bytes in flight per SM: cuBLAS runs 128x128x64 tiles in 6 stages
// there, and with up to 8 the sweep's skinny shapes went from 0.85-0.93x cuBLAS to 0.96-1.00x
// (bench/results/2026-11-28-gemm-sweep-h200.md).
inline constexpr int64_t kMaxStages = 8;
// The deepest unpinned ring whose slots threads read (W4A16's and MoE's weight tiles dequantized
// by the consumer, sm_80's ldmatrix; Ring::read_by_threads). Those kernels are bound by the
// consumer, not by bytes in flight, and measured slower with deeper rings on the H200 (W4A16 at
// M = 4096: 0.924x cuBLAS with 4 stages, 0.864 with 5; MoE at 4096 tokens 2.94 ms with 4,
// 3.01-3.09 with 5 or 6; 2026-11-28-h200-first-h200.md) — presumably as the larger
// shared-memory carve-out leaves their threads' global loads (scales, tokens) less L1.
inline constexpr int64_t kMaxStagesReadByThreads = 4;
// wgmma.wait_group takes an immediate 0..7.
inline constexpr int64_t kMaxMmaInFlight = 7;

// The value of an index computed from constants only (const, and integer arithmetic over them).
std::optional<int64_t> static_value(const ir::Value* v);
// The number of iterations of a `for` when its bounds and step are static (and the step positive).
std::optional<int64_t> trip_count(const ir::Operation& loop);
// Whether `op` or an op nested in it is an mma with a wgmma atom.
bool has_wgmma(const ir::Operation& op);
// Why a ring read by threads is shallower, for reports: "at most 4 slots: threads read a slot of
// this loop (its work, not bytes in flight, bounds it)".
std::string cap_str();
// "for %k": how messages and reports name a loop.
std::string loop_str(const ir::Operation& loop);

// The shared memory of a kernel whose rings are sized (level-1 arefs): its reserve
// (ring_reserve_bytes), every shared `alloc`, and each aref's slots (aref_slot_bytes each). The
// passes that add roles and buffers after pipeline-arefs (split-roles, alternate-tiles) check it
// against block_shared_limit.
int64_t block_shared_bytes(const ir::Operation& kernel);
// One slot of an aref: its buffers' bytes, each rounded up to 128.
int64_t aref_slot_bytes(const ir::Operation& aref);
// What one block of the kernel may hold: the target's per-block shared memory at the grid's
// `blocks_per_sm` (1 unless pinned).
int64_t block_shared_limit(const ir::Operation& kernel);

// The bytes of a shared or register tensor of static shape (`op` makes it; for messages).
int64_t tensor_bytes(const ir::Operation& op, const ir::Value* v);
int64_t round_up(int64_t x, int64_t align);
// The byte alignment a slot of a shared tile of type `t` needs when `atom` (possibly empty) fills
// it: the swizzle's repeat, 128 B for a TMA destination, else 16 B.
int64_t slot_alignment(const ir::Type& t, const std::string& atom);

// One staged tile of a ring and its cost per slot.
struct StagedTile {
  const ir::Value* value;  // how messages name it
  int64_t bytes;           // rounded up to `align`
  int64_t align;
};

// One ring of slots: a pipelined mainloop's copies, or an aref's buffers.
struct Ring {
  ir::Operation* loop = nullptr;  // carries the pins, names the ring in messages
  std::vector<StagedTile> tiles;
  int64_t stage_bytes = 0;
  std::optional<int64_t> trip;
  bool wgmma = false;  // its mma uses a wgmma atom: groups can be left in flight
  // Threads read a slot of this ring, or of another ring of the same loop (anything but a
  // wgmma, through transposes): capped at kMaxStagesReadByThreads instead of kMaxStages.
  bool read_by_threads = false;
  std::optional<int64_t> pinned_stages, pinned_in_flight;
  int64_t stages = 0;     // chosen by StageBudget::choose_stages
  int64_t in_flight = 0;  // chosen by StageBudget::choose_in_flight (when wgmma)

  void add_tile(const ir::Value* v, int64_t bytes, int64_t align);
  // Sets read_by_threads from the loop body that reads the tiles: without a wgmma (mma.sync reads
  // its operands by threads, ldmatrix), or when anything but an mma reads a tile
  // (ir::thread_readers). After add_tile and `wgmma`.
  void note_readers(const ir::Block& body);
  // Reads `stages` / `mma_in_flight` from the loop and checks them on their own (kinds, ranges,
  // in flight only with wgmma); UserError naming the loop.
  void read_pins();
};

// The stage budget of one kernel.
class StageBudget {
 public:
  // `in_ring(v)`: v is a shared tensor that a ring holds (not counted once for the whole kernel).
  StageBudget(ir::Operation* kernel, const std::function<bool(const ir::Value*)>& in_ring,
              int64_t reserve = kReserveBytes);

  const target::cuda::Target& target() const { return target_; }
  int64_t budget() const { return budget_; }
  // The grid's `blocks_per_sm` (1 unless pinned): the blocks whose shared memory one SM holds.
  int64_t blocks_per_sm() const { return blocks_per_sm_; }
  // How the budget was reached, for messages and reports.
  std::string budget_str() const;
  // "%a 16384 B (1024-byte aligned), %w 32768 B (1024-byte aligned)".
  static std::string tiles_str(const Ring& ring);

  // Counts `bytes` the kernel will hold outside its rings (an aref slot the rings must leave).
  void hold(int64_t bytes) {
    other_bytes_ += bytes;
    budget_ -= bytes;
  }
  // Sets `stages` of every ring (pins kept), the common cap at most `max_cap`; UserError when
  // pinned ones or one stage each don't fit.
  void choose_stages(std::vector<Ring>& rings, int64_t max_cap = kMaxStages) const;
  // Sets `in_flight` of a wgmma ring after its stages are chosen: the pin, else min(1, S - 1);
  // UserError when a pinned value leaves no slot for the loads.
  static void choose_in_flight(Ring& ring);

 private:
  target::cuda::Target target_ = target::cuda::Target::sm90a();
  int64_t blocks_per_sm_ = 1;
  int64_t other_bytes_ = 0;
  int64_t budget_ = 0;
  int64_t reserve_ = kReserveBytes;
};

}  // namespace tessel::transforms
