// The ops of asynchrony (src/ir/async.h), translated one by one: roles become thread-range
// branches with a role-local `tid`, arefs become rings of slots in the dynamic shared allocation,
// mbarrier ops become calls of the device library's mbarrier functions, copy_async a TMA load that
// completes on its barrier, mma with a wgmma atom the wgmma instances over shared-memory
// descriptors, mma_commit / mma_wait the wgmma group operations.
//
// Nothing here decides a wait, an arrive or a parity: the IR names every one (lower-arefs wrote
// them and check-protocol checked them). What this file adds are the instruction contracts of the
// ops it translates (TMA loads, prefetches and stores, their descriptors and coordinates:
// emit_tma.cpp):
//  - which thread issues: an op the IR says one thread performs (`issue = one` roles, expect_tx,
//    copy_async in a role of many threads, `by = warpgroup` arrivals, a `by = one` wait) is
//    guarded by the thread index; in an `issue = one` role the elected thread of the role's first
//    warp runs the region after its setmaxnreg ops (setmaxnreg is per warp: every warp of the
//    role executes it); after a `by = one` wait among many threads the waiting thread's warp
//    converges (`__syncwarp`), so that no lane runs on to a .sync.aligned wgmma while it spins;
//  - wgmma is .sync.aligned: a warp converges (`__syncwarp`) before issuing, after the spin of an
//    mbarrier wait; the accumulator registers are fenced (`wgmma_fence_operand`) around the
//    asynchronous window so that the compiler does not move their uses across it;
//  - mbarrier_init: thread 0 initializes the barriers and fences the initialization for the
//    async proxy (the block_sync that the IR places after it publishes them to the block).
#include <regex>

#include "ir/async.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

// A swizzled shared layout ("Sw<B,M,S> o ...") repeats every 2^(B+M+S) elements; TMA and wgmma
// need the buffer to start at a multiple of that many bytes (1024 for the 128-byte swizzle).
int64_t buffer_alignment(const Type& t) {
  static const std::regex sw(R"(^Sw<(\d+),(\d+),(\d+)>)");
  std::smatch m;
  const std::string& l = t.layout();
  if (std::regex_search(l, m, sw)) {
    int64_t elems = int64_t{1} << (std::stoll(m[1]) + std::stoll(m[2]) + std::stoll(m[3]));
    return std::max<int64_t>(128, elems * ir::bit_width(t.element()) / 8);
  }
  return 128;
}

}  // namespace

bool Emitter::has_roles() const {
  for (const auto& op : kernel_.region(0)->ops()) {
    if (op->kind() == OpKind::warp_group) return true;
  }
  return false;
}

int64_t Emitter::threads_of(const Operation& op) const {
  if (const Operation* role = ir::enclosing_role(op)) return role->int_attr("threads");
  return threads_;
}

std::string Emitter::threads_barrier() const {
  if (role_index_ < 0) return "__syncthreads();";
  // Named barriers from kNamedBarrierFirstUserId up, one per role.
  return "tessel::device::named_barrier_sync(tessel::device::kNamedBarrierFirstUserId + " +
         std::to_string(role_index_) + ", " + std::to_string(role_threads_) + ");";
}

// Named barriers from kNamedBarrierFirstUserId: one per role, then the turns' (one per warpgroup
// of the role that takes turns), then one per warpgroup of the block for `by = warpgroup` syncs
// (indexed by the block's warpgroup, so two roles' warpgroups never share one).
std::string Emitter::warpgroup_barrier(const Operation& op) {
  int roles = 0;
  int64_t turn_warpgroups = 0, block_threads = 0;
  for (const auto& other : kernel_.region(0)->ops()) {
    if (other->kind() != OpKind::warp_group) continue;
    ++roles;
    block_threads =
        std::max(block_threads, other->int_attr("first_thread") + other->int_attr("threads"));
    bool turns = false;
    ir::walk(other.get(), [&](Operation* o) { turns |= o->kind() == OpKind::turn_begin; });
    if (turns) turn_warpgroups += other->int_attr("threads") / 128;
  }
  const int64_t first = roles + turn_warpgroups;
  if (role_index_ < 0 || role_threads_ % 128 != 0 || role_first_thread_ % 128 != 0) {
    unsupported(op, "syncs by warpgroup outside a role of whole warpgroups");
  }
  if (8 + first + (block_threads + 127) / 128 > 16) {
    unsupported(op,
                "needs a named barrier per warpgroup beyond the roles' and the turns' own, "
                "more than the 16 there are");
  }
  return "tessel::device::named_barrier_sync(tessel::device::kNamedBarrierFirstUserId + " +
         std::to_string(first) + " + (" + std::to_string(role_first_thread_) +
         " + tid) / 128, 128);  // this warpgroup's threads";
}

