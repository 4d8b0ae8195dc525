// The interpreter's workspaces (src/ir/async.h, "Workspaces"): launch-provided global memory,
// its parts, and the arrival counters through which split-k's blocks meet.
#include "interp/interpreter.h"

#include "interp/machine.h"

namespace tessel::interp {
namespace detail {

std::vector<int64_t> Machine::workspace_bytes(const Operation& kernel) {
  std::vector<int64_t> bytes;
  for (const auto& op : kernel.region(0)->ops()) {
    if (op->kind() != OpKind::workspace) continue;
    const Type& t = op->result()->type();
    const int64_t count = grid_value(op->operand(0));
    const int64_t elements = count * product(concrete_shape(t, options_.sizes));
    bytes.push_back((elements * ir::bit_width(t.element()) + 7) / 8);
  }
  return bytes;
}

void Machine::workspace(const Operation& op) {
  const int64_t count = index(op.operand(0));
  if (count < 1) user_error(op.loc(), "workspace: the count is ", count, ", not positive");
  std::vector<int64_t> shape = concrete_shape(op.result()->type(), options_.sizes);
  std::shared_ptr<HostTensor>& host = (*workspaces_)[&op];
  // The top-level ops run once per block: the first block allocates, the others share it.
  if (!host) {
    std::vector<int64_t> whole = shape;
    whole.insert(whole.begin(), count);
    host = std::make_shared<HostTensor>(op.result()->type().element(), whole);
  } else if (host->shape().at(0) != count) {
    user_error(op.loc(), "workspace: the count differs between blocks (", host->shape().at(0),
               " and ", count, ")");
  }
  set_tensor(op.result(), host_view(host.get(), shape, ir::value_ref(op.result())));
}

void Machine::workspace_part(const Operation& op) {
  View v = get(op.operand(0)).tensor;
  const int64_t i = index(op.operand(1));
  const int64_t count = v.storage->host->shape().at(0);
  if (i < 0 || i >= count) {
    user_error(op.loc(), "workspace_part: part ", i, " of a workspace of ", count);
  }
  v.offset += i * product(v.shape);
  v.root_name += "[" + std::to_string(i) + "]";
  set_tensor(op.result(), v);
}

void Machine::counter_arrive(const Operation& op) {
  View c = get(op.operand(0)).tensor;
  const int64_t n = index(op.operand(1));
  if (n < 1) user_error(op.loc(), "counter_arrive: the count is ", n, ", not positive");
  const int64_t before = read(op, c, {0}).i;
  if (before < 0 || before >= n) {
    user_error(op.loc(), "counter_arrive: the counter holds ", before, ", outside [0, ", n,
               "): its workspace was not left zero, or n differs between arrivals");
  }
  write(op, c, {0}, Element{0, before + 1 == n ? 0 : before + 1});
  set_scalar(op.result(), Element{0, before});
}

}  // namespace detail

std::vector<int64_t> workspace_bytes(const ir::Operation& kernel,
                                     const std::map<std::string, int64_t>& sizes,
                                     int64_t sm_count) {
  RunOptions options;
  options.sizes = sizes;
  options.sm_count = sm_count;
  detail::Machine machine(options);
  machine.bind_sizes(kernel);
  return machine.workspace_bytes(kernel);
}

}  // namespace tessel::interp
