// CoarsePipeline: the rotated consumer loop of Tawa's Algorithm 1 (the rules are in the header).
#include "transforms/async/coarse_pipeline.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/async.h"
#include "ir/canonicalize.h"
#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"
#include "transforms/async/warp_specialize_operands.h"
#include "transforms/pins.h"
#include "transforms/report.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;
using Mapping = std::unordered_map<const Value*, Value*>;

bool is_shared_view(const Operation& op) {
  return op.regions().empty() && op.num_results() == 1 && op.result()->type().is_tensor() &&
         op.result()->type().space() == MemorySpace::shared;
}

// Whether `op` or an op nested in it reads `v`.
bool reads(const Operation& op, const Value* v) {
  bool found = false;
  ir::walk(const_cast<Operation*>(&op), [&](Operation* inner) {
    for (const Value* u : inner->operands()) found = found || u == v;
  });
  return found;
}

// Every (op, operand index) nested in `block` that reads `v`.
std::vector<std::pair<Operation*, int>> uses_in(const Value* v, const Block* block) {
  std::vector<std::pair<Operation*, int>> out;
  for (const auto& top : block->ops()) {
    ir::walk(top.get(), [&](Operation* op) {
      for (int i = 0; i < op->num_operands(); ++i)
        if (op->operand(i) == v) out.push_back({op, i});
    });
  }
  return out;
}

const Operation* kernel_of(const Operation& op) {
  const Operation* k = &op;
  while (k->parent_op()) k = k->parent_op();
  return k;
}

// How one loop splits (the header's H and U).
struct Plan {
  Operation* loop = nullptr;
  Operation* t = nullptr;                 // the first mma: its result is worked on (null: the
                                          // operand form, U's A computed by the head)
  Operation* u = nullptr;                 // the last mma: its result only carried
  int yield_pos = 0;                      // U's result's position in the yield
  std::set<const Operation*> tail;        // U, its aref waits, their views, their releases
  std::vector<Operation*> tail_releases;  // in body order
  std::set<const Operation*> early;       // releases of arefs only T reads: right after T retires
  std::vector<Value*> u_inputs;           // U's operands computed by the head: carried
};

