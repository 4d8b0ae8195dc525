// The tile IR verifier's checker (internal to src/ir): the Verifier class, declared here and
// defined in verifier.cpp (the kernel, its grid, control flow, scopes and reads of alloc'd
// tensors) and verify_tensor_ops.cpp (the ops on tensors: tiles, views, copies, mma, casts,
// broadcasts, reductions and elementwise ops). The async ops' rules are in verify_async.cpp.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ir/async.h"
#include "ir/ir.h"
#include "ir/layout_text.h"

namespace tessel::ir::detail {

class Verifier {
 public:
  void kernel(const Operation& op);

 private:
  template <typename... Parts>
  [[noreturn]] void error(const Operation& op, Parts&&... parts) {
    user_error(op.loc(), op.name(), ": ", std::forward<Parts>(parts)...);
  }

  bool visible(const Value* v) const;

  void check_type(const Operation& op, const Type& t);

  void block(const Block& b);

  void operation(const Operation& op);

  void counts(const Operation& op, int operands, int results);

  void no_regions(const Operation& op);

  const Attribute& need_attr(const Operation& op, const std::string& key, Attribute::Kind kind,
                             std::string_view what);

  void need_index(const Operation& op, int i);

  const Type& tensor_operand(const Operation& op, int i, std::string_view role);

  void size_op(const Operation& op);

  void constant(const Operation& op);

  void block_grid(const Operation& op);

  static bool grid_invariant(const Value* v);

  void global_view(const Operation& op);

  void tile(const Operation& op);

  void tile_extent(const Operation& op);

  void transpose(const Operation& op);

  void creation(const Operation& op);

  void copy(const Operation& op);

  void same_data(const Operation& op, const Type& src, const Type& dst, const Value* a,
                 const Value* b);

  void mma(const Operation& op);

  void cast(const Operation& op);

  void rearrange(const Operation& op);

  void broadcast(const Operation& op);

  void reduce(const Operation& op);

  void elementwise(const Operation& op);

  void for_op(const Operation& op);

  void if_op(const Operation& op);

  template <typename CheckYield>
  void region(const Operation& op, const Block& body, CheckYield check_yield) {
    scopes_.emplace_back();
    for (const auto& arg : body.arguments()) scopes_.back().insert(arg.get());
    auto saved_written = written_;
    block(body);
    const Operation* term = body.terminator();
    if (term) {
      check_yield(*term);
    } else if (op.num_results() > 0 || (op.kind() == OpKind::for_ && op.num_operands() > 3)) {
      error(op, "its region must end with a yield");
    }
    // Writes in a region count afterwards too: the error is a read that no write can precede.
    for (const Value* v : written_) saved_written.insert(v);
    written_ = saved_written;
    scopes_.pop_back();
  }

  void yield(const Operation& op);

  // An alloc'd tensor must be written (by a copy into it or into a view of it) before anything
  // reads it (ir::storage_root finds the tensor behind a view): reading it earlier reads
  // undefined data.
  void check_reads(const Operation& op);

  const Operation* kernel_ = nullptr;
  bool seen_grid_ = false;
  std::set<std::string> sizes_;
  std::vector<std::unordered_set<const Value*>> scopes_;
  std::unordered_set<const Value*> written_;
};

}  // namespace tessel::ir::detail
