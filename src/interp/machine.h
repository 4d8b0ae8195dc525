// The tile IR interpreter's machine (internal to src/interp): the runtime values (storage, views),
// and Machine, which runs one kernel, one block or one role of a block at a time. interpreter.cpp
// holds the kernel's entry, element access and the ops of tile programs (interpreter_views.cpp
// the view ops: tile, global_view, transpose; interpreter_workspace.cpp workspaces);
// interpreter_async.cpp the roles and asynchrony (src/ir/async.h: arefs, mbarriers, TMA, wgmma
// groups, clusters), whose protocol models live in roles.h and sync_models.h.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/element_ops.h"
#include "interp/interpreter.h"
#include "interp/roles.h"
#include "interp/sync_models.h"
#include "ir/int_arith.h"
#include "layout/parse.h"

namespace tessel::interp::detail {

using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

inline std::string index_str(const std::vector<int64_t>& index) {
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) out += (i ? ", " : "") + std::to_string(index[i]);
  return out + "]";
}

struct Storage {
  ScalarKind element = ScalarKind::f32;
  HostTensor* host = nullptr;    // global memory
  std::vector<Element> data;     // shared / register memory
  std::vector<uint8_t> written;  // per element, only for alloc'd tensors and aref slots
  // The async mma whose result this is, until the mma_wait that retires its group computes it.
  const ir::Operation* pending_mma = nullptr;
  int64_t size() const { return host ? host->size() : static_cast<int64_t>(data.size()); }
};

// A tensor value: a strided window onto storage, with the bookkeeping that bounds checks and
// messages need.
struct View {
  std::shared_ptr<Storage> storage;
  ScalarKind element = ScalarKind::f32;
  int64_t offset = 0;
  std::vector<int64_t> shape, strides;
  std::vector<int64_t> valid;  // per dim: coordinates below this lie inside the tensor
  bool masked = false;
  Element pad;
  // A tile with a window and `over_read` (src/ir/grouped.h): along dimension over_dim, elements at
  // or past over_valid (and inside the tensor) read as NaN — or, for `over_read = finite`
  // (over_finite), as the element type's largest finite value — and take no writes. -1: none.
  int over_dim = -1;
  int64_t over_valid = 0;
  bool over_finite = false;
  // An indirect tile (src/ir/grouped.h): along dimension indirect_dim, coordinate c addresses
  // storage offset indirect_offsets[c] (the mapped row times the row stride) instead of
  // c * strides[indirect_dim]; only its first valid[indirect_dim] entries mean anything. -1: none.
  int indirect_dim = -1;
  std::shared_ptr<const std::vector<int64_t>> indirect_offsets;
  std::string root_name;
  std::vector<int64_t> root_shape, origin;
  std::vector<int> dim_map;  // view dim -> root dim
  // A view made by global_view addresses its elements through a layout instead of strides:
  // address = offset + map(map coordinate), where view dim d moves map mode map_dim[d].
  std::shared_ptr<const layout::Layout> map;
  std::vector<int64_t> map_origin;
  std::vector<int> map_dim;
};

struct RtValue {
  bool is_tensor = false;
  Element scalar;
  View tensor;
};

inline int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

inline std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Calls fn(coord) for every coordinate of `shape` in row-major order.
template <typename F>
inline void for_each_coord(const std::vector<int64_t>& shape, F&& fn) {
  if (product(shape) == 0) return;
  std::vector<int64_t> c(shape.size(), 0);
  while (true) {
    fn(c);
    int d = static_cast<int>(shape.size()) - 1;
    while (d >= 0 && ++c[d] == shape[d]) c[d--] = 0;
    if (d < 0) return;
  }
}

// A row-major view of all of `storage` (`shape`), named `name` in messages.
inline View whole_view(std::shared_ptr<Storage> storage, const std::vector<int64_t>& shape,
                       const std::string& name) {
  View v;
  v.element = storage->element;
  v.storage = std::move(storage);
  v.shape = shape;
  v.strides = row_major_strides(shape);
  v.valid = shape;
  v.root_name = name;
  v.root_shape = shape;
  v.origin.assign(shape.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) v.dim_map.push_back(static_cast<int>(d));
  return v;
}

