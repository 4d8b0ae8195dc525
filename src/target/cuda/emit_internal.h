// The CUDA emitter's shared state: the Emitter class and the values it tracks (Plan, View, Reg),
// declared here so that the emitter's parts can live in separate files, one op family each:
// emit.cpp (the kernel, parameters, names, op dispatch, tiles), emit_control_flow.cpp (for, if,
// yields), emit_layout_plans.cpp (register layouts as index arithmetic), emit_global_copy.cpp
// (global <-> register copies), emit_elementwise.cpp (casts, elementwise, cmp, iota),
// emit_cross_thread.cpp (broadcast, rearrange, reduce), emit_mainloop.cpp (shared allocation, block
// order), emit_async.cpp (roles, arefs, mbarriers, TMA, wgmma groups: the sm_90a mainloops, as the
// passes lowered them), emit_wgmma.cpp (the wgmma instances of an mma) and emit_cp_async_mma.cpp
// (the sm_80 mainloop). Internal to src/target/cuda; see emit.h for what the emitter does.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "layout/swizzle.h"
#include "target/cuda/emit.h"

namespace tessel::target::cuda::detail {

using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

bool is_register_float(ScalarKind k);

// The shared buffer layout "Sw<B,M,S> o 0 o (R,C):(s0,s1)" or "(R,C):(s0,s1)" as a C expression
// of the element offset of (row, col); nullopt for any other layout.
std::optional<std::string> shared_offset_expr(const std::string& layout, const std::string& row,
                                              const std::string& col);
// The same offset as a number (nullopt for any other layout).
std::optional<int64_t> shared_offset_value(const std::string& layout, int64_t row, int64_t col);
// A shared buffer read or written element by element (ld.shared / st.shared of threads): its
// layout as one stride per dimension (rank 1 or 2, checked against the layout's table), under
// an optional swizzle "Sw<B,M,S> o 0 o ..."; nullopt for any other layout.
struct StridedBuffer {
  std::vector<int64_t> stride;
  std::optional<layout::Swizzle> swizzle;
};
std::optional<StridedBuffer> strided_buffer(const std::string& layout,
                                            const std::vector<int64_t>& shape);
// The element offset of a coordinate in such a buffer (before any swizzle).
int64_t strided_offset(const std::vector<int64_t>& coord, const std::vector<int64_t>& stride);
// The C type of a register tensor's values: float (f16, bf16 and f32 alike: rounded on the way),
// int (index, i32), bool (i1); empty for the others.
std::string register_c_type(ScalarKind k);
// A C float literal for `v` (NaN and infinities by bit pattern).
std::string float_literal(double v);

// One leaf of a TV layout's thread mode: thread index t contributes ((t / prefix) % extent) *
// coef[d] to the tile coordinate in dimension d.
struct Leaf {
  int64_t extent = 1, prefix = 1;
  std::vector<int64_t> coef;
};

// A register layout turned into index arithmetic: coordinate(t, v)[d] = thread part(t)[d] +
// value_coord[v][d].
struct Plan {
  std::string text;
  int id = 0;
  int64_t threads = 0, values = 0;
  std::vector<int64_t> tile;
  std::vector<Leaf> leaves;
  std::vector<std::vector<int64_t>> value_coord;
  std::vector<std::string> var;  // per dimension: the C variable holding the thread part, or "0"

