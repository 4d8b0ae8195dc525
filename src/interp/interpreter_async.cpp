// The tile IR interpreter's roles and asynchrony (src/ir/async.h): roles run interleaved by the
// scheduler of roles.h, arefs and mbarriers checked by the models of sync_models.h, TMA loads and
// stores, wgmma groups and their waits, cluster arrivals, multicast and cluster_sync.
#include "interp/machine.h"

namespace tessel::interp::detail {

void Machine::run_roles(const Block& block, size_t first) {
  std::vector<std::unique_ptr<Machine>> machines;  // outlive the run: copies in flight use them
  std::vector<RoleScheduler::Role> roles;
  for (size_t i = first; i < block.ops().size(); ++i) {
    const Operation& role = *block.ops()[i];
    if (role.kind() == OpKind::cluster_sync) {
      // The kernel's last op (a verifier rule): the block stays until its peers are done.
      block_->ends_with_cluster_sync = true;
      continue;
    }
    TESSEL_ASSERT(role.kind() == OpKind::warp_group, role.name(), " after the kernel's roles");
    machines.push_back(std::make_unique<Machine>(*this));
    Machine& m = *machines.back();
    m.role_ = &role;
    m.mma_groups_.clear();
    m.open_group_.clear();
    ++block_->roles_running;
    roles.push_back({&role, [&m, &role] {
                       m.run_ops(*role.region(0));
                       for (const auto& entry : m.block_->arefs) entry.second.role_finished(role);
                       if (--m.block_->roles_running == 0 && !m.block_->ends_with_cluster_sync)
                         m.block_->exited = true;
                     }});
  }
  if (collecting_) {  // a cluster's block: its roles run with the other blocks' (run())
    for (auto& m : machines) collecting_->machines.push_back(std::move(m));
    for (auto& r : roles) collecting_->roles.push_back(std::move(r));
    return;
  }
  scheduler_->run(std::move(roles), "block " + index_str(block_index_));
  for (const auto& entry : block_->arefs) entry.second.block_finished();
}

std::vector<BlockAsync*> Machine::cluster_targets(const Operation& op) {
  std::vector<BlockAsync*> out;
  if (cluster_.empty()) return {block_.get()};
  for (const auto& peer : cluster_) {
    if (peer->exited) {
      user_error(op.loc(), op.name(), " reaches ", peer->name,
                 " of the cluster, which has already exited: a cluster_sync must end the "
                 "kernel when blocks arrive on or write into each other's shared memory");
    }
    out.push_back(peer.get());
  }
  return out;
}

void Machine::sync(const Operation& op, std::function<bool()> ready,
                   std::function<std::string()> waits_for) {
  if (role_) return scheduler_->sync_point(op, std::move(ready), std::move(waits_for));
  if (ready && !ready()) {
    user_error(op.loc(), op.name(), " blocks outside every role, where nothing can unblock it: it ",
               waits_for());
  }
}

void Machine::make_aref(const Operation& op) {
  const Type& t = op.result()->type();
  int64_t d = op.int_attr("slots");
  std::vector<std::vector<View>>& slots = block_->slots[op.result()];
  for (int64_t s = 0; s < d; ++s) {
    slots.emplace_back();
    for (size_t b = 0; b < t.buffers().size(); ++b) {
      slots.back().push_back(fresh_tensor(t.buffers()[b].element(), t.buffers()[b].static_shape(),
                                          "buffer " + std::to_string(b) + " of " +
                                              ir::value_ref(op.result()) + " slot " +
                                              std::to_string(s),
                                          true));
    }
  }
  block_->arefs.emplace(op.result(), ArefModel(op, d));
  set_scalar(op.result(), Element{});  // a handle: block_ holds the aref
}

void Machine::slot_results(const Operation& op, int64_t slot) {
  const auto& slots = block_->slots.at(op.operand(0));
  if (slot < 0 || slot >= static_cast<int64_t>(slots.size())) {
    user_error(op.loc(), op.name(), " ", ir::value_ref(op.operand(0)), ", ",
               ir::value_ref(op.operand(1)), ": slot ", slot, " lies outside ",
               ir::value_ref(op.operand(0)), ", a ring of ", slots.size(), " slot(s)");
  }
  for (int i = 0; i < op.num_results(); ++i) set_tensor(op.result(i), slots[slot].at(i));
}

void Machine::aref_step(const Operation& op) {
  TESSEL_ASSERT(role_, op.name(), " outside a role");
  ArefModel& aref = block_->arefs.at(op.operand(0));
  int64_t n = index(op.operand(1));
  aref.check(op, *role_, n);
  OpKind kind = op.kind();
  sync(
      op, [&aref, kind, n] { return aref.ready(kind, n); },
      [&aref, kind, n] { return aref.waits_for(kind, n); });
  aref.apply(op);
  if (op.num_results() > 0) slot_results(op, n % aref.slots());
}

void Machine::mma_wait(const Operation& op) {
  sync(op);
  auto keep = static_cast<size_t>(op.int_attr("pending"));
  while (mma_groups_.size() > keep) {
    std::vector<std::function<void()>> group = std::move(mma_groups_.front());
    mma_groups_.pop_front();
    for (auto& compute : group) compute();
  }
}

void Machine::barrier_step(const Operation& op) {
  BarrierArray& bars = block_->barriers.at(op.operand(0));
  int64_t i = index(op.operand(1));
  if (op.kind() == OpKind::mbarrier_wait) {
    int64_t parity = index(op.operand(2));
    bars.check(op, i, parity);
    return sync(
        op, [&bars, i, parity] { return bars.phase_completed(i, parity); },
        [&bars, i, parity] { return bars.waits_for(i, parity); });
  }
  bars.check(op, i);
  sync(op);
  if (op.kind() == OpKind::mbarrier_expect_tx) {
    return bars.arrive(op, i, op.has_attr("no_arrival") ? 0 : 1, op.int_attr("bytes"));
  }
  if (op.has_attr("cluster")) {
    for (BlockAsync* peer : cluster_targets(op)) {
      peer->barriers.at(op.operand(0)).arrive(op, i, arrival_count(op), 0);
    }
    return;
  }
  bars.arrive(op, i, arrival_count(op), 0);
}

int64_t Machine::arrival_count(const Operation& op) {
  const std::string& by = op.str_attr("by");
  if (by == "one" || (role_ && role_->has_attr("issue"))) return 1;
  if (!role_ && block_threads_ == 0) {
    user_error(op.loc(), op.name(), " {by = ", by,
               "} outside a role, in a block whose block_grid has no `threads`: the arrivals "
               "cannot be counted");
  }
  int64_t threads = role_ ? role_->int_attr("threads") : block_threads_;
  return by == "thread" ? threads : by == "warp" ? threads / 32 : threads / 128;
}

void Machine::copy_async(const Operation& op) {
  if (op.num_operands() == 2) {
    sync(op);
    return copy(op);
  }
  BarrierArray& bars = block_->barriers.at(op.operand(2));
  int64_t i = index(op.operand(3));
  bars.check(op, i);
  sync(op);
  if (op.has_attr("multicast")) return multicast(op, i);
  const View& src = get(op.operand(0)).tensor;
  auto values = std::make_shared<std::vector<Element>>();
  for_each_coord(src.shape,
                 [&](const std::vector<int64_t>& c) { values->push_back(read(op, src, c)); });
  int64_t bytes = static_cast<int64_t>(values->size()) * ir::bit_width(src.element) / 8;
  auto land = [this, &op, &bars, dst = get(op.operand(1)).tensor, values, i, bytes]() mutable {
    size_t k = 0;
    for_each_coord(dst.shape,
                   [&](const std::vector<int64_t>& c) { write(op, dst, c, (*values)[k++]); });
    bars.complete_bytes(op, i, bytes);
  };
  if (role_) return scheduler_->add_transfer(std::move(land));
  land();
}

void Machine::multicast(const Operation& op, int64_t i) {
  const Operation* slot = op.operand(1)->def();  // aref_slot (a verifier rule)
  const Value* ring = slot->operand(0);
  const int64_t s = index(slot->operand(1));
  const int buffer = op.operand(1)->index();
  const View& src = get(op.operand(0)).tensor;
  const int64_t c = static_cast<int64_t>(std::max<size_t>(1, cluster_.size()));
  const int64_t rows = src.shape.at(0) / c, first = cluster_rank_ * rows;
  std::vector<int64_t> share_shape = src.shape;
  share_shape[0] = rows;
  auto values = std::make_shared<std::vector<Element>>();
  for_each_coord(share_shape, [&](std::vector<int64_t> k) {
    k[0] += first;
    values->push_back(read(op, src, k));
  });
  const int64_t bytes = static_cast<int64_t>(values->size()) * ir::bit_width(src.element) / 8;
  for (BlockAsync* peer : cluster_targets(op)) {
    auto land = [this, &op, peer, ring, s, buffer, share_shape, first, values, i, bytes]() {
      if (peer->exited) cluster_targets(op);  // reports the exited block
      View dst = peer->slots.at(ring).at(s).at(buffer);
      size_t k = 0;
      for_each_coord(share_shape, [&](std::vector<int64_t> at) {
        at[0] += first;
        write(op, dst, at, (*values)[k++]);
      });
      peer->barriers.at(op.operand(2)).complete_bytes(op, i, bytes);
    };
    if (role_) {
      scheduler_->add_transfer(std::move(land));
    } else {
      land();
    }
  }
}

}  // namespace tessel::interp::detail
