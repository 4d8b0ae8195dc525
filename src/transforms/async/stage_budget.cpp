// StageBudget: the shared-memory budget rules of the pipelining passes (the rules are stated in
// pipeline_loops.h; this file is their one implementation).
#include "transforms/async/stage_budget.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <map>
#include <set>

#include "ir/async.h"
#include "ir/int_arith.h"
#include "layout/parse.h"
#include "layout/tv_layout.h"
#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

std::optional<int64_t> static_value_at(const Value* v, int depth) {
  const Operation* def = v->def();
  if (!def || depth > 16 || !v->type().is_scalar() || !ir::is_integer(v->type().element()))
    return std::nullopt;
  if (def->kind() == OpKind::constant) {
    const Attribute* a = def->attr("value");
    if (a && a->kind == Attribute::Kind::integer) return a->i;
    return std::nullopt;
  }
  if (ir::op_info(def->kind()).arity != 2 || def->num_operands() != 2 || def->kind() == OpKind::cmp)
    return std::nullopt;
  auto a = static_value_at(def->operand(0), depth + 1);
  auto b = a ? static_value_at(def->operand(1), depth + 1) : std::nullopt;
  if (!b) return std::nullopt;
  return ir::eval_integer(def->kind(), v->type().element(), *a, *b);
}

// Whether a rank-1 -> rank-2 broadcast is register-local: every thread holds, among its own
// source values, the element each of its result values repeats. The emitter then copies
// registers (emit_cross_thread.cpp, local_source) and takes no scratch; a GEMM's bias row laid out
// like the accumulator's columns is one.
bool register_local(const Operation& op) {
  const Type& src = op.operand(0)->type();
  const Type& dst = op.result()->type();
  const Attribute* dims = op.attr("dims");
  if (!src.has_layout() || !dst.has_layout() || src.rank() != 1 || dst.rank() != 2 ||
      !ir::is_static(src.shape()) || !ir::is_static(dst.shape()) || !dims ||
      dims->kind != Attribute::Kind::int_list || dims->list.size() != 1)
    return false;
  const int64_t rows = dst.static_shape()[0], cols = dst.static_shape()[1];
  const bool keep_cols = dims->list[0] == 0;
  if (src.static_shape()[0] != (keep_cols ? cols : rows)) return false;
  layout::TVLayout s(layout::parse_layout(src.layout()), layout::IntTuple(src.static_shape()[0]));
  layout::TVLayout d(layout::parse_layout(dst.layout()), layout::IntTuple::tuple({rows, cols}));
  if (s.num_threads() != d.num_threads()) return false;
  for (int64_t t = 0; t < d.num_threads(); ++t) {
    std::set<int64_t> held;
    for (int64_t v = 0; v < s.num_values(); ++v) held.insert(s.index(t, v));
    for (int64_t v = 0; v < d.num_values(); ++v) {
      const int64_t i = d.index(t, v);  // colexicographic: row i % rows, column i / rows
      if (!held.count(keep_cols ? i / rows : i % rows)) return false;
    }
  }
  return true;
}

// Whether a reduce of a 2-D register tensor over one dimension combines only within warps: every
// kept row (or column) is held by the lanes of one warp, a power of two of them — the emitter
// then reduces by butterfly shuffles alone (emit_cross_thread.cpp) and takes no scratch.
// Attention's row max and row sum over a wgmma accumulator are such reduces (4 lanes a row).
bool reduce_within_warps(const Operation& op) {
  const Type& src = op.operand(0)->type();
  const Attribute* dims = op.attr("dims");
  if (!src.is_tensor() || src.space() != ir::MemorySpace::reg || !src.has_layout() ||
      src.rank() != 2 || !ir::is_static(src.shape()) || !dims ||
      dims->kind != Attribute::Kind::int_list || dims->list.size() != 1)
    return false;
  const int64_t rows = src.static_shape()[0], cols = src.static_shape()[1];
  const bool keep_rows = dims->list[0] == 1;
  layout::TVLayout s(layout::parse_layout(src.layout()), layout::IntTuple::tuple({rows, cols}));
  std::map<int64_t, std::set<int64_t>> lanes_of;  // kept coordinate -> threads holding it
  for (int64_t t = 0; t < s.num_threads(); ++t) {
    for (int64_t v = 0; v < s.num_values(); ++v) {
      const int64_t i = s.index(t, v);  // colexicographic: row i % rows, column i / rows
      lanes_of[keep_rows ? i % rows : i / rows].insert(t);
    }
  }
  for (const auto& [kept, threads] : lanes_of) {
    const int64_t n = static_cast<int64_t>(threads.size());
    if ((n & (n - 1)) != 0 || *threads.begin() / 32 != *threads.rbegin() / 32) return false;
  }
  return true;
}