// A view of the whole of `host` (row-major, `shape`), named `name` in messages.
View host_view(HostTensor* host, const std::vector<int64_t>& shape, const std::string& name);

inline View fresh_tensor(ScalarKind element, const std::vector<int64_t>& shape,
                         const std::string& name, bool track_writes) {
  auto storage = std::make_shared<Storage>();
  storage->element = element;
  storage->data.assign(static_cast<size_t>(product(shape)), Element{});
  if (track_writes) storage->written.assign(storage->data.size(), 0);
  return whole_view(std::move(storage), shape, name);
}

// A block's arefs (their protocol state and slot buffers) and mbarrier arrays, shared by its roles.
struct BlockAsync {
  std::map<const Value*, ArefModel> arefs;
  std::map<const Value*, std::vector<std::vector<View>>> slots;  // per aref: slot -> its buffers
  std::map<const Value*, BarrierArray> barriers;
  // In a cluster: the roles still running, whether a cluster_sync ends the kernel, and whether
  // the block has exited (its roles ended and nothing holds it): a peer's arrival on, or
  // multicast into, an exited block is an error, as on the GPU.
  int roles_running = 0;
  bool ends_with_cluster_sync = false;
  bool exited = false;
  std::string name;  // "block 3"
};

class Machine;
// A cluster's roles, collected block by block and then run together.
struct ClusterRoles {
  std::vector<std::unique_ptr<Machine>> machines;
  std::vector<RoleScheduler::Role> roles;
};

class Machine {
 public:
  explicit Machine(const RunOptions& options) : options_(options) {}

  void run(const Operation& kernel, const std::vector<Argument>& args);

  // Blocks per cluster where the kernel's blocks interact through the cluster (cluster_rank,
  // cluster_sync, multicast loads, cluster arrivals: what multicast-loads and persistent write);
  // 1 otherwise. A `cluster` pin on a tile program's grid only asks the compiler for clusters:
  // the program means the same with its blocks run alone.
  static int64_t cluster_size(const Block& body);

  std::vector<int64_t> grid_only(const Operation& kernel);
  std::vector<int64_t> workspace_bytes(const Operation& kernel);

  void bind_sizes(const Operation& kernel);

 private:
  void bind_arguments(const Operation& kernel, const Block& body,
                      const std::vector<Argument>& args);

  std::vector<int64_t> compute_grid(const Block& body);

  // A grid extent, computed from sizes and constants only (the verifier guarantees that).
  int64_t grid_value(const Value* v);

  RtValue& get(const Value* v);
  Element scalar(const Value* v) { return get(v).scalar; }
  int64_t index(const Value* v) { return get(v).scalar.i; }

  void set(const Value* v, RtValue value) { env_[v] = std::move(value); }
  void set_scalar(const Value* v, Element n);
  void set_tensor(const Value* v, View t);

  // ---- element access ----
  std::vector<int64_t> root_index(const View& v, const std::vector<int64_t>& c);

  bool inside(const View& v, const std::vector<int64_t>& c);

  int64_t address(const Operation& op, const View& v, const std::vector<int64_t>& c);

  [[noreturn]] void out_of_bounds(const Operation& op, const View& v, const std::vector<int64_t>& c,
                                  const char* access);

  // An async mma's result may flow into the next async mma's accumulator or a yield, but nothing
  // may read it before the mma_wait that retires its group (async.h).
  void check_retired(const Operation& op, const View& v);

  Element read(const Operation& op, const View& v, const std::vector<int64_t>& c);

  void write(const Operation& op, View& v, const std::vector<int64_t>& c, Element n);

  // ---- ops ----
  std::vector<RtValue> run_ops(const Block& block);

  void exec(const Operation& op);

  void tile(const Operation& op);
  void indirect_rows(const Operation& op, View& t, size_t d, int64_t start, int64_t extent);
  void find_group(const Operation& op);

  void global_view(const Operation& op);

  void transpose(const Operation& op);

  void create(const Operation& op);

  // A fresh register/shared copy of a view's elements (in row-major order).
  View materialize(const Operation& op, const View& src, const std::string& name);

  void copy(const Operation& op);

