// The CUDA C++ emitter: a lowered tile-IR kernel -> one readable CUDA C++ kernel against the
// device library (runtime/device/), compiled by NVRTC.
//
// What "lowered" means here. Every register tensor carries a thread-value layout (T,V) -> tile
// (pinned by the writer or chosen by layout synthesis), all with the same thread count T, which
// becomes the block size. The emitter turns each layout into index arithmetic once per kernel:
// every leaf of the thread and value modes is split into the tile dimension it moves along, so a
// thread's coordinate in dimension d is `thread part(tid) + value constant(v)`; the thread part is
// emitted once (`const int L0_d1 = (tid % 32) * 8;`) and the value part is folded into constants.
// Global tensors are row-major over their (possibly parametric) extents; size symbols become `int`
// kernel parameters. Masked tiles become predicates, and a predicate is dropped when the kernel's
// divisibility facts prove the tile full (Graphene §3.4: a tile of 64 columns indexed below
// cdiv(N,64) with N % 64 == 0 never crosses N). Runs of values that are contiguous in memory
// become 4/8/16-byte vector accesses when alignment follows from the facts. Reductions combine a
// thread's own values, then butterfly shuffles over the lanes that split the reduced dimension,
// then (across warps) scratch in shared memory; broadcasts read the value the thread already holds
// or go through shared memory. All shared memory is one dynamic allocation carved at fixed
// offsets. The grid is the kernel's block_grid, evaluated on the host by the caller.
//
// What is not emitted yet (a UserError that names the op): mma, shared-memory tensors (alloc,
// copies into shared), transpose, global_view, iota, cmp/select, if, call_external, integer
// register tensors, squeezed tiles. A rearrange goes through shared memory.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel::target::cuda {

// One kernel parameter in launch order: the kernel's own parameters (global tensors as pointers,
// scalars by value), then one `int` per size symbol.
struct KernelParam {
  // sm_count: an `int` the launch fills with the device's SM count (what `sm_count` reads).
  // workspace: a pointer to `workspace` op number `tensor` (program order) of the kernel's
  // workspaces, which the launch allocates (interp::workspace_bytes) and zeroes once.
  enum class Kind { tensor, scalar, size, tma_descriptor, sm_count, workspace };
  Kind kind = Kind::tensor;
  std::string name;
  ir::Type type;  // the tensor or scalar type; `index` for sizes; the tensor's for descriptors
  // A TMA descriptor (a `const __grid_constant__ CUtensorMap` built by the host at launch) of the
  // kernel's tensor argument number `tensor` (its position among the kernel's arguments),
  // row-major, with this box (innermost dimension first, elements) and swizzle (0, 32, 64 or 128
  // bytes); out-of-bounds elements read as zeros. It takes no argument of its own.
  int tensor = -1;
  std::vector<int64_t> box;
  int swizzle_bytes = 0;
  // The kernel uses the descriptor only when the tensor qualifies for TMA (a run-time guard in
  // the IR): the launch passes an empty descriptor instead of refusing a tensor that does not.
  bool optional = false;
};

struct EmittedKernel {
  std::string entry;   // the extern "C" entry point
  std::string source;  // the CUDA C++ translation unit
  int threads = 0;     // block size (the register layouts' T)
  int cluster = 1;     // blocks per cluster along the grid's x (the block_grid's `cluster`)
  int dynamic_shared_bytes = 0;
  // The kernel waits for the launch before it (grid_wait): launch it with the programmatic
  // stream serialization attribute, so that it may start before that launch has finished.
  bool overlaps_launches = false;
  std::vector<KernelParam> params;
};

// Emits `kernel` (a kernel op, lowered as described above). UserError, naming the op and its
// location, for anything the emitter cannot express.
EmittedKernel emit_cuda(const ir::Operation& kernel);

}  // namespace tessel::target::cuda