  std::vector<int64_t> thread_part(int64_t t) const {
    std::vector<int64_t> c(tile.size(), 0);
    for (const Leaf& l : leaves) {
      int64_t x = (t / l.prefix) % l.extent;
      for (size_t d = 0; d < c.size(); ++d) c[d] += x * l.coef[d];
    }
    return c;
  }
  std::vector<int64_t> coord(int64_t t, int64_t v) const {
    std::vector<int64_t> c = thread_part(t);
    for (size_t d = 0; d < c.size(); ++d) c[d] += value_coord[v][d];
    return c;
  }
};

// Whether every thread's values of `plan` lie in a strided buffer in aligned runs of `w`
// consecutive elements (its part of the offset and each run's start multiples of w): what a
// w-element st.shared / ld.shared per run needs.
bool aligned_runs(const Plan& plan, const std::vector<int64_t>& stride, int64_t w);
// The C expression of a thread's part of its values' offsets in such a buffer ("" for none).
std::string thread_offset_expr(const Plan& plan, const std::vector<int64_t>& stride);

// The C expression of leaf `l`'s thread coordinate, `(tid / prefix) % extent`.
std::string leaf_coord_expr(const Leaf& l, int64_t threads);

// What a value is in the generated code.
struct View {  // a global tensor or a tile of one
  std::string base;
  ScalarKind element = ScalarKind::f32;
  std::vector<std::string> extent, stride, origin;  // C expressions, per dimension
  std::vector<int64_t> extent_divisor;              // a known divisor of each extent
  std::vector<int64_t> shape;                       // the tile's static shape
  std::vector<int64_t> origin_align;                // a known divisor of each origin
  std::vector<bool> full;                           // proven inside the tensor in this dimension
  bool masked = false;
  double pad = 0;
  bool is_tile = false;
  // A tile with squeezed dimensions (`tile ... {squeeze = [..]}`): its dimensions are dimensions
  // `root_dims` of the tensor, whose other dimensions sit at fixed coordinates; `base` already
  // points at them, and TMA, which addresses the whole tensor, reads them from `root_origin`
  // (one expression per dimension of the tensor). Both empty for a view of all dimensions.
  std::vector<int> root_dims;
  std::vector<std::string> root_origin;
  // An indirect tile (src/ir/grouped.h): along dimension indirect_dim the coordinates (origin,
  // extent: positions in the row map) address row indirect_map[position] of the tensor, whose
  // row stride is stride[indirect_dim]. -1: none. Only the copies between global and registers
  // and TMA loads (row boxes) read such a view (Emitter::view refuses it elsewhere).
  int indirect_dim = -1;
  std::string indirect_map;
  std::string
      indirect_rows;  // the tensor's own extent along indirect_dim (TMA's out-of-bounds row)
};

// A shared tile's layout text ("Sw<B,M,S> o off o L" or "L"): index (colexicographic over the
// tile) -> element offset, before and after the swizzle.
struct SharedMap {
  layout::Swizzle swizzle;
  int64_t offset = 0;
  std::vector<int64_t> base;  // L at every tile index
  int64_t pre(int64_t index) const { return offset + base[index]; }
  int64_t at(int64_t index) const { return swizzle(pre(index)); }
};

SharedMap shared_map(const std::string& text);  // emit_cp_async_mma.cpp

// A register tensor: a C array of the plan's values in each thread. Values are floats (16-bit
// ones rounded but held in f32 registers), except a `packed` tensor of f16 or bf16: an array of
// `unsigned`, word p holding values 2p (low half) and 2p + 1 (high half) as their 16-bit
// patterns — half the registers, for 16-bit tiles that stay live for long (the converted output
// tile that overlap-epilogue carries into the next tile's mainloop, an epilogue operand read
// from shared memory). Only casts whose result a loop carries, loop-carried 16-bit values, slices
// of packed tensors and 16-bit tensors read from shared memory two or more at a time are packed;
// an op that computes with the values reads them unpacked (Emitter::reg).
// One wgmma instance of an mma: its origin in the accumulator tile and the accumulator value
// that its register 0 is (the instance's registers are the run that follows).
struct WgmmaInstance {
  int64_t m0 = 0, n0 = 0;
  int64_t base = 0;
};

// Whether `load`, a copy from a global tile into registers, reads what every block reads and no
// op of the kernel writes: its tensor is a kernel argument whose every use (through tiles) is
// such a load, and the tile's coordinates do not vary by block (a row program's weight and bias
// vectors). Such data may take the non-coherent read-only path (tsl_ld_guarded16_invariant).
bool block_invariant_read_only(const Operation& kernel, const Operation& load);

struct Reg {
  std::string name;
  const Plan* plan = nullptr;
  ScalarKind element = ScalarKind::f32;
  bool packed = false;
};

// A tile in shared memory (the result of a copy into shared memory, or a transpose of one): a
// region of the kernel's one dynamic allocation in the layout synthesis chose. In a pipelined
// loop the region has `stages` slots and `base` names the current slot.
struct SharedTile {
  std::string base;  // C expression: `unsigned char*` to the tile's first byte (this slot)
  ScalarKind element = ScalarKind::f16;
  std::vector<int64_t> shape;     // the IR type's shape (a transpose swaps it)
  std::string layout;             // the IR type's layout text: coordinate -> element offset
  bool transposed = false;        // a transpose view of `source`'s tile
  const Value* source = nullptr;  // the copy result that fills the region
  int64_t bytes = 0;              // bytes of one slot
};

class Emitter {
 public:
  explicit Emitter(const Operation& kernel) : kernel_(kernel) {}