  // A synchronous mma computes now; an async one (async.h) joins the open wgmma group and
  // computes — reading its operands — at the latest legal moment, when the mma_wait that retires
  // its group runs: a program that lets its shared operands change before then reads the change.
  void mma(const Operation& op);

  void mma_into(const Operation& op, const View& a, const View& b, const View& c, View& out);

  void cast(const Operation& op);

  void broadcast(const Operation& op);

  void reduce(const Operation& op);

  void elementwise(const Operation& op);

  void for_op(const Operation& op);

  void call_external(const Operation& op);

  // Workspaces (async.h): one zeroed host buffer per workspace op and run, shared by every block
  // and role; a part is a view of tensor i; counter_arrive increments in place.
  void workspace(const Operation& op);
  void workspace_part(const Operation& op);
  void counter_arrive(const Operation& op);

  // ---- roles and asynchrony (async.h; the model in roles.h and sync_models.h) ----

  // The kernel's roles, block.ops()[first] and those after it, each on a copy of this machine
  // (the values defined before them are shared, read-only), interleaved by the scheduler; then
  // the block's aref checks.
  void run_roles(const Block& block, size_t first);

  // The blocks an op of the cluster reaches: every block of the cluster (this one alone outside
  // clusters). A block that has exited is an error.
  std::vector<BlockAsync*> cluster_targets(const Operation& op);

  // A synchronization point: in a role, the scheduler may run others first, and resumes this one
  // once `ready`. Outside roles nothing else runs, so an op that is not ready never will be.
  void sync(const Operation& op, std::function<bool()> ready = {},
            std::function<std::string()> waits_for = {});

  // D slots of the aref's buffers, in shared memory once per block; reading an element that no
  // copy wrote is an error, as for alloc.
  void make_aref(const Operation& op);

  void slot_results(const Operation& op, int64_t slot);

  void aref_step(const Operation& op);

  // Retires all but the `pending` newest committed groups, oldest first: their mmas compute now.
  void mma_wait(const Operation& op);

  void barrier_step(const Operation& op);

  // `by = thread | warp | warpgroup`: once per thread, warp or warpgroup of the role (outside
  // roles, of the block: its block_grid's `threads`); `one`: once. In an `issue = one` role a
  // single thread runs the region, so every arrival counts once.
  int64_t arrival_count(const Operation& op);

  // A TMA load: the source is read now (its bounds checked at the op; a masked tile reads its pad
  // outside the tensor, as TMA fills zeros), the data lands and its bytes complete on the barrier
  // when the scheduler says. A TMA store (two operands) lands at once.
  void copy_async(const Operation& op);

  // A multicast TMA load (multicast-loads): this block's share of the tile's rows — rows
  // [r R / C, (r + 1) R / C) for rank r of a cluster of C — lands in the same rows of the same
  // slot buffer of every block of the cluster, each landing when the schedule says and
  // completing the share's bytes on that block's barrier.
  void multicast(const Operation& op, int64_t i);

  const RunOptions& options_;
  std::unordered_map<const Value*, RtValue> env_;
  std::vector<int64_t> block_index_;
  std::shared_ptr<RoleScheduler> scheduler_;  // one per run: the random schedule's state
  std::shared_ptr<BlockAsync> block_;         // the current block's, shared by its roles
  const Operation* role_ = nullptr;           // the warp_group this machine runs, if any
  // In a cluster: every block's state by rank, this block's rank, and (while the blocks' ops
  // before their roles run) where run_roles leaves the roles.
  std::vector<std::shared_ptr<BlockAsync>> cluster_;
  int64_t cluster_rank_ = 0;
  ClusterRoles* collecting_ = nullptr;
  int64_t block_threads_ = 0;  // the block_grid's `threads`, if it has them
  // This machine's wgmma groups: committed ones oldest first, and the open one; each entry
  // computes one async mma.
  std::deque<std::vector<std::function<void()>>> mma_groups_;
  std::vector<std::function<void()>> open_group_;
  // The run's workspaces by op (shared with the copies of this machine that run the roles).
  std::shared_ptr<std::map<const Operation*, std::shared_ptr<HostTensor>>> workspaces_ =
      std::make_shared<std::map<const Operation*, std::shared_ptr<HostTensor>>>();
};

}  // namespace tessel::interp::detail