std::optional<Plan> match(const Operation& loop_op) {
  Operation* loop = const_cast<Operation*>(&loop_op);
  if (loop->kind() != OpKind::for_ || ir::int_constant(loop->operand(2)) != 1) return std::nullopt;
  if (!ir::enclosing_role(*loop)) return std::nullopt;
  const Operation& kernel = *kernel_of(*loop);
  if (grid_flag(kernel, "coarse_pipeline") == false) return std::nullopt;
  Block* body = loop->region(0);
  const Operation* yield = body->terminator();
  if (!yield || yield->kind() != OpKind::yield) return std::nullopt;
  Plan p;
  p.loop = loop;
  std::vector<Operation*> mmas;
  for (const auto& op : body->ops()) {
    if (op->kind() == OpKind::mma) mmas.push_back(op.get());
    bool nested = false;
    ir::walk(op.get(), [&](Operation* inner) {
      nested = nested || (inner != op.get() && inner->kind() == OpKind::mma);
    });
    if (nested) return std::nullopt;
  }
  const bool operand_form = mmas.size() == 1 && takes_a_computed_in(*mmas[0], body);
  if (operand_form) {
    p.u = mmas[0];
  } else {
    if (mmas.size() != 2 || !is_wgmma(*mmas[0]) || !is_wgmma(*mmas[1])) return std::nullopt;
    p.t = mmas[0];
    p.u = mmas[1];
    // T's result is worked on in the iteration.
    bool worked_on = false;
    for (const auto& [user, index] : uses_in(p.t->result(), body))
      worked_on = worked_on || (user != yield && !(user->kind() == OpKind::mma && index == 2));
    if (!worked_on) return std::nullopt;
  }
  // U's result is only carried.
  const auto u_uses = uses_in(p.u->result(), body);
  if (u_uses.size() != 1 || u_uses[0].first != yield) return std::nullopt;
  p.yield_pos = u_uses[0].second;
  const Value* carried = body->argument(p.yield_pos + 1);
  if (operand_form) {
    // The carried accumulator is U's alone.
    for (const auto& [user, index] : uses_in(carried, body))
      if (user != p.u || index != 2) return std::nullopt;
  } else {
    const size_t t_at = ir::position_in_block(*p.t);
    for (size_t i = 0; i <= t_at; ++i)
      if (reads(*body->ops()[i], carried)) return std::nullopt;
  }
  // The aref waits: U's (read only by U) or the head's (not read by U).
  std::set<const Value*> u_rings, t_only_rings;
  for (const auto& op : body->ops()) {
    if (op->kind() != OpKind::aref_wait) continue;
    std::vector<const Value*> bufs;
    std::vector<const Operation*> views;
    for (const auto& r : op->results()) bufs.push_back(r.get());
    std::set<const Operation*> readers;
    for (size_t i = 0; i < bufs.size(); ++i) {
      for (const auto& [user, index] : uses_in(bufs[i], body)) {
        if (is_shared_view(*user) && user->parent_block() == body) {
          bufs.push_back(user->result());
          views.push_back(user);
        } else {
          readers.insert(user);
        }
      }
    }
    if (readers.count(p.u)) {
      if (readers.size() != 1) return std::nullopt;
      p.tail.insert(op.get());
      for (const Operation* v : views) p.tail.insert(v);
      u_rings.insert(op->operand(0));
    } else if (operand_form || (readers.size() == 1 && readers.count(p.t))) {
      t_only_rings.insert(op->operand(0));  // (the operand form: read by the head only)
    }
  }
  if (u_rings.empty()) return std::nullopt;
  p.tail.insert(p.u);
  for (const auto& op : body->ops()) {
    if (op->kind() != OpKind::aref_release) continue;
    if (u_rings.count(op->operand(0))) {
      p.tail.insert(op.get());
      p.tail_releases.push_back(op.get());
    } else if (t_only_rings.count(op->operand(0))) {
      p.early.insert(op.get());
    }
  }
  // U's operands: from the tail (its tiles), from outside the loop, or computed by the head
  // (carried). Its accumulator must come from the head (the rescaled output).
  for (int i = 0; i < p.u->num_operands(); ++i) {
    Value* v = p.u->operand(i);
    if (v->owner_block() != body && !ir::defined_inside(v, *loop)) continue;
    if (!v->def()) {
      if (operand_form && v == carried && i == 2) continue;  // the accumulator, carried on
      return std::nullopt;                                   // a carried value or the index itself
    }
    if (p.tail.count(v->def())) continue;
    if (v->def()->parent_block() != body) return std::nullopt;
    if (std::find(p.u_inputs.begin(), p.u_inputs.end(), v) == p.u_inputs.end())
      p.u_inputs.push_back(v);
  }
  const Value* acc = p.u->operand(2);
  if (!operand_form && std::find(p.u_inputs.begin(), p.u_inputs.end(), acc) == p.u_inputs.end())
    return std::nullopt;
  // `cast_at_issue = true` on the block_grid (opt-in, measured slower): a register A narrowed by
  // a cast the head computes (attention: P = cast(exp2(...)) to f16) is carried wide and the
  // cast moves to the tail, just before U. Tried on the guess that the narrow P's conversion,
  // writing registers the in-flight U reads, made ptxas retire U before the softmax; the cause
  // was a branch's join in the window (coarse_pipeline.h). The wide P costs 32 registers more,
  // ptxas spills, and it measured 3-17% slower (2026-11-27-attention-cast-at-issue-h100.md).
  if (!operand_form && grid_flag(kernel, "cast_at_issue") == true) {
    Value* a = p.u->operand(0);
    Operation* cast = a->def();
    auto at = std::find(p.u_inputs.begin(), p.u_inputs.end(), a);
    if (at != p.u_inputs.end() && cast && cast->kind() == OpKind::cast &&
        cast->parent_block() == body && a->type().space() == MemorySpace::reg &&
        uses_in(a, body).size() == 1) {
      Value* wide = cast->operand(0);
      if (wide->def() && wide->def()->parent_block() == body && !p.tail.count(wide->def())) {
        p.tail.insert(cast);
        if (std::find(p.u_inputs.begin(), p.u_inputs.end(), wide) == p.u_inputs.end())
          *at = wide;
        else
          p.u_inputs.erase(at);
      }
    }
  }
  if (operand_form && p.u_inputs.empty()) return std::nullopt;
  // The tail's other needs from the head: index arithmetic only (recomputed for its iteration).
  std::function<bool(const Value*)> recomputable = [&](const Value* v) {
    if (!ir::defined_inside(v, *loop) && v->owner_block() != body) return true;
    if (v == body->argument(0)) return true;
    if (!v->def() || v->def()->parent_block() != body) return false;
    if (p.tail.count(v->def())) return true;
    if (!is_address_op(*v->def())) return false;  // index arithmetic, a tile: pure
    for (const Value* w : v->def()->operands())
      if (!recomputable(w)) return false;
    return true;
  };
  for (const Operation* op : p.tail) {
    if (op == p.u) continue;
    for (const Value* v : op->operands())
      if (!recomputable(v) &&
          std::find(p.u_inputs.begin(), p.u_inputs.end(), v) == p.u_inputs.end())
        return std::nullopt;
  }
  // No head op reads a tail value (U's result goes only to the yield; U's tiles only to U).
  for (const auto& op : body->ops()) {
    if (p.tail.count(op.get()) || op.get() == yield) continue;
    for (const Operation* t : p.tail)
      for (const auto& r : t->results())
        if (reads(*op, r.get())) return std::nullopt;
  }
  return p;
}

