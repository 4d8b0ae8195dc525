// The CPU interpreter of the tile IR: the oracle that every pass and every generated kernel is
// checked against when there is no GPU.
//
// Semantics. A kernel runs once per block of its grid (the extents its `block_grid` op computes),
// blocks in row-major order of their indices, each block's ops in program order: the sequential
// semantics of a tile program, with no threads (roles aside: see below). Register and shared
// tensors are private to the block run that made them. Every element is held at its exact value
// in its element type:
//  - f32 arithmetic is C++ `float` arithmetic (transcendentals are the C library's float functions:
//    expf, exp2f, logf, log2f, sqrtf, tanhf; rsqrt(x) = 1.0f / sqrtf(x); sigmoid(x) =
//    1.0f / (1.0f + expf(-x)); max/min are fmaxf/fminf); f64 likewise in double;
//  - f16, bf16 and fp8 arithmetic is done in f32 and rounded to the element type (RNE);
//  - integers compute in 64 bits and wrap to their width (ir/int_arith.h);
//  - cast rounds to nearest even (fp8: saturating), float to int truncates and saturates;
//  - mma computes, for each (m, n), acc = c[m,n]; for k = 0..K-1: acc = acc + a[m,k] * b[k,n],
//    the product and the sum in f32 for float inputs (each rounded to the accumulator type when
//    that is f16), in 64-bit integers wrapped to i32 for i8/u8;
//  - reduce folds the reduced coordinates in row-major order: acc = x[first]; acc = acc op x[next];
//  - elementwise, cast, broadcast, fill, iota visit elements in row-major order.
// So a plain C++ loop that computes in the same order gets bit-identical results.
// The element rules above are implemented once, in interp/element_ops.h, which the thread-level
// interpreter calls too.
//
// Memory. A global tensor parameter is a HostTensor (device encoding, row-major, or addressed
// through the parameter type's layout when it has one). `tile`, `transpose` and `global_view` make
// views (global_view addresses through its layout, so its tiles may be non-contiguous); accessing
// an element of an unmasked view that lies outside its tensor is a UserError naming the op and the
// index. A masked tile (`masked`, `pad = v`) reads `v` outside and drops writes there: Graphene's
// partial tiles. Reading an element of an `alloc`ed tensor that nothing has written is a UserError
// too.
//
// Roles (warp specialization, src/ir/async.h). The ops before a kernel's first `warp_group` run
// once per block as above. Then each warp_group region runs as its own sequential thread of
// execution with tile-level semantics (a role's op acts on whole tiles); the values defined before
// the roles are shared read-only, shared and global memory are shared. Roles interleave only at
// synchronization points — before every aref op, mbarrier op, mma_commit, mma_wait and copy_async
// — where a scheduler (RunOptions::schedule) picks which ready role goes next:
//  - round-robin: each ready role, then the copy engine (landing the oldest copy in flight), one
//    step each in turn (the default);
//  - producer-first: producer roles as far as they can go, then consumers; copies land only when
//    no role can run (the latest moment);
//  - consumer-first: consumers as far as they can go, then copies land, then producers;
//  - random:SEED: a uniformly random ready role or in-flight copy at every point.
// Each is deterministic (random given its seed). A correct kernel gives bit-identical results
// under all of them; producer-first is adversarial for slots reused too early, and copies landing
// late for waits on the wrong barrier or parity. When every unfinished role is blocked and no
// copy is in flight, the block deadlocked: a UserError names each role and the op it blocks in.
//
// Level 1, arefs. An `aref {slots = D}` is D slots of its buffer types in shared memory, once per
// block; an element nobody wrote reads as an error, as for alloc. Per slot a state machine,
// free -> acquired(n) -> committed(n) -> waited(n) -> released(n) -> acquired(n + D):
// `aref_acquire %r, %n` blocks until n < D or n - D was released, `aref_wait %r, %n` until n was
// committed; both return views of slot n % D's buffers. Errors (naming the aref and the op):
// sequence numbers not 0, 1, 2, ... in order per op, a commit / release of a number not acquired /
// waited for, a second producer or consumer role, a role that ends holding an uncommitted number,
// and, when the roles have ended, committed numbers nobody waited for or waited ones never
// released.
//
// Async mma. An `mma` with `async` joins the role's open wgmma group, `mma_commit` closes it,
// `mma_wait {pending = P}` retires all but the P newest committed groups, oldest first. An async
// mma reads its operands and computes when its group retires — the latest legal moment — so a
// slot released (and refilled) before that wait gives a wrong result. Its result is pending until
// then: a later async mma may take it as its accumulator and a yield may carry it, but any other
// read is a UserError ("before the mma_wait that retires it"). An mma without `async` completes
// at once.
//
// Level 2, barriers. `mbarrier_init {arrivals = A} : mbarrier<N>` makes N barriers, each the phase
// model of ir/barrier_model.h (pending arrivals reloaded to A each phase, transaction bytes, the
// phase number). `mbarrier_wait %b, %i, %p` blocks until the phase of b[i] with parity p completed
// (on a fresh barrier parity 1 counts as completed); `mbarrier_arrive {by = one | thread | warp |
// warpgroup}` arrives 1, threads, threads / 32 or threads / 128 times (the role's threads; in an
// `issue = one` role a single thread runs, so once); `mbarrier_expect_tx {bytes = B}` is one
// arrival expecting B bytes. `copy_async %tile, %dst, %b, %i` reads the tile at once (a masked
// tile fills its pad outside the tensor, as TMA fills zeros) and is then in flight: its data lands
// in %dst and its bytes complete on b[i] when the scheduler says. More arrivals than a phase has
// pending, more bytes than expected, a barrier index or parity out of range are errors.
// `aref_slot %r, %s` returns slot s's buffers without waiting. block_sync, setmaxnreg and the
// ordering ops of TMA stores (copy_async_commit / copy_async_wait, fence_proxy_async, role_sync)
// do nothing at tile level; a TMA store (copy_async from shared to global) lands at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "interp/numerics.h"
#include "ir/ir.h"