void Emitter::async_op(const Operation& op) {
  switch (op.kind()) {
    case OpKind::warp_group:
      return warp_group(op);
    case OpKind::aref:
      return aref(op);
    case OpKind::aref_slot: {
      auto it = rings_.find(op.operand(0));
      if (it == rings_.end()) unsupported(op, "uses an aref the emitter has not allocated");
      const Ring& ring = it->second;
      std::string slot = scalar(op, op.operand(1));
      for (int i = 0; i < op.num_results(); ++i) {
        SharedTile tile;
        tile.base = "(tsl_smem + " + std::to_string(ring.offset[i]) + " + (" + slot + ") * " +
                    std::to_string(ring.bytes[i]) + ")";
        const Type& t = op.result(i)->type();
        tile.element = t.element();
        tile.shape = t.static_shape();
        tile.layout = t.layout();
        tile.source = op.result(i);
        tile.bytes = ring.bytes[i];
        shared_[op.result(i)] = tile;
      }
      return;
    }
    case OpKind::mbarrier_init: {
      const int64_t count = op.result()->type().count();
      int64_t offset = alloc_shared(8 * count, 8);
      std::string name = fresh(op.result()->name());
      barriers_[op.result()] = name;
      line("// " + name + ": " + std::to_string(count) + " mbarrier(s), " +
           std::to_string(op.int_attr("arrivals")) + " arrival(s) per phase");
      line("unsigned long long* " + name + " = reinterpret_cast<unsigned long long*>(tsl_smem + " +
           std::to_string(offset) + ");");
      line("if (tid == 0) {");
      line("  for (int s = 0; s < " + std::to_string(count) +
           "; ++s) tessel::device::mbarrier_init(&" + name + "[s], " +
           std::to_string(op.int_attr("arrivals")) + ");");
      line("  tessel::device::mbarrier_init_fence();");
      line("}");
      return;
    }
    case OpKind::block_sync:
      line("__syncthreads();");
      return;
    // Programmatic dependent launch (overlap-launches). The runtime launches a kernel that
    // waits with the attribute that lets it overlap the launch before it.
    case OpKind::launch_dependents:
      line("tessel::device::launch_dependents();");
      return;
    case OpKind::grid_wait:
      out_.overlaps_launches = true;
      line("tessel::device::grid_dependency_wait();");
      return;
    case OpKind::prefetch:
      return prefetch(op);
    case OpKind::cluster_sync:
      // Every thread of every block of the cluster (barrier.cluster, release / acquire).
      line("tessel::device::cluster_sync();");
      return;
    case OpKind::setmaxnreg:
      line(std::string("tessel::device::setmaxnreg_") + op.str_attr("mode") + "<" +
           std::to_string(op.int_attr("count")) + ">();");
      return;
    case OpKind::mbarrier_wait: {
      std::string call = "tessel::device::mbarrier_wait(" + barrier(op, 0) + ", " +
                         scalar(op, op.operand(2)) + ");";
      if (!op.has_attr("by") || issue_one_) {
        line(call);
        return;
      }
      // `by = one` among many threads: thread 0 waits (it issues the loads that follow), and its
      // warp converges right after, before any lane runs on to a .sync.aligned wgmma.
      line("if (tid == 0) " + call);
      line("__syncwarp();");
      return;
    }
    case OpKind::mbarrier_arrive: {
      const std::string& by = op.str_attr("by");
      if (op.has_attr("cluster")) return cluster_arrive(op);
      std::string call = "tessel::device::mbarrier_arrive(" + barrier(op, 0) + ");";
      // In a role run by one elected thread every arrive is that thread's one arrival (as the
      // interpreter and check-protocol count it), whatever `by` says.
      if (by == "thread" || issue_one_) {
        line(call);
      } else if (by == "one") {
        line("if (tid == 0) " + call);
      } else if (by == "warp") {
        // The arriving lane releases what its warp did before: the warp converges first (its
        // lanes' reads of a slot are then ordered before the arrival, as __syncwarp orders
        // memory among the lanes it joins).
        line("__syncwarp();");
        line("if (tid % 32 == 0) " + call);
      } else {
        line("if (tid % 128 == 0) " + call);
      }
      return;
    }
    case OpKind::mbarrier_expect_tx:
      // `no_arrival`: the bytes are announced without the arrival (mbarrier.expect_tx), for
      // loads issued ahead of the arrival that completes the phase (preload-ready).
      line(std::string(issue_one_ ? "" : "if (tid == 0) ") + "tessel::device::" +
           (op.has_attr("no_arrival") ? "mbarrier_expect_tx(" : "mbarrier_arrive_expect_tx(") +
           barrier(op, 0) + ", " + std::to_string(op.int_attr("bytes")) + ");");
      return;
    case OpKind::copy_async:
      if (op.num_operands() == 2 && op.operand(0)->type().space() == MemorySpace::global)
        return global_to_shared_async(op);
      return op.num_operands() == 2 ? store_async(op) : copy_async(op);
    // The bulk async-group of the thread that issues the role's TMA stores (thread 0 of the
    // role): only that thread commits and waits; role_sync then tells the others.
    // `by = warpgroup`: thread 0 of each warpgroup, which sends that warpgroup's rows.
    case OpKind::copy_async_commit:
      line(store_thread(op) + "tessel::device::tma_store_commit_group();");
      return;
    case OpKind::copy_async_wait:
      if (op.has_attr("threads")) {  // every thread's own cp.async's (global_to_shared_async)
        line("tessel::device::cp_async_wait_all();");
        return;
      }
      line(store_thread(op) + "tessel::device::tma_store_wait_read<" +
           std::to_string(op.int_attr("pending")) + ">();");
      return;
    case OpKind::fence_proxy_async:
      line("tessel::device::fence_proxy_async_shared();");
      return;
    case OpKind::role_sync:
      line(op.has_attr("by") ? warpgroup_barrier(op) : threads_barrier());
      return;
    case OpKind::turn_begin:
    case OpKind::turn_wait:
    case OpKind::turn_pass:
      return turn(op);
    case OpKind::mma_commit:
      line("tessel::device::wgmma_commit_group();");
      return;
    case OpKind::mma_wait:
      // No fence on the accumulators between the commit and the wait: ptxas counts it as a
      // non-wgmma definition inside the group and serializes every wgmma (warning C7515).
      line("tessel::device::wgmma_wait_group<" + std::to_string(op.int_attr("pending")) + ">();");
      for (const std::string& acc : async_accumulators_) {
        auto scope = declared_in_.find(acc);
        bool visible = scope == declared_in_.end();
        for (const ir::Block* b = op.parent_block(); b && !visible;
             b = b->parent() ? b->parent()->parent_block() : nullptr) {
          visible = b == scope->second;
        }
        if (visible) line("tessel::device::wgmma_fence_operand(" + acc + ");");
      }
      if (op.int_attr("pending") == 0) {
        for (const std::string& l : after_drain_) line(l);
        after_drain_.clear();
        // Drained: no group writes these any more, so later waits need not fence them (a fence
        // keeps its registers live: a second mainloop that takes over a first one's
        // accumulators would otherwise hold both sets).
        async_accumulators_.clear();
      }
      return;
    default:
      unsupported(op, "(an aref op of level 1) must be lowered by lower-arefs before emission");
  }
}

