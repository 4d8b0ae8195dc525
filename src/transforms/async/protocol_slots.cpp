#include "transforms/async/protocol_slots.h"

#include <algorithm>

#include "ir/async.h"

namespace tessel::transforms::protocol {

std::string SlotRef::str() const {
  return "buffer " + std::to_string(buffer) + " of slot " + std::to_string(slot) + " of " +
         ir::value_ref(ring);
}

void Slots::add_ring(const ir::Value* ring, int64_t slots, int64_t buffers) {
  rings_[ring].assign(slots * buffers, SlotState{});
}

size_t Slots::view(const ir::Operation& op, const ir::Value* ring, int64_t slot, int64_t buffer,
                   int64_t buffers, bool held) {
  auto it = rings_.find(ring);
  if (it == rings_.end() || slot < 0 ||
      (slot + 1) * buffers > static_cast<int64_t>(it->second.size()))
    fail(op, "names slot " + std::to_string(slot) + " of " + ir::value_ref(ring));
  const SlotRef ref{ring, slot, buffer, buffers};
  SlotState& s = it->second[ref.at()];
  uses_.push_back(Use{ref});
  uses_.back().landed_at_view = s.landed;
  uses_.back().held = held;
  if (!held) s.views.push_back(uses_.size() - 1);
  return uses_.size() - 1;
}

// The views of `s` nobody read (the new write's own destination view excepted: the caller drops
// it first). A view taken after the load it shows landed (its consumer waited for it) and left
// unread counts as a finished read of that load: the consumer released it unread, which is no
// hazard; no read may follow through it. A view taken before the unread load landed settles
// nothing and stays, so a load nobody waited for still fails (at the end of the block: written
// but not read).
void Slots::settle_views(SlotState& s) {
  std::vector<size_t> kept;
  for (size_t u : s.views) {
    Use& use = uses_[u];
    if (s.reads_started < s.issued && use.landed_at_view > s.reads_started) {
      use.settled = true;
      ++s.reads_started;
      ++s.reads_done;
    } else {
      kept.push_back(u);
    }
  }
  s.views = std::move(kept);
}

void Slots::drop_view(SlotState& s, size_t use) {
  s.views.erase(std::remove(s.views.begin(), s.views.end(), use), s.views.end());
}

void Slots::write(const ir::Operation& op, size_t use, bool by_tma) {
  const SlotRef dst = uses_[use].ref;
  SlotState& s = state(dst);
  drop_view(s, use);
  settle_views(s);
  const int64_t j = s.issued + 1;
  if (s.reads_done < j - 1) {
    if (!by_tma) {
      fail(op, "stores into " + dst.str() + " (use " + std::to_string(j) + ") while use " +
                   std::to_string(s.reads_done + 1) +
                   " is still being read: the store did not wait for the release");
    }
    fail(op, "loads into " + dst.str() + " (use " + std::to_string(j) + ") while use " +
                 std::to_string(s.reads_done + 1) +
                 " is still being read (by a reader not done, or an async mma whose "
                 "wgmma group no mma_wait has retired): the slot was released before its "
                 "readers finished, or the load did not wait for the release");
  }
  if (by_tma && s.unfenced_read) {
    fail(op, "loads into " + dst.str() + " (use " + std::to_string(j) + ") by TMA while " +
                 "an ordinary read of its previous load (" + ir::op_where(*s.unfenced_read) +
                 ") has no fence_proxy_async after it in its role: the mbarrier orders the " +
                 "threads, not the proxies, so this load could land before that read is done; " +
                 "fence after the read, before the release");
  }
  ++s.issued;
  s.by_tma = by_tma;
  if (!by_tma) ++s.landed;  // the role's own stores, done before its arrival publishes them
}

void Slots::landed(const SlotRef& ref) {
  ++state(ref).landed;
}

void Slots::read(const ir::Operation& op, size_t use_index, bool async, std::vector<size_t>& open,
                 int64_t generic_role) {
  Use& use = uses_[use_index];
  const SlotRef& ref = use.ref;
  SlotState& s = state(ref);
  if (use.settled) {
    fail(op, "reads " + ref.str() + " through a view its role took and left unread until a " +
                 "newer TMA load into it was issued: the slot was released before this read");
  }
  drop_view(s, use_index);
  // An ordinary read of a TMA-written buffer: unfenced in its role until its next fence.
  auto mark_unfenced = [&] {
    if (generic_role >= 0 && s.by_tma) {
      s.unfenced_read = &op;
      s.unfenced_role = generic_role;
    }
  };
  auto in_flight = [&] {
    ++use.outstanding;
    open.push_back(use_index);
  };
  if (use.started) {
    if (async) in_flight();
    mark_unfenced();
    return;
  }
  use.started = true;
  auto slot = [&] { return ref.str(); };  // for messages only: built when one fails
  if (use.held) {
    // The load the role read last: reading resumes (its reads were done) or joins the reads
    // still in flight; either way the load's reads are done when these retire too.
    const int64_t i = s.reads_started;
    if (i < 1 || s.landed < i) {
      fail(op, "reads " + slot() + " through a held view, but its role read no load of it before");
    }
    if (s.issued > i) {
      fail(op, "reads " + slot() + " through a held view (use " + std::to_string(i) +
                   ") after a newer TMA load into it was issued: the slot was released");
    }
    if (s.reads_done == i) {
      --s.reads_done;
    } else if (async) {
      ++s.joined;
    } else {
      mark_unfenced();
      return;  // a synchronous read while earlier reads are in flight: they finish the use
    }
    if (async) {
      in_flight();
    } else {
      ++s.reads_done;
    }
    mark_unfenced();
    return;
  }
  const int64_t i = s.reads_started + 1;
  if (s.landed < i) {
    fail(op, "reads " + slot() + " (use " + std::to_string(i) + ") before the TMA load for it " +
                 "landed: the wait before it passed too early (a wrong parity or barrier?)");
  }
  if (s.issued > i) {
    fail(op, "reads " + slot() + " (use " + std::to_string(i) +
                 ") after a newer TMA load into it was issued");
  }
  ++s.reads_started;
  if (async) {
    in_flight();
  } else {
    ++s.reads_done;
  }
  mark_unfenced();
}

void Slots::retire(size_t use_index) {
  Use& use = uses_[use_index];
  if (--use.outstanding != 0) return;
  SlotState& s = state(use.ref);
  if (s.joined > 0) {
    --s.joined;
  } else {
    ++s.reads_done;
  }
}

void Slots::fence(int64_t role) {
  for (auto& [ring, slots] : rings_) {
    for (SlotState& slot : slots) {
      if (slot.unfenced_role != role) continue;
      slot.unfenced_read = nullptr;
      slot.unfenced_role = -1;
    }
  }
}

void Slots::settle_all() {
  for (auto& [ring, slots] : rings_)
    for (SlotState& s : slots) settle_views(s);
}

void Slots::check_all_read() const {
  for (const auto& [ring, slots] : rings_) {
    int64_t buffers = static_cast<int64_t>(ring->type().buffers().size());
    for (size_t s = 0; s < slots.size(); ++s) {
      if (slots[s].issued == slots[s].reads_started) continue;
      SlotRef ref{ring, static_cast<int64_t>(s) / buffers, static_cast<int64_t>(s) % buffers,
                  buffers};
      fail(*ring->def(), ref.str() + " was written " + std::to_string(slots[s].issued) +
                             " time(s) but read " + std::to_string(slots[s].reads_started) +
                             " time(s) by the end of the block: a load no role waits for "
                             "(a producer running more iterations than its consumer?), "
                             "which may still be in flight when the block exits");
    }
  }
}

}  // namespace tessel::transforms::protocol
