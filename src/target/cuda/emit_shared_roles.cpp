// Roles that share their code. split-roles gives a K loop to W consumer roles that take its
// tiles in turns: W warp_group ops whose bodies are the same op for op up to the loop's end and
// differ only in constants (the role's turn and its trip count's padding), then each its own
// rest (the first sums the others' partial sums and stores, the others store theirs). Emitted
// role by role they were W copies of the loop, one a role, and on the H200 the W4A16 kernel's
// warps then stalled for instructions in 10% of their cycles (17.6% with four roles), and ptxas
// kept the wgmma descriptors of two of its three copies in per-thread registers (moved by R2UR
// before every wgmma) where it kept the first copy's uniform; one copy: 2% of stalls, every
// descriptor uniform, 1-4% faster (bench/results/2026-11-29-w4a16-unpack-merged-roles-h200.md).
//
// So consecutive roles over consecutive threads with the same attributes (name, threads, pins;
// none issued by one thread) whose bodies begin alike through their first loop are emitted as
// one `if` over all their threads: the common beginning once, `tsl_role` (the role's index among
// them, from the warp index: warp-uniform) choosing each constant that differs, the role-local
// `tid` as in a role; then each role's rest behind `if (tsl_role == r)`, its values of the common
// part named as role 0's (the rest may take only the common part's loop results and scalars).
// "Alike": op for op the same kind, attributes (a constant's value aside), result types and
// region shapes, each operand the same value or the corresponding one; a differing constant
// only read by scalar arithmetic (never taken as a compile-time value); no op whose emission
// depends on which role it is in (role and warpgroup syncs, turns, shared allocations, TMA
// issue, workspaces). This is emission only: the ops, their synchronization and every barrier
// are the IR's, and block_grid's `share_role_code = false` emits each role on its own.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

// Ops whose code depends on the role that runs them (its index, first thread or warpgroups) or
// that must not be shared among roles (allocations).
bool role_dependent(OpKind k) {
  switch (k) {
    case OpKind::alloc:
    case OpKind::role_sync:
    case OpKind::turn_begin:
    case OpKind::turn_wait:
    case OpKind::turn_pass:
    case OpKind::block_sync:
    case OpKind::copy_async:
    case OpKind::copy_async_commit:
    case OpKind::copy_async_wait:
    case OpKind::workspace:
    case OpKind::workspace_part:
    case OpKind::counter_arrive:
    case OpKind::cluster_sync:
    case OpKind::cluster_rank:
    case OpKind::warp_group:
    case OpKind::find_group:
      return true;
    default:
      return false;
  }
}

// The correspondence of role r's values to role 0's, and role 0's constants whose values differ.
struct Correspondence {
  std::unordered_map<const Value*, const Value*> to_first;
  std::vector<const Operation*> varying;  // role 0's constant ops
};

bool alike(const Operation& a, const Operation& b, Correspondence& c);

bool alike_blocks(const ir::Block& a, const ir::Block& b, Correspondence& c) {
  if (a.arguments().size() != b.arguments().size() || a.ops().size() != b.ops().size())
    return false;
  for (size_t i = 0; i < a.arguments().size(); ++i) {
    if (!(a.argument(int(i))->type() == b.argument(int(i))->type())) return false;
    c.to_first[b.argument(int(i))] = a.argument(int(i));
  }
  for (size_t i = 0; i < a.ops().size(); ++i) {
    if (!alike(*a.ops()[i], *b.ops()[i], c)) return false;
  }
  return true;
}

bool alike(const Operation& a, const Operation& b, Correspondence& c) {
  if (a.kind() != b.kind() || role_dependent(a.kind()) || a.num_operands() != b.num_operands() ||
      a.num_results() != b.num_results() || a.regions().size() != b.regions().size())
    return false;
  if (a.kind() == OpKind::constant) {
    const ir::Attribute* va = a.attr("value");
    const ir::Attribute* vb = b.attr("value");
    if (!va || !vb || va->kind != ir::Attribute::Kind::integer || !(va->kind == vb->kind) ||
        a.attributes().size() != b.attributes().size())
      return false;
    if (va->i != vb->i &&
        std::find(c.varying.begin(), c.varying.end(), &a) == c.varying.end())
      c.varying.push_back(&a);
  } else if (a.attributes() != b.attributes()) {
    return false;
  }
  for (int i = 0; i < a.num_operands(); ++i) {
    const Value* x = a.operand(i);
    const Value* y = b.operand(i);
    auto it = c.to_first.find(y);
    if (it != c.to_first.end() ? it->second != x : x != y) return false;
  }
  for (int i = 0; i < a.num_results(); ++i) {
    if (!(a.result(i)->type() == b.result(i)->type())) return false;
    c.to_first[b.result(i)] = a.result(i);
  }
  for (size_t i = 0; i < a.regions().size(); ++i) {
    if (!alike_blocks(*a.region(int(i)), *b.region(int(i)), c)) return false;
  }
  return true;
}

