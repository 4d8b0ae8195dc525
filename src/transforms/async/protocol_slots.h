// The ring slots' bookkeeping of one check-protocol run (protocol_run.h): for each buffer of each
// slot of every aref, how many writes (TMA loads, or a role's register stores: split-roles'
// hand-over) were issued and landed and how many reads started and finished, the views aref_slot
// took, and the proxy rule (a TMA load may not follow an ordinary read of the slot's previous
// load unless the reading role fenced). The run (protocol_run.cpp) owns the roles, the barriers
// and the loads in flight, and calls these as its ops execute; what breaks a rule throws
// Slots::Failure, which the run reports with its context (the sizes, the schedule, where each
// role is). Everything here is a value: the search copies runs by the thousand.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel::transforms::protocol {

// One buffer of one slot of a ring: its state is the ring's [slot * buffers + buffer].
struct SlotRef {
  const ir::Value* ring = nullptr;
  int64_t slot = 0;
  int64_t buffer = 0;
  int64_t buffers = 1;
  int64_t at() const { return slot * buffers + buffer; }
  std::string str() const;
};

class Slots {
 public:
  struct Failure {
    const ir::Operation* op;
    std::string what;
  };

  // An aref: `slots` slots of `buffers` buffers each, none written yet.
  void add_ring(const ir::Value* ring, int64_t slots, int64_t buffers);
  // aref_slot: a view of buffer `buffer` of slot `slot`; returns its use index (what the reads
  // and writes through that view name). `held` (aref_slot {held}): a second view of the load its
  // role read last, whose reads continue that use.
  size_t view(const ir::Operation& op, const ir::Value* ring, int64_t slot, int64_t buffer,
              int64_t buffers, bool held);
  const SlotRef& ref(size_t use) const { return uses_[use].ref; }

  // A write into the buffer that `use` views: a TMA load (`by_tma`, landing later: landed()) or
  // a role's register store (landed at once). It must follow the reads of the buffer's previous
  // write, and a TMA load any ordinary read of it by a role that has not fenced since.
  void write(const ir::Operation& op, size_t use, bool by_tma);
  void landed(const SlotRef& ref);

  // A read through `use`: a wgmma's (`async`: finished when its group is retired, retire()) or
  // an ordinary one, which finishes at once. An async read's use index goes to `open` (the
  // role's reads in the wgmma group being built). `generic_role` (>= 0): an ordinary read of
  // the threads of that role (an index of the run's roles), which leaves a TMA-written buffer
  // unfenced until the role's next fence().
  void read(const ir::Operation& op, size_t use, bool async, std::vector<size_t>& open,
            int64_t generic_role = -1);
  void retire(size_t use);
  // fence_proxy_async in role `role`: its ordinary reads so far come before any later TMA write.
  void fence(int64_t role);

  // The block's end: views left unread settle (settle_views), and every write must have been
  // read.
  void settle_all();
  void check_all_read() const;

 private:
  struct SlotState {
    int64_t issued = 0, landed = 0, reads_started = 0, reads_done = 0;
    // Views of this buffer (uses_ indices) that nothing has read or written into yet. A consumer
    // may take a view of a landed load and release the slot without reading it (a varlen
    // attention tile past the last sequence: Q loaded, no key tile to multiply it with); such a
    // view is settled as a finished read when the next write into the buffer is issued, or at
    // the block's end.
    std::vector<size_t> views;
    // Uses of the load being read that joined it through a `held` view while an earlier use
    // still had reads in flight: the load's reads are done when the last of them retires.
    int64_t joined = 0;
    // Whether the load being read was a TMA load (the async proxy wrote it), and an ordinary
    // (generic-proxy) read of it that its role has not yet followed by a fence_proxy_async
    // (`unfenced_role` made it): the next TMA load into the slot may not be issued before that
    // fence, or it could land before the read is done (HOPPER.md).
    bool by_tma = false;
    const ir::Operation* unfenced_read = nullptr;
    int64_t unfenced_role = -1;
  };
  // The reads through one aref_slot view of one buffer: one use of the buffer, done when no read
  // of it is in flight any more.
  struct Use {
    SlotRef ref;
    bool started = false;
    int outstanding = 0;
    int64_t landed_at_view = 0;  // writes of the buffer landed when the view was taken
    bool settled = false;        // left unread, settled by settle_views: no read may follow
    bool held = false;           // aref_slot {held}: continues the use of the role's last read
  };

  SlotState& state(const SlotRef& ref) { return rings_.at(ref.ring)[ref.at()]; }
  void settle_views(SlotState& s);
  static void drop_view(SlotState& s, size_t use);
  [[noreturn]] static void fail(const ir::Operation& op, std::string what) {
    throw Failure{&op, std::move(what)};
  }

  std::map<const ir::Value*, std::vector<SlotState>> rings_;
  std::vector<Use> uses_;
};

}  // namespace tessel::transforms::protocol
