// The CPU interpreter of the tile IR: the oracle that every pass and every generated kernel is
// checked against when there is no GPU.
//
// Semantics. A kernel runs once per block of its grid (the extents its `block_grid` op computes),
// blocks in row-major order of their indices, each block's ops in program order: the sequential
// semantics of a tile program, with no threads. Register and shared tensors are private to the
// block run that made them. Every element is held at its exact value in its element type:
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
  Schedule schedule;
};

// Runs `kernel` (a kernel op) on `args` (one per kernel parameter, in order). Global tensors are
// read and written in place. Throws UserError for bad arguments and out-of-bounds accesses.
void interpret(const ir::Operation& kernel, const std::vector<Argument>& args,
               const RunOptions& options);

// The grid the kernel would run with for these sizes (1 x 1 x 1 without a block_grid op).
std::vector<int64_t> grid_extents(const ir::Operation& kernel,
                                  const std::map<std::string, int64_t>& sizes,
                                  int64_t sm_count = 3);

// The shape of a global tensor type with its size symbols replaced by values.
std::vector<int64_t> concrete_shape(const ir::Type& type,
                                    const std::map<std::string, int64_t>& sizes);

}  // namespace tessel::interp
