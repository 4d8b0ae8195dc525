// PipelineLoops: stages and wgmma groups in flight for every mainloop, from the shared-memory
// budget (the rules are in the header).
#include "transforms/async/pipeline_loops.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ir/int_arith.h"
#include "support/diagnostics.h"
#include "target/cuda/target.h"
#include "transforms/report.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

// For barriers, the base round-up, reduction scratch and epilogue slack (see the header).
constexpr int64_t kReserveBytes = 8 * 1024;
constexpr int64_t kMaxStages = 4;
// wgmma.wait_group takes an immediate 0..7.
constexpr int64_t kMaxMmaInFlight = 7;

std::string loop_str(const Operation& loop) {
  return "for " + ir::value_ref(loop.region(0)->argument(0));
}

// The value of an index computed from constants only (const, and integer arithmetic over them).
std::optional<int64_t> static_value(const Value* v, int depth = 0) {
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
  auto a = static_value(def->operand(0), depth + 1);
  auto b = a ? static_value(def->operand(1), depth + 1) : std::nullopt;
  if (!b) return std::nullopt;
  return ir::eval_integer(def->kind(), v->type().element(), *a, *b);
}

// The number of iterations when the bounds and the step are static (and the step positive).
std::optional<int64_t> trip_count(const Operation& loop) {
  auto lo = static_value(loop.operand(0)), hi = static_value(loop.operand(1)),
       step = static_value(loop.operand(2));
  if (!lo || !hi || !step || *step <= 0) return std::nullopt;
  if (*hi <= *lo) return 0;
  return (*hi - *lo + *step - 1) / *step;
}

bool is_shared_copy(const Operation& op) {
  return op.kind() == OpKind::copy && op.num_results() == 1 && op.result()->type().is_tensor() &&
         op.result()->type().space() == MemorySpace::shared;
}

// Shared and register tensors have static shapes (the verifier's rule).
int64_t elements(const Operation& op, const Value* v) {
  const Type& t = v->type();
  TESSEL_ASSERT(ir::is_static(t.shape()), op.name(), ": ", ir::value_ref(v),
                " is not global but its shape is not static");
  int64_t n = 1;
  for (int64_t e : t.static_shape()) n *= e;
  return n;
}

int64_t tensor_bytes(const Operation& op, const Value* v) {
  return (elements(op, v) * ir::bit_width(v->type().element()) + 7) / 8;
}

int64_t round_up(int64_t x, int64_t align) {
  return (x + align - 1) / align * align;
}