class Rotator {
 public:
  explicit Rotator(const Plan& p) : p_(p), body_(p.loop->region(0)) {}

  void run() {
    if (!p_.t) return run_operand_form();
    Operation* loop = p_.loop;
    const SourceLocation loc = loop->loc();
    Value* lo = loop->operand(0);
    Value* hi = loop->operand(1);
    Value* iv = body_->argument(0);
    const Operation* yield = body_->terminator();
    const int n_args = static_cast<int>(body_->arguments().size()) - 1;

    Operation* branch = guard_loop();
    Block* then_block = branch->region(0);

    // The prologue: the head of iteration `lo` (T synchronous).
    ir::OpBuilder tb(then_block);
    Mapping pro;
    pro[iv] = lo;
    for (int i = 0; i < n_args; ++i) pro[body_->argument(i + 1)] = loop->operand(3 + i);
    for (const auto& op : body_->ops()) {
      if (op.get() == yield || p_.tail.count(op.get()) || p_.early.count(op.get())) continue;
      tb.insert(ir::clone(*op, pro));
      if (op.get() == p_.t)
        for (const Operation* r : early_in_order()) tb.insert(ir::clone(*r, pro));
    }

    // The steady state: iterations lo .. hi - 2 run the head of j + 1 and the tail of j.
    Value* c1 = tb.index_constant(1, loc);
    Value* steady_end = tb.index_op(OpKind::sub, hi, c1, "steady_end", loc);
    std::vector<Value*> inits;
    std::vector<Type> carried_types;
    for (int i = 0; i < n_args; ++i) {
      if (i == p_.yield_pos) continue;
      inits.push_back(mapped(pro, yield->operand(i)));
      carried_types.push_back(yield->operand(i)->type());
    }
    for (Value* v : p_.u_inputs) {
      inits.push_back(mapped(pro, v));
      carried_types.push_back(v->type());
    }
    std::vector<Value*> operands{lo, steady_end, loop->operand(2)};
    for (Value* v : inits) operands.push_back(v);
    Operation* steady = tb.create(OpKind::for_, operands, carried_types, loc);
    for (const auto& [key, value] : loop->attributes()) steady->set_attr(key, value);
    Block* sb = steady->add_region();
    Value* j = sb->add_argument(iv->type(), iv->name());
    Mapping head, tail;
    std::vector<Value*> new_args;
    for (int i = 0; i < n_args; ++i) {
      if (i == p_.yield_pos) continue;
      Value* a = sb->add_argument(body_->argument(i + 1)->type(), body_->argument(i + 1)->name());
      head[body_->argument(i + 1)] = a;
      new_args.push_back(a);
    }
    for (Value* v : p_.u_inputs) {
      Value* a = sb->add_argument(v->type(), v->name() + "_prev");
      tail[v] = a;
    }
    ir::OpBuilder lb(sb);
    Value* next = lb.index_op(OpKind::add, j, c1, iv->name() + "_next", loc);
    head[iv] = next;
    tail[iv] = j;
    // U's narrowing casts first: the wide carried value dies before T's accumulator is allocated
    // (cast after T's issue, S, the wide P and O were live at once and ptxas spilled).
    for (const auto& op : body_->ops())
      if (p_.tail.count(op.get()) && op->kind() == OpKind::cast) clone_tail_op(lb, *op, tail);
    const Value* carried = body_->argument(p_.yield_pos + 1);
    Operation* u_in_loop = nullptr;
    bool drained = false;
    for (const auto& op : body_->ops()) {
      if (op.get() == yield || p_.tail.count(op.get()) || p_.early.count(op.get())) continue;
      if (u_in_loop && !drained && reads(*op, carried)) {
        drain_tail(lb, tail, loc);
        drained = true;
      }
      Operation* copy = lb.insert(ir::clone(*op, head));
      if (op.get() != p_.t) continue;
      copy->set_attr("async", Attribute::unit());
      lb.create(OpKind::mma_commit, {}, {}, op->loc());
      u_in_loop = emit_tail_mma(lb, tail);
      lb.create(OpKind::mma_commit, {}, {}, p_.u->loc());
      lb.create(OpKind::mma_wait, {}, {}, p_.u->loc())->set_attr("pending", Attribute::integer(1));
      for (const Operation* r : early_in_order()) lb.insert(ir::clone(*r, head));
      head[carried] = u_in_loop->result();
    }
    if (!drained) drain_tail(lb, tail, loc);
    std::vector<Value*> yielded;
    for (int i = 0; i < n_args; ++i)
      if (i != p_.yield_pos) yielded.push_back(mapped(head, yield->operand(i)));
    for (Value* v : p_.u_inputs) yielded.push_back(mapped(head, v));
    lb.create(OpKind::yield, yielded, {}, yield->loc());

    // The epilogue: the tail of the last iteration.
    Mapping last;
    last[iv] = tb.index_op(OpKind::sub, hi, c1, "last_tile", loc);
    for (size_t k = 0; k < p_.u_inputs.size(); ++k)
      last[p_.u_inputs[k]] = steady->result(static_cast<int>(new_args.size() + k));
    Operation* u_last = emit_tail_mma(tb, last);
    tb.create(OpKind::mma_commit, {}, {}, p_.u->loc());
    drain_tail(tb, last, loc);
    std::vector<Value*> results;
    int k = 0;
    for (int i = 0; i < n_args; ++i)
      results.push_back(i == p_.yield_pos ? u_last->result() : steady->result(k++));
    tb.create(OpKind::yield, results, {}, loc);
    for (int i = 0; i < static_cast<int>(steady->num_results()); ++i) {
      steady->result(i)->set_name(i < static_cast<int>(new_args.size())
                                      ? new_args[i]->name() + "_steady"
                                      : p_.u_inputs[i - new_args.size()]->name() + "_last");
    }

    replace_loop(branch);
  }

