// The mapping specification (Cypress §3.3): how a task program binds to the machine. A mapping is
// a set of named *instances*; each instantiates one task with a variant, a processor level, a
// memory per tensor parameter, values for the variant's tunables, and the instances its launches
// go to (`calls`: a launch of task T goes to the one instance in `calls` whose variant is a
// variant of T). One instance is the entrypoint. Instances that run a mainloop may ask for warp
// specialization and a pipeline depth; any instance may bound its block's shared memory.
//
// The text form, one file next to the program (examples/tasks/gemm.tmap), `//` or `#` comments:
//   instance gemm_block {
//     variant = gemm_block
//     proc = block                        // grid, block, warpgroup, warp, thread
//     mems = [global, global, global]     // none, global, shared, register; one per parameter
//     tunables = {W = 64}
//     calls = [clear_acc, gemm_tile, store_c]
//     warp_specialize = true
//     pipeline = 3
//     shared_limit = 200000               // bytes
//   }
//   instance gemm_grid { ... entrypoint = true }
// The grid-level instance may name the order in which the blocks take their tiles (a grid is a
// set; the order decides the load balance across SMs and which tiles share L2):
//     order = {raster_group = 4, alternate_ends = 1}
// raster_group: blocks in groups of that many along the first dimension of the grid's 2-D prange
// (Triton's GROUP_M); alternate_ends: the grid dimension whose index is taken from both ends in
// turns (n-1, 0, n-2, 1, ...: causal attention's heavy and light query tiles paired). Either may
// be left out (the tile pipeline then chooses the raster group; the index runs in order).
// Every item keeps its line:column, so that a mistake found later (an unknown variant, a memory
// a tensor does not fit) is reported where it was written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/task/machine.h"
#include "support/diagnostics.h"

namespace tessel::task {

template <typename T>
struct Located {
  T value{};
  SourceLocation loc;
};

// The `order` item: tessel::GridOrder (tile.h) with locations. Its values are checked when the
// mapping is instantiated against the program's grid (instantiate.h).
struct MappingOrder {
  SourceLocation loc;  // the `order` key
  std::optional<Located<int64_t>> raster_group;
  std::optional<Located<int64_t>> alternate_ends;
};

struct MappingInstance {
  std::string name;
  SourceLocation loc;
  Located<std::string> variant;
  Located<Processor> proc{Processor::block, {}};
  std::vector<Located<Memory>> mems;
  std::vector<std::pair<std::string, Located<int64_t>>> tunables;
  std::vector<Located<std::string>> calls;
  bool entrypoint = false;
  std::optional<Located<bool>> warp_specialize;
  std::optional<Located<int64_t>> pipeline;
  std::optional<Located<int64_t>> shared_limit;
  std::optional<MappingOrder> order;  // grid level only

  const Located<int64_t>* tunable(const std::string& name) const;
};

struct Mapping {
  std::string file;  // where the text came from ("" when built in C++)
  std::vector<MappingInstance> instances;

  const MappingInstance* find(const std::string& name) const;
  const MappingInstance* entrypoint() const;  // null when none is marked
  std::string text() const;                   // the text form (parses back to the same mapping)
};

// The C++ form of one instance (locations unknown; errors name the instance):
//   Mapping m;
//   m.instances.push_back(instance("gemm_tile", "gemm_tile", Processor::block,
//                                  {Memory::reg, Memory::shared, Memory::shared}, {{"WGS", 2}},
//                                  {"gemm_warpgroup"}));
MappingInstance instance(std::string name, std::string variant, Processor proc,
                         std::vector<Memory> mems,
                         std::vector<std::pair<std::string, int64_t>> tunables = {},
                         std::vector<std::string> calls = {});
// The C++ form of `order = {...}`: m.instances[0].order = tile_order(4, 1), or
// tile_order(std::nullopt, 1) for the alternation alone.
MappingOrder tile_order(std::optional<int64_t> raster_group,
                        std::optional<int64_t> alternate_ends = std::nullopt);

// Parses the text form; a UserError at the offending line:column for bad syntax, a repeated key
// or instance, an unknown processor level, memory or order.
Mapping parse_mapping(std::string_view text, const std::string& file);

}  // namespace tessel::task