std::string Emitter::barrier(const Operation& op, int i) {
  auto it = barriers_.find(op.operand(i));
  if (it == barriers_.end()) unsupported(op, "uses an mbarrier array the emitter has not made");
  return "&" + it->second + "[" + scalar(op, op.operand(i + 1)) + "]";
}

// Turns among the role's warpgroups (async.h, "Turns"): named barrier kTurn + g belongs to
// warpgroup g, after the roles' own barriers; each counts the 128 threads that wait on it and the
// 128 of the warpgroup that passes to it.
void Emitter::turn(const Operation& op) {
  const int64_t warpgroups = role_threads_ / 128;
  int roles = 0;
  for (const auto& other : kernel_.region(0)->ops()) roles += other->kind() == OpKind::warp_group;
  if (roles + warpgroups > 16 - 8) {
    unsupported(op, "needs " + std::to_string(warpgroups) +
                        " named barriers beyond the roles' own, more than the 16 there are");
  }
  const std::string base =
      "tessel::device::kNamedBarrierFirstUserId + " + std::to_string(roles) + " + ";
  const std::string wg = warpgroup_index_;
  const std::string next = "(" + wg + " + 1) % " + std::to_string(warpgroups);
  switch (op.kind()) {
    case OpKind::turn_begin:
      line("if (" + wg + " == " + std::to_string(warpgroups - 1) +
           ") tessel::device::named_barrier_arrive(" + base +
           "0, 256);  // warpgroup 0 goes first");
      return;
    case OpKind::turn_wait:
      line("tessel::device::named_barrier_sync(" + base + wg + ", 256);  // this warpgroup's turn");
      return;
    default:
      line("tessel::device::named_barrier_arrive(" + base + next +
           ", 256);  // the next one's turn");
      return;
  }
}