  // The operand form (header): U(j) with A computed by the previous iteration's head, then the
  // head of j + 1 beside it, then U(j) drained — unrolled by two, so that the A a step computes
  // is never the register array its in-flight wgmma reads (ptxas serializes the wgmma when a
  // loop-carried A is redefined inside its own group's window, C7513); an odd step runs after.
  struct Carried {
    Value* acc = nullptr;
    std::vector<Value*> others;  // the loop's other carried values, in order
    std::vector<Value*> inputs;  // U's operands computed by the head (p_.u_inputs order)
  };

  // U of iteration `j` on `in`, the head of j + 1 beside it, then U drained.
  Carried step(ir::OpBuilder& b, Value* j, const Carried& in, const SourceLocation& loc) {
    const Operation* yield = body_->terminator();
    const int n_args = static_cast<int>(body_->arguments().size()) - 1;
    Mapping head, tail;
    tail[body_->argument(0)] = j;
    tail[body_->argument(p_.yield_pos + 1)] = in.acc;
    for (size_t k = 0; k < p_.u_inputs.size(); ++k) tail[p_.u_inputs[k]] = in.inputs[k];
    head[body_->argument(0)] = b.index_op(OpKind::add, j, b.index_constant(1, loc),
                                          body_->argument(0)->name() + "_next", loc);
    for (int i = 0, o = 0; i < n_args; ++i)
      if (i != p_.yield_pos) head[body_->argument(i + 1)] = in.others[o++];
    Operation* u = emit_tail_mma(b, tail);
    u->set_attr("fence_a", Attribute::unit());  // A stays live until the drain (emit_async.cpp)
    b.create(OpKind::mma_commit, {}, {}, p_.u->loc());
    for (const auto& op : body_->ops())
      if (op.get() != yield && !p_.tail.count(op.get())) b.insert(ir::clone(*op, head));
    drain_tail(b, tail, loc);
    Carried out;
    out.acc = u->result();
    for (int i = 0; i < n_args; ++i)
      if (i != p_.yield_pos) out.others.push_back(mapped(head, yield->operand(i)));
    for (Value* v : p_.u_inputs) out.inputs.push_back(mapped(head, v));
    return out;
  }