int64_t elements(const Operation& op, const Value* v) {
  const Type& t = v->type();
  TESSEL_ASSERT(ir::is_static(t.shape()), op.name(), ": ", ir::value_ref(v),
                " is not global but its shape is not static");
  int64_t n = 1;
  for (int64_t e : t.static_shape()) n *= e;
  return n;
}


// An integer attribute the writer pinned; UserError when it is there with another kind.
std::optional<int64_t> pinned_int(const Operation& loop, const std::string& key) {
  const Attribute* a = loop.attr(key);
  if (!a) return std::nullopt;
  if (a->kind != Attribute::Kind::integer) {
    user_error(loop.loc(), loop_str(loop), ": the pinned ", key, " must be an integer, not ",
               a->kind == Attribute::Kind::unit ? std::string("a bare flag") : a->str());
  }
  return a->i;
}

// Stages of an unpinned ring under a common cap.
int64_t capped(const Ring& r, int64_t cap) {
  int64_t s = r.read_by_threads ? std::min(cap, kMaxStagesReadByThreads) : cap;
  if (r.trip) s = std::min(s, *r.trip);
  return std::max<int64_t>(s, 1);
}

}  // namespace

std::string cap_str() {
  return "at most " + std::to_string(kMaxStagesReadByThreads) +
         " slots: threads read a slot of this loop (its work, not bytes in flight, bounds it)";
}

std::optional<int64_t> static_value(const Value* v) {
  return static_value_at(v, 0);
}

std::optional<int64_t> trip_count(const Operation& loop) {
  auto lo = static_value(loop.operand(0)), hi = static_value(loop.operand(1)),
       step = static_value(loop.operand(2));
  if (!lo || !hi || !step || *step <= 0) return std::nullopt;
  if (*hi <= *lo) return 0;
  return (*hi - *lo + *step - 1) / *step;
}

bool has_wgmma(const Operation& op) {
  bool found = false;
  ir::walk(const_cast<Operation*>(&op), [&](Operation* inner) {
    if (is_wgmma(*inner)) found = true;
  });
  return found;
}

std::string loop_str(const Operation& loop) {
  return "for " + ir::value_ref(loop.region(0)->argument(0));
}

int64_t tensor_bytes(const Operation& op, const Value* v) {
  return (elements(op, v) * ir::bit_width(v->type().element()) + 7) / 8;
}

int64_t round_up(int64_t x, int64_t align) {
  return (x + align - 1) / align * align;
}

int64_t slot_alignment(const Type& t, const std::string& atom) {
  int64_t align = 16;
  const std::string& layout = t.layout();
  int b = 0, m = 0, s = 0;
  if (layout.rfind("Sw<", 0) == 0 && std::sscanf(layout.c_str(), "Sw<%d,%d,%d>", &b, &m, &s) == 3 &&
      b > 0) {
    int64_t repeat_elems = int64_t(1) << (b + m + std::abs(s));
    align = std::max(align, (repeat_elems * ir::bit_width(t.element()) + 7) / 8);
  }
  if (atom.rfind("tma.", 0) == 0) align = std::max<int64_t>(align, 128);
  return align;
}

void Ring::add_tile(const Value* v, int64_t bytes, int64_t align) {
  StagedTile t{v, round_up(bytes, align), align};
  stage_bytes += t.bytes;
  tiles.push_back(t);
}

void Ring::note_readers(const ir::Block& body) {
  std::vector<const Value*> read;
  for (const StagedTile& t : tiles) read.push_back(t.value);
  read_by_threads = !wgmma || !ir::thread_readers(read, body).empty();
}

