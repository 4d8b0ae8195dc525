// The aref protocol and the barrier arrays of the interpreter.
#include "interp/sync_models.h"

#include <algorithm>

#include "ir/async.h"

namespace tessel::interp {
namespace {

// "aref_commit %ring, %k" — how messages open.
std::string op_text(const ir::Operation& op) {
  std::string out(op.name());
  for (int i = 0; i < op.num_operands(); ++i)
    out += (i ? ", " : " ") + ir::value_ref(op.operand(i));
  return out;
}

std::string role_ref(const ir::Operation& role) {
  return "role " + role.str_attr("role") + " (" + ir::op_where(role) + ")";
}

// "3" or "3..5".
std::string range(int64_t first, int64_t end) {
  return end - first == 1 ? std::to_string(first)
                          : std::to_string(first) + ".." + std::to_string(end - 1);
}

}  // namespace

ArefModel::Step ArefModel::step_of(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::aref_acquire:
      return acquire;
    case ir::OpKind::aref_commit:
      return commit;
    case ir::OpKind::aref_wait:
      return wait;
    case ir::OpKind::aref_release:
      return release;
    default:
      TESSEL_ASSERT(false, "not an aref op: ", ir::op_name(kind));
  }
}

ArefModel::ArefModel(const ir::Operation& def, int64_t slots) : def_(&def), slots_(slots) {
  ir::walk(const_cast<ir::Operation*>(def.parent_op()), [&](ir::Operation* op) {
    const bool acquires = op->kind() == ir::OpKind::aref_acquire;
    if ((!acquires && op->kind() != ir::OpKind::aref_wait) || op->operand(0) != def.result())
      return;
    std::vector<const ir::Operation*>& side = roles_[acquires ? 0 : 1];
    const ir::Operation* role = ir::enclosing_role(*op);
    if (role && std::find(side.begin(), side.end(), role) == side.end()) side.push_back(role);
  });
  for (int step = 0; step < steps; ++step)
    lane_count_[step].assign(std::max<size_t>(1, roles_[step / 2].size()), 0);
}

bool ArefModel::had(Step step, int64_t n) const {
  const auto r = static_cast<int64_t>(lane_count_[step].size());
  return n / r < lane_count_[step][static_cast<size_t>(n % r)];
}

int64_t ArefModel::done(Step step) const {
  int64_t n = 0;
  while (had(step, n)) ++n;
  return n;
}

void ArefModel::check(const ir::Operation& op, const ir::Operation& role, int64_t n) {
  Step step = step_of(op.kind());
  if (n < 0) user_error(op.loc(), op_text(op), ": sequence number ", n, " is negative");
  const int side = step <= commit ? 0 : 1;
  const char* kind = side == 0 ? "producer" : "consumer";
  std::vector<const ir::Operation*>& roles = roles_[side];
  const auto r = static_cast<int64_t>(lane_count_[step].size());
  auto it = std::find(roles.begin(), roles.end(), &role);
  if (it == roles.end()) {
    if (!roles.empty()) {
      user_error(op.loc(), op_text(op), ": ", role_ref(role), " uses ", name(), " as its ", kind,
                 ", which ", role_ref(*roles.front()), " already is (the ", kind,
                 " roles of an aref are those with an ", side == 0 ? "aref_acquire" : "aref_wait",
                 " of it)");
    }
    roles.push_back(&role);
    it = roles.begin();
  }
  const int64_t i = it - roles.begin();
  if (n % r != i) {
    user_error(op.loc(), op_text(op), ": sequence number ", n, " of ", name(), " is not ",
               role_ref(role), "'s: its ", r, " ", kind, " roles take turns, ", kind, " role ", i,
               " (from 0, in kernel order) taking ", i, ", ", i + r, ", ", i + 2 * r, ", ...");
  }
  const int64_t next = i + r * lane_count_[step][static_cast<size_t>(i)];
  // A commit / release must follow the acquire / wait of the same number.
  if (step == commit && !had(acquire, n)) {
    const int64_t acquired = done(acquire);
    user_error(op.loc(), op_text(op), ": commits sequence number ", n, " of ", name(),
               ", which was not acquired (acquired so far: ",
               acquired ? range(0, acquired) : std::string("none"), ")");
  }
  if (step == release && !had(wait, n)) {
    const int64_t waited = done(wait);
    user_error(op.loc(), op_text(op), ": releases sequence number ", n, " of ", name(),
               ", which was not waited for (waited so far: ",
               waited ? range(0, waited) : std::string("none"), ")");
  }
  if (n != next) {
    user_error(op.loc(), op_text(op), ": sequence number ", n, " is out of order: the next ",
               op.name(), " of ", name(), " is sequence number ", next,
               r == 1 ? " (each role numbers an aref's uses 0, 1, 2, ... in order)"
                      : side == 0 ? " (its producer roles take turns, each its numbers in order)"
                                  : " (its consumer roles take turns, each its numbers in order)");
  }
}

bool ArefModel::ready(ir::OpKind kind, int64_t n) const {
  if (kind == ir::OpKind::aref_acquire) return n < slots_ || had(release, n - slots_);
  if (kind == ir::OpKind::aref_wait) return had(commit, n);
  return true;
}