void Emitter::warp_group(const Operation& op) {
  const int64_t first = op.int_attr("first_thread"), threads = op.int_attr("threads");
  const std::string role = op.str_attr("role");
  if (first % 128 != 0 || threads % 128 != 0) {
    unsupported(op, "a role of threads [" + std::to_string(first) + ", " +
                        std::to_string(first + threads) + ") that is not whole warpgroups");
  }
  line("if (" + role_condition(first, first + threads) + ") {  // role " + role + ": threads [" + std::to_string(first) + ", " +
       std::to_string(first + threads) + ")" +
       (op.has_attr("issue") ? ", issued by one thread" : ""));
  ++indent_;
  line("const int tid = static_cast<int>(threadIdx.x) - " + std::to_string(first) +
       ";  // the thread's index in its role");
  if (threads > 128 && uniform_roles_ != "off") {
    line("const int tsl_wg = (tsl_warp - " + std::to_string(first / 32) +
         ") / 4;  // the warpgroup's index in its role (tid / 128), warp-uniform");
    warpgroup_index_ = "tsl_wg";
  }
  role_layouts({&op});
  const ir::Block& body = *op.region(0);
  size_t i = 0;
  for (; i < body.ops().size() && body.ops()[i]->kind() == OpKind::setmaxnreg; ++i) {
    emit(*body.ops()[i]);
  }
  const bool one = op.has_attr("issue");
  if (one) {
    line("if (tid < 32 && tessel::device::elect_one_sync()) {");
    ++indent_;
  }
  issue_one_ = one;
  role_threads_ = threads;
  role_first_thread_ = first;
  role_index_ = role_position(op);
  async_accumulators_.clear();
  for (; i < body.ops().size(); ++i) emit(*body.ops()[i]);
  issue_one_ = false;
  role_index_ = -1;
  warpgroup_index_ = "tid / 128";
  async_accumulators_.clear();
  if (one) {
    --indent_;
    line("}");
  }
  --indent_;
  line("}");
}

// Whether the thread runs the role(s) of threads [first, end): by the warp index from lane 0,
// which ptxas takes as warp-uniform (uniform_roles = all), or by the thread index.
std::string Emitter::role_condition(int64_t first, int64_t end) const {
  return uniform_roles_ == "all"
             ? "tsl_warp >= " + std::to_string(first / 32) + " && tsl_warp < " +
                   std::to_string(end / 32)
             : "tid >= " + std::to_string(first) + " && tid < " + std::to_string(end);
}

// How many roles come before `role` in the kernel (its named barrier's index).
int Emitter::role_position(const Operation& role) const {
  int position = 0;
  for (const auto& other : kernel_.region(0)->ops()) {
    if (other.get() == &role) break;
    position += other->kind() == OpKind::warp_group;
  }
  return position;
}