  EmittedKernel run();

 private:
  // ---- names and facts ---------------------------------------------------------------------

  std::string c_name(const std::string& hint);
  std::string fresh(const std::string& hint);
  std::string extent_expr(const ir::Extent& e);
  int64_t extent_divisor(const ir::Extent& e);
  static const char* storage_type(ScalarKind k);
  // The view of a whole row-major global tensor of type `t` at pointer `base`.
  View whole_tensor(const std::string& base, const Type& t);
  // Workspaces (emit_workspace.cpp): launch-provided global memory, its parts, arrival counters.
  void workspace(const Operation& op);
  void workspace_part(const Operation& op);
  void counter_arrive(const Operation& op);
  void line(const std::string& s) { body_ << std::string(2 * indent_, ' ') << s << "\n"; }

  [[noreturn]] void unsupported(const Operation& op, const std::string& why);

  // ---- layouts ------------------------------------------------------------------------------

  void collect_plans(const ir::Block& block);

  const Plan* plan_for(const Operation& op, const Type& t);

  std::string thread_expr(const Plan& plan, size_t d);

  // ---- values -------------------------------------------------------------------------------

  std::string scalar(const Operation& op, const Value* v);
  // A register tensor as floats: a packed one is unpacked into a new array here.
  const Reg& reg(const Operation& op, const Value* v);
  // A register tensor as it is held (maybe packed), for ops that move 16-bit pairs as they are.
  const Reg& reg_words(const Operation& op, const Value* v);
  // Whether a 16-bit register tensor of `values` values may be held packed.
  static bool packable(ScalarKind element, int64_t values);
  // The C expression of value v of `r` as a float, and of the 32-bit word of values (lo, hi)
  // (lo in the low half): packed pairs as they are, others converted with rounding.
  std::string value_expr(const Reg& r, int64_t v) const;
  std::string pair_expr(const Reg& r, int64_t lo, int64_t hi) const;
  std::optional<int64_t> const_int(const Value* v);
  // Whether `v` is the size of extent `e`.
  bool is_extent(const Value* v, const ir::Extent& e);
  // Whether index `idx` is known to lie in [0, cdiv(e, s)).
  const Value* index_bound(const Value* idx);
  bool below_cdiv(const Value* idx, const ir::Extent& e, int64_t s);

  // ---- ops ----------------------------------------------------------------------------------

  void block(const ir::Block& b);
  // The ops of `b` in order (chunked runs chunk by chunk), its yield handed to `yield`.
  void block_ops(const ir::Block& b, const std::function<void(const Operation&)>& yield);

  void emit(const Operation& op);

  // The global tensor or tile `v`; an indirect tile only where the caller addresses its rows
  // through the map (`indirect_ok`), refused elsewhere (TMA stores, shared-memory staging).
  const View& view(const Operation& op, const Value* v, bool indirect_ok = false);
  // The address of the tile's first element: its base plus each dimension's origin times stride.
  std::string tile_start(const View& g) const;

  void tile(const Operation& op);
  View squeezed(const Operation& op, const View& v);
  bool below_extent(const Value* idx, const ir::Extent& e);

  Reg& new_reg(const Operation& op, int result = 0);
  // A 16-bit register tensor held as pairs (see Reg), declared and registered like new_reg.
  Reg& new_packed_reg(const Operation& op, int result = 0);

