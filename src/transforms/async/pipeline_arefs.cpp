// PipelineArefs: ring depth (slots) of every aref from the shared-memory budget, and wgmma groups
// in flight in its consumer loop (the rules are in the header).
#include "transforms/async/pipeline_arefs.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/async.h"
#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"
#include "transforms/async/coarse_pipeline.h"
#include "transforms/async/stage_budget.h"
#include "transforms/report.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

// An aref and the consumer loop that waits on it.
struct Site {
  Operation* aref;
  Operation* loop;
  Operation* wait;
  Operation* release;
};

// Slots of a once-per-tile aref when the budget allows: the producer can load tile t + 1's
// operands while the consumer still reads tile t's.
constexpr int64_t kTileSlots = 2;

class Pipeliner {
 public:
  explicit Pipeliner(Operation* kernel) : kernel_(kernel), top_(kernel->region(0)) {}

  void run() {
    std::vector<Site> sites;
    std::vector<Ring> rings;
    std::vector<Operation*> per_tile;
    for (const auto& op : top_->ops()) {
      if (op->kind() != OpKind::aref) continue;
      if (once_per_tile(op.get())) {
        per_tile.push_back(op.get());
        continue;
      }
      std::optional<Site> site = find_site(op.get());
      if (!site) continue;
      sites.push_back(*site);
      rings.push_back(ring_of(*site));
    }
    if (sites.empty() && per_tile.empty()) return;
    StageBudget budget(
        kernel_,
        [](const Value* v) {
          const Operation* d = v->def();
          return d && (d->kind() == OpKind::aref_acquire || d->kind() == OpKind::aref_wait ||
                       d->kind() == OpKind::aref_slot);
        },
        ring_reserve_bytes(*kernel_));
    // A once-per-tile aref's first slot is held outside the rings; a second comes from what the
    // rings' first kMaxStagesReadByThreads stages leave (below).
    for (Operation* aref : per_tile) budget.hold(tile_slot_bytes(*aref));
    // A loop that reads one of its slots by threads is bound by that work, not by bytes in
    // flight: all its rings keep the shallower cap (W4A16's token ring beside its weight ring).
    for (Ring& r : rings)
      for (const Ring& other : rings)
        r.read_by_threads = r.read_by_threads || (other.loop == r.loop && other.read_by_threads);
    for (Ring& r : rings) r.read_pins();
    // The rings as deep as kMaxStagesReadByThreads first, then a once-per-tile aref's second
    // slot from what they leave, then deeper rings (up to kMaxStages) from what is left after
    // that: prefetching the next tile's operands comes before the fifth stage of a ring.
    budget.choose_stages(rings, kMaxStagesReadByThreads);
    int64_t left = budget.budget();
    for (const Ring& r : rings) left -= r.stages * r.stage_bytes;
    for (Operation* aref : per_tile) {
      const int64_t bytes = tile_slot_bytes(*aref);
      const int64_t slots = left >= bytes ? kTileSlots : 1;
      if (slots > 1) {
        left -= bytes;
        budget.hold(bytes);
      }
      aref->set_attr("slots", Attribute::integer(slots));
    }
    budget.choose_stages(rings);
    for (size_t i = 0; i < sites.size(); ++i) finish(sites, i, rings[i], budget);
    for (Operation* aref : per_tile) {
      const int64_t bytes = tile_slot_bytes(*aref);
      const int64_t slots = aref->int_attr("slots");
      if (report_enabled("pipeline")) {
        report("pipeline", "aref " + ir::value_ref(aref->result()) + " (once per tile, at " +
                               aref->loc().str() + "): " + std::to_string(bytes) +
                               " bytes per slot; slots " + std::to_string(slots) +
                               (slots < kTileSlots ? " (the mainloops' rings leave no room for "
                                                     "a second)"
                                                   : ""));
      }
    }
  }

  // An aref whose ops stand directly in their roles, not in a loop: one sequence number per
  // output tile (warp-specialize's epilogue operands).
  bool once_per_tile(Operation* aref) const {
    bool any = false, outside = true;
    ir::walk(kernel_, [&](Operation* op) {
      if ((op->kind() != OpKind::aref_acquire && op->kind() != OpKind::aref_wait) ||
          op->operand(0) != aref->result())
        return;
      any = true;
      const Operation* parent = op->parent_op();
      outside = outside && parent && parent->kind() == OpKind::warp_group;
    });
    return any && outside;
  }