  static std::vector<Value*> flat(const Carried& c) {
    std::vector<Value*> out{c.acc};
    out.insert(out.end(), c.others.begin(), c.others.end());
    out.insert(out.end(), c.inputs.begin(), c.inputs.end());
    return out;
  }
  Carried unflat(const std::vector<Value*>& v) const {
    Carried c;
    c.acc = v[0];
    const size_t others = body_->arguments().size() - 2;
    c.others.assign(v.begin() + 1, v.begin() + 1 + static_cast<long>(others));
    c.inputs.assign(v.begin() + 1 + static_cast<long>(others), v.end());
    return c;
  }

  void run_operand_form() {
    Operation* loop = p_.loop;
    const SourceLocation loc = loop->loc();
    Value* lo = loop->operand(0);
    Value* hi = loop->operand(1);
    Value* iv = body_->argument(0);
    const Operation* yield = body_->terminator();
    const int n_args = static_cast<int>(body_->arguments().size()) - 1;
    Value* carried = body_->argument(p_.yield_pos + 1);

    Operation* branch = guard_loop();
    Block* then_block = branch->region(0);

    // The prologue: the head of iteration `lo` (its A; its arefs released once read).
    ir::OpBuilder tb(then_block);
    Mapping pro;
    pro[iv] = lo;
    for (int i = 0; i < n_args; ++i) pro[body_->argument(i + 1)] = loop->operand(3 + i);
    for (const auto& op : body_->ops())
      if (op.get() != yield && !p_.tail.count(op.get())) tb.insert(ir::clone(*op, pro));
    Carried first;
    first.acc = loop->operand(3 + p_.yield_pos);
    for (int i = 0; i < n_args; ++i)
      if (i != p_.yield_pos) first.others.push_back(mapped(pro, yield->operand(i)));
    for (Value* v : p_.u_inputs) first.inputs.push_back(mapped(pro, v));

    // The steady state: iterations lo .. hi - 2, two a trip.
    Value* c1 = tb.index_constant(1, loc);
    Value* c2 = tb.index_constant(2, loc);
    Value* span = tb.index_op(OpKind::sub, hi, lo, "span", loc);
    Value* steps = tb.index_op(OpKind::sub, span, c1, "steady_steps", loc);
    Value* pairs = tb.index_op(OpKind::div, steps, c2, "steady_pairs", loc);
    std::vector<Value*> operands{tb.index_constant(0, loc), pairs, c1};
    std::vector<Type> types;
    for (Value* v : flat(first)) {
      operands.push_back(v);
      types.push_back(v->type());
    }
    Operation* steady = tb.create(OpKind::for_, operands, types, loc);
    for (const auto& [key, value] : loop->attributes()) steady->set_attr(key, value);
    Block* sb = steady->add_region();
    Value* pair = sb->add_argument(iv->type(), "pair");
    // Named as the loop's: its carried values, then U's operands (%w_prev).
    std::vector<std::string> names{carried->name()};
    for (int i = 0; i < n_args; ++i)
      if (i != p_.yield_pos) names.push_back(body_->argument(i + 1)->name());
    for (Value* v : p_.u_inputs) names.push_back(v->name() + "_prev");
    std::vector<Value*> args;
    for (Value* v : flat(first)) args.push_back(sb->add_argument(v->type(), names[args.size()]));
    ir::OpBuilder lb(sb);
    Value* twice = lb.index_op(OpKind::mul, pair, c2, "pair_first", loc);
    Value* j0 = lb.index_op(OpKind::add, lo, twice, iv->name(), loc);
    Carried mid = step(lb, j0, unflat(args), loc);
    Value* j1 = lb.index_op(OpKind::add, j0, c1, iv->name() + "_odd", loc);
    Carried end = step(lb, j1, mid, loc);
    lb.create(OpKind::yield, flat(end), {}, yield->loc());
    std::vector<Value*> after;
    for (int i = 0; i < steady->num_results(); ++i) {
      steady->result(i)->set_name(args[static_cast<size_t>(i)]->name() + "_steady");
      after.push_back(steady->result(i));
    }

    // An odd number of steady iterations: the last one (hi - 2) on its own, as a loop of zero or
    // one trips (an `if` would read the accumulator twice, once per branch, and wgmma updates
    // its accumulator in place).
    Value* odd = tb.index_op(OpKind::rem, steps, c2, "steady_odd", loc);
    std::vector<Value*> rest_operands{tb.index_constant(0, loc), odd, c1};
    for (Value* v : after) rest_operands.push_back(v);
    Operation* rest = tb.create(OpKind::for_, rest_operands, types, loc);
    Block* rb = rest->add_region();
    rb->add_argument(iv->type(), "odd_step");
    std::vector<Value*> rest_args;
    for (Value* v : args) rest_args.push_back(rb->add_argument(v->type(), v->name() + "_odd"));
    ir::OpBuilder ob(rb);
    Value* j_last = ob.index_op(OpKind::sub, hi, c2, iv->name() + "_last_step", loc);
    ob.create(OpKind::yield, flat(step(ob, j_last, unflat(rest_args), loc)), {}, loc);
    std::vector<Value*> before_last;
    for (int i = 0; i < rest->num_results(); ++i) {
      rest->result(i)->set_name(args[static_cast<size_t>(i)]->name() + "_last");
      before_last.push_back(rest->result(i));
    }
    const Carried ready = unflat(before_last);

    // The epilogue: U of the last iteration.
    Mapping last;
    last[iv] = tb.index_op(OpKind::sub, hi, c1, "last_tile", loc);
    last[carried] = ready.acc;
    for (size_t k = 0; k < p_.u_inputs.size(); ++k) last[p_.u_inputs[k]] = ready.inputs[k];
    Operation* u_last = emit_tail_mma(tb, last);
    tb.create(OpKind::mma_commit, {}, {}, p_.u->loc());
    drain_tail(tb, last, loc);
    std::vector<Value*> results;
    for (int i = 0, o = 0; i < n_args; ++i)
      results.push_back(i == p_.yield_pos ? u_last->result() : ready.others[o++]);
    tb.create(OpKind::yield, results, {}, loc);

    replace_loop(branch);
  }

