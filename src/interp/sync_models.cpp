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
    if (op->kind() != ir::OpKind::aref_wait || op->operand(0) != def.result()) return;
    const ir::Operation* role = ir::enclosing_role(*op);
    if (role && std::find(consumers_.begin(), consumers_.end(), role) == consumers_.end())
      consumers_.push_back(role);
  });
  waited_.assign(std::max<size_t>(1, consumers_.size()), 0);
  released_.assign(waited_.size(), 0);
}

bool ArefModel::had(Step step, int64_t n) const {
  if (step == acquire || step == commit) return n < count_[step];
  const auto w = static_cast<int64_t>(waited_.size());
  const std::vector<int64_t>& count = step == wait ? waited_ : released_;
  return n / w < count[static_cast<size_t>(n % w)];
}

int64_t ArefModel::done(Step step) const {
  if (step == acquire || step == commit) return count_[step];
  int64_t n = 0;
  while (had(step, n)) ++n;
  return n;
}

void ArefModel::check(const ir::Operation& op, const ir::Operation& role, int64_t n) {
  Step step = step_of(op.kind());
  if (n < 0) user_error(op.loc(), op_text(op), ": sequence number ", n, " is negative");
  int64_t next = count_[step];
  if (step <= commit) {
    if (!producer_) producer_ = &role;
    if (producer_ != &role) {
      user_error(op.loc(), op_text(op), ": ", role_ref(role), " uses ", name(),
                 " as its producer, which ", role_ref(*producer_),
                 " already is (one producer role per aref)");
    }
  } else {
    const auto w = static_cast<int64_t>(waited_.size());
    auto it = std::find(consumers_.begin(), consumers_.end(), &role);
    if (it == consumers_.end()) {
      if (!consumers_.empty()) {
        user_error(op.loc(), op_text(op), ": ", role_ref(role), " uses ", name(),
                   " as a consumer but has no aref_wait of it");
      }
      consumers_.push_back(&role);
      it = consumers_.begin();
    }
    const int64_t i = it - consumers_.begin();
    if (n % w != i) {
      user_error(op.loc(), op_text(op), ": sequence number ", n, " of ", name(), " is not ",
                 role_ref(role), "'s: its ", w, " consumer roles take turns, consumer role ", i,
                 " (from 0, in kernel order) taking ", i, ", ", i + w, ", ", i + 2 * w, ", ...");
    }
    next = i + w * (step == wait ? waited_ : released_)[static_cast<size_t>(i)];
  }
  // A commit / release must follow the acquire / wait of the same number.
  if (step == commit && n >= count_[acquire]) {
    user_error(op.loc(), op_text(op), ": commits sequence number ", n, " of ", name(),
               ", which was not acquired (acquired so far: ",
               count_[acquire] ? range(0, count_[acquire]) : std::string("none"), ")");
  }
  if (step == release && !had(wait, n)) {
    const int64_t waited = done(wait);
    user_error(op.loc(), op_text(op), ": releases sequence number ", n, " of ", name(),
               ", which was not waited for (waited so far: ",
               waited ? range(0, waited) : std::string("none"), ")");
  }
  if (n != next) {
    const auto w = static_cast<int64_t>(waited_.size());
    user_error(op.loc(), op_text(op), ": sequence number ", n, " is out of order: the next ",
               op.name(), " of ", name(), " is sequence number ", next,
               step <= commit || w == 1
                   ? " (each role numbers an aref's uses 0, 1, 2, ... in order)"
                   : " (its consumer roles take turns, each its numbers in order)");
  }
}

bool ArefModel::ready(ir::OpKind kind, int64_t n) const {
  if (kind == ir::OpKind::aref_acquire) return n < slots_ || had(release, n - slots_);
  if (kind == ir::OpKind::aref_wait) return count_[commit] > n;
  return true;
}

std::string ArefModel::slot_state(int64_t slot) const {
  std::string s = "slot " + std::to_string(slot);
  if (count_[acquire] <= slot) return s + " is free";
  int64_t m = slot + (count_[acquire] - 1 - slot) / slots_ * slots_;  // its latest number
  const char* state = had(release, m)  ? "released"
                      : had(wait, m)   ? "waited, not released"
                      : m < count_[commit] ? "committed, not waited for"
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
  if (step == wait || step == release) {
    const ir::Operation* role = ir::enclosing_role(op);
    auto it = std::find(consumers_.begin(), consumers_.end(), role);
    const size_t i = it == consumers_.end() ? 0 : static_cast<size_t>(it - consumers_.begin());
    ++(step == wait ? waited_ : released_)[i];
  }
}

void ArefModel::role_finished(const ir::Operation& role) const {
  if (producer_ != &role || count_[commit] == count_[acquire]) return;
  const ir::Operation& op = *last_op_[acquire];
  user_error(role.loc(), role_ref(role), " ends with sequence number(s) ",
             range(count_[commit], count_[acquire]), " of ", name(), " acquired (by ", op_text(op),
             " at ", op.loc().str(), ") but never committed");
}

void ArefModel::block_finished() const {
  const int64_t waited = done(wait), released = done(release);
  if (waited < count_[commit]) {
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