std::string ArefModel::slot_state(int64_t slot) const {
  std::string s = "slot " + std::to_string(slot);
  if (count_[acquire] <= slot) return s + " is free";
  int64_t m = slot + (count_[acquire] - 1 - slot) / slots_ * slots_;  // its latest number
  const char* state = had(release, m)  ? "released"
                      : had(wait, m)   ? "waited, not released"
                      : had(commit, m) ? "committed, not waited for"
                                           : "acquired, not committed";
  return s + " holds sequence number " + std::to_string(m) + ", " + state;
}

std::string ArefModel::waits_for(ir::OpKind kind, int64_t n) const {
  if (kind == ir::OpKind::aref_acquire) {
    return "waits for the release of sequence number " + std::to_string(n - slots_) + " of " +
           name() + " (" + slot_state(n % slots_) + ")";
  }
  return "waits for the commit of sequence number " + std::to_string(n) + " of " + name() + " (" +
         slot_state(n % slots_) + ")";
}

void ArefModel::apply(const ir::Operation& op) {
  Step step = step_of(op.kind());
  ++count_[step];
  last_op_[step] = &op;
  const std::vector<const ir::Operation*>& roles = roles_[step <= commit ? 0 : 1];
  auto it = std::find(roles.begin(), roles.end(), ir::enclosing_role(op));
  ++lane_count_[step][it == roles.end() ? 0 : static_cast<size_t>(it - roles.begin())];
}

void ArefModel::role_finished(const ir::Operation& role) const {
  auto it = std::find(roles_[0].begin(), roles_[0].end(), &role);
  if (it == roles_[0].end()) return;
  const auto i = static_cast<size_t>(it - roles_[0].begin());
  if (lane_count_[commit][i] == lane_count_[acquire][i]) return;
  const auto r = static_cast<int64_t>(roles_[0].size());
  const int64_t first = static_cast<int64_t>(i) + r * lane_count_[commit][i];
  const int64_t last = static_cast<int64_t>(i) + r * (lane_count_[acquire][i] - 1);
  const ir::Operation& op = *last_op_[acquire];
  user_error(role.loc(), role_ref(role), " ends with sequence number(s) ",
             r == 1 ? range(first, last + 1)
                    : std::to_string(first) + (last > first ? ".." + std::to_string(last) : ""),
             " of ", name(), " acquired (by ", op_text(op), " at ", op.loc().str(),
             ") but never committed");
}

void ArefModel::block_finished() const {
  const int64_t waited = done(wait), released = done(release);
  if (waited < count_[commit] || done(commit) < count_[commit]) {
    const ir::Operation& op = *last_op_[commit];
    user_error(def_->loc(), "aref ", name(), ": sequence number(s) ",
               range(waited, count_[commit]), " were committed (the last by ", op_text(op),
               " at ", op.loc().str(),
               ") but no role waited for them: the producer ran ahead of its consumer");
  }
  if (released < count_[wait]) {
    const ir::Operation& op = *last_op_[wait];
    user_error(def_->loc(), "aref ", name(), ": sequence number(s) ",
               range(released, count_[wait]), " were waited for (the last by ", op_text(op),
               " at ", op.loc().str(), ") but never released");
  }
}

BarrierArray::BarrierArray(const ir::Operation& def, int64_t count, int64_t arrivals)
    : def_(&def), bars_(static_cast<size_t>(count), ir::BarrierModel(arrivals)) {}

std::string BarrierArray::name(int64_t i) const {
  return ir::value_ref(def_->result()) + "[" + std::to_string(i) + "]";
}

void BarrierArray::check(const ir::Operation& op, int64_t i, int64_t parity) const {
  if (i < 0 || i >= static_cast<int64_t>(bars_.size())) {
    user_error(op.loc(), op_text(op), ": barrier index ", i, " lies outside ",
               ir::value_ref(def_->result()), ", an array of ", bars_.size(), " mbarrier(s)");
  }
  if (parity != 0 && parity != 1) {
    user_error(op.loc(), op_text(op), ": the parity is ", parity, ", not 0 or 1");
  }
}

std::string BarrierArray::waits_for(int64_t i, int64_t parity) const {
  return "waits for the phase of " + name(i) + " with parity " + std::to_string(parity) + " (" +
         name(i) + " is at " + bars_[i].describe() + ")";
}

void BarrierArray::arrive(const ir::Operation& op, int64_t i, int64_t count, int64_t expect_bytes) {
  if (bars_[i].arrive(count, expect_bytes) != ir::BarrierModel::Status::ok) {
    user_error(op.loc(), op_text(op), ": ", count, " arrival(s) on ", name(i),
               ", whose phase has only ", bars_[i].pending_arrivals(),
               " pending: more arrivals than the arrivals = ", bars_[i].arrivals(),
               " of its mbarrier_init (", name(i), " is at ", bars_[i].describe(), ")");
  }
}

void BarrierArray::complete_bytes(const ir::Operation& op, int64_t i, int64_t bytes) {
  if (bars_[i].complete_bytes(bytes) != ir::BarrierModel::Status::ok) {
    user_error(op.loc(), op_text(op), ": the copy completes ", bytes, " byte(s) on ", name(i),
               ", which expects only ", bars_[i].pending_bytes(),
               " more (an mbarrier_expect_tx that announces too few bytes)");
  }
}

}  // namespace tessel::interp
