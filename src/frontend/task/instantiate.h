// Binds a task program to a mapping: the tree of task instances the mapping makes of the program
// (Cypress §3.3, "the mapping statically instantiates a tree of tasks"), every bad mapping
// refused with its location in the mapping. Both the task interpreter and the compiler walk this
// tree; neither needs to look at the mapping again.
//
// What is checked, each a UserError at the mapping item that causes it (the program's C++
// location in the message where a statement is involved):
//  - an unknown variant, an instance named in `calls` that does not exist, a launch of a task that
//    none of the instance's `calls` implements, a missing or unknown tunable, a `mems` list of the
//    wrong length, no entrypoint (or one that is not a grid-level instance of the entry task);
//  - a processor level that cannot run the variant (a leaf op the machine model does not offer
//    there, such as mma below a warpgroup; a leaf on the grid; a child wider than its parent;
//    a prange child not strictly narrower);
//  - an `order` on an instance that is not on the grid, a raster group below 1 or on a grid that
//    is not 2-D, an alternate_ends dimension the grid's prange does not have;
//  - a memory the level cannot name (shared memory on the grid), a tensor too large for its
//    memory (shared bytes over the block's budget, register bytes over 255 registers a thread);
//  - aliasing writes under prange (a written argument that is the same piece for two iterations);
//  - a partition that does not divide a tensor of static extent.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/task/machine.h"
#include "frontend/task/mapping.h"
#include "tessel/task.h"

namespace tessel::task {

// A tensor argument as an instance sees it: its element type and extents (constants, or
// expressions of the kernel's sizes for tensors that are still whole global tensors).
struct ArgInfo {
  ScalarKind element = ScalarKind::f32;
  std::vector<Expr> shape;
};

struct Node {
  const MappingInstance* instance = nullptr;
  const Variant* variant = nullptr;
  const TaskDecl* task = nullptr;
  Processor proc = Processor::grid;
  std::vector<Memory> mems;
  std::map<std::string, int64_t> tunables;
  std::vector<ArgInfo> args;
  std::map<const Stmt*, std::unique_ptr<Node>> callees;  // one per launch statement

  // An expression of the variant's body with tunables and parameter extents replaced.
  Expr resolve(const Expr& e) const;
  // The element type, resolved extents and memory of tensor `id` of the variant's body.
  ScalarKind element(int id) const;
  std::vector<Expr> shape(int id) const;
  Memory memory(int id) const;
  const Node& callee(const Stmt& launch) const;
};

struct Instantiation {
  const TaskProgram* program = nullptr;
  const Mapping* mapping = nullptr;
  const Machine* machine = nullptr;
  std::unique_ptr<Node> root;
};

Instantiation instantiate(const TaskProgram& program, const Mapping& mapping,
                          const Machine& machine = h100());

// Bytes of a tensor with static extents; -1 when an extent is not a constant.
int64_t static_bytes(ScalarKind element, const std::vector<Expr>& shape);

}  // namespace tessel::task
