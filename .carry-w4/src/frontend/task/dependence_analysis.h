// Dependence analysis (Cypress §4.2.1): the syntax-directed translation of an instantiated task
// program into the event IR. It walks the task tree in program order from the entrypoint; every
// launch becomes copy-in / call / copy-out:
//  (1) a fresh allocation for each tensor argument, in the memory the callee's mapping gives it;
//  (2) for each argument the callee reads, a copy from the caller's tensor into it;
//  (3) the callee's body, inlined (a leaf variant: one `call`), over the fresh tensors;
//  (4) for each argument the callee writes, a copy back into the caller's tensor.
// srange becomes `for`, prange `pfor` over the callee's processor level. Each op waits for the
// last writer of what it reads and, if it writes, for the last readers too (true and anti
// dependences), tracked per tensor within the scope of one loop body; a loop waits for what its
// body needs from outside, and after a pfor, ops wait for all its iterations (`%e[:]`).
// The result has many copies; eliminate-copies removes them.
#pragma once

#include "frontend/task/event_ir.h"
#include "frontend/task/instantiate.h"

namespace tessel::task {

events::Program analyze_dependences(const Instantiation& inst);

}  // namespace tessel::task