namespace tessel::interp {

// A kernel argument: a global tensor in host memory, or a scalar (floats as double, integers as
// int64).
using Argument = std::variant<HostTensor*, double, int64_t>;

// An operand of an external call: a scalar (floats as double, integers converted to double), or a
// tensor as a row-major host copy of its elements. A tensor in global or shared memory is passed by
// reference: what the function writes into the copy is written back to the tensor afterwards (a
// Cypress leaf task with write privilege). A register tensor is a value: writes to it are dropped.
struct ExternalArg {
  double scalar = 0;
  HostTensor* tensor = nullptr;
};

// A host function that `call_external {callee = "name"}` calls; it returns its scalar results.
using ExternalFunction = std::function<std::vector<double>(std::vector<ExternalArg>& args)>;

// How the interpreter interleaves a block's roles (warp_group regions) at their synchronization
// points (see "Roles" above). Every schedule is deterministic: `random` given its seed.
struct Schedule {
  enum class Kind {
    round_robin,     // each runnable role, then the copy engine, takes one step in turn
    producer_first,  // producer roles as far as they go, then consumers; copies land last
    consumer_first,  // consumer roles as far as they go, then copies land, then producers
    random,          // a uniformly random runnable role or in-flight copy, from `seed`
  };
  Kind kind = Kind::round_robin;
  uint64_t seed = 0;
  // "round-robin", "producer-first", "consumer-first", "random:SEED" ("random" is seed 0);
  // anything else is a UserError.
  static Schedule parse(const std::string& text);
  std::string str() const;
};

struct RunOptions {
  std::map<std::string, int64_t> sizes;  // a value for every size symbol of the kernel
  std::map<std::string, ExternalFunction> externals;
  // What `sm_count` reads: the number of SMs the kernel is launched for. A persistent kernel runs
  // min(tiles, sm_count) blocks, each looping over tiles; a small default makes the interpreter
  // exercise that loop (blocks taking several tiles, some blocks one fewer).
  int64_t sm_count = 3;
  Schedule schedule{};  // how roles interleave (round-robin unless set)
};

// Runs `kernel` (a kernel op) on `args` (one per kernel parameter, in order). Global tensors are
// read and written in place. Throws UserError for bad arguments and out-of-bounds accesses.
void interpret(const ir::Operation& kernel, const std::vector<Argument>& args,
               const RunOptions& options);

// The grid the kernel would run with for these sizes (1 x 1 x 1 without a block_grid op).
std::vector<int64_t> grid_extents(const ir::Operation& kernel,
                                  const std::map<std::string, int64_t>& sizes,
                                  int64_t sm_count = 3);

// The bytes of each of the kernel's `workspace` ops (async.h), in program order, for these sizes:
// what a launch allocates for it.
std::vector<int64_t> workspace_bytes(const ir::Operation& kernel,
                                     const std::map<std::string, int64_t>& sizes,
                                     int64_t sm_count = 3);

// The shape of a global tensor type with its size symbols replaced by values.
std::vector<int64_t> concrete_shape(const ir::Type& type,
                                    const std::map<std::string, int64_t>& sizes);

}  // namespace tessel::interp
