// The role scheduler: a block's warp_group regions run as threads that take turns, one at a time,
// switching only at synchronization points, in the order a Schedule picks.
//
// Each role is a real std::thread, but only the holder of the baton runs: the scheduler (on the
// calling thread) hands the baton to one role, which runs until its next synchronization point —
// it calls sync_point() before every aref op, mbarrier op, mma_commit / mma_wait and copy_async —
// and hands it back. So a run is sequential and deterministic given the scheduler's choices, and
// a role's state needs no locks. A role at a sync point states when it may go on (`ready`) and,
// for the deadlock message, what it waits for; the scheduler only resumes a role whose op is ready.
//
// Besides roles, the scheduler owns the asynchronous copies in flight (copy_async, TMA): each is
// an action (write the data, complete its bytes) that the schedule lands at a point of its
// choosing between role steps. When no role is ready and no copy is in flight while some role
// has not finished, the block is deadlocked: a UserError lists every blocked role and its op. A
// UserError inside a role stops the other roles (each unwinds from its sync point) and is
// rethrown by run().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "interp/interpreter.h"
#include "ir/ir.h"

namespace tessel::interp {

class RoleScheduler {
 public:
  // The random schedule's generator lives as long as the scheduler (one interpret() call), so
  // the blocks of a grid see different interleavings.
  explicit RoleScheduler(const Schedule& schedule);
  RoleScheduler(const RoleScheduler&) = delete;
  RoleScheduler& operator=(const RoleScheduler&) = delete;

  struct Role {
    const ir::Operation* op = nullptr;  // the warp_group
    std::function<void()> body;         // runs the region, calling sync_point before sync ops
  };

  // Runs the roles to completion, interleaved, then lands every copy still in flight. `where`
  // names the block for messages ("block [0, 1]"). Rethrows a role's UserError; throws one on
  // deadlock.
  void run(std::vector<Role> roles, const std::string& where);

  // From the running role: a synchronization point before `op`. Returns once the scheduler has
  // picked this role again with `ready()` true (no `ready`: the op never blocks).
  void sync_point(const ir::Operation& op, std::function<bool()> ready = {},
                  std::function<std::string()> waits_for = {});

  // From the running role: an asynchronous copy in flight, landed (by calling `land`, on the
  // scheduler's thread while every role waits) when the schedule says.
  void add_transfer(std::function<void()> land);

 private:
  struct RoleThread {
    const ir::Operation* op = nullptr;
    std::function<void()> body;
    std::thread thread;
    bool finished = false;
    std::exception_ptr error;
    const ir::Operation* at = nullptr;  // the sync op it stands before (null before it starts)
    std::function<bool()> ready;
    std::function<std::string()> waits_for;
  };
  // What the schedule may pick next: role i, or (role index -1) the in-flight copy `transfer`.
  struct Choice {
    int role = -1;
    size_t transfer = 0;
  };

  static constexpr int kScheduler = -1;
  void role_main(int index);
  void pass_baton(int to, int me);  // gives the baton to `to` and waits until `me` gets it back
  Choice pick(const std::vector<int>& ready_roles);
  std::string deadlock_message(const std::string& where) const;
  void stop_roles();  // unwinds every unfinished role and joins every thread

  Schedule schedule_;
  std::mt19937_64 rng_;
  std::vector<RoleThread> roles_;
  std::vector<std::function<void()>> transfers_;  // in flight, oldest first
  int current_ = kScheduler;                      // who holds the baton
  int last_ = -1;                                 // round robin: the actor that went last
  bool abort_ = false;
  std::mutex mutex_;
  std::condition_variable turn_;
};

}  // namespace tessel::interp