  std::string round_to(ScalarKind k, const std::string& e);

  // copy global tile -> register (a result) or register -> global tile (no result).
  void copy(const Operation& op);

  // The widest vector (elements) that values v, v+1, ... of `plan` form in `g`: consecutive
  // elements of the contiguous last dimension, aligned by the facts, wholly in or out of bounds.
  int64_t vector_width(const View& g, const Plan& plan, int64_t v, int64_t bytes);
  bool held_packed(const Operation& load, const View& g);
  static std::string pad_word(const View& g);
  static bool pad_exact(const View& g);
  static uint16_t pad_bits16(const View& g);

  void cast(const Operation& op);

  std::string apply(OpKind k, const std::vector<std::string>& a, bool is_f, bool approx = false);

  void elementwise(const Operation& op);
  void iota(const Operation& op);
  std::vector<std::string> value_args(const Operation& op, const Type& t);
  bool yielded_only_in_place(const Value* result, const Value* carried) const;

  // A scratch array of `count` floats carved from the one dynamic shared allocation.
  std::string scratch(const std::string& hint, int64_t count);

  // Whether thread t holds the element of `dst` value v2's kept coordinate as its own value v1.
  std::optional<int64_t> local_source(const Plan& src, const Plan& dst, size_t kept, int64_t v2,
                                      const std::vector<int64_t>& candidates_coord);

  // A condition true in exactly one thread of each group that holds the same data: leaves that
  // do not move the coordinate (stride 0) or that `ignore` marks are at 0.
  std::string representative(const Plan& plan, const std::vector<bool>& ignore);

  void broadcast(const Operation& op);
  // For each value of a broadcast's result, the value of its source the thread holds itself;
  // nullopt where some value must come from another thread (through shared memory).
  std::optional<std::vector<int64_t>> local_broadcast(const Operation& op);

  // A register tensor to another layout over the same tile: through shared memory (each element
  // written once by one of its holders, then every thread reads what its new layout gives it).
  void rearrange(const Operation& op);

  void reduce(const Operation& op);
  // A reduce in steps (emit_cross_thread.cpp): begin declares the result and the thread's
  // partials, fold combines operand values [lo, hi) into them, end crosses threads.
  struct ReduceParts {
    const Operation* op = nullptr;
    bool accumulate = false;  // folds combine into the partials (from the identity)
    std::string kind, identity, part, result;
    Plan src;  // the operand's plan, thread leaves split at the warp
    const Plan* dst = nullptr;
    size_t red = 0, kept = 0;
    std::vector<int64_t> kept_coord, part_of;
    std::vector<int> temps;  // per partial: the tree temporaries named so far
    std::string combine(const std::string& x, const std::string& y) const;
  };
  ReduceParts reduce_begin(const Operation& op, bool accumulate);
  void reduce_fold(ReduceParts& s, const Reg& a, int64_t lo, int64_t hi);
  void reduce_end(const std::vector<const ReduceParts*>& all);

  // ---- chunked runs (emit_chunked.cpp) ---------------------------------------------------------
  // A run of value-wise ops over register tensors of one value count, emitted one chunk of
  // values (a 16-byte vector's) at a time; see emit_chunked.cpp.
  struct ChunkedRun {
    size_t end = 0;      // ops [start, end) of the block
    int64_t values = 0;  // the values per thread of the run's tensors
    int64_t width = 0;   // values per chunk
  };
  ChunkedRun chunked_run(const ir::Block& b, size_t start);
  // Whether this kernel's runs are chunked: no mma, and a launch bound that leaves a thread 32
  // registers or fewer.
  bool chunking() const;
  void emit_chunked(const ir::Block& b, size_t start, const ChunkedRun& run);
  // While a chunk is emitted: the values [first, second) the value-wise emitters write.
  std::optional<std::pair<int64_t, int64_t>> window_;
  // While a chunked run that reads a row held in packed registers and two column vectors or more
  // is emitted: its column vectors are fetched 8 bytes at a time (see copy() in
  // emit_global_copy.cpp).
  bool chunk_beside_held_row_ = false;
  std::pair<int64_t, int64_t> value_range(int64_t values) const {
    return window_ ? *window_ : std::make_pair(int64_t{0}, values);
  }
  // "for (int v = lo; v < hi; ++v)" over the window (all `values` outside a chunk).
  std::string value_loop(int64_t values) const {
    const auto [lo, hi] = value_range(values);
    return "for (int v = " + std::to_string(lo) + "; v < " + std::to_string(hi) + "; ++v)";
  }
  bool has_mma_ = false;  // the kernel has an mma (chunked runs are for mma-free kernels)

