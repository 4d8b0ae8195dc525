// The verifier's rules for the ops of asynchrony (roles, arefs, barriers, wgmma groups): each
// op's operands, results and attributes, and where it may stand. See async.h for their meaning.
#include "ir/async.h"

#include <algorithm>

namespace tessel::ir {
namespace {

template <typename... Parts>
[[noreturn]] void fail(const Operation& op, Parts&&... parts) {
  user_error(op.loc(), op.name(), ": ", std::forward<Parts>(parts)...);
}

void counts(const Operation& op, int operands, int results) {
  if (op.num_operands() != operands || op.num_results() != results) {
    fail(op, "takes ", operands, " operand(s) and makes ", results, " result(s), not ",
         op.num_operands(), " and ", op.num_results());
  }
}

void need_index(const Operation& op, int i, const char* what) {
  if (op.operand(i)->type() != Type::scalar(ScalarKind::index)) {
    fail(op, what, " ", value_ref(op.operand(i)), " must be an index, not ",
         op.operand(i)->type().str());
  }
}

int64_t int_attr_in(const Operation& op, const std::string& key, int64_t lo, int64_t hi,
                    bool required = true, int64_t fallback = 0) {
  const Attribute* a = op.attr(key);
  if (!a) {
    if (required) fail(op, "needs the integer attribute `", key, "`");
    return fallback;
  }
  if (a->kind != Attribute::Kind::integer) fail(op, "attribute `", key, "` must be an integer");
  if (a->i < lo || a->i > hi) {
    fail(op, "attribute `", key, "` = ", a->i, " must lie in [", lo, ", ", hi, "]");
  }
  return a->i;
}

std::string ident_attr(const Operation& op, const std::string& key,
                       std::initializer_list<const char*> allowed, const char* fallback) {
  const Attribute* a = op.attr(key);
  if (!a) {
    if (fallback) return fallback;
    fail(op, "needs the attribute `", key, "`");
  }
  if (a->kind != Attribute::Kind::ident && a->kind != Attribute::Kind::string) {
    fail(op, "attribute `", key, "` must be a word");
  }
  std::string list;
  for (const char* w : allowed) {
    if (a->s == w) return a->s;
    list += std::string(list.empty() ? "" : ", ") + w;
  }
  fail(op, "attribute `", key, "` = ", a->s, " is not one of ", list);
}

bool at_kernel_top_level(const Operation& op) {
  const Operation* parent = op.parent_op();
  return parent && parent->kind() == OpKind::kernel;
}

void need_top_level(const Operation& op) {
  if (!at_kernel_top_level(op)) {
    fail(op, "stands at the top level of the kernel (all threads make it), not inside ",
         op.parent_op() ? std::string(op.parent_op()->name()) : std::string("nothing"));
  }
}

void need_role(const Operation& op) {
  if (!enclosing_role(op)) fail(op, "runs inside a warp_group (a role), not outside every role");
}

// `by = warpgroup` on the ops of a staged store (role_sync, a TMA store, its commit and wait):
// each warpgroup of the role syncs and sends its own share; the role must be whole warpgroups
// of all its threads (not one elected thread).
void by_warpgroup(const Operation& op) {
  if (!op.has_attr("by")) return;
  ident_attr(op, "by", {"warpgroup"}, nullptr);
  const Operation* role = nullptr;
  for (const Operation* p = op.parent_op(); p && !role; p = p->parent_op()) {
    if (p->kind() == OpKind::warp_group) role = p;
  }
  if (!role) fail(op, "runs by warpgroup inside a warp_group (a role), not outside every role");
  if (role->int_attr("threads") % 128 != 0 || role->int_attr("first_thread") % 128 != 0 ||
      role->has_attr("issue")) {
    fail(op, "runs by warpgroup in a role that is not whole warpgroups of threads (",
         role->int_attr("threads"), " threads from ", role->int_attr("first_thread"),
         role->has_attr("issue") ? ", issued by one thread)" : ")");
  }
}

const Type& need_aref(const Operation& op, int i) {
  const Type& t = op.operand(i)->type();
  if (!t.is_aref())
    fail(op, "operand ", value_ref(op.operand(i)), " must be an aref, not ", t.str());
  return t;
}

const Type& need_mbarrier(const Operation& op, int i) {
  const Type& t = op.operand(i)->type();
  if (!t.is_mbarrier()) {
    fail(op, "operand ", value_ref(op.operand(i)), " must be an mbarrier array, not ", t.str());
  }
  return t;
}

// aref_acquire / aref_wait / aref_slot: results are the slot's buffers, in order.
void slot_results(const Operation& op) {
  if (op.num_operands() != 2) fail(op, "takes an aref and an index");
  const Type& t = need_aref(op, 0);
  need_index(op, 1, op.kind() == OpKind::aref_slot ? "the slot" : "the sequence number");
  if (op.num_results() != static_cast<int>(t.buffers().size())) {
    fail(op, "makes one result per buffer of ", value_ref(op.operand(0)), " (", t.buffers().size(),
         "), not ", op.num_results());
  }
  for (int i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->type() != t.buffers()[i]) {
      fail(op, "result ", value_ref(op.result(i)), " is ", op.result(i)->type().str(),
           " but buffer ", i, " of the aref is ", t.buffers()[i].str());
    }
  }
}

}  // namespace

