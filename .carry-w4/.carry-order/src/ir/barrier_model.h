// The phase model of one mbarrier (HOPPER.md §5), shared by whatever reasons about barriers.
//
// A barrier counts down a pending-arrival count (reloaded to `arrivals` at each phase) and a
// transaction count (bytes expected by expect_tx, counted down by the bytes TMA completes on it).
// The current phase completes when both reach 0: the phase number goes up by one and the counts
// reload. `mbarrier.try_wait.parity p` succeeds once "the phase with parity p" completed, which in
// hardware means: the current (incomplete) phase's parity differs from p. So a fresh barrier
// (phase 0 in progress) passes a wait on parity 1 at once — its "previous phase" counts as
// completed — and blocks a wait on parity 0 until the first completion.
//
// Bytes may complete before they are expected (a TMA can land before the producer's expect_tx is
// seen); the transaction count may then go negative, but the phase cannot complete while arrivals
// are pending. What is an error (the caller reports it, naming its op): more arrivals than the
// phase has pending, and bytes completed beyond those expected once every arrival is in.
//
// Pure and self-contained: the interpreter runs it (src/interp/), and a static protocol checker
// may reuse it; it depends on nothing but the standard library.
#pragma once

#include <cstdint>
#include <string>

namespace tessel::ir {

class BarrierModel {
 public:
  enum class Status { ok, too_many_arrivals, too_many_bytes };

  explicit BarrierModel(int64_t arrivals) : arrivals_(arrivals), pending_(arrivals) {}

  // `count` arrivals; `expect_bytes` more transaction bytes expected (mbarrier.arrive.expect_tx
  // is arrive(1, B)). On an error nothing changes.
  Status arrive(int64_t count, int64_t expect_bytes = 0);
  // `bytes` transaction bytes completed (a TMA load's complete_tx). On an error nothing changes.
  Status complete_bytes(int64_t bytes);

  // mbarrier.try_wait.parity: whether the phase with this parity (0 or 1) has completed.
  bool phase_completed(int64_t parity) const { return (phase_ & 1) != (parity & 1); }

  int64_t phase() const { return phase_; }  // completed phases so far
  int64_t pending_arrivals() const { return pending_; }
  int64_t pending_bytes() const { return bytes_; }
  int64_t arrivals() const { return arrivals_; }
  // "phase 3 (parity 1): 1 of 2 arrivals pending, 49152 bytes pending", for messages.
  std::string describe() const;

 private:
  void complete_if_done();

  int64_t arrivals_;
  int64_t pending_;
  int64_t bytes_ = 0;
  int64_t phase_ = 0;
};

}  // namespace tessel::ir
