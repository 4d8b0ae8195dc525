// The model check-protocol runs: one block of a lowered kernel on concrete sizes, its roles as
// coroutines over their synchronization skeleton, every barrier a phase model, every ring slot's
// loads and reads counted (check_protocol.h says what it reports and why). check_protocol.cpp
// chooses the instances — sizes, SM counts, blocks, schedules — and runs them here;
// protocol_scalars.h evaluates the integers the run's control flow and barrier indices need;
// protocol_slots.h counts each ring slot's writes and reads and holds their rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace tessel::transforms::protocol {

// How the roles of one block take turns. The linear orders run a role as far as it can before
// the next (`producer_first`: in program order; `consumer_first`: reversed) or one visible op
// each in turn (`round_robin`); their TMA loads land when issued or only when nothing else can
// move. `search` explores every interleaving instead (run_block).
enum class Order { producer_first, consumer_first, round_robin, search };
struct Schedule {
  Order order;
  bool late_loads;
  const char* name;
};
inline constexpr Schedule kSchedules[] = {
    {Order::producer_first, false, "producer first, loads land at once"},
    {Order::producer_first, true, "producer first, loads land late"},
    {Order::consumer_first, false, "consumer first, loads land at once"},
    {Order::consumer_first, true, "consumer first, loads land late"},
    {Order::round_robin, false, "round-robin, loads land at once"},
    {Order::round_robin, true, "round-robin, loads land late"}};
inline constexpr Schedule kSearch{Order::search, true,
                                  "an interleaving found by searching all of them"};
// The most states one search visits; past it the search stops (the check is bounded).
inline constexpr size_t kSearchStates = 4000;

// What a run needs to know of an op that does not change from run to run, decoded once per
// kernel: most ops a run executes are index arithmetic or register work, and a run executes the
// kernel's loops thousands of times over the instances check-protocol tries.
struct DecodedOp {
  enum Kind : uint8_t {
    other,       // the general path (Scalars::eval, then the op's reads of ring buffers)
    arith,       // an integer elementwise op of one or two integer scalars (add, div, cmp, ...)
    not_scalar,  // an op Scalars::eval refuses on every run (tensor work, control ops)
  };
  Kind kind = other;
  // Nothing for the run to do: not a scalar, no ring buffer among its operands, and none of the
  // ops the run follows (control flow, barriers, slots, wgmma groups, copies): register work.
  bool inert = false;
  const ir::Operation* op = nullptr;  // the op decoded (messages, and the general path)
  // An operand may be a ring slot's buffer (an aref_slot's result, or a transpose of one): only
  // then can the op read a slot.
  bool reads_views = true;
  int a = -1, b = -1, result = -1;  // arith: its operands' and result's value ids (b: -1 if unary)
  ir::ScalarKind element{};         // arith: its operands' kind
  std::string_view pred;            // arith: cmp's predicate
  // The attributes the run reads of the synchronization ops, read here once instead of from
  // their string-keyed maps every execution: mbarrier_expect_tx's `bytes`, mma_wait's
  // `pending`; mbarrier_arrive's `by` (Arrivals::one, thread, warp or warpgroup); flags:
  // `no_arrival` (expect_tx), `cluster` (arrive), `async` (mma), `held` (aref_slot), `issue` (a
  // warp_group whose one thread issues).
  enum Arrivals : uint8_t { one, thread, warp, warpgroup };
  int64_t number = 0;
  Arrivals by = one;
  bool flag_no_arrival = false, flag_cluster = false, flag_async = false, flag_held = false,
       flag_issue = false;
};