bool is_async_op(OpKind kind) {
  return kind >= OpKind::warp_group && kind <= OpKind::prefetch;
}

bool is_aref_use(OpKind kind) {
  return kind == OpKind::aref_acquire || kind == OpKind::aref_commit ||
         kind == OpKind::aref_wait || kind == OpKind::aref_release;
}

const Operation* enclosing_role(const Operation& op) {
  for (const Operation* p = op.parent_op(); p; p = p->parent_op()) {
    if (p->kind() == OpKind::warp_group) return p;
  }
  return nullptr;
}

const Operation* aref_def(const Value* v) {
  const Operation* d = v ? v->def() : nullptr;
  return d && d->kind() == OpKind::aref ? d : nullptr;
}

std::vector<const Value*> slot_views(std::vector<const Value*> values, const Block& block) {
  for (size_t i = 0; i < values.size(); ++i) {
    const Value* v = values[i];
    for (const auto& op : block.ops()) {
      walk(op.get(), [&](Operation* o) {
        if (o->kind() != OpKind::transpose) return;
        for (int k = 0; k < o->num_operands(); ++k)
          if (o->operand(k) == v) {
            values.push_back(o->result());
            return;
          }
      });
    }
  }
  return values;
}

std::vector<const Operation*> thread_readers(std::vector<const Value*> values, const Block& block) {
  const std::vector<const Value*> views = slot_views(std::move(values), block);
  std::vector<const Operation*> readers;
  for (const auto& op : block.ops()) {
    walk(op.get(), [&](Operation* o) {
      if (o->kind() == OpKind::transpose || o->kind() == OpKind::mma ||
          o->kind() == OpKind::aref_release)
        return;
      for (const Value* operand : o->operands())
        if (std::find(views.begin(), views.end(), operand) != views.end()) {
          readers.push_back(o);
          return;
        }
    });
  }
  return readers;
}