  void for_op(const Operation& op);
  bool zero_start_accumulator(const Operation& op, int i);
  static const Operation* next_loop(const Operation& op);
  bool continues_in_place(const Operation& op, int i);
  // An accumulator whose first wgmma overwrites it: its array, the zeros it holds when no loop
  // ran, and the C condition that a loop before already wrote it ("" when none did).
  struct ZeroStart {
    std::string name, init;
    int64_t values = 0;
    std::string ran;
  };

  // ---- shared memory, mma and pipelined loops ----------------------------------------------
  // A loop whose body copies global tiles into shared memory is a mainloop. The sm_80 one is
  // emitted here as a ring: its copies run `stages` iterations ahead of their consumers (the
  // loop's `stages` attribute, 1 when absent); an sm_90a (TMA + wgmma) one reaching the emitter
  // was not lowered, and is refused.
  bool is_mainloop(const Operation& for_op) const;
  // The block indices: blockIdx, or with `raster_group = G` on a 2-D grid, blocks taken in groups
  // of G along dimension 0 (so that concurrently running blocks share operand tiles in L2).
  void block_grid(const Operation& op);
  // Reserves `bytes` of the dynamic allocation at a multiple of `align`; returns the offset.
  int64_t alloc_shared(int64_t bytes, int64_t align);
  // The wgmma instances (emit_wgmma.cpp) of one mma over K-major 128B-swizzled shared tiles: A
  // [a_rows, a_cols] at a_base, B the transpose of [b_rows, b_cols] at b_base (C expressions of
  // `unsigned char*`), accumulating in place into the mma's accumulator operand; `scale_d`, when
  // not empty, is the C condition under which the first k-step accumulates (else it overwrites).
  // Checks that the accumulator's layout holds every instance's registers as one contiguous run.
  // The wgmma instances of `mma` over shared tiles `a` ([M,K]) and `b` ([K,N]), each K-major or
  // MN-major (emit_wgmma.cpp).
  std::vector<std::vector<WgmmaInstance>> wgmma_instances(const Operation& mma, const Plan& plan,
                                                          int64_t atom_n);
  void wgmma_rs(const Operation& mma, const Reg& a, const SharedTile& b,
                const std::string& scale_d);
  void wgmma_ss(const Operation& mma, const SharedTile& a, const SharedTile& b,
                const std::string& scale_d);
  // ---- asynchrony (emit_async.cpp): roles, arefs, mbarriers, TMA, wgmma groups ------------
  bool has_roles() const;
  // The barrier over every thread that runs the current op: __syncthreads outside roles, the
  // role's named barrier inside one (its other threads never reach a __syncthreads there).
  std::string threads_barrier() const;
  // The barrier over the 128 threads of the running thread's warpgroup (`role_sync {by =
  // warpgroup}`): a named barrier per warpgroup of the block, above the roles' and the turns'.
  std::string warpgroup_barrier(const Operation& op);
  std::string store_thread(const Operation& op) const;
  // The threads that run `op`: its role's, or the block's outside roles.
  int64_t threads_of(const Operation& op) const;
  void async_op(const Operation& op);
  void warp_group(const Operation& op);
  std::string role_condition(int64_t first, int64_t end) const;
  int role_position(const Operation& role) const;
  // The register layouts the ops of `roles` use, as index arithmetic of the role-local tid.
  void role_layouts(const std::vector<const Operation*>& roles);
  // emit_shared_roles.cpp: consecutive roles whose code begins alike (split-roles' consumers, one
  // per turn of a K loop) emitted with one copy of that beginning. shared_roles: how many roles
  // from top.ops()[first] do (1: none to share with).
  size_t shared_roles(const ir::Block& top, size_t first);
  void emit_shared_roles(const ir::Block& top, size_t first, size_t count);
  bool share_role_code_ = true;  // block_grid's `share_role_code` pin
  void aref(const Operation& op);
  void copy_async_rows(const Operation& op, const Operation& tile, const View& g,
                       const SharedTile& dst, int64_t rows, int64_t cols, int64_t swizzle);
  void copy_async(const Operation& op);
  void cluster_arrive(const Operation& op);
  int64_t cluster_blocks() const;  // blocks per cluster of the kernel's grid (1 without)
  // The `tile` op a TMA load copies from; unsupported unless it has one and pads with zeros
  // (TMA's fill for out-of-bounds elements).
  const Operation& tma_source_tile(const Operation& op);
  // The TMA boxes of `rows` x `cols` that fill shared buffer `dst`: each box's first (row,
  // column) in the tile and the byte offset in the buffer where it lands (emit_async.cpp).
  std::vector<std::pair<std::array<int64_t, 2>, int64_t>> tma_boxes(const Operation& op,
                                                                    const SharedTile& dst,
                                                                    int64_t rows, int64_t cols);
  void store_async(const Operation& op);
  void prefetch(const Operation& op);
  // The TMA descriptor parameter for tiles of `tile`'s tensor with this box and swizzle (one per
  // tensor, box and swizzle, made on first use).
  std::pair<std::string, int> tma_coordinates(const View& g, const std::vector<std::string>& at);
  static std::string plus(const std::string& origin, int64_t offset);
  std::string tma_descriptor(const Operation& op, const Operation& tile, int64_t rows, int64_t cols,
                             int64_t swizzle, bool optional = false);
  void wgmma_op(const Operation& op);
  void turn(const Operation& op);
  bool only_wgmma_accumulator(const Value* v) const;
  void assign_yielded(const Operation& yield, int i, const std::string& target, const Value* to);
  void if_op(const Operation& op);
  void cmp(const Operation& op);
  void shared_transpose(const Operation& op);
  // emit_shared_store.cpp: a static part of a register tensor; a shared buffer made by alloc; a
  // register tensor into a shared buffer by stmatrix.
  void slice(const Operation& op);
  void shared_alloc(const Operation& op);
  // A tile of a shared buffer in a plain strided layout: the same strides, its origin moved.
  void shared_tile(const Operation& op);
  void stmatrix_store(const Operation& op);
  void register_to_shared(const Operation& op);
  void global_to_shared_async(const Operation& op);
  const SharedTile& store_destination(const Operation& op);
  // A shared buffer into a global tile by the role's threads, element by element (a fallback).
  void shared_to_global(const Operation& op);
  // emit_shared_load.cpp: a 1-D TMA load into an aref slot buffer (an epilogue operand), and a
  // shared buffer read into a register tensor by the threads (ld.shared of the atom's width).
  void copy_async_1d(const Operation& op, int64_t extent);
  void shared_to_register(const Operation& op);
  void packed4_to_register(const Operation& op, const SharedTile& s);
  void packed_words_to_register(const Operation& op, const SharedTile& s, int64_t bits);
  bool packed_elementwise(const Operation& op);
  // "&bars[index]" for an op whose operands i, i + 1 are an mbarrier array and an index.
  std::string barrier(const Operation& op, int i);
  // sm_80 (emit_cp_async_mma.cpp): cp.async (or plain) copies, ldmatrix, mma.sync.
  void cp_async_mma_mainloop(const Operation& for_op);
  // ---- sm_80 path (owned by emit_cp_async_mma.cpp) ----
  // The sm_80 mainloop's machinery (copy plans, fragment maps, the stage ring) lives in a
  // file-local class of emit_cp_async_mma.cpp that emits through this Emitter.
  friend class Sm80Mainloop;
  // ---- end of the sm_80 block ----