void Ring::read_pins() {
  const Operation& op = *loop;
  pinned_stages = pinned_int(op, "stages");
  pinned_in_flight = pinned_int(op, "mma_in_flight");
  if (pinned_stages && *pinned_stages < 1) {
    user_error(op.loc(), loop_str(op), ": the pinned stages = ", *pinned_stages,
               " must be at least 1");
  }
  if (!pinned_in_flight) return;
  int64_t n = *pinned_in_flight;
  if (!wgmma) {
    user_error(op.loc(), loop_str(op), ": mma_in_flight = ", n,
               " is pinned but no mma in the loop uses a wgmma atom (only wgmma groups can be "
               "left in flight)");
  }
  if (n < 0 || n > kMaxMmaInFlight) {
    user_error(op.loc(), loop_str(op), ": the pinned mma_in_flight = ", n, " is outside 0..",
               kMaxMmaInFlight, " (wgmma.wait_group takes an immediate 0..", kMaxMmaInFlight, ")");
  }
}

int64_t reserve_bytes(const Operation& kernel) {
  bool reduces = false;
  int64_t broadcast_scratch = 0;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    reduces = reduces || (op->kind() == OpKind::reduce && !reduce_within_warps(*op)) ||
              op->kind() == OpKind::rearrange;
    // A broadcast the threads cannot serve from their own registers goes through f32 scratch
    // the size of its source.
    if (op->kind() == OpKind::broadcast && op->operand(0)->type().is_tensor() &&
        !register_local(*op))
      broadcast_scratch += round_up(elements(*op, op->operand(0)) * 4, 16);
  });
  return reduces ? kReserveBytes : kTightReserveBytes + broadcast_scratch;
}

int64_t aref_slot_bytes(const Operation& aref) {
  int64_t slot = 0;
  for (const Type& b : aref.result()->type().buffers()) slot += round_up(b.static_bytes(), 128);
  return slot;
}

int64_t block_shared_bytes(const Operation& kernel) {
  int64_t bytes = ring_reserve_bytes(kernel);
  for (const auto& op : kernel.region(0)->ops()) {
    if (op->kind() == OpKind::alloc && op->result()->type().space() == MemorySpace::shared)
      bytes += round_up(op->result()->type().static_bytes(), 128);
    if (op->kind() == OpKind::aref) bytes += aref_slot_bytes(*op) * op->int_attr("slots");
  }
  return bytes;
}

int64_t block_shared_limit(const Operation& kernel) {
  int64_t blocks = 1;
  for (const auto& op : kernel.region(0)->ops())
    if (op->kind() == OpKind::block_grid && op->has_attr("blocks_per_sm"))
      blocks = op->int_attr("blocks_per_sm");
  return target::cuda::Target::named("sm_90a").shared_memory_per_block(blocks);
}

int64_t ring_reserve_bytes(const Operation& kernel) {
  bool arefs = false;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    arefs = arefs || op->kind() == OpKind::aref;
  });
  return arefs ? reserve_bytes(kernel) : kReserveBytes;
}

StageBudget::StageBudget(Operation* kernel, const std::function<bool(const Value*)>& in_ring,
                         int64_t reserve)
    : reserve_(reserve) {
  ir::walk(kernel, [&](Operation* op) {
    if (op->kind() != OpKind::block_grid) return;
    if (op->has_attr("target")) target_ = target::cuda::Target::named(op->str_attr("target"));
    // Blocks that share an SM (the grid's `blocks_per_sm` pin) share its shared memory too.
    if (op->has_attr("blocks_per_sm") &&
        op->attr("blocks_per_sm")->kind == ir::Attribute::Kind::integer)
      blocks_per_sm_ = std::max<int64_t>(1, op->int_attr("blocks_per_sm"));
  });
  // Shared memory the kernel holds once, outside the rings: every other shared tensor that is not
  // a view, and the f32 scratch of each rearrange.
  ir::walk(kernel, [&](Operation* op) {
    if (op->kind() == OpKind::transpose || op->kind() == OpKind::tile) return;
    if (op->kind() == OpKind::rearrange && op->num_results() == 1 &&
        op->result()->type().is_tensor()) {
      other_bytes_ += round_up(elements(*op, op->result()) * 4, 16);
      return;
    }
    for (const auto& r : op->results()) {
      const Type& t = r->type();
      if (!t.is_tensor() || t.space() != MemorySpace::shared || in_ring(r.get())) continue;
      other_bytes_ += round_up(tensor_bytes(*op, r.get()), slot_alignment(t, atom_of(*op)));
    }
  });
  budget_ = target_.shared_memory_per_block(blocks_per_sm_) - reserve_ - other_bytes_;
}

