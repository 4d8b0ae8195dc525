// AllocateShared (allocate_shared.h).
#include "transforms/task/allocate_shared.h"

#include <algorithm>

#include "frontend/task/instantiate.h"
#include "transforms/task/task_ir_utils.h"

namespace tessel::transforms {

using namespace task::events;

namespace {

struct Buffer {
  Op* alloc = nullptr;
  int64_t bytes = 0;  // all of its ring
  int first = 0, last = 0;
  int64_t offset = 0;
};

class Allocator {
 public:
  Allocator(Program& p, const PipelineShared& pipeline) : p_(p), pipeline_(pipeline) {}

  void block(OpList& ops) {
    buffers_.clear();
    position_ = 0;
    limit_ = machine_limit_ = task::h100().memory(task::Memory::shared).capacity_bytes;
    limit_loc_ = {};
    scan(ops, 1);
    assign();
  }

 private:
  // Numbers the ops in order; a tensor's range grows to cover each op that names it, a loop's
  // whole span when the op is inside a loop the tensor lives outside of.
  void scan(OpList& ops, int64_t depth) {
    for (auto& op : ops) {
      int here = position_++;
      if (op->kind == Op::Kind::alloc && p_.tensors[op->tensor].memory == task::Memory::shared) {
        int64_t bytes =
            task::static_bytes(p_.tensors[op->tensor].element, p_.tensors[op->tensor].shape);
        if (bytes < 0)
          user_error(op->loc, "allocate-shared: shared tensor %", p_.tensors[op->tensor].name,
                     " has a shape that is not constant");
        buffers_.push_back({op.get(), bytes * depth, here, here, 0});
      }
      if (op->kind == Op::Kind::for_loop || op->kind == Op::Kind::pfor) {
        if (op->shared_limit > 0) {
          limit_ = op->shared_limit;
          limit_loc_ = op->mapping_loc;
        }
        int start = position_;
        int64_t inner = op->pipeline > 0 ? depth * op->pipeline : depth;
        if (op->pipeline > 0) limit_loc_ = op->mapping_loc;
        size_t before = buffers_.size();
        scan(op->body, inner);
        int end = position_;
        // A pipelined loop's buffers are in flight together (several iterations at once): each
        // lives through the whole body.
        if (op->pipeline > 0) {
          for (size_t b = before; b < buffers_.size(); ++b) {
            buffers_[b].first = start;
            buffers_[b].last = end;
          }
        }
        for (Buffer& b : buffers_) {
          // A buffer from outside used in the loop lives through all of it.
          if (b.first < start && touches(p_, *op, b.alloc->tensor)) b.last = std::max(b.last, end);
        }
      } else {
        for (Buffer& b : buffers_)
          if (touches(p_, *op, b.alloc->tensor)) b.last = std::max(b.last, here);
      }
    }
  }

  void assign() {
    std::vector<Buffer*> order;
    for (Buffer& b : buffers_) order.push_back(&b);
    std::stable_sort(order.begin(), order.end(),
                     [](const Buffer* a, const Buffer* b) { return a->bytes > b->bytes; });
    std::vector<Buffer*> placed;
    int64_t top = 0;
    for (Buffer* b : order) {
      int64_t offset = 0;
      bool moved = true;
      while (moved) {
        moved = false;
        for (Buffer* o : placed) {
          bool interfere = !(b->last < o->first || o->last < b->first);
          bool overlap = offset < o->offset + o->bytes && o->offset < offset + b->bytes;
          if (interfere && overlap) {
            offset = (o->offset + o->bytes + 127) / 128 * 128;  // 128-byte aligned (TMA, swizzle)
            moved = true;
          }
        }
      }
      b->offset = offset;
      placed.push_back(b);
      top = std::max(top, offset + b->bytes);
    }
    const int64_t budget = limit_ - pipeline_.held;
    if (top > budget) {
      std::string list;
      for (const Buffer& b : buffers_)
        list += (list.empty() ? "" : ", ") + std::string("%") + p_.tensors[b.alloc->tensor].name +
                " (" + std::to_string(b.bytes) + " bytes)";
      // The tile pipeline's own words for the machine's budget; a mapping's shared_limit
      // (another capacity) with the pipeline's share taken off it.
      std::string room = "its budget of " + std::to_string(limit_);
      if (pipeline_.held > 0 && limit_ == machine_limit_)
        room = "the " + pipeline_.why;
      else if (pipeline_.held > 0)
        room = "the " + std::to_string(budget) + " bytes the mapping's shared_limit of " +
               std::to_string(limit_) + " leaves beside the " + std::to_string(pipeline_.held) +
               " the tile pipeline holds for itself";
      user_error(limit_loc_, "allocate-shared: the block's shared tensors need ", top,
                 " bytes, more than ", room, ": ", list,
                 " (lower the pipeline depth or the tile sizes)");
    }
    for (Buffer& b : buffers_) b.alloc->offset = b.offset;
  }

  Program& p_;
  PipelineShared pipeline_;
  std::vector<Buffer> buffers_;
  int position_ = 0;
  int64_t limit_ = 0, machine_limit_ = 0;
  SourceLocation limit_loc_;
};

}  // namespace

void allocate_shared(Program& program, const PipelineShared& pipeline) {
  // One budget per block: each top-level pfor over blocks (or the whole body when there is none).
  Allocator a(program, pipeline);
  bool any = false;
  for (auto& op : program.body) {
    if (op->kind == Op::Kind::pfor && op->level == task::Processor::block) {
      a.block(op->body);
      any = true;
    }
  }
  if (!any) a.block(program.body);
}

}  // namespace tessel::transforms