void Emitter::role_layouts(const std::vector<const Operation*>& roles) {
  std::set<const Plan*> used;
  for (const Operation* role : roles) {
    ir::walk(const_cast<Operation*>(role), [&](Operation* inner) {
      for (const auto& r : inner->results()) {
        if (const Plan* p = plan_for(*inner, r->type())) used.insert(p);
      }
    });
  }
  for (const auto& plan : plans_) {
    if (!used.count(plan.get())) continue;
    line("// layout " + std::to_string(plan->id) + ": " + plan->text);
    for (size_t d = 0; d < plan->tile.size(); ++d) {
      if (plan->var[d] == "0") continue;
      line("const int " + plan->var[d] + " = " + thread_expr(*plan, d) + ";");
    }
  }
}

void Emitter::aref(const Operation& op) {
  const Type& t = op.result()->type();
  const int64_t slots = op.int_attr("slots");
  Ring ring;
  std::string what;
  for (const Type& b : t.buffers()) {
    int64_t bytes = b.static_bytes();
    int64_t align = buffer_alignment(b);
    bytes = (bytes + align - 1) / align * align;  // every slot starts aligned
    ring.offset.push_back(alloc_shared(slots * bytes, align));
    ring.bytes.push_back(bytes);
    what += (what.empty() ? "" : " + ") + std::to_string(bytes) + " B";
  }
  rings_[op.result()] = ring;
  line("// aref %" + op.result()->name() + ": " + std::to_string(slots) + " slot(s) of " + what);
}

int64_t Emitter::cluster_blocks() const {
  for (const auto& op : kernel_.region(0)->ops()) {
    if (op->kind() == OpKind::block_grid && op->has_attr("cluster")) {
      int64_t blocks = 1;
      for (int64_t e : op->ints_attr("cluster")) blocks *= e;
      return blocks;
    }
  }
  return 1;
}

// An arrival on the barrier at the same place in every block of the cluster: the thread that
// arrives for a warpgroup (warp, ...) in a plain arrive makes, with C - 1 neighbours, one remote
// arrive each (thread i of the group on block i), so the C arrivals go out in parallel.
void Emitter::cluster_arrive(const Operation& op) {
  const int64_t blocks = cluster_blocks();
  const std::string& by = op.str_attr("by");
  const std::string bar = barrier(op, 0);
  if (by == "thread" || issue_one_) {
    line("for (unsigned r = 0; r < " + std::to_string(blocks) +
         "; ++r) tessel::device::mbarrier_arrive_cluster(" + bar + ", r);");
    return;
  }
  const std::string group = by == "one" ? "tid" : by == "warp" ? "(tid % 32)" : "(tid % 128)";
  if (by != "one" && blocks > (by == "warp" ? 32 : 128)) {
    unsupported(op, "arrives on more blocks than a " + by + " has threads");
  }
  line("if (" + group + " < " + std::to_string(blocks) +
       ") tessel::device::mbarrier_arrive_cluster(" + bar + ", " + group + ");");
}