void verify_roles(const Operation& kernel) {
  const Block& body = *kernel.region(0);
  const Operation* grid = nullptr;
  std::vector<const Operation*> roles;
  bool ended = false;
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::block_grid) grid = op.get();
    if (op->kind() == OpKind::warp_group) {
      if (ended) fail(*op, "follows the cluster_sync that ends the kernel");
      roles.push_back(op.get());
    } else if (!roles.empty() && op->kind() == OpKind::cluster_sync) {
      ended = true;  // the kernel's last ops: every thread, after its role
    } else if (!roles.empty()) {
      fail(*op,
           "stands after a warp_group; once roles begin, every op belongs to a role "
           "(a cluster_sync may end the kernel)");
    }
  }
  // Cluster ops need a grid of clusters.
  const bool clustered = grid && grid->has_attr("cluster");
  walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    const bool cluster_op = op->kind() == OpKind::cluster_sync ||
                            op->kind() == OpKind::cluster_rank || op->has_attr("multicast") ||
                            (op->kind() == OpKind::mbarrier_arrive && op->has_attr("cluster"));
    if (cluster_op && !clustered) {
      fail(*op, "is an op of thread-block clusters, but the block_grid has no `cluster`");
    }
  });
  int64_t total = grid && grid->has_attr("threads") ? grid->int_attr("threads") : 0;
  for (size_t i = 0; i < roles.size(); ++i) {
    int64_t a0 = roles[i]->int_attr("first_thread");
    int64_t a1 = a0 + roles[i]->int_attr("threads");
    if (total && a1 > total) {
      fail(*roles[i], "owns threads [", a0, ", ", a1, ") but the block has ", total);
    }
    for (size_t j = 0; j < i; ++j) {
      int64_t b0 = roles[j]->int_attr("first_thread");
      int64_t b1 = b0 + roles[j]->int_attr("threads");
      if (a0 < b1 && b0 < a1) {
        fail(*roles[i], "owns threads [", a0, ", ", a1, "), which overlap [", b0, ", ", b1,
             ") of the role at ", op_where(*roles[j]));
      }
    }
  }
}