// Dense numbers for a kernel's values (op results and block arguments), so that a role's
// scalars are a flat array: the search copies states by the thousand. Every op a run executes
// looks its operands up here, so the table is open-addressed (linear probing over a power of two
// at most half full, the pointer's bits mixed by a multiply), not a node-based map. It also
// holds each op's DecodedOp, looked up the same way.
class ValueIds {
 public:
  explicit ValueIds(const ir::Operation& kernel) {
    std::vector<const ir::Value*> values;
    std::vector<const ir::Operation*> ops;
    ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
      ops.push_back(op);
      for (const auto& r : op->results()) values.push_back(r.get());
      for (const auto& region : op->regions()) {
        for (const auto& a : region->arguments()) values.push_back(a.get());
      }
    });
    size_t capacity = 16;
    while (capacity < 2 * values.size()) capacity *= 2;
    keys_.assign(capacity, nullptr);
    ids_.assign(capacity, -1);
    mask_ = capacity - 1;
    for (const ir::Value* v : values) {
      size_t i = slot(v);
      while (keys_[i] && keys_[i] != v) i = (i + 1) & mask_;
      if (keys_[i]) continue;
      keys_[i] = v;
      ids_[i] = size_++;
      // An integer `const`'s value, read without the op's attribute map on every use.
      const std::optional<int64_t> c = ir::int_constant(v);
      constant_.push_back(c.value_or(0));
      is_constant_.push_back(c.has_value());
    }
    decode(ops);
  }
  int size() const { return size_; }
  // The value of id `i`'s integer `const`, or null when another op (or an argument) defines it.
  const int64_t* constant(int i) const { return is_constant_[i] ? &constant_[i] : nullptr; }
  int at(const ir::Value* v) const {
    for (size_t i = slot(v);; i = (i + 1) & mask_) {
      if (keys_[i] == v) return ids_[i];
      if (!keys_[i]) return -1;
    }
  }
  // A block's ops decoded, in order (an array a run walks instead of the ops themselves: they
  // are scattered over the heap, and most are executed by the thousand).
  const DecodedOp* code(const ir::Block* block) const {
    auto it = code_at_.find(block);
    return it == code_at_.end() ? nullptr : code_.data() + it->second;
  }
  // The op's decoding (an op of the kernel; any other op gets the general path).
  const DecodedOp& decoded(const ir::Operation* op) const {
    for (size_t i = op_slot(op);; i = (i + 1) & op_mask_) {
      if (op_keys_[i] == op) return decoded_[i];
      if (!op_keys_[i]) return general_;
    }
  }

 private:
  size_t slot(const ir::Value* v) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(v) * 0x9E3779B97F4A7C15ull) >> 32) &
           mask_;
  }
  size_t op_slot(const ir::Operation* op) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(op) * 0x9E3779B97F4A7C15ull) >> 32) &
           op_mask_;
  }
  void decode(const std::vector<const ir::Operation*>& ops);

  std::vector<const ir::Value*> keys_;
  std::vector<int> ids_;
  std::vector<int64_t> constant_;    // by id
  std::vector<uint8_t> is_constant_;  // by id
  size_t mask_ = 0;
  int size_ = 0;
  std::vector<const ir::Operation*> op_keys_;
  std::vector<DecodedOp> decoded_;
  size_t op_mask_ = 0;
  DecodedOp general_;
  std::vector<DecodedOp> code_;                           // every block's ops, block by block
  std::unordered_map<const ir::Block*, size_t> code_at_;  // a block's first op in code_
};

// The grid's block count on these sizes (the top level evaluated up to the roles).
int64_t grid_blocks(const ir::Operation& kernel, const ValueIds& ids,
                    const std::map<std::string, int64_t>& sizes, int64_t sm_count);

// Runs block `block` of the grid under `schedule`; UserError naming `instance` (the sizes, SMs,
// block) on a protocol violation. `last_arrival`: what every counter_arrive returns — the last
// arrival (the block sums split-k's partials and runs the epilogue) or not (it skips both).
void run_block(const ir::Operation& kernel, const ValueIds& ids,
               const std::map<std::string, int64_t>& sizes, int64_t sm_count,
               const Schedule& schedule, const std::string& instance, int64_t block,
               bool last_arrival);

}  // namespace tessel::transforms::protocol
