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

// Dense numbers for a kernel's values (op results and block arguments), so that a role's
// scalars are a flat array: the search copies states by the thousand. Every op a run executes
// looks its operands up here, so the table is open-addressed (linear probing over a power of two
// at most half full, the pointer's bits mixed by a multiply), not a node-based map.
class ValueIds {
 public:
  explicit ValueIds(const ir::Operation& kernel) {
    std::vector<const ir::Value*> values;
    ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
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

 private:
  size_t slot(const ir::Value* v) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(v) * 0x9E3779B97F4A7C15ull) >> 32) &
           mask_;
  }
  std::vector<const ir::Value*> keys_;
  std::vector<int> ids_;
  std::vector<int64_t> constant_;    // by id
  std::vector<uint8_t> is_constant_;  // by id
  size_t mask_ = 0;
  int size_ = 0;
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