  // One slot of a once-per-tile aref: its buffers, each at the 128 bytes a TMA destination needs.
  static int64_t tile_slot_bytes(const Operation& aref) {
    int64_t bytes = 0;
    for (const Type& b : aref.result()->type().buffers()) bytes += round_up(b.static_bytes(), 128);
    return bytes;
  }

 private:
  // The consumer loop of `aref`: the `for` whose body waits on it by the loop index and releases
  // the same number. Null when nobody waits (nothing to pipeline) or the loop was pipelined.
  std::optional<Site> find_site(Operation* aref) {
    Value* ring = aref->result();
    std::vector<Operation*> waits;
    ir::walk(kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::aref_wait && op->operand(0) == ring) waits.push_back(op);
    });
    if (waits.empty()) return std::nullopt;
    std::string what = "aref " + ir::value_ref(ring) + " at " + aref->loc().str();
    Operation* wait = waits.front();
    Operation* loop = wait->parent_op();
    if (waits.size() != 1 || !loop || loop->kind() != OpKind::for_ ||
        wait->operand(1) != loop->region(0)->argument(0)) {
      user_error(wait->loc(), "aref_wait: pipeline-arefs pipelines ", what,
                 " when one consumer loop waits on it once per iteration, by the loop index "
                 "(as warp-specialize makes it)");
    }
    Block* body = loop->region(0);
    bool pipelined = false;
    Operation* release = nullptr;
    for (const auto& op : body->ops()) {
      pipelined |= op->kind() == OpKind::mma_commit || op->kind() == OpKind::mma_wait;
      if (op->kind() == OpKind::aref_release && op->operand(0) == ring &&
          op->operand(1) == body->argument(0))
        release = op.get();
    }
    if (pipelined) return std::nullopt;
    if (!release) {
      user_error(loop->loc(), loop_str(*loop), ": pipeline-arefs needs the consumer loop of ", what,
                 " to release the number it waits for (aref_release ", ir::value_ref(ring), ", ",
                 ir::value_ref(body->argument(0)), ") in its body");
    }
    if (static_value(loop->operand(0)) != 0 || static_value(loop->operand(2)) != 1) {
      user_error(loop->loc(), loop_str(*loop), ": the consumer loop of ", what,
                 " numbers its slots by the loop index, so it must run from 0 with step 1");
    }
    return Site{aref, loop, wait, release};
  }

  // The ring's slot: the aref's buffers, named by the consumer's views, aligned for the copies
  // that fill them.
  Ring ring_of(const Site& s) {
    Ring r;
    r.loop = s.loop;
    r.trip = trip_count(*s.loop);
    r.wgmma = has_wgmma(*s.loop);
    std::vector<std::string> atoms(s.wait->num_results());
    ir::walk(kernel_, [&](Operation* op) {
      if (op->kind() != OpKind::aref_acquire || op->operand(0) != s.aref->result()) return;
      for (int i = 0; i < op->num_results(); ++i) {
        for (const auto& [user, index] : uses_in(op->result(i), op->parent_block()))
          if (user->kind() == OpKind::copy && index == 1) atoms[i] = atom_of(*user);
      }
    });
    for (int i = 0; i < s.wait->num_results(); ++i) {
      const Value* v = s.wait->result(i);
      r.add_tile(v, tensor_bytes(*s.wait, v), slot_alignment(v->type(), atoms[i]));
    }
    r.note_readers(*s.wait->parent_block());
    return r;
  }

  // Sets the slots of sites[i]'s aref and, for the first site of its consumer loop, pipelines the
  // loop's mmas for all the arefs the loop waits on (warp-specialize gives a loop several when
  // its tiles are released at different times).
  void finish(const std::vector<Site>& sites, size_t i, Ring& r, const StageBudget& budget) {
    const Site& s = sites[i];
    s.aref->set_attr("slots", Attribute::integer(r.stages));
    std::vector<Site> siblings;
    for (const Site& other : sites)
      if (other.loop == s.loop) siblings.push_back(other);
    auto done = in_flight_of_.find(s.loop);
    if (done != in_flight_of_.end()) {
      report_ring(s, r, budget, done->second);
      return;
    }
    s.loop->remove_attr("stages");
    s.loop->remove_attr("mma_in_flight");
    std::string in_flight = "not set (no wgmma)";
    if (r.wgmma) {
      std::vector<Operation*> mmas = loop_mmas(s);
      if (auto bad = read_before_retire(*s.loop, mmas)) {
        // The coarse-grained pipeline (Tawa Algorithm 1) is not implemented: the mmas stay
        // synchronous, which is correct, unless a person asked for groups in flight.
        std::string why = ir::value_ref(bad->first) + " is read by " + ir::op_where(*bad->second) +
                          " in the same iteration";
        if (r.pinned_in_flight) {
          user_error(s.loop->loc(), loop_str(*s.loop), ": mma_in_flight = ", *r.pinned_in_flight,
                     " is pinned but ", why,
                     ", so its wgmma cannot stay in flight (only the next mma, as its "
                     "accumulator, and the yield may read an asynchronous mma's result before "
                     "the mma_wait that retires its group)");
        }
        in_flight = coarse_pipeline_applies(*s.loop)
                        ? "by coarse-pipeline (" + why +
                              ": the loop is rotated so that it runs beside the next GEMM)"
                    : r.stages >= 2 && wait_at_use(siblings, mmas, r.trip)
                        ? "1 across iterations (" + why +
                              ": each mma read in its iteration is waited for right after it; "
                              "the last, read only by the next iteration, stays in flight)"
                    : wait_before_reads(siblings, mmas)
                        ? "0 across iterations (" + why +
                              ": every mma is read in its iteration; each group is waited for "
                              "just before its first reader, the later mmas already issued)"
                        : "not set (" + why + ": the mmas stay synchronous)";
      } else {
        StageBudget::choose_in_flight(r);
        if (siblings.size() > 1) r.in_flight = 0;  // one release per aref: left at the end
        std::string why_sync;
        if (coarse_pipeline_applies(*s.loop)) {
          // The operand form: the rotated loop computes A of j + 1 beside the wgmma of j.
          if (r.pinned_in_flight) {
            user_error(s.loop->loc(), loop_str(*s.loop), ": mma_in_flight = ", *r.pinned_in_flight,
                       " is pinned but coarse-pipeline rotates this loop (the A operand of the "
                       "next iteration computed beside the wgmma of this one); pin "
                       "coarse_pipeline = false on the block_grid to pipeline it by groups in "
                       "flight instead");
          }
          in_flight_of_[s.loop] =
              "by coarse-pipeline (A of the next iteration computed beside "
              "the wgmma of this one)";
          report_ring(s, r, budget, in_flight_of_[s.loop]);
          return;
        }
        const auto rs_it = std::find_if(mmas.begin(), mmas.end(), [&](const Operation* m) {
          return takes_a_computed_in(*m, s.loop->region(0));
        });
        if (rs_it != mmas.end()) {
          const Operation* rs = *rs_it;
          // wgmma's RS form reads A's registers until its group retires (PTX ISA, wgmma: the
          // registers of A must not be written before wgmma.wait_group): the next iteration
          // computes its A into the same registers, so the group must retire in this one.
          const std::string what = ir::op_where(*rs) + " takes A from registers " +
                                   ir::value_ref(rs->operand(0)) +
                                   " computed in the iteration, which the next iteration "
                                   "overwrites while a pending wgmma reads them";
          if (r.pinned_in_flight && *r.pinned_in_flight > 0) {
            user_error(s.loop->loc(), loop_str(*s.loop), ": mma_in_flight = ", *r.pinned_in_flight,
                       " is pinned but ", what);
          }
          r.in_flight = 0;
          why_sync = " (" + what + ")";
        }
        pipeline_mmas(s, mmas, r.in_flight, r.trip);
        in_flight =
            std::to_string(r.in_flight) + (r.pinned_in_flight ? " (pinned)" : "") + why_sync;
      }
    }
    in_flight_of_[s.loop] = in_flight;
    report_ring(s, r, budget, in_flight);
  }

  void report_ring(const Site& s, const Ring& r, const StageBudget& budget,
                   const std::string& in_flight) {
    if (report_enabled("pipeline")) {
      report("pipeline", "aref " + ir::value_ref(s.aref->result()) + " (" + loop_str(*s.loop) +
                             " at " + s.loop->loc().str() + "): " + std::to_string(r.stage_bytes) +
                             " bytes per slot (" + StageBudget::tiles_str(r) + "); budget " +
                             budget.budget_str() + "; trip count " +
                             (r.trip ? std::to_string(*r.trip) : std::string("dynamic")) +
                             "; slots " + std::to_string(r.stages) +
                             (r.pinned_stages ? " (pinned)" : "") + ", mma_in_flight " + in_flight +
                             (r.read_by_threads && !r.pinned_stages ? "; " + cap_str() : ""));
    }
  }

  // The wgmma mmas of the consumer loop's body; UserError for one nested deeper.
  static std::vector<Operation*> loop_mmas(const Site& s) {
    std::vector<Operation*> mmas;
    for (const auto& op : s.loop->region(0)->ops())
      if (is_wgmma(*op)) mmas.push_back(op.get());
    ir::walk(s.loop, [&](Operation* op) {
      if (is_wgmma(*op) && op->parent_op() != s.loop) {
        user_error(op->loc(), "mma ", ir::value_ref(op->result()),
                   ": pipeline-arefs makes the wgmma mmas of ", loop_str(*s.loop),
                   " asynchronous, but this one is nested in ", ir::op_where(*op->parent_op()),
                   "; only mmas directly in the loop body can be committed as a group");
      }
    });
    return mmas;
  }

  // The fine-grained pipeline of the header: async mmas, commit, wait P, release n - P.
  void pipeline_mmas(const Site& s, const std::vector<Operation*>& mmas, int64_t p,
                     std::optional<int64_t> trip) {
    Block* body = s.loop->region(0);
    Value* iv = body->argument(0);
    Value* ring = s.aref->result();
    for (Operation* mma : mmas) mma->set_attr("async", Attribute::unit());

    // With P > 0 the release moves; it goes first so that it cannot be the insertion point.
    if (p > 0) body->remove(s.release);
    ir::OpBuilder b(body);
    size_t next = ir::position_in_block(*mmas.back()) + 1;
    if (next < body->ops().size()) b.set_insertion_point_before(body->ops()[next].get());
    b.create(OpKind::mma_commit, {}, {}, mmas.back()->loc());
    Operation* wait = b.create(OpKind::mma_wait, {}, {}, mmas.back()->loc());
    wait->set_attr("pending", Attribute::integer(p));
    if (p == 0) return;  // each group retires in its own iteration: the release stays last

    // In iteration k, release k - P once k >= P.
    Value* cp = index_const(p);
    guarded_release(b, iv, cp, "ge", "has_prev", iv, cp, "prev", ring, s.loop->loc());

    // After the loop: drain, then release the last P numbers (those the trip count reaches).
    ir::OpBuilder after(s.loop->parent_block());
    size_t pos = ir::position_in_block(*s.loop) + 1;
    if (pos < s.loop->parent_block()->ops().size())
      after.set_insertion_point_before(s.loop->parent_block()->ops()[pos].get());
    Operation* drain = after.create(OpKind::mma_wait, {}, {}, s.loop->loc());
    drain->set_attr("pending", Attribute::integer(0));
    Value* n = s.loop->operand(1);
    for (int64_t i = p; i >= 1; --i) {
      if (trip && *trip < i) continue;  // never acquired
      if (trip) {
        Operation* last = after.create(OpKind::sub, {n, index_const(i)},
                                       {Type::scalar(ScalarKind::index)}, s.loop->loc());
        last->result()->set_name("last");
        after.create(OpKind::aref_release, {ring, last->result()}, {}, s.loop->loc());
      } else {
        guarded_release(after, n, index_const(i - 1), "gt", "any", n, index_const(i), "last", ring,
                        s.loop->loc());
      }
    }
  }

  // A loop whose every mma is read in its own iteration by something other than an mma (W4A16
  // with each scale group's product scaled after its wgmma: `%p0 = mma ..., %fresh0`, `%p1 = mma
  // ..., %fresh1`, then `fma %p0, %s0, %c`, `fma %p1, %s1, ...`). Kept synchronous, each wgmma
  // is waited for right after it, so the work between two mmas waits for the first one's tensor
  // work. Here every mma becomes async and its own group (`mma_commit` after it), and right
  // before the first op that reads mma i (at the body's top level) `mma_wait {pending = n}`
  // retires it with the n groups committed after it still running. Every group retires before
  // the first reader of the last mma, so nothing stays in flight across the back edge and the
  // releases stay where warp-specialize put them, which must follow the wait that retires the
  // last mma reading their slot (else false: synchronous). Also false when an mma's result feeds
  // another mma or the yield, or an mma has no reader here (the other modes' cases).
  bool wait_before_reads(const std::vector<Site>& sites, const std::vector<Operation*>& mmas) {
    Block* body = sites.front().loop->region(0);
    auto top_of = [&](Operation* op) {
      while (op->parent_block() != body) op = op->parent_op();
      return op;
    };
    // The top-level position of the first reader of each mma.
    std::vector<size_t> first_read(mmas.size(), SIZE_MAX);
    for (size_t i = 0; i < mmas.size(); ++i) {
      for (const auto& [user, index] : uses_in(mmas[i]->result(), body)) {
        if (user == body->terminator()) return false;
        if (std::find(mmas.begin(), mmas.end(), user) != mmas.end()) return false;
        first_read[i] = std::min(first_read[i], ir::position_in_block(*top_of(user)));
      }
      if (first_read[i] == SIZE_MAX || first_read[i] <= ir::position_in_block(*mmas[i]))
        return false;
    }
    // mmas are issued in body order (a group retires only after every earlier one).
    for (size_t i = 1; i < mmas.size(); ++i)
      if (ir::position_in_block(*mmas[i]) < ir::position_in_block(*mmas[i - 1])) return false;
    // The waits, at each first reader that reads an mma still pending: it retires that mma and
    // every earlier one, with the groups committed after it (before the reader) still pending.
    struct Wait {
      size_t before;   // top-level position of the reader
      int64_t pending;
      size_t retires;  // mmas 0 .. retires - 1 are retired after it
    };
    std::vector<size_t> order(mmas.size());
    for (size_t i = 0; i < mmas.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return first_read[a] < first_read[b]; });
    std::vector<Wait> waits;
    size_t retired = 0;
    for (size_t i : order) {
      if (i < retired) continue;
      int64_t issued = 0;  // groups committed before the reader
      for (Operation* m : mmas) issued += ir::position_in_block(*m) < first_read[i];
      waits.push_back({first_read[i], issued - static_cast<int64_t>(i) - 1, i + 1});
      retired = i + 1;
    }
    // Each aref's release after the wait that retires the last mma reading its slot.
    for (const Site& site : sites) {
      if (!site.release || site.release->parent_block() != body) return false;
      const size_t release_at = ir::position_in_block(*site.release);
      for (const Value* buf : view_closure(site.wait, body)) {
        for (const auto& [user, index] : uses_in(buf, body)) {
          auto it = std::find(mmas.begin(), mmas.end(), user);
          if (it == mmas.end()) continue;
          const size_t m = static_cast<size_t>(it - mmas.begin());
          const auto w = std::find_if(waits.begin(), waits.end(),
                                      [&](const Wait& x) { return x.retires > m; });
          if (w == waits.end() || w->before > release_at) return false;
        }
      }
    }
    for (Operation* mma : mmas) mma->set_attr("async", Attribute::unit());
    // (position, -1 for a commit, else a wait's pending count), inserted back to front so that
    // positions stay valid; at one position the wait goes in first, so that the commit (then
    // inserted before it) precedes it.
    std::vector<std::pair<size_t, int64_t>> at;
    for (Operation* m : mmas) at.push_back({ir::position_in_block(*m) + 1, -1});
    for (const Wait& w : waits) at.push_back({w.before, w.pending});
    std::stable_sort(at.begin(), at.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : (a.second >= 0) > (b.second >= 0);
    });
    for (const auto& [pos, what] : at) {
      ir::OpBuilder b(body);
      b.set_insertion_point_before(body->ops()[pos].get());
      const auto loc = body->ops()[pos]->loc();
      if (what < 0) {
        b.create(OpKind::mma_commit, {}, {}, loc);
      } else {
        b.create(OpKind::mma_wait, {}, {}, loc)->set_attr("pending", Attribute::integer(what));
      }
    }
    return true;
  }

  // The loop of attention: mma results read in their own iteration (S = Q Kᵀ by the softmax),
  // and a last mma whose result only the yield reads (O += P V). Every mma becomes async; after
  // each one read in the iteration, `mma_commit; mma_wait {pending = 0}` (which also retires the
  // previous iteration's last group); the last group is committed and stays in flight across the
  // back edge, so it runs while the next iteration waits for its K tile and issues its first mma.
  // The slot of sequence number k is released in iteration k + 1 after that wait (its V is read
  // by the group that wait retires), and after the loop once the drain retires it. Refused (the
  // mmas stay synchronous, false) when the carried value the last group writes is read in the
  // body before the first wait, or when no mma follows the last one read in its iteration; and
  // not asked with one slot (finish): slot k is released after the wait for k + 1, which a ring of
  // one slot never fills — check-protocol finds that deadlock.
  bool wait_at_use(const std::vector<Site>& sites, const std::vector<Operation*>& mmas,
                   std::optional<int64_t> trip) {
    const Site& s = sites.front();
    Block* body = s.loop->region(0);
    auto is_mma = [&](Operation* op) {
      return std::find(mmas.begin(), mmas.end(), op) != mmas.end();
    };
    auto read_here = [&](Operation* mma) {
      for (const auto& [user, index] : uses_in(mma->result(), body))
        if (!(index == 2 && is_mma(user)) && user != body->terminator()) return true;
      return false;
    };
    std::optional<size_t> first_read, last_read;
    for (size_t i = 0; i < mmas.size(); ++i) {
      if (!read_here(mmas[i])) continue;
      if (!first_read) first_read = i;
      last_read = i;
    }
    if (!last_read || *last_read + 1 == mmas.size()) return false;
    // The first wait goes right after the first mma read in the iteration.
    const size_t first_wait_at = ir::position_in_block(*mmas[*first_read]);
    // The carried values the trailing group writes: read only after the first wait.
    const Operation* yield = body->terminator();
    for (size_t i = *last_read + 1; i < mmas.size(); ++i) {
      for (int y = 0; yield && y < yield->num_operands(); ++y) {
        if (yield->operand(y) != mmas[i]->result()) continue;
        for (const auto& [user, index] : uses_in(body->argument(y + 1), body)) {
          const Operation* top = user;
          while (top->parent_block() != body) top = top->parent_op();
          if (!(index == 2 && is_mma(user)) && ir::position_in_block(*top) <= first_wait_at)
            return false;
        }
      }
    }
    // Which mma's wait retires each aref's last reader in the iteration: the aref is released
    // right after it (K once S = Q Kᵀ retired); an aref that the trailing group reads, or an op
    // other than an mma, is released in the next iteration (V, read by P V in flight).
    std::vector<std::optional<size_t>> released_after(sites.size());
    for (size_t a = 0; a < sites.size(); ++a) {
      std::optional<size_t> latest;
      bool early = true;
      for (const Value* buf : view_closure(sites[a].wait, body)) {
        for (const auto& [user, index] : uses_in(buf, body)) {
          if (user->num_results() == 1 && user->result()->type().is_tensor() &&
              user->result()->type().space() == ir::MemorySpace::shared)
            continue;  // a view, followed by view_closure
          auto it = std::find(mmas.begin(), mmas.end(), user);
          if (it == mmas.end() || static_cast<size_t>(it - mmas.begin()) > *last_read ||
              !read_here(*it)) {
            early = false;
            continue;
          }
          const size_t at = static_cast<size_t>(it - mmas.begin());
          latest = latest ? std::max(*latest, at) : at;
        }
      }
      if (early && latest) released_after[a] = latest;
    }
    for (Operation* mma : mmas) mma->set_attr("async", Attribute::unit());
    for (const Site& site : sites) body->remove(site.release);
    Operation* first_wait = nullptr;
    for (size_t i = 0; i <= *last_read; ++i) {
      if (!read_here(mmas[i])) continue;
      ir::OpBuilder b(body);
      b.set_insertion_point_before(body->ops()[ir::position_in_block(*mmas[i]) + 1].get());
      b.create(OpKind::mma_commit, {}, {}, mmas[i]->loc());
      Operation* wait = b.create(OpKind::mma_wait, {}, {}, mmas[i]->loc());
      wait->set_attr("pending", Attribute::integer(0));
      for (size_t a = 0; a < sites.size(); ++a) {
        if (released_after[a] == i)
          b.create(OpKind::aref_release, {sites[a].aref->result(), body->argument(0)}, {},
                   s.loop->loc());
      }
      if (!first_wait) {
        first_wait = wait;
        // In iteration k, release k - 1 (its last group just retired) once k >= 1.
        for (size_t a = 0; a < sites.size(); ++a) {
          if (released_after[a]) continue;
          Value* c1 = index_const(1);
          guarded_release(b, body->argument(0), c1, "ge", "has_prev", body->argument(0), c1, "prev",
                          sites[a].aref->result(), s.loop->loc());
        }
      }
    }
    ir::OpBuilder b(body);
    b.set_insertion_point_before(body->ops()[ir::position_in_block(*mmas.back()) + 1].get());
    b.create(OpKind::mma_commit, {}, {}, mmas.back()->loc());
    // After the loop: drain, then release the last number.
    ir::OpBuilder after(s.loop->parent_block());
    size_t pos = ir::position_in_block(*s.loop) + 1;
    if (pos < s.loop->parent_block()->ops().size())
      after.set_insertion_point_before(s.loop->parent_block()->ops()[pos].get());
    Operation* drain = after.create(OpKind::mma_wait, {}, {}, s.loop->loc());
    drain->set_attr("pending", Attribute::integer(0));
    Value* n = s.loop->operand(1);
    for (size_t a = 0; a < sites.size(); ++a) {
      if (released_after[a]) continue;
      Value* ring = sites[a].aref->result();
      if (trip) {
        if (*trip >= 1) {
          Operation* last = after.create(OpKind::sub, {n, index_const(1)},
                                         {Type::scalar(ScalarKind::index)}, s.loop->loc());
          last->result()->set_name("last");
          after.create(OpKind::aref_release, {ring, last->result()}, {}, s.loop->loc());
        }
      } else {
        guarded_release(after, n, index_const(0), "gt", "any", n, index_const(1), "last", ring,
                        s.loop->loc());
      }
    }
    return true;
  }

  // The buffers an aref_wait returns and every shared view of them in `body`.
  static std::vector<const Value*> view_closure(const Operation* wait, const Block* body) {
    std::vector<const Value*> out;
    for (const auto& r : wait->results()) out.push_back(r.get());
    for (size_t i = 0; i < out.size(); ++i) {
      for (const auto& [user, index] : uses_in(out[i], body)) {
        if (user->num_results() == 1 && user->result()->type().is_tensor() &&
            user->result()->type().space() == ir::MemorySpace::shared)
          out.push_back(user->result());
      }
    }
    return out;
  }

  // %cond = cmp %a, %b {pred}; if %cond { %num = sub %x, %y; aref_release %ring, %num }
  static void guarded_release(ir::OpBuilder& b, Value* a, Value* c, const char* pred,
                              const char* cond_name, Value* x, Value* y, const char* num_name,
                              Value* ring, const SourceLocation& loc) {
    Value* cond = b.compare(pred, a, c, cond_name, loc);
    Operation* guard = b.create(OpKind::if_, {cond}, {}, loc);
    ir::OpBuilder then(guard->add_region());
    guard->add_region();
    Operation* num = then.create(OpKind::sub, {x, y}, {Type::scalar(ScalarKind::index)}, loc);
    num->result()->set_name(num_name);
    then.create(OpKind::aref_release, {ring, num->result()}, {}, loc);
  }

  // An index constant at the top level (an existing one, else a new one before the roles).
  Value* index_const(int64_t value) {
    Operation* first_role = nullptr;
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::warp_group) {
        first_role = op.get();
        break;
      }
      const Attribute* a = op->attr("value");
      if (op->kind() == OpKind::constant && a && a->kind == Attribute::Kind::integer &&
          a->i == value && op->result()->type() == Type::scalar(ScalarKind::index))
        return op->result();
    }
    ir::OpBuilder b(top_);
    if (first_role) b.set_insertion_point_before(first_role);
    Operation* c = b.create(OpKind::constant, {}, {Type::scalar(ScalarKind::index)});
    c->set_attr("value", Attribute::integer(value));
    c->result()->set_name("c" + std::to_string(value));
    return c->result();
  }

  Operation* kernel_;
  Block* top_;
  std::map<const Operation*, std::string> in_flight_of_;  // consumer loops already pipelined
};

}  // namespace

void pipeline_arefs(ir::Module& module) {
  for (const auto& kernel : module.kernels) Pipeliner(kernel.get()).run();
}

}  // namespace tessel::transforms
