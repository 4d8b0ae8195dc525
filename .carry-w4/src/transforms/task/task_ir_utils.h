// Small utilities the task compiler's passes share: finding, replacing and erasing in the event
// IR's nested op lists. Internal to src/transforms/task.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "frontend/task/event_ir.h"

namespace tessel::task::events {

using OpList = std::vector<std::unique_ptr<Op>>;

// Every tensor an op names directly (copy source and destination, call arguments, the tensor an
// alloc makes), with whether the op writes it.
std::vector<std::pair<int, bool>> op_tensors(const Op& op);
// Whether `op` or an op nested in it names tensor `id` or a piece of it.
bool touches(const Program& p, const Op& op, int id);
// Whether tensor `id` (or a piece of it) is read by any op of `ops` (nested included).
bool is_read(const Program& p, const OpList& ops, int id);
// Replaces tensor `from` by `to` in every op and as the parent of every piece.
void replace_tensor(Program& p, int from, int to);
// Removes `ops[i]`; later references to its event wait for its own preconditions instead.
void erase_op(Program& p, OpList& ops, size_t i);
// Removes `ops[i]`; later references to its event wait for `instead`.
void erase_op(Program& p, OpList& ops, size_t i, const std::vector<EventRef>& instead);
// Whether `id` is `root` or a piece of it.
bool part_of(const Program& p, int id, int root);

}  // namespace tessel::task::events
