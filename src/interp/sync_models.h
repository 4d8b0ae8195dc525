// What the interpreter knows about a block's arefs and mbarrier arrays: their protocol state, the
// rules of their ops, and the messages that name a broken rule (the data lives in the interpreter).
//
// An aref of D slots is, per slot, a state machine over the sequence numbers n with n % D == slot:
//
//   free --acquire(n)--> acquired(n) --commit(n)--> committed(n) --wait(n)--> waited(n)
//        --release(n)--> released(n) --acquire(n + D)--> acquired(n + D) ...
//
// Because every role numbers its ops in order (checked), the machine is four counters — how many
// sequence numbers were acquired, committed, waited and released — and slot n % D's state follows
// from where n stands among them. acquire(n) may go once n < D or n - D was released; wait(n)
// once n was committed. The producer role takes 0, 1, 2, ...; W consumer roles (W > 1 after
// split-roles) take turns, the i-th of them in kernel order waiting for and releasing
// i, i + W, i + 2W, ... — so the wait and release counters are kept per consumer role.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/barrier_model.h"
#include "ir/ir.h"

namespace tessel::interp {

class ArefModel {
 public:
  // The consumer roles are found in `def`'s kernel: the roles with an aref_wait of it.
  ArefModel(const ir::Operation& def, int64_t slots);

  int64_t slots() const { return slots_; }
  // Before the op blocks: its sequence number is the role's next for that op, the role is the
  // aref's (one producer role acquires and commits; the consumer roles wait and release, each
  // the numbers of its turn), and a
  // commit / release names a number that was acquired / waited. Throws a UserError naming `op`.
  void check(const ir::Operation& op, const ir::Operation& role, int64_t n);
  // Whether aref_acquire / aref_wait of n may go now, and what it waits for when it may not.
  bool ready(ir::OpKind kind, int64_t n) const;
  std::string waits_for(ir::OpKind kind, int64_t n) const;
  // The op happened (after check and, for acquire and wait, once ready).
  void apply(const ir::Operation& op);
  // A role ended: throws if it acquired a sequence number it did not commit.
  void role_finished(const ir::Operation& role) const;
  // The block's roles all ended: throws if a committed number was never waited for or a waited
  // one never released (a producer that ran ahead of its consumer, a release left out).
  void block_finished() const;

 private:
  enum Step { acquire, commit, wait, release, steps };
  static Step step_of(ir::OpKind kind);
  std::string slot_state(int64_t slot) const;  // "slot 1 holds 5, committed"
  std::string name() const { return ir::value_ref(def_->result()); }
  // Whether sequence number n had `step` (its role's count for the step passed it), and the
  // first number that did not.
  bool had(Step step, int64_t n) const;
  int64_t done(Step step) const;

  const ir::Operation* def_;
  int64_t slots_;
  int64_t count_[steps] = {0, 0, 0, 0};                // numbers done per step
  const ir::Operation* last_op_[steps] = {};           // for messages
  // The producer roles and the consumer roles, in kernel order: with R roles on a side, role i
  // takes the numbers i, i + R, i + 2R, ... (R = 1 but after split-roles).
  std::vector<const ir::Operation*> roles_[2];
  std::vector<int64_t> lane_count_[steps];  // per step, the numbers each role of its side did
};

// The barriers of one mbarrier_init: range checks and the errors of ir::BarrierModel, each named
// after the op and the barrier.
class BarrierArray {
 public:
  BarrierArray(const ir::Operation& def, int64_t count, int64_t arrivals);

  // Throws unless 0 <= i < count (and, with a parity, parity is 0 or 1).
  void check(const ir::Operation& op, int64_t i, int64_t parity = 0) const;
  bool phase_completed(int64_t i, int64_t parity) const { return bars_[i].phase_completed(parity); }
  std::string waits_for(int64_t i, int64_t parity) const;
  void arrive(const ir::Operation& op, int64_t i, int64_t count, int64_t expect_bytes);
  void complete_bytes(const ir::Operation& op, int64_t i, int64_t bytes);

 private:
  std::string name(int64_t i) const;  // "%full[2]"

  const ir::Operation* def_;
  std::vector<ir::BarrierModel> bars_;
};

}  // namespace tessel::interp