 private:
  // `if lo < hi` before the loop, with the loop's result types; its else branch yields the
  // loop's initial values (no iteration). The rotated loop goes into its then branch.
  Operation* guard_loop() {
    Operation* loop = p_.loop;
    const SourceLocation loc = loop->loc();
    ir::OpBuilder b(loop->parent_block());
    b.set_insertion_point_before(loop);
    Value* any = b.compare("gt", loop->operand(1), loop->operand(0), "any_tile", loc);
    std::vector<Type> result_types;
    for (const auto& r : loop->results()) result_types.push_back(r->type());
    Operation* branch = b.create(OpKind::if_, {any}, result_types, loc);
    branch->add_region();
    ir::OpBuilder eb(branch->add_region());
    std::vector<Value*> initial;
    for (int i = 3; i < loop->num_operands(); ++i) initial.push_back(loop->operand(i));
    eb.create(OpKind::yield, initial, {}, loc);
    return branch;
  }

  // The guard's results replace the loop's, and the loop goes.
  void replace_loop(Operation* branch) {
    Operation* loop = p_.loop;
    for (int i = 0; i < loop->num_results(); ++i) {
      branch->result(i)->set_name(loop->result(i)->name());
      ir::replace_all_uses(*const_cast<Operation*>(kernel_of(*loop)), loop->result(i),
                           branch->result(i));
    }
    loop->parent_block()->remove(loop);
  }

