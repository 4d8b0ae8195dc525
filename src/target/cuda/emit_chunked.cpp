// Chunked runs: value-wise ops over register tensors emitted one 16-byte vector's values at a
// time.
//
// The emitter writes each op as a loop over the thread's values into an array of its own. For a
// row program's tile of 32 values a thread ([1,32768] over 1024 threads) that is what ptxas keeps
// live: LayerNorm's normalization loaded its weight and bias whole (64 floats) beside the held
// row, and its sums converted the whole row to floats before the first sum crossed the block, so
// the kernel needed 64 registers, one 1024-thread block a SM. The row in registers at two such
// blocks a SM (32 registers) is what reaches a copy's rate at N = 32768 on the H200: a stand-alone
// probe, LayerNorm 1.002 of a copy against tessel's 0.87-0.90; RMSNorm so emitted 0.968-1.002
// (bench/results/2026-11-29-rows-registers-h200.md). So a run of ops that only move values
// through a thread (loads and stores of global tiles, casts, elementwise ops, broadcasts a thread
// makes from its own values, and reduces as the run's sinks) is written chunk by chunk: every op
// of the run for values 0-7, then every op for values 8-15, ...; a reduce folds each chunk into
// its partials and crosses threads after the last chunk. Each chunk is a C scope, so what it
// computes dies at its end, and the run's loads of a chunk sit right before its uses.
//
// A run's tensors have one value count; none of its values is used outside the run except a
// reduce's result (after the run) and what was defined before it (read value by value: a held
// row, a broadcast row statistic). Views (tile) and constants in it are emitted before the first
// chunk. Loads are emitted in the chunk that reads them (ptxas hoists them as registers allow);
// a row held for a later loop is loaded before the run, all its vectors at once. Only kernels
// without an mma chunk (the row programs: accumulator tiles keep their op-by-op form, whose
// instruction order the GEMM and attention measurements were taken with), and only where the
// launch bound leaves 32 registers or fewer (below).
#include <algorithm>

#include "support/launch_bound.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

// Runs are chunked where the launch bound leaves a thread this many registers or fewer (two
// blocks of 1024 threads, or any full SM, or six blocks of 288: what ptxas leaves, in steps of
// 8 — counted as 65536 / (6 x 288) = 37 these had run unchunked at 32 registers, spilling, at
// 0.26 of a copy, bench/results/2026-11-29-rows-chunked-blocks-h200.md, call C); with more, the
// op-by-op form measured as fast or faster: chunking every row program cost LayerNorm's other
// schedules 10-25% (its weight and bias then wait for L2 chunk by chunk) and bias + GELU 1-5%
// (2026-11-29-rows-registers-h200.md, call C).
constexpr int64_t kChunkedRegisterCap = 32;

bool reg_tensor(const Value* v) {
  return v->type().is_tensor() && v->type().space() == MemorySpace::reg;
}

bool global_tile(const Value* v) {
  return v->type().is_tensor() && v->type().space() == MemorySpace::global;
}

// Ops emitted before a run's first chunk: they compute nothing per value.
bool hoisted(const Operation& op) {
  return op.kind() == OpKind::tile || op.kind() == OpKind::constant;
}

}  // namespace

bool Emitter::chunking() const {
  return !has_mma_ && threads_ > 0 &&
         launch_bound_registers(threads_, blocks_per_sm_) <= kChunkedRegisterCap;
}