void verify_async_op(const Operation& op) {
  switch (op.kind()) {
    case OpKind::warp_group: {
      counts(op, 0, 0);
      need_top_level(op);
      if (op.regions().size() != 1 || !op.region(0)->arguments().empty()) {
        fail(op, "has one region without arguments");
      }
      if (op.region(0)->terminator()) fail(op, "a role yields nothing");
      ident_attr(op, "role", {"producer", "consumer"}, nullptr);
      int64_t first = int_attr_in(op, "first_thread", 0, 1024);
      int64_t threads = int_attr_in(op, "threads", 128, 1024);
      if (first % 128 != 0 || threads % 128 != 0) {
        fail(op, "a role owns whole warpgroups: first_thread = ", first, " and threads = ", threads,
             " must be multiples of 128");
      }
      if (op.has_attr("issue")) ident_attr(op, "issue", {"one"}, nullptr);
      return;
    }
    case OpKind::aref: {
      counts(op, 0, 1);
      need_top_level(op);
      const Type& t = op.result()->type();
      if (!t.is_aref() || t.buffers().empty()) fail(op, "makes an aref of one or more buffers");
      for (const Type& b : t.buffers()) {
        if (!b.is_tensor() || b.space() != MemorySpace::shared || !is_static(b.shape())) {
          fail(op, "buffer type ", b.str(), " must be a shared tensor of static shape");
        }
      }
      int_attr_in(op, "slots", 1, 64);
      return;
    }
    case OpKind::aref_acquire:
    case OpKind::aref_wait:
      need_role(op);
      return slot_results(op);
    case OpKind::aref_slot:
      return slot_results(op);
    case OpKind::aref_commit:
    case OpKind::aref_release:
      counts(op, 2, 0);
      need_role(op);
      need_aref(op, 0);
      need_index(op, 1, "the sequence number");
      return;
    case OpKind::mma_commit:
      counts(op, 0, 0);
      return;
    case OpKind::mma_wait:
      counts(op, 0, 0);
      int_attr_in(op, "pending", 0, 7);
      return;
    case OpKind::mbarrier_init:
      counts(op, 0, 1);
      need_top_level(op);
      if (!op.result()->type().is_mbarrier()) fail(op, "makes an mbarrier array, mbarrier<N>");
      int_attr_in(op, "arrivals", 1, 1024);
      return;
    case OpKind::block_sync:
      // Scalars, and so every `if` and `for` of a tile program, are the same in all threads of
      // the block: a block_sync under them is made by all threads, unless a role (some of the
      // threads) encloses it.
      counts(op, 0, 0);
      if (enclosing_role(op)) {
        fail(op, "is made by every thread of the block; it stands outside every role");
      }
      for (const Operation* p = op.parent_op(); p && p->kind() != OpKind::kernel;
           p = p->parent_op()) {
        if (p->kind() != OpKind::if_ && p->kind() != OpKind::for_) need_top_level(op);
      }
      return;
    case OpKind::cluster_sync:
      counts(op, 0, 0);
      need_top_level(op);
      return;
    case OpKind::grid_wait:
    case OpKind::launch_dependents:
      counts(op, 0, 0);
      return;
    case OpKind::prefetch: {
      counts(op, 1, 0);
      const Type& t = op.operand(0)->type();
      if (!t.is_tensor() || t.space() != MemorySpace::global) {
        fail(op, "prefetches a global tile into L2, not ", t.str());
      }
      if (!op.has_attr("atom") || op.attr("atom")->kind != Attribute::Kind::string ||
          op.str_attr("atom").rfind("tma.load.", 0) != 0) {
        fail(op, "needs the atom of the TMA load it prefetches for (atom = \"tma.load...\")");
      }
      return;
    }
    case OpKind::mbarrier_wait:
      counts(op, 3, 0);
      need_mbarrier(op, 0);
      need_index(op, 1, "the barrier index");
      need_index(op, 2, "the parity");
      if (op.has_attr("by")) ident_attr(op, "by", {"one"}, nullptr);
      return;
    case OpKind::mbarrier_arrive:
      counts(op, 2, 0);
      need_mbarrier(op, 0);
      need_index(op, 1, "the barrier index");
      ident_attr(op, "by", {"one", "thread", "warp", "warpgroup"}, nullptr);
      if (op.has_attr("cluster") && op.attr("cluster")->kind != Attribute::Kind::unit) {
        fail(op, "`cluster` is a unit attribute (the arrival goes to every block of the cluster)");
      }
      return;
    case OpKind::mbarrier_expect_tx:
      counts(op, 2, 0);
      need_mbarrier(op, 0);
      need_index(op, 1, "the barrier index");
      int_attr_in(op, "bytes", 0, int64_t{1} << 20);
      // `no_arrival`: the bytes only (mbarrier.expect_tx), for loads issued ahead of the arrival
      // that completes the phase.
      if (op.has_attr("no_arrival") && op.attr("no_arrival")->kind != Attribute::Kind::unit) {
        fail(op, "`no_arrival` is a unit attribute (the bytes are announced without an arrival)");
      }
      return;
    case OpKind::copy_async: {
      if (op.num_operands() == 2 && op.num_results() == 0 && op.operand(0)->type().is_tensor() &&
          op.operand(0)->type().space() == MemorySpace::global) {
        // A load by every thread of the block: a global tile into a shared tensor by 16-byte
        // cp.async's, completing in each thread's cp.async groups (copy_async_wait {threads}).
        const Type& src = op.operand(0)->type();
        const Type& dst = op.operand(1)->type();
        if (!dst.is_tensor() || dst.space() != MemorySpace::shared) {
          fail(op, "with two operands loads a global tile into a shared tensor, not into ",
               dst.str());
        }
        if (src.element() != dst.element() || src.shape() != dst.shape()) {
          fail(op, "copies ", src.str(), " into ", dst.str(),
               ": element types and shapes must agree");
        }
        if (!op.has_attr("atom") || op.str_attr("atom") != "cp.async.cg.shared.global.b128") {
          fail(op,
               "loads a global tile into shared memory by atom = "
               "\"cp.async.cg.shared.global.b128\" (16-byte cp.async's of every thread)");
        }
        // `from_line`: the threads' accesses counted from the 128-byte line the tile starts in
        // (what lands where is the same); for a tile of one row.
        if (op.has_attr("from_line")) {
          if (op.attr("from_line")->kind != Attribute::Kind::unit) {
            fail(op, "`from_line` is a unit attribute (accesses counted from the tile's line)");
          }
          if (src.rank() != 2 || src.shape()[0] != Extent(1)) {
            fail(op, "has from_line but copies ", src.str(),
                 "; from_line is for a tile of one row ([1,C])");
          }
        }
        return;
      }
      if (op.num_operands() == 2 && op.num_results() == 0) {
        // A store: a shared buffer into a global tile, completing in the issuing thread's bulk
        // async-group (copy_async_commit / copy_async_wait).
        const Type& src = op.operand(0)->type();
        const Type& dst = op.operand(1)->type();
        if (!src.is_tensor() || src.space() != MemorySpace::shared || !dst.is_tensor() ||
            dst.space() != MemorySpace::global) {
          fail(op, "with two operands stores a shared buffer into a global tile, not ", src.str(),
               " into ", dst.str());
        }
        if (src.element() != dst.element() || src.shape() != dst.shape()) {
          fail(op, "copies ", src.str(), " into ", dst.str(),
               ": element types and shapes must agree");
        }
        need_role(op);
        by_warpgroup(op);
        if (op.has_attr("by")) {
          const Operation* role = enclosing_role(op);
          const int64_t warpgroups = role ? role->int_attr("threads") / 128 : 1;
          const int64_t rows =
              src.rank() == 2 && src.shape()[0].is_static() ? src.shape()[0].value : 0;
          if (warpgroups < 1 || rows % (8 * warpgroups) != 0) {
            fail(op, "stores by warpgroup a buffer of ", src.str(), ": its rows must split into ",
                 warpgroups, " warpgroups' shares of a multiple of 8 rows");
          }
        }
        return;
      }
      counts(op, 4, 0);
      const Type& src = op.operand(0)->type();
      const Type& dst = op.operand(1)->type();
      if (!src.is_tensor() || src.space() != MemorySpace::global) {
        fail(op, "the source ", value_ref(op.operand(0)), " must be a global tile, not ",
             src.str());
      }
      if (!dst.is_tensor() || dst.space() != MemorySpace::shared) {
        fail(op, "the destination ", value_ref(op.operand(1)), " must be a shared tensor, not ",
             dst.str());
      }
      if (src.element() != dst.element() || src.shape() != dst.shape()) {
        fail(op, "copies ", src.str(), " into ", dst.str(),
             ": element types and shapes must agree");
      }
      need_mbarrier(op, 2);
      need_index(op, 3, "the barrier index");
      if (op.has_attr("multicast")) {
        // Each block of the cluster loads its share of the tile's rows into every block's buffer
        // at the same place: the buffer must be an aref slot's (the same in every block).
        const Operation* slot = op.operand(1)->def();
        if (!slot || slot->kind() != OpKind::aref_slot) {
          fail(op, "multicasts into ", value_ref(op.operand(1)),
               ", which is not a buffer of an aref slot (aref_slot)");
        }
      }
      return;
    }
    case OpKind::copy_async_commit:
      counts(op, 0, 0);
      by_warpgroup(op);
      return;
    case OpKind::fence_proxy_async:
      counts(op, 0, 0);
      return;
    case OpKind::copy_async_wait:
      counts(op, 0, 0);
      int_attr_in(op, "pending", 0, 7);
      by_warpgroup(op);
      // `threads`: every thread waits for its own cp.async's (copy_async of a global tile into
      // shared memory), all of them; a block_sync after it makes every thread's visible to all.
      if (op.has_attr("threads") && (op.attr("threads")->kind != Attribute::Kind::unit ||
                                     op.int_attr("pending") != 0 || op.has_attr("by"))) {
        fail(op,
             "`threads` is a unit attribute and waits for all of the thread's cp.async's "
             "(pending = 0, no `by`)");
      }
      return;
    case OpKind::role_sync:
      counts(op, 0, 0);
      need_role(op);
      by_warpgroup(op);
      return;
    case OpKind::turn_begin:
    case OpKind::turn_wait:
    case OpKind::turn_pass: {
      counts(op, 0, 0);
      need_role(op);
      const Operation* role = enclosing_role(op);
      if (role && role->int_attr("threads") < 256) {
        fail(op, "orders the warpgroups of a role of ", role->int_attr("threads"),
             " threads; turns need a role of two or more warpgroups");
      }
      return;
    }
    case OpKind::setmaxnreg: {
      counts(op, 0, 0);
      need_role(op);
      int64_t n = int_attr_in(op, "count", 24, 256);
      if (n % 8 != 0) fail(op, "count = ", n, " must be a multiple of 8 (PTX setmaxnreg)");
      ident_attr(op, "mode", {"inc", "dec"}, nullptr);
      return;
    }
    default:
      TESSEL_ASSERT(false, "verify_async_op on ", op.name());
  }
}

}  // namespace tessel::ir
