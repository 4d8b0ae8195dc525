// The thread-level interpreter's shared state: the ThreadRun class and the values it tracks
// (Global, Shared, Regs, RV), declared here so that its parts can live in separate files:
// thread_interpreter.cpp (the walk over the IR: parameters, blocks, views, elementwise, reductions,
// loops) and thread_atoms.cpp (copies and mma executed by their instruction atoms thread by
// thread). Internal to src/interp; see thread_interpreter.h for what the interpreter does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/element_ops.h"
#include "interp/interpreter.h"
#include "interp/thread_interpreter.h"
#include "ir/ir.h"

namespace tessel::interp::detail {

using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Value;

std::string vname(const Value* v);
int64_t product(const std::vector<int64_t>& s);
// Colexicographic index <-> coordinate over a shape (the TV layouts' tile index).
int64_t colex(const std::vector<int64_t>& c, const std::vector<int64_t>& shape);
std::vector<int64_t> coord_of(int64_t i, const std::vector<int64_t>& shape);

struct Global {
  HostTensor* host = nullptr;
  std::vector<int64_t> root_shape, origin;  // root coordinates of the view's element 0
  std::vector<int> dim_map;                 // view dim -> root dim
  std::vector<int64_t> shape;
  bool masked = false;
  double pad = 0;
};

struct Shared {
  std::shared_ptr<std::vector<double>> mem;
  std::vector<int64_t> table;  // tile index -> offset
  std::vector<int64_t> shape;
};

// Registers: thread t, value v at data[t * V + v]; element table[t + T*v] of the tile.
struct Regs {
  std::shared_ptr<std::vector<double>> data;
  std::vector<int64_t> table;
  int64_t T = 0, V = 0;
  std::vector<int64_t> shape;
  double& at(int64_t t, int64_t v) const { return (*data)[size_t(t * V + v)]; }
  int64_t elem(int64_t t, int64_t v) const { return table[size_t(t + T * v)]; }
};

struct RV {
  enum Kind { scalar, global, shared, reg } kind = scalar;
  Element s;
  Global g;
  Shared sh;
  Regs r;
};

class ThreadRun {
 public:
  ThreadRun(const Operation& kernel, const std::vector<Argument>& args, const RunOptions& options);
  ThreadRunStats run();

 private:
  std::vector<RV> run_block(const ir::Block& block);
  const RV& get(const Value* v);
  Element scalar(const Value* v) { return get(v).s; }
  [[noreturn]] void unsupported(const Operation& op);
  Regs new_regs(const Value* v, const Operation& op);
  static std::vector<std::unordered_map<int64_t, int64_t>> slots(const Regs& r);
  Shared shared_view(const Value* v, std::shared_ptr<std::vector<double>> mem);
  bool inside(const Global& g, const std::vector<int64_t>& c, std::vector<int64_t>* root);
  int64_t row_major(const std::vector<int64_t>& c, const std::vector<int64_t>& shape);
  double load(const Operation& op, const Global& g, const std::vector<int64_t>& c);
  void store(const Operation& op, const Global& g, const std::vector<int64_t>& c, double x);
  void set_scalar(const Value* v, Element s);
  void set_regs(const Value* v, Regs r);
  void exec(const Operation& op);
  void tile(const Operation& op);
  void transpose(const Operation& op);
  void create(const Operation& op);
  void elementwise(const Operation& op);
  void iota(const Operation& op);
  void cast(const Operation& op);
  double held(const Operation& op, const Value* v, const Regs& r,
              const std::vector<std::unordered_map<int64_t, int64_t>>& slot, int64_t t,
              int64_t elem);
  [[noreturn]] void missing(const Operation& op, const Value* v, const Regs& r, int64_t t,
                            int64_t elem);
  void reduce(const Operation& op);
  void broadcast(const Operation& op);
  void rearrange(const Operation& op);
  RV clone(const RV& x);
  void for_op(const Operation& op);

  // The atom executors (thread_atoms.cpp).
  void copy(const Operation& op);
  void load_shared(const Operation& op, const std::string& atom, const Shared& sh, const Regs& regs,
                   const std::function<int64_t(int64_t)>& shared_index, int bits);
  void store_shared(const Operation& op, const std::string& atom, const Shared& sh,
                    const Regs& regs, int bits);
  void fill_regs(const Operation& op, const Regs& regs, const RV& src,
                 const std::vector<int64_t>& shape);
  void mma(const Operation& op);

  const Operation& kernel_;
  const RunOptions& options_;
  int64_t threads_ = 128;
  std::vector<int64_t> block_index_;
  std::unordered_map<const Value*, RV> env_;
  ThreadRunStats stats_;
};

}  // namespace tessel::interp::detail