std::string StageBudget::budget_str() const {
  std::string s = std::to_string(budget_) + " bytes that " + target_.name() +
                  " leaves for pipeline stages (" +
                  std::to_string(target_.shared_memory_per_block(blocks_per_sm_)) +
                  (blocks_per_sm_ > 1
                       ? " per block of the " + std::to_string(blocks_per_sm_) + " an SM holds"
                       : " per block") +
                  " minus " +
                  std::to_string(reserve_) +
                  (reserve_ == kReserveBytes
                       ? " reserved for barriers, reduction scratch and the epilogue"
                       : reserve_ == kTightReserveBytes
                           ? " reserved for barriers and the allocation's alignment"
                           : " reserved for barriers, the allocation's alignment and broadcast "
                             "scratch");
  if (other_bytes_ > 0)
    s += " minus " + std::to_string(other_bytes_) + " for the kernel's other shared tensors";
  return s + ")";
}

std::string StageBudget::tiles_str(const Ring& ring) {
  std::string s;
  for (const StagedTile& t : ring.tiles) {
    s += (s.empty() ? "" : ", ") + ir::value_ref(t.value) + " " + std::to_string(t.bytes) + " B";
    if (t.align > 16) s += " (" + std::to_string(t.align) + "-byte aligned)";
  }
  return s;
}

void StageBudget::choose_stages(std::vector<Ring>& rings, int64_t max_cap) const {
  int64_t pinned_total = 0;
  for (Ring& l : rings) {
    if (!l.pinned_stages) continue;
    l.stages = *l.pinned_stages;
    int64_t need = l.stages * l.stage_bytes;
    pinned_total += need;
    if (pinned_total > budget_) {
      std::string others = pinned_total > need ? " (with " + std::to_string(pinned_total - need) +
                                                     " bytes of other loops' pinned stages)"
                                               : "";
      user_error(l.loop->loc(), loop_str(*l.loop), ": the pinned stages = ", l.stages, " needs ",
                 l.stages, " x ", l.stage_bytes, " = ", need, " bytes of shared memory", others,
                 ", more than the ", budget_str(), " (one stage: ", tiles_str(l), ")");
    }
  }
  int64_t left = budget_ - pinned_total;
  for (int64_t cap = max_cap; cap >= 1; --cap) {
    int64_t total = 0;
    for (const Ring& l : rings)
      if (!l.pinned_stages) total += capped(l, cap) * l.stage_bytes;
    if (total <= left) {
      for (Ring& l : rings)
        if (!l.pinned_stages) l.stages = capped(l, cap);
      return;
    }
  }
  // Not even one stage each: blame the first ring that overflows.
  int64_t total = 0;
  for (const Ring& l : rings) {
    if (l.pinned_stages) continue;
    total += l.stage_bytes;
    if (total <= left) continue;
    std::string others;
    if (pinned_total > 0)
      others += " minus " + std::to_string(pinned_total) + " for pinned stages of other loops";
    if (total > l.stage_bytes)
      others += " minus " + std::to_string(total - l.stage_bytes) +
                " for one stage of each earlier loop";
    std::string room = others.empty() ? "the " + budget_str()
                                      : "the " + std::to_string(left - (total - l.stage_bytes)) +
                                            " bytes left for it: the " + budget_str() + others;
    user_error(l.loop->loc(), loop_str(*l.loop), ": one stage of this loop copies ", l.stage_bytes,
               " bytes into shared memory (", tiles_str(l), "), more than ", room,
               "; use smaller tiles");
  }
  TESSEL_ASSERT(false, "stage budget: the rings overflowed but no loop is to blame");
}

void StageBudget::choose_in_flight(Ring& l) {
  const Operation& op = *l.loop;
  int64_t n = l.pinned_in_flight ? *l.pinned_in_flight : std::min<int64_t>(1, l.stages - 1);
  if (n > l.stages - 1) {
    user_error(op.loc(), loop_str(op), ": the pinned mma_in_flight = ", n,
               " must be less than stages = ", l.stages, " (",
               l.pinned_stages ? "pinned" : "chosen",
               "): a pending wgmma group still reads its stage's tiles, so the ring needs at "
               "least mma_in_flight + 1 stages");
  }
  l.in_flight = n;
}

}  // namespace tessel::transforms