Emitter::ChunkedRun Emitter::chunked_run(const ir::Block& b, size_t start) {
  ChunkedRun none{start, 0, 0};
  if (!chunking()) return none;
  const auto& ops = b.ops();
  // The value count of a run op's register tensors, 0 where the op cannot be in a run.
  auto values_of = [&](const Operation& op) -> int64_t {
    if (fused_.count(&op)) return 0;
    switch (op.kind()) {
      case OpKind::copy: {
        if (op.num_results() == 1 && op.num_operands() == 1 && global_tile(op.operand(0)) &&
            reg_tensor(op.result())) {
          if (op.has_attr("cache") && op.str_attr("cache") == "coherent") return 0;
          if (accumulating_add(op)) return 0;
          const ScalarKind e = op.result()->type().element();
          if (e != ScalarKind::f16 && e != ScalarKind::bf16 && e != ScalarKind::f32) return 0;
          return plan_for(op, op.result()->type())->values;
        }
        if (op.num_results() == 0 && op.num_operands() == 2 && reg_tensor(op.operand(0)) &&
            global_tile(op.operand(1)))
          return plan_for(op, op.operand(0)->type())->values;
        return 0;
      }
      case OpKind::cast:
      case OpKind::broadcast: {
        if (!reg_tensor(op.result()) || !reg_tensor(op.operand(0))) return 0;
        const ScalarKind e = op.result()->type().element();
        if (e != ScalarKind::f32 && e != ScalarKind::f16 && e != ScalarKind::bf16) return 0;
        const ScalarKind from = op.operand(0)->type().element();
        if (from != ScalarKind::f32 && from != ScalarKind::f16 && from != ScalarKind::bf16) return 0;
        return plan_for(op, op.result()->type())->values;
      }
      case OpKind::reduce:
        return reg_tensor(op.operand(0)) ? plan_for(op, op.operand(0)->type())->values : 0;
      default:
        break;
    }
    if (!ir::is_elementwise(op.kind()) || op.num_results() != 1 || !reg_tensor(op.result()))
      return 0;
    // Float results only (16-bit ones would take the packed form), operands defined by ops (a
    // loop-carried operand may be updated in place).
    if (op.result()->type().element() != ScalarKind::f32) return 0;
    for (const Value* v : op.operands())
      if (v->type().is_tensor() && (!reg_tensor(v) || !v->def())) return 0;
    return plan_for(op, op.result()->type())->values;
  };
  // The longest run of value-wise ops from `start` whose tensors have one value count.
  size_t end = start;
  int64_t values = 0;
  for (size_t i = start; i < ops.size(); ++i) {
    const Operation& op = *ops[i];
    if (hoisted(op)) {
      end = i + 1;
      continue;
    }
    const int64_t n = values_of(op);
    if (n == 0 || (values && n != values)) break;
    values = n;
    end = i + 1;
  }
  if (!values || hoisted(*ops[start])) return none;
  // Shrink it until nothing it defines is used outside it (a reduce's result may be, after the
  // run, but not inside it), and each broadcast reads its source's values in the same chunk.
  auto index_of = [&](const Operation* op) -> size_t {
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].get() == op) return i;
    return ops.size();  // in a nested block
  };
  const int64_t width = 8;
  for (bool changed = true; changed && end > start;) {
    changed = false;
    for (size_t i = start; i < end && !changed; ++i) {
      const Operation& op = *ops[i];
      if (hoisted(op)) continue;
      size_t limit = end;
      for (int r = 0; r < op.num_results(); ++r) {
        const Value* v = op.result(r);
        ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
          bool uses = false;
          for (const Value* u : user->operands()) uses = uses || u == v;
          if (!uses) return;
          // (A use in a nested block counts as after the run.)
          const size_t at = user->parent_block() == &b ? index_of(user) : ops.size();
          if (op.kind() == OpKind::reduce) {
            if (at < end) limit = std::min(limit, at);  // its result is ready after the run
          } else if (at >= end) {
            limit = std::min(limit, i);  // its values escape the run
          }
        });
      }
      if (limit == end && op.kind() == OpKind::broadcast) {
        // A broadcast of a value the run defines: each result value's source in its chunk.
        const Value* src = op.operand(0);
        const size_t def_at = src->def() && src->def()->parent_block() == &b
                                  ? index_of(src->def())
                                  : ops.size();
        if (def_at >= start && def_at < end) {
          const auto from = local_broadcast(op);
          for (size_t v = 0; from && v < from->size() && limit > i; ++v)
            if ((*from)[v] / width != int64_t(v) / width) limit = i;
          if (!from) limit = i;
        }
      }
      if (limit < end) {
        end = limit;
        changed = true;
      }
    }
  }
  // Worth it only over two chunks or more and two value-wise ops or more.
  int ops_in_run = 0;
  for (size_t i = start; i < end; ++i) ops_in_run += !hoisted(*ops[i]);
  if (end <= start || ops_in_run < 2 || values % width != 0 || values / width < 2) return none;
  // Broadcasts from outside the run must be made locally too (a shared-memory broadcast has
  // barriers, which cannot repeat per chunk).
  for (size_t i = start; i < end; ++i)
    if (ops[i]->kind() == OpKind::broadcast && !local_broadcast(*ops[i])) return none;
  return ChunkedRun{end, values, width};
}

