// The thread-level interpreter: runs a kernel after layout synthesis thread by thread, so that the
// synthesized layouts and atoms are checked against the tile-level run without a GPU.
//
// Semantics. Each block has `threads` simulated threads (block_grid's `threads` attribute). A
// register tensor is stored per thread: thread t holds exactly the values its thread-value layout
// gives it, value v being element layout(t, v) of the tile; an op never looks at another thread's
// registers except through an instruction that does so on the hardware. A shared tensor is a flat
// array addressed through its (swizzled) layout, so shared memory is laid out as synthesis chose.
//  - copy global -> register: each thread loads the elements of its own values; shared ->
//    register (and mma.sync fragments read from shared memory) execute the chosen instruction:
//    ldmatrix lane by lane (row addresses from 8 lanes, two elements per lane from each row, so a
//    layout that breaks a 16-byte row delivers wrong values), ld.shared as whole vectors;
//    register -> shared likewise (stmatrix lane by lane, st.shared as vectors);
//    register -> global: each thread stores its own; global -> shared: every element lands at its
//    layout's offset.
//  - mma: executed atom by atom, as the hardware sees it: for each executing group (a warp for
//    mma.sync, a warpgroup for wgmma) and each repetition, the atom's A, B and C tiles are gathered
//    from the lanes' registers through the atom's own fragment layouts (target/cuda/atoms.h), the
//    product is accumulated over k in order, and D is scattered back through the C fragment. A
//    shared operand is loaded into the fragment `a_fragment`/`b_fragment` names by its
//    `a_load`/`b_load` instruction (mma.sync), or read whole through the layout (wgmma's
//    descriptor; the descriptor encoding itself is not simulated).
//  - elementwise ops and cast: each thread on its own values (operands must share the layout).
//  - reduce: each thread folds its own values per output element, then the threads that share an
//    output combine their partials by an xor butterfly over the lanes that the projected layout
//    broadcasts (shared memory when they span warps). A sum is therefore re-associated: it equals
//    the tile-level sum up to rounding, not bit for bit; max and min are exact.
//  - broadcast: each thread takes the source values it holds itself; a thread that would need
//    another thread's value is an error (the layouts were not consistent).
//  - rearrange: through shared memory (all threads write by the source layout, read by the
//    result's).
// Supported: the ops of the tile-IR examples (size, const, scalar index and float arithmetic,
// block_grid, tile (masked, padded, squeezed), transpose, alloc, fill, copy, mma, cast, the float
// elementwise ops, reduce, broadcast, rearrange, for/yield). Others (iota, select, cmp on tensors,
// global_view, call_external, if) are a UserError naming the op.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/ir.h"

namespace tessel::interp {

struct ThreadRunStats {
  int64_t blocks = 0;
  int64_t threads = 0;
  int64_t mma_atoms = 0;       // atom instances executed
  int64_t shuffle_rounds = 0;  // butterfly steps of reductions
  int64_t rearranges = 0;
};

// Runs `kernel` thread by thread on `args` (as interpret()). Every register tensor must have a
// layout and every mma an `atom` and `tiling` (run synthesize-layouts and
// synthesize-shared-layouts first); otherwise a UserError names the value or op.
ThreadRunStats interpret_threads(const ir::Operation& kernel, const std::vector<Argument>& args,
                                 const RunOptions& options);

}  // namespace tessel::interp
