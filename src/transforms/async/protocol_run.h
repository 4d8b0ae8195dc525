// The model check-protocol runs: one block of a lowered kernel on concrete sizes, its roles as
// coroutines over their synchronization skeleton, every barrier a phase model, every ring slot's
// loads and reads counted (check_protocol.h says what it reports and why). check_protocol.cpp
// chooses the instances — sizes, SM counts, blocks, schedules — and runs them here;
// protocol_scalars.h evaluates the integers the run's control flow and barrier indices need;
// protocol_slots.h counts each ring slot's writes and reads and holds their rules.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

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
// scalars are a flat array: the search copies states by the thousand.
class ValueIds {
 public:
  explicit ValueIds(const ir::Operation& kernel) {
    ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
      for (const auto& r : op->results()) ids_.emplace(r.get(), static_cast<int>(ids_.size()));
      for (const auto& region : op->regions()) {
        for (const auto& a : region->arguments())
          ids_.emplace(a.get(), static_cast<int>(ids_.size()));
      }
    });
  }
  int size() const { return static_cast<int>(ids_.size()); }
  int at(const ir::Value* v) const {
    auto it = ids_.find(v);
    return it == ids_.end() ? -1 : it->second;
  }

 private:
  std::unordered_map<const ir::Value*, int> ids_;
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
