// The event IR of the task compiler (Cypress §4.1): copies between tensors, calls of leaf
// variants, sequential `for` and parallel `pfor` loops, every asynchronous operation producing an
// *event* and waiting for a set of earlier events. The dependence graph is the events' edges; an
// SSA order of the ops is one schedule that satisfies it.
//
// Events are unit or arrays, each dimension annotated with a processor level: a `pfor` over
// (n, warpgroup) makes an array of n events, one per warpgroup; a later op waits for one element
// (`%e3[%w]`, a point-wise dependence) or for all (`%e3[:]`, a broadcast: every warpgroup done).
// Vectorization keeps that information when it flattens implicit loops into single ops spread over
// the processors (an op's `lanes`).
//
// Tensors are a table: the kernel's arguments (global), allocations (`tensor` ops, in a memory),
// and pieces (`%t.blocks(64, 256)[%w, 0]`: the piece at those coordinates of a blocks partition of
// a tensor). The IR prints (Program::print) and parses back (event_parser.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/task/machine.h"
#include "tessel/task.h"

namespace tessel::task::events {

struct Tensor {
  enum class Kind { argument, allocation, piece } kind = Kind::allocation;
  std::string name;
  ScalarKind element = ScalarKind::f32;
  std::vector<Expr> shape;
  Memory memory = Memory::none;
  int parent = -1;           // piece
  std::vector<Expr> block;   // piece: the partition's block extents
  std::vector<Expr> coords;  // piece
  SourceLocation loc;        // where the program made it (a local, a piece)
};

// A reference to the event of op `op`; for an array event, one index per dimension: a loop
// variable, or ":" for all of that dimension.
struct EventRef {
  int op = -1;
  std::vector<std::string> index;
};

// After vectorization: an op run by `count` processors of `level`, each on its part of the
// op's tensors along dimension `dim`.
struct Lane {
  int64_t count = 1;
  Processor level = Processor::thread;
  int dim = 0;
};

struct Op {
  enum class Kind { alloc, copy, call, for_loop, pfor } kind = Kind::copy;
  int id = -1;  // the event's number (%e<id>); allocations have none
  std::vector<EventRef> after;
  std::vector<std::pair<Expr, Processor>> event_shape;  // empty: a unit event
  int tensor = -1;                                      // alloc
  int src = -1, dst = -1;                               // copy
  const Variant* leaf = nullptr;                        // call
  const TaskDecl* task = nullptr;                       // call
  std::vector<int> args;                                // call
  std::vector<Lane> lanes;                              // call, copy (after vectorization)
  Processor level = Processor::block;  // call: where it runs; loops: whose iterations
  std::vector<std::string> vars;       // loops
  std::vector<Expr> extents;           // loops
  std::vector<std::unique_ptr<Op>> body;
  // From the mapping instance the op came from (loops): pipeline depth (0: not given), warp
  // specialization (-1: not given), the block's shared-memory budget (0: the machine's).
  int64_t pipeline = 0;
  int warp_specialize = -1;
  int64_t shared_limit = 0;
  // The grid's pfor over blocks: the order its blocks take their tiles (the mapping's `order`,
  // tessel::GridOrder): raster groups along dimension 0 (0: not given), the dimension taken
  // from both ends in turns (-1: none).
  int64_t raster_group = 0;
  int alternate_ends = -1;
  SourceLocation mapping_loc;  // the mapping item that asked for the above, else the instance
  int64_t offset = -1;         // alloc in shared memory, after allocate-shared
  SourceLocation loc;          // the program's statement
};

struct Program {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<int> arguments;      // tensors that are the kernel's arguments, in order
  std::vector<std::string> sizes;  // the size symbols, in order of first appearance
  std::vector<std::unique_ptr<Op>> body;
  int next_event = 0;

  int add_tensor(Tensor t);
  std::unique_ptr<Op> make_op(Op::Kind kind);
  std::string tensor_ref(int id) const;  // %t3, %C.blocks(128, 256)[%i, %j]
  int root(int id) const;                // the argument or allocation a piece is part of
  std::string print() const;
};

// Calls `f` on every op of `ops`, nested loops' bodies after their loop op (pre-order).
void walk(std::vector<std::unique_ptr<Op>>& ops, const std::function<void(Op&)>& f);

}  // namespace tessel::task::events