void Emitter::emit_chunked(const ir::Block& b, size_t start, const ChunkedRun& run) {
  const auto& ops = b.ops();
  line("// values in chunks of " + std::to_string(run.width) + " (a chunked run of " +
       std::to_string(run.end - start) + " ops)");
  for (size_t i = start; i < run.end; ++i)
    if (hoisted(*ops[i])) emit(*ops[i]);
  std::vector<std::pair<const Operation*, ReduceParts>> sinks;
  for (size_t i = start; i < run.end; ++i)
    if (ops[i]->kind() == OpKind::reduce)
      sinks.emplace_back(ops[i].get(), reduce_begin(*ops[i], /*accumulate=*/true));
  // Does the run read a row held in packed registers (defined before it) and two column vectors
  // or more (LayerNorm's weight and bias)? Then each chunk holds that row beside the vectors'
  // words, over the 32-register budget by 2 (see copy()); with one (RMSNorm's weight) it fits,
  // and fetched by halves it spilled 8 bytes at [1,16384] over 512 threads.
  bool reads_held_row = false;
  int column_vectors = 0;
  for (size_t i = start; i < run.end; ++i) {
    const Operation& op = *ops[i];
    for (const Value* v : op.operands()) {
      auto held = regs_.find(v);
      if (held != regs_.end() && held->second.packed) reads_held_row = true;
    }
    if (op.kind() == OpKind::copy && op.num_results() == 1 &&
        block_invariant_read_only(kernel_, op))
      ++column_vectors;
  }
  // Only in the first half of the chunks: the held row's words die chunk by chunk, so from the
  // middle on the 16-byte fetches fit (LayerNorm's four chunks at 2047 x 32760, 3000 x 16376 and
  // 8191 x 8200: ptxas spills nothing with halves in chunks 0-1, 20 bytes with halves in chunk 0
  // only, 16-40 with none; with halves in all four, 8 bytes at 8191 x 8200). Each 8-byte fetch
  // is one more load instruction: ncu counted 2.7x the LSU-queue stalls (lg_throttle) of a
  // hand-written kernel that fetches 16 bytes (call H of
  // bench/results/2026-11-29-rows-chunked-blocks-h200.md).
  const bool beside_held_row = reads_held_row && column_vectors >= 2;
  for (int64_t lo = 0; lo < run.values; lo += run.width) {
    window_ = std::make_pair(lo, lo + run.width);
    chunk_beside_held_row_ = beside_held_row && 2 * lo < run.values;
    line("{");
    ++indent_;
    for (size_t i = start; i < run.end; ++i) {
      const Operation& op = *ops[i];
      if (hoisted(op)) continue;
      if (op.kind() != OpKind::reduce) {
        emit(op);
        continue;
      }
      for (auto& [sink, parts] : sinks)
        if (sink == &op) reduce_fold(parts, reg(op, op.operand(0)), lo, lo + run.width);
    }
    --indent_;
    line("}");
  }
  window_.reset();
  chunk_beside_held_row_ = false;
  // What the chunks defined is out of scope now.
  for (size_t i = start; i < run.end; ++i)
    if (ops[i]->kind() != OpKind::reduce && !hoisted(*ops[i]))
      for (int r = 0; r < ops[i]->num_results(); ++r) regs_.erase(ops[i]->result(r));
  std::vector<const ReduceParts*> ends;
  for (const auto& sink : sinks) ends.push_back(&sink.second);
  reduce_end(ends);
}

}  // namespace tessel::target::cuda::detail