  const Operation& kernel_;
  EmittedKernel out_;
  std::ostringstream body_;
  int indent_ = 1;
  int64_t threads_ = 0;
  int64_t blocks_per_sm_ = 1;  // block_grid's `blocks_per_sm`: the launch bound's minimum blocks
  int64_t smem_bytes_ = 0;
  std::set<std::string> used_;
  std::map<std::string, int64_t> divisor_;
  std::vector<std::unique_ptr<Plan>> plans_;
  std::map<std::string, const Plan*> plan_index_;
  std::unordered_map<const Value*, std::string> scalars_;
  std::unordered_map<const Value*, Reg> regs_;
  std::deque<Reg> unpacked_;  // float copies of packed tensors made by reg() (stable addresses)
  std::unordered_map<const Value*, View> views_;
  std::unordered_map<const Value*, SharedTile> shared_;
  int64_t smem_align_ = 16;  // the alignment the dynamic allocation's base is rounded up to
  std::vector<std::string> prologue_;  // lines emitted at the top of the kernel, after the layouts
  // Declarations of parameters added while emitting the body (out_.params has their entries).
  std::vector<std::string> extra_params_;
  // Asynchrony: an aref's ring (per buffer: offset of slot 0 and bytes per slot), mbarrier arrays
  // (the C pointer), TMA descriptors by tensor:box:swizzle, whether the current role is run by one
  // elected thread, the accumulators of the current role's async mmas (fenced after each wait),
  // and accumulators that start at zero: the C condition under which their first wgmma adds.
  struct Ring {
    std::vector<int64_t> offset, bytes;
  };
  std::unordered_map<const Value*, Ring> rings_;
  std::unordered_map<const Value*, std::string> barriers_;
  std::map<std::string, std::string> descriptors_;
  bool roles_ = false;
  bool issue_one_ = false;
  int role_index_ = -1;  // the current role's position among the kernel's roles (-1: outside)
  int64_t role_threads_ = 0;
  int64_t role_first_thread_ = 0;  // the current role's first thread in the block
  // The index of the thread's warpgroup, as C: `tid / 128` over the block's (or role's) thread
  // index, or inside a role of a warp-specialized kernel `tsl_wg`, derived from the warp index
  // the kernel takes with __shfl_sync, which ptxas knows to be warp-uniform: what depends on it
  // (wgmma descriptors of per-warpgroup operand slices, TMA stores by warpgroup, turns) then stays
  // in uniform registers instead of being rebuilt per thread and moved with R2UR before every
  // wgmma (bench/results/2026-11-28-h200-first-h200.md: 1.8 M of a batched GEMM's 5.3 M warp
  // instructions).
  std::string warpgroup_index_ = "tid / 128";
  std::string uniform_roles_ = "all";  // block_grid's `uniform_roles` pin: all, values or off
  int workspaces_ = 0;
  // Ops another op's emission already wrote (an add fused into the load before it).
  std::set<const Operation*> fused_;
  // Packed f16x2 words whose unpacking waits for the slices that read them (unpack_at = slices,
  // packed_words_to_register): per value, the statement that makes pair j, "" once emitted.
  std::unordered_map<const Value*, std::vector<std::string>> deferred_pairs_;
  bool unpack_at_slices_ = true;  // block_grid's `unpack_at = slices | load` pin
  // Emits the deferred pairs of `v` in `pairs` (all of them when empty) that are not yet emitted.
  void emit_deferred_pairs(const Value* v, const std::vector<int64_t>& pairs = {});
  const Operation* accumulating_add(
      const Operation& load);  // workspace ops emitted so far (their KernelParam::tensor numbers)
  std::vector<std::string> async_accumulators_;
  // The block whose C scope declares a register array (a loop's carried values: the loop's block);
  // an mma_wait fences only the accumulators in scope where it stands.
  std::map<std::string, const ir::Block*> declared_in_;
  std::unordered_map<const Value*, std::string> zero_start_;
  // Lines the next `mma_wait {pending = 0}` emits after it (a loop's zero-start fix-up).
  std::vector<std::string> after_drain_;
  // Zero starts a loop handed to the loop that continues it in place, by array name.
  std::map<std::string, ZeroStart> open_zero_starts_;
};

}  // namespace tessel::target::cuda::detail