void Emitter::wgmma_op(const Operation& op) {
  // The operands' forms (K-major or MN-major) are read off their layouts in wgmma_ss.
  auto operand = [&](int i) -> const SharedTile& {
    auto it = shared_.find(op.operand(i));
    if (it == shared_.end()) {
      unsupported(op, std::string("takes ") + (i == 0 ? "A" : "B") + " (%" + op.operand(i)->name() +
                          ") from outside shared memory; wgmma here reads both from shared tiles");
    }
    return it->second;
  };
  const bool a_in_registers = op.operand(0)->type().space() == MemorySpace::reg;
  const SharedTile* a = a_in_registers ? nullptr : &operand(0);
  const SharedTile& b = operand(1);
  // The accumulator is updated in place: nothing else may read the operand afterwards. Readers
  // in the other branches of an `if` around this mma never run after it (rotate-tiles issues
  // a tile's last P·V in both branches: with and without a next tile).
  const Value* c = op.operand(2);
  auto branch_of = [](const Operation* o) {
    const ir::Block* last = o->parent_block();
    for (const Operation* p = o->parent_op(); p; last = p->parent_block(), p = p->parent_op())
      if (p->kind() == OpKind::if_) return std::make_pair(p, last);
    return std::make_pair(static_cast<const Operation*>(nullptr), last);
  };
  const auto mine = branch_of(&op);
  int uses = 0;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* o) {
    for (const Value* v : o->operands()) {
      if (v != c) continue;
      const auto theirs = branch_of(o);
      const bool other_branch = o != &op && mine.first && theirs.first == mine.first &&
                                theirs.second != mine.second;
      uses += other_branch ? 0 : 1;
    }
  });
  if (uses != 1) {
    unsupported(op, "accumulates into %" + c->name() +
                        ", which other ops also use; wgmma updates its accumulator in place");
  }
  const Reg& acc = reg(op, c);
  regs_[op.result()] = acc;
  // wgmma is .sync.aligned: every lane of the warp issues it together. No __syncwarp here: the
  // IR's control flow in a role is uniform over its warps (an mbarrier wait's spin reconverges
  // where the loop ends), as CUTLASS's consumers rely on too.
  line("tessel::device::wgmma_fence_operand(" + acc.name + ");");
  // (The RS form fences after packing its A fragments: a register written after the fence
  // makes ptxas inject another before each wgmma that reads it, C7519.)
  if (!a_in_registers) line("tessel::device::wgmma_fence();");
  auto zs = zero_start_.find(c);
  const std::string scale_d = zs == zero_start_.end() ? "" : zs->second;
  if (a_in_registers) {
    wgmma_rs(op, reg_words(op, op.operand(0)), b, scale_d);
  } else {
    wgmma_ss(op, *a, b, scale_d);
  }
  if (op.has_attr("async")) {
    if (std::find(async_accumulators_.begin(), async_accumulators_.end(), acc.name) ==
        async_accumulators_.end()) {
      async_accumulators_.push_back(acc.name);
    }
    // `fence_a` (coarse-pipeline's operand form, which computes the next A inside this group's
    // window): the RS form's A registers are fenced at the wait like the accumulators, so they
    // stay live until the group retires and ptxas gives the next A registers of its own instead
    // of serializing the wgmma (C7513).
    if (a_in_registers && op.has_attr("fence_a")) {
      const Reg& a_words = reg_words(op, op.operand(0));
      if (std::find(async_accumulators_.begin(), async_accumulators_.end(), a_words.name) ==
          async_accumulators_.end())
        async_accumulators_.push_back(a_words.name);
    }
    return;
  }
  // A synchronous mma: its group completes here.
  line("tessel::device::wgmma_commit_group();");
  line("tessel::device::wgmma_wait_group<0>();");
  line("tessel::device::wgmma_fence_operand(" + acc.name + ");");
}

void Emitter::shared_transpose(const Operation& op) {
  auto it = shared_.find(op.operand(0));
  if (it == shared_.end() && op.operand(0)->type().space() == MemorySpace::reg) {
    // A register tensor's transpose is a view: the same values, each at the swapped coordinate
    // (synthesis gave the result the source's layout with its two modes swapped).
    const Reg& a = reg(op, op.operand(0));
    const Plan* plan = plan_for(op, op.result()->type());
    if (plan->values != a.plan->values || plan->threads != a.plan->threads)
      unsupported(op, "of a register tensor changes its values per thread");
    for (int64_t t = 0; t < plan->threads; ++t) {
      for (int64_t v = 0; v < plan->values; ++v) {
        const std::vector<int64_t> c = a.plan->coord(t, v), d = plan->coord(t, v);
        if (c.size() != 2 || d.size() != 2 || c[0] != d[1] || c[1] != d[0])
          unsupported(op, "of a register tensor into layout " + plan->text +
                              ", which does not hold the same values at swapped coordinates");
      }
    }
    regs_[op.result()] = Reg{a.name, plan, a.element, a.packed};
    return;
  }
  if (it == shared_.end()) {
    unsupported(op, "of a " + std::string(ir::to_string(op.operand(0)->type().space())) +
                        " tensor is not supported by the CUDA emitter yet");
  }
  SharedTile t = it->second;
  t.transposed = !t.transposed;
  t.shape = op.result()->type().static_shape();
  t.layout = op.result()->type().layout();
  shared_[op.result()] = t;
}

}  // namespace tessel::target::cuda::detail