// A differing constant may only be read by scalar arithmetic: the emitter takes some operands
// as compile-time values (const_int), which a constant chosen at run time cannot be.
bool read_as_arithmetic(const Operation& constant, const Operation& role) {
  bool ok = true;
  ir::walk(const_cast<Operation*>(&role), [&](Operation* user) {
    for (const Value* v : user->operands()) {
      if (v != constant.result()) continue;
      ok = ok && user->num_results() == 1 && user->result()->type().is_scalar() &&
           (ir::is_elementwise(user->kind()) || user->kind() == OpKind::cmp);
    }
  });
  return ok;
}

struct Sharing {
  std::vector<const Operation*> roles;
  size_t common = 0;  // ops at the start of every role's body emitted once
  std::vector<Correspondence> per_role;  // [0] empty
};

Sharing find_sharing(const ir::Block& top, size_t first) {
  Sharing s;
  const Operation& r0 = *top.ops()[first];
  if (r0.has_attr("issue")) return s;
  const int64_t threads = r0.int_attr("threads");
  int64_t next_thread = r0.int_attr("first_thread") + threads;
  s.roles.push_back(&r0);
  // Every attribute of a role but its first thread the same (its name, threads, any pins).
  auto attributes_but_first = [](const Operation& role) {
    std::map<std::string, ir::Attribute> a = role.attributes();
    a.erase("first_thread");
    return a;
  };
  for (size_t i = first + 1; i < top.ops().size(); ++i) {
    const Operation& r = *top.ops()[i];
    if (r.kind() != OpKind::warp_group || attributes_but_first(r) != attributes_but_first(r0) ||
        r.int_attr("first_thread") != next_thread)
      break;
    s.roles.push_back(&r);
    next_thread += threads;
  }
  if (s.roles.size() < 2) return s;
  // The longest beginning all the roles share, op for op.
  const auto& ops0 = r0.region(0)->ops();
  s.per_role.resize(s.roles.size());
  size_t common = ops0.size();
  for (size_t r = 1; r < s.roles.size(); ++r) {
    const auto& ops = s.roles[r]->region(0)->ops();
    Correspondence& c = s.per_role[r];
    size_t n = 0;
    while (n < std::min(common, ops.size())) {
      Correspondence trial = c;
      if (!alike(*ops0[n], *ops[n], trial)) break;
      c = std::move(trial);
      ++n;
    }
    common = n;
  }
  // Through the first loop (sharing less is not worth a branch), and the differing constants
  // defined in the shared part, read as arithmetic only.
  size_t last_loop = common;
  for (size_t i = 0; i < common; ++i)
    if (ops0[i]->kind() == OpKind::for_) last_loop = i;
  if (last_loop == common) {
    s.roles.resize(1);
    return s;
  }
  s.common = last_loop + 1;
  // What a role's rest takes from the shared part: loop results and scalars only, whose names
  // carry over as they are (a register tensor's packing or a fused unpacking would not).
  for (const Operation* role : s.roles) {
    const auto& ops = role->region(0)->ops();
    std::set<const Value*> shared_values;
    for (size_t i = 0; i < s.common; ++i)
      for (const auto& v : ops[i]->results()) shared_values.insert(v.get());
    bool plain = true;
    for (size_t i = s.common; i < ops.size(); ++i) {
      ir::walk(ops[i].get(), [&](Operation* user) {
        for (const Value* v : user->operands()) {
          if (shared_values.count(v) && v->def()->kind() != OpKind::for_ && !v->type().is_scalar())
            plain = false;
        }
      });
    }
    if (!plain) {
      s.roles.resize(1);
      return s;
    }
  }
  for (size_t r = 1; r < s.roles.size(); ++r) {
    for (const Operation* k : s.per_role[r].varying) {
      const auto pos = std::find_if(ops0.begin(), ops0.end(),
                                    [&](const auto& o) { return o.get() == k; });
      if (pos == ops0.end() || size_t(pos - ops0.begin()) >= s.common ||
          !read_as_arithmetic(*k, r0)) {
        s.roles.resize(1);
        return s;
      }
    }
  }
  return s;
}

// Role r's value of role 0's constant op `k` (through the correspondence, inverted).
int64_t constant_in_role(const Sharing& s, size_t r, const Operation& k) {
  if (r == 0) return k.attr("value")->i;
  for (const auto& [mine, first] : s.per_role[r].to_first) {
    if (first == k.result() && mine->def()) return mine->def()->attr("value")->i;
  }
  return k.attr("value")->i;
}

}  // namespace