// The byte alignment a shared tile's slots need (header: the swizzle's repeat, 128 B for an
// unswizzled TMA destination, else 16 B).
int64_t tile_alignment(const Operation& copy, const Value* v) {
  int64_t align = 16;
  const std::string& layout = v->type().layout();
  int b = 0, m = 0, s = 0;
  if (layout.rfind("Sw<", 0) == 0 && std::sscanf(layout.c_str(), "Sw<%d,%d,%d>", &b, &m, &s) == 3 &&
      b > 0) {
    int64_t repeat_elems = int64_t(1) << (b + m + std::abs(s));
    align = std::max(align, (repeat_elems * ir::bit_width(v->type().element()) + 7) / 8);
  }
  const Attribute* atom = copy.attr("atom");
  if (atom && atom->kind == Attribute::Kind::string && atom->s.rfind("tma.", 0) == 0)
    align = std::max<int64_t>(align, 128);
  return align;
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

struct StagedTile {
  const Value* value;
  int64_t bytes;  // rounded up to `align`
  int64_t align;
};

struct Mainloop {
  Operation* op;
  std::vector<StagedTile> tiles;
  int64_t stage_bytes = 0;
  std::optional<int64_t> trip;
  bool wgmma = false;
  std::optional<int64_t> pinned_stages, pinned_in_flight;
  int64_t stages = 0;
};

class Planner {
 public:
  explicit Planner(Operation* kernel) : kernel_(kernel) {}

  void run() {
    ir::walk(kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::block_grid && op->has_attr("target"))
        target_ = target::cuda::Target::named(op->str_attr("target"));
      if (ir::is_mainloop(*op)) loops_.push_back(collect(op));
    });
    if (loops_.empty()) return;
    other_bytes_ = other_shared_bytes();
    budget_ = target_.shared_memory_per_block() - kReserveBytes - other_bytes_;
    for (Mainloop& l : loops_) check_pins(l);
    choose_stages();
    for (Mainloop& l : loops_) finish(l);
  }

 private:
  Mainloop collect(Operation* op) {
    Mainloop l{op, {}, 0, trip_count(*op), false, std::nullopt, std::nullopt, 0};
    for (const auto& inner : op->region(0)->ops()) {
      if (!is_shared_copy(*inner)) continue;
      const Value* v = inner->result();
      int64_t align = tile_alignment(*inner, v);
      StagedTile t{v, round_up(tensor_bytes(*inner, v), align), align};
      l.stage_bytes += t.bytes;
      l.tiles.push_back(t);
      staged_.push_back(v);
    }
    ir::walk(op, [&](Operation* inner) {
      const Attribute* atom = inner->attr("atom");
      if (inner->kind() == OpKind::mma && atom && atom->kind == Attribute::Kind::string &&
          atom->s.rfind("wgmma.", 0) == 0)
        l.wgmma = true;
    });
    l.pinned_stages = pinned_int(*op, "stages");
    l.pinned_in_flight = pinned_int(*op, "mma_in_flight");
    return l;
  }

  // Shared memory the kernel holds once, outside the rings: every other shared tensor that is not
  // a view, and the f32 scratch of each rearrange.
  int64_t other_shared_bytes() const {
    int64_t total = 0;
    ir::walk(kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::transpose || op->kind() == OpKind::tile) return;
      if (op->kind() == OpKind::rearrange && op->num_results() == 1 &&
          op->result()->type().is_tensor()) {
        total += round_up(elements(*op, op->result()) * 4, 16);
        return;
      }
      for (const auto& r : op->results()) {
        const Type& t = r->type();
        if (!t.is_tensor() || t.space() != MemorySpace::shared) continue;
        if (std::find(staged_.begin(), staged_.end(), r.get()) != staged_.end()) continue;
        total += round_up(tensor_bytes(*op, r.get()), tile_alignment(*op, r.get()));
      }
    });
    return total;
  }

  // How the budget was reached, for messages and the report.
  std::string budget_str() const {
    std::string s = std::to_string(budget_) + " bytes that " + target_.name() +
                    " leaves for pipeline stages (" +
                    std::to_string(target_.shared_memory_per_block()) + " per block minus " +
                    std::to_string(kReserveBytes) +
                    " reserved for barriers, reduction scratch and the epilogue";
    if (other_bytes_ > 0)
      s += " minus " + std::to_string(other_bytes_) + " for the kernel's other shared tensors";
    return s + ")";
  }

  // "%a 16384 B (1024-byte aligned), %w 32768 B (1024-byte aligned)".
  static std::string tiles_str(const Mainloop& l) {
    std::string s;
    for (const StagedTile& t : l.tiles) {
      s += (s.empty() ? "" : ", ") + ir::value_ref(t.value) + " " + std::to_string(t.bytes) + " B";
      if (t.align > 16) s += " (" + std::to_string(t.align) + "-byte aligned)";
    }
    return s;
  }

  void check_pins(const Mainloop& l) const {
    const Operation& op = *l.op;
    if (l.pinned_stages && *l.pinned_stages < 1) {
      user_error(op.loc(), loop_str(op), ": the pinned stages = ", *l.pinned_stages,
                 " must be at least 1");
    }
    if (!l.pinned_in_flight) return;
    int64_t n = *l.pinned_in_flight;
    if (!l.wgmma) {
      user_error(op.loc(), loop_str(op), ": mma_in_flight = ", n,
                 " is pinned but no mma in the loop uses a wgmma atom (only wgmma groups can be "
                 "left in flight)");
    }
    if (n < 0 || n > kMaxMmaInFlight) {
      user_error(op.loc(), loop_str(op), ": the pinned mma_in_flight = ", n, " is outside 0..",
                 kMaxMmaInFlight, " (wgmma.wait_group takes an immediate 0..", kMaxMmaInFlight,
                 ")");
    }
  }

  // Stages of an unpinned loop under a common cap.
  static int64_t capped(const Mainloop& l, int64_t cap) {
    int64_t s = cap;
    if (l.trip) s = std::min(s, *l.trip);
    return std::max<int64_t>(s, 1);
  }

  void choose_stages() {
    int64_t pinned_total = 0;
    for (Mainloop& l : loops_) {
      if (!l.pinned_stages) continue;
      l.stages = *l.pinned_stages;
      int64_t need = l.stages * l.stage_bytes;
      pinned_total += need;
      if (pinned_total > budget_) {
        std::string others = pinned_total > need ? " (with " + std::to_string(pinned_total - need) +
                                                       " bytes of other loops' pinned stages)"
                                                 : "";
        user_error(l.op->loc(), loop_str(*l.op), ": the pinned stages = ", l.stages, " needs ",
                   l.stages, " x ", l.stage_bytes, " = ", need, " bytes of shared memory", others,
                   ", more than the ", budget_str(), " (one stage: ", tiles_str(l), ")");
      }
    }
    int64_t left = budget_ - pinned_total;
    for (int64_t cap = kMaxStages; cap >= 1; --cap) {
      int64_t total = 0;
      for (const Mainloop& l : loops_)
        if (!l.pinned_stages) total += capped(l, cap) * l.stage_bytes;
      if (total <= left) {
        for (Mainloop& l : loops_)
          if (!l.pinned_stages) l.stages = capped(l, cap);
        return;
      }
    }
    // Not even one stage each: blame the first loop that overflows.
    int64_t total = 0;
    for (const Mainloop& l : loops_) {
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
      user_error(l.op->loc(), loop_str(*l.op), ": one stage of this loop copies ", l.stage_bytes,
                 " bytes into shared memory (", tiles_str(l), "), more than ", room,
                 "; use smaller tiles");
    }
    TESSEL_ASSERT(false, "pipeline-loops: the stage budget overflowed but no loop is to blame");
  }

  void finish(Mainloop& l) {
    Operation& op = *l.op;
    op.set_attr("stages", Attribute::integer(l.stages));
    std::string in_flight = "not set (no wgmma)";
    if (l.wgmma) {
      int64_t n = l.pinned_in_flight ? *l.pinned_in_flight : std::min<int64_t>(1, l.stages - 1);
      if (n > l.stages - 1) {
        user_error(op.loc(), loop_str(op), ": the pinned mma_in_flight = ", n,
                   " must be less than stages = ", l.stages, " (",
                   l.pinned_stages ? "pinned" : "chosen",
                   "): a pending wgmma group still reads its stage's tiles, so the ring needs at "
                   "least mma_in_flight + 1 stages");
      }
      op.set_attr("mma_in_flight", Attribute::integer(n));
      in_flight = std::to_string(n) + (l.pinned_in_flight ? " (pinned)" : "");
    }
    if (report_enabled("pipeline")) {
      report("pipeline", loop_str(op) + " at " + op.loc().str() + ": " +
                             std::to_string(l.stage_bytes) + " bytes per stage (" + tiles_str(l) +
                             "); budget " + budget_str() + "; trip count " +
                             (l.trip ? std::to_string(*l.trip) : std::string("dynamic")) +
                             "; stages " + std::to_string(l.stages) +
                             (l.pinned_stages ? " (pinned)" : "") + ", mma_in_flight " + in_flight);
    }
  }

  Operation* kernel_;
  target::cuda::Target target_ = target::cuda::Target::sm90a();
  std::vector<Mainloop> loops_;
  std::vector<const Value*> staged_;
  int64_t other_bytes_ = 0;
  int64_t budget_ = 0;
};

}  // namespace

void pipeline_loops(ir::Module& module) {
  for (const auto& kernel : module.kernels) Planner(kernel.get()).run();
}

}  // namespace tessel::transforms