  static Value* mapped(const Mapping& map, Value* v) {
    auto it = map.find(v);
    return it == map.end() ? v : it->second;
  }

  std::vector<const Operation*> early_in_order() const {
    std::vector<const Operation*> out;
    for (const auto& op : body_->ops())
      if (p_.early.count(op.get())) out.push_back(op.get());
    return out;
  }

  // Clones `op` in a tail context: the index arithmetic it needs from the head first.
  Operation* clone_tail_op(ir::OpBuilder& b, const Operation& op, Mapping& map) {
    std::function<void(const Value*)> need = [&](const Value* v) {
      if (map.count(v) || !v->def() || v->def()->parent_block() != body_) return;
      for (const Value* w : v->def()->operands()) need(w);
      b.insert(ir::clone(*v->def(), map));
    };
    ir::walk(const_cast<Operation*>(&op), [&](Operation* inner) {
      for (const Value* v : inner->operands()) need(v);
    });
    return b.insert(ir::clone(op, map));
  }

  // The tail's waits and views in body order, then U (async); U's copy.
  Operation* emit_tail_mma(ir::OpBuilder& b, Mapping& map) {
    Operation* u = nullptr;
    for (const auto& op : body_->ops()) {
      if (!p_.tail.count(op.get()) || op->kind() == OpKind::aref_release) continue;
      if (op->num_results() == 1 && map.count(op->result())) continue;  // cloned already
      Operation* copy = clone_tail_op(b, *op, map);
      if (op.get() == p_.u) {
        copy->set_attr("async", Attribute::unit());
        u = copy;
      }
    }
    return u;
  }

  // mma_wait {pending = 0} (U retired) and U's releases.
  void drain_tail(ir::OpBuilder& b, Mapping& map, const SourceLocation& loc) {
    b.create(OpKind::mma_wait, {}, {}, loc)->set_attr("pending", Attribute::integer(0));
    for (const Operation* r : p_.tail_releases) clone_tail_op(b, *r, map);
  }

  const Plan& p_;
  Block* body_;
};

}  // namespace

bool coarse_pipeline_applies(const ir::Operation& loop) {
  return match(loop).has_value();
}

void coarse_pipeline(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    std::vector<Operation*> loops;
    ir::walk(kernel.get(), [&](Operation* op) {
      if (op->kind() == OpKind::for_) loops.push_back(op);
    });
    for (Operation* loop : loops) {
      std::optional<Plan> plan = match(*loop);
      if (!plan) continue;
      if (report_enabled("pipeline")) {
        report(
            "pipeline",
            "for " + ir::value_ref(loop->region(0)->argument(0)) + " at " + loop->loc().str() +
                ": coarse-pipelined (" +
                (plan->t ? ir::value_ref(plan->t->result()) + " of iteration j + 1 issued before " +
                               ir::value_ref(plan->u->result()) + " of iteration j"
                         : "the operands of " + ir::value_ref(plan->u->result()) +
                               " for iteration j + 1 computed while it runs for "
                               "iteration j") +
                "; " + std::to_string(plan->u_inputs.size()) + " value(s) carried for it)");
      }
      Rotator(*plan).run();
    }
  }
}

}  // namespace tessel::transforms