size_t Emitter::shared_roles(const ir::Block& top, size_t first) {
  if (!share_role_code_) return 1;
  return find_sharing(top, first).roles.size();
}

void Emitter::emit_shared_roles(const ir::Block& top, size_t first, size_t count) {
  const Sharing s = find_sharing(top, first);
  if (s.roles.size() != count) unsupported(*top.ops()[first], "changed between two looks");
  const Operation& r0 = *s.roles[0];
  const int64_t threads = r0.int_attr("threads");
  const int64_t first_thread = r0.int_attr("first_thread");
  const int64_t end_thread = first_thread + threads * static_cast<int64_t>(count);
  const std::string role = r0.str_attr("role");
  line("if (" + role_condition(first_thread, end_thread) + ") {  // " + std::to_string(count) + " roles " + role + " of " +
       std::to_string(threads) + " threads: [" + std::to_string(first_thread) + ", " +
       std::to_string(end_thread) + "), their common code once (emit_shared_roles.cpp)");
  ++indent_;
  const std::string warp = uniform_roles_ == "all" ? "tsl_warp" : "(tid / 32)";
  line("const int tsl_role = (" + warp + " - " + std::to_string(first_thread / 32) + ") / " +
       std::to_string(threads / 32) + ";  // which of the roles" +
       (uniform_roles_ == "all" ? ", warp-uniform" : ""));
  line("const int tid = static_cast<int>(threadIdx.x) - " + std::to_string(first_thread) + " - " +
       std::to_string(threads) + " * tsl_role;  // the thread's index in its role");
  if (threads > 128 && uniform_roles_ != "off") {
    line("const int tsl_wg = (tsl_warp - " + std::to_string(first_thread / 32) + ") / 4 - " +
         std::to_string(threads / 128) + " * tsl_role;  // the warpgroup's index in its role");
    warpgroup_index_ = "tsl_wg";
  }
  role_layouts(s.roles);
  role_threads_ = threads;
  role_first_thread_ = first_thread;
  role_index_ = role_position(r0);
  const int first_index = role_index_;
  async_accumulators_.clear();
  // The common part, with each differing constant chosen by the role.
  const auto& ops0 = r0.region(0)->ops();
  std::vector<const Operation*> varying;
  for (size_t r = 1; r < count; ++r)
    for (const Operation* k : s.per_role[r].varying)
      if (std::find(varying.begin(), varying.end(), k) == varying.end()) varying.push_back(k);
  for (size_t i = 0; i < s.common; ++i) {
    emit(*ops0[i]);
    if (std::find(varying.begin(), varying.end(), ops0[i].get()) == varying.end()) continue;
    std::string choice = std::to_string(constant_in_role(s, count - 1, *ops0[i]));
    for (size_t r = count - 1; r-- > 0;) {
      choice = "tsl_role == " + std::to_string(r) + " ? " +
               std::to_string(constant_in_role(s, r, *ops0[i])) + " : " + choice;
    }
    const std::string name = fresh(ops0[i]->result()->name() + "_of_role");
    line("const int " + name + " = " + choice + ";");
    scalars_[ops0[i]->result()] = name;
  }
  // Each role's own rest, its values of the common part named as role 0's.
  for (size_t r = 0; r < count; ++r) {
    const Operation& role_op = *s.roles[r];
    if (r > 0) {
      for (const auto& [mine, theirs] : s.per_role[r].to_first) {
        if (auto it = scalars_.find(theirs); it != scalars_.end()) scalars_[mine] = it->second;
        if (auto it = regs_.find(theirs); it != regs_.end()) regs_[mine] = it->second;
        if (auto it = views_.find(theirs); it != views_.end()) views_[mine] = it->second;
        if (auto it = shared_.find(theirs); it != shared_.end()) shared_[mine] = it->second;
        if (auto it = zero_start_.find(theirs); it != zero_start_.end())
          zero_start_[mine] = it->second;
      }
    }
    line(std::string(r == 0 ? "if" : "} else if") + " (tsl_role == " + std::to_string(r) +
         ") {  // role " + role + ": threads [" +
         std::to_string(role_op.int_attr("first_thread")) + ", " +
         std::to_string(role_op.int_attr("first_thread") + threads) + ")");
    ++indent_;
    role_index_ = first_index + static_cast<int>(r);
    role_first_thread_ = role_op.int_attr("first_thread");
    const auto& ops = role_op.region(0)->ops();
    for (size_t i = s.common; i < ops.size(); ++i) emit(*ops[i]);
    --indent_;
  }
  line("}");
  role_index_ = -1;
  warpgroup_index_ = "tid / 128";
  async_accumulators_.clear();
  --indent_;
  line("}");
}

}  // namespace tessel::target::cuda::detail
