// EliminateCopies (Cypress §4.2.3): removes the copies that dependence analysis's copy-in /
// copy-out discipline made, by rewrite patterns applied until none applies, the ones that can
// remove synchronization first:
//  - spill hoisting: a loop whose body copies a tensor X from outside into a fresh tensor t first
//    and t back into X last (X untouched otherwise) gets the two copies before and after the loop;
//    t is then carried by the loop (the GEMM accumulator);
//  - invariant hoisting: a fresh tensor a loop's body fills by a copy first, from data the loop
//    neither writes nor indexes by its variable, and writes no more (attention's Q tile), is
//    allocated and copied once before the loop;
//  - alias: a fresh allocation in the same memory as the tensor it is copied from or back into
//    (a task launched on data already where its mapping wants it) becomes that tensor;
//  - duplicates: the same data copied twice into fresh tensors of one memory, neither written
//    otherwise, the source unchanged between (A's tile read by both GEMMs of a dual GEMM), is
//    copied once;
//  - forward: `copy a -> X; copy X -> b` with a and b allocations of one memory, shape and
//    element type, a dead after the second copy, becomes a alone (the accumulator through a
//    `none` tensor);
//  - self copies and copies into tensors nobody reads are deleted, then unused allocations; a
//    copy into a tensor that a later copy of the same op list overwrites, nothing touching the
//    tensor between, is deleted (an accumulator copied back after two tasks of one loop step).
// A deleted op's event is replaced, where later ops wait for it, by the events it waited for.
// The pass runs before and after vectorize.
#pragma once

#include "frontend/task/event_ir.h"

namespace tessel::transforms {

void eliminate_copies(task::events::Program& program);

}  // namespace tessel::transforms
