// TMA, op by op (src/ir/async.h): copy_async loads of a global tile into a shared slot that
// complete on an mbarrier (one box or several, multicast within a cluster), L2 prefetches of the
// same boxes, and stores of a staged shared buffer into a global tile (the role's thread 0, or
// each warpgroup's with `by = warpgroup`); their descriptors (one per tensor, box and swizzle,
// passed as __grid_constant__ parameters) and coordinates (innermost first, the squeezed
// dimensions' fixed coordinates included). Which thread issues follows the IR, as everywhere in
// the async ops (emit_async.cpp).
#include <algorithm>
#include <optional>
#include <regex>

#include "ir/async.h"
#include "ir/column_blocks.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

// A TMA load's atom: `tma.load.1d.boxN` (rank 1, cols = N) or `tma.load.2d.boxRxC[.swS]` (rank 2;
// unswizzled boxes, no .sw, are warp-specialize's epilogue operands). Nullopt for anything else.
struct TmaLoadAtom {
  int rank = 0;
  int64_t rows = 1, cols = 0, swizzle = 0;
};
std::optional<TmaLoadAtom> tma_load_atom(const Operation& op) {
  static const std::regex atom_2d(R"(tma\.load\.2d\.box(\d+)x(\d+)(?:\.sw(\d+))?)");
  static const std::regex atom_1d(R"(tma\.load\.1d\.box(\d+))");
  const std::string atom = op.has_attr("atom") ? op.str_attr("atom") : "";
  std::smatch m;
  if (std::regex_match(atom, m, atom_1d)) return TmaLoadAtom{1, 1, std::stoll(m[1]), 0};
  if (!std::regex_match(atom, m, atom_2d)) return std::nullopt;
  return TmaLoadAtom{2, std::stoll(m[1]), std::stoll(m[2]), m[3].matched ? std::stoll(m[3]) : 0};
}

}  // namespace

void Emitter::copy_async(const Operation& op) {
  const std::optional<TmaLoadAtom> a = tma_load_atom(op);
  if (a && a->rank == 1) return copy_async_1d(op, a->cols);
  if (!a) {
    unsupported(op, "has atom '" + (op.has_attr("atom") ? op.str_attr("atom") : std::string()) +
                        "'; copy_async is a 2-D TMA load (tma.load.2d.box...)");
  }
  const int64_t rows = a->rows, cols = a->cols, swizzle = a->swizzle;
  const Operation* tile = &tma_source_tile(op);
  const Type& t = op.operand(1)->type();
  const int64_t shares = op.has_attr("multicast") ? cluster_blocks() : 1;
  if (t.rank() != 2 || (shares > 1 && t.static_shape()[0] != rows * shares)) {
    unsupported(op, "has a box " + std::to_string(rows) + "x" + std::to_string(cols) +
                        " per block of a cluster of " + std::to_string(shares) +
                        " whose rows do not make its tile " + t.str());
  }
  auto dst = shared_.find(op.operand(1));
  if (dst == shared_.end())
    unsupported(
        op, "writes %" + op.operand(1)->name() + ", which is not a shared buffer of an aref slot");
  const View& g = view(op, op.operand(0), /*indirect_ok=*/true);
  if (g.indirect_dim >= 0) return copy_async_rows(op, *tile, g, dst->second, rows, cols, swizzle);
  std::string tmap = tma_descriptor(op, *tile, rows, cols, swizzle);
  const std::string issuer = issue_one_ ? "" : "if (tid == 0) ";
  if (shares == 1) {
    // One box or several: box (i, j) covers rows [i R, (i + 1) R) and columns [j C, (j + 1) C)
    // of the tile and lands, dense and swizzled as TMA writes it, where the buffer's layout puts
    // its first element (an MN-major tile of 256 columns: four 64-column boxes 8 KB apart).
    for (const auto& [first, byte] : tma_boxes(op, dst->second, rows, cols)) {
      const std::string at = byte == 0
                                 ? dst->second.base
                                 : "(" + dst->second.base + " + " + std::to_string(byte) + ")";
      const auto [coords, rank] =
          tma_coordinates(g, {plus(g.origin[0], first[0]), plus(g.origin[1], first[1])});
      line(issuer + "tessel::device::tma_load_" + std::to_string(rank) + "d(" + at + ", &" + tmap +
           ", " + barrier(op, 2) + ", " + coords + ");");
    }
    return;
  }
  // Block r of the cluster loads rows [r R / C, (r + 1) R / C) of the tile into the same rows
  // of the slot buffer in every block (multicast-loads), completing on each block's barrier: one
  // box per column block of the tile, each r boxes' worth of bytes further into its atom.
  const int64_t blocks = cluster_blocks();
  const auto boxes = tma_boxes(op, dst->second, rows, cols);
  std::map<int64_t, std::vector<int64_t>> by_column;  // column -> byte offset of each row share
  for (const auto& [first, byte] : boxes) by_column[first[1]].push_back(byte);
  int64_t rank_stride = -1;
  for (const auto& [column, bytes] : by_column) {
    const int64_t stride = bytes.size() > 1 ? bytes[1] - bytes[0] : 0;
    bool linear =
        static_cast<int64_t>(bytes.size()) == blocks && (rank_stride < 0 || stride == rank_stride);
    for (size_t q = 0; linear && q < bytes.size(); ++q)
      linear = bytes[q] == bytes[0] + static_cast<int64_t>(q) * stride;
    if (!linear) {
      unsupported(op,
                  "multicasts a tile whose row shares do not lie at one stride in every "
                  "column block of its layout " +
                      dst->second.layout);
    }
    rank_stride = stride;
  }
  for (const auto& [column, bytes] : by_column) {
    const auto [coords, rank] = tma_coordinates(
        g, {g.origin[0] + " + static_cast<int>(tessel::device::cluster_cta_rank()) * " +
                std::to_string(rows),
            plus(g.origin[1], column)});
    line(issuer + "tessel::device::tma_load_" + std::to_string(rank) + "d_multicast(" +
         dst->second.base + " + " + (bytes[0] ? std::to_string(bytes[0]) + " + " : "") +
         "tessel::device::cluster_cta_rank() * " + std::to_string(rank_stride) + ", &" + tmap +
         ", " + barrier(op, 2) + ", " + std::to_string((1 << blocks) - 1) + ", " + coords + ");");
  }
}

// An indirect tile (src/ir/grouped.h) by TMA: its rows one 1-row box each, at the rows the map
// holds, into the rows of the slot where the whole box would put them (TMA swizzles by the
// shared address: a 1-row box at row r of a 128B-swizzled tile lands as row r of the whole box,
// TmaGpu.Swizzle128RowBoxesLandAsTheWholeBoxWould). A position past the map or the window loads
// the row just past the tensor, which TMA fills with zeros, so every box's bytes arrive and the
// barrier's transaction count is the whole tile's, as for one box. The issuing thread reads the
// map (through L1: the same rows every K step of a tile). Measured (the MoE gather,
// bench/results/2026-11-28-moe-gather-h100.md): 0.39-0.71x of index_select + the unfused kernel,
// the box issue the limit; spread over the warp's lanes it ran 1.4x slower still (TMA operands
// are uniform registers: ptxas issues the lanes' boxes one by one, docs/HOPPER.md §4).
void Emitter::copy_async_rows(const Operation& op, const Operation& tile, const View& g,
                              const SharedTile& dst, int64_t rows, int64_t cols, int64_t swizzle) {
  if (g.indirect_dim != 0 || g.shape.size() != 2 || op.has_attr("multicast")) {
    unsupported(op, "loads an indirect tile by TMA: only the rows of a 2-D tile, one block's");
  }
  const std::string tmap = tma_descriptor(op, tile, 1, cols, swizzle);
  const std::string issuer = issue_one_ ? "" : "if (tid == 0) ";
  const int64_t row_bytes = cols * ir::bit_width(dst.element) / 8;
  // The map's rows are read eight at a time before their eight boxes: each TMA issue is a memory
  // barrier to the compiler, so a read beside each box would wait out its latency every row.
  const int64_t batch = std::min<int64_t>(8, rows);
  if (rows % batch != 0) unsupported(op, "loads an indirect tile of rows not a multiple of 8");
  const std::string b = std::to_string(batch);
  for (const auto& [first, byte] : tma_boxes(op, dst, rows, cols)) {
    const std::string at =
        byte == 0 ? dst.base : "(" + dst.base + " + " + std::to_string(byte) + ")";
    const std::string position = "(" + plus(g.origin[0], first[0]) + ") + r0 + i";
    const auto [coords, rank] = tma_coordinates(g, {"row[i]", plus(g.origin[1], first[1])});
    line(issuer + "for (int r0 = 0; r0 < " + std::to_string(rows) + "; r0 += " + b + ") {");
    ++indent_;
    line("int row[" + b + "];");
    line("#pragma unroll");
    line("for (int i = 0; i < " + b + "; ++i)");
    line("  row[i] = " + position + " < " + g.extent[0] + " ? __ldg(" + g.indirect_map + " + " +
         position + ") : " + g.indirect_rows + ";");
    line("#pragma unroll");
    line("for (int i = 0; i < " + b + "; ++i)");
    line("  tessel::device::tma_load_" + std::to_string(rank) + "d(" + at + " + (r0 + i) * " +
         std::to_string(row_bytes) + ", &" + tmap + ", " + barrier(op, 2) + ", " + coords + ");");
    --indent_;
    line("}");
  }
}

// The boxes the TMA load of the same atom would read, into L2 (one thread, nothing waits): the
// same descriptor as the load's, so the later load finds them there.
void Emitter::prefetch(const Operation& op) {
  const std::optional<TmaLoadAtom> a = tma_load_atom(op);
  const std::vector<int64_t> shape = op.operand(0)->type().static_shape();
  if (!a || static_cast<int>(shape.size()) != a->rank) {
    unsupported(op, "has atom '" + op.str_attr("atom") +
                        "'; a prefetch is for a 1-D or 2-D TMA load of its tile's rank");
  }
  const Operation* tile = &tma_source_tile(op);
  const View& g = view(op, op.operand(0));
  const std::string tmap = tma_descriptor(op, *tile, a->rows, a->cols, a->swizzle);
  const std::string issuer = issue_one_ ? "" : "if (tid == 0) ";
  auto emit = [&](const std::vector<std::string>& at) {
    const auto [coords, rank] = tma_coordinates(g, at);
    line(issuer + "tessel::device::tma_prefetch_" + std::to_string(rank) + "d(&" + tmap + ", " +
         coords + ");");
  };
  if (a->rank == 1) return emit({g.origin[0]});
  for (int64_t r = 0; r < shape[0]; r += a->rows) {
    for (int64_t c = 0; c < shape[1]; c += a->cols)
      emit({plus(g.origin[0], r), plus(g.origin[1], c)});
  }
}

std::vector<std::pair<std::array<int64_t, 2>, int64_t>> Emitter::tma_boxes(const Operation& op,
                                                                           const SharedTile& dst,
                                                                           int64_t rows,
                                                                           int64_t cols) {
  const std::vector<int64_t>& shape = dst.shape;
  if (shape.size() != 2 || shape[0] % rows != 0 || shape[1] % cols != 0) {
    unsupported(op, "has a box " + std::to_string(rows) + "x" + std::to_string(cols) +
                        " that does not tile its buffer's " + std::to_string(shape[0]) + "x" +
                        std::to_string(shape[1]));
  }
  const SharedMap map = shared_map(dst.layout);
  const int64_t bits = ir::bit_width(dst.element);
  // A tile of a global stored in permuted column blocks (ir/column_blocks.h): TMA writes the
  // storage's order, in which storage column c holds the block's element at position c % B.
  const Value* g = op.operand(0);
  while (g->def() && g->def()->kind() == OpKind::tile) g = g->def()->operand(0);
  const std::optional<ir::ColumnBlocks> blocks =
      g->def() ? std::nullopt : ir::column_blocks(g->type());
  std::vector<int64_t> logical_col(static_cast<size_t>(shape[1]));
  for (int64_t c = 0; c < shape[1]; ++c) logical_col[size_t(c)] = c;
  if (blocks) {
    if (shape[1] % blocks->block != 0)
      unsupported(op, "copies a tile of a column-blocked global that splits a block");
    for (int64_t c = 0; c < shape[1]; ++c) {
      const int64_t b = c - c % blocks->block;
      logical_col[size_t(b + blocks->position(c % blocks->block))] = c;
    }
  }
  auto pre = [&](int64_t r, int64_t c) { return map.pre(r + shape[0] * logical_col[size_t(c)]); };
  std::vector<std::pair<std::array<int64_t, 2>, int64_t>> boxes;
  for (int64_t c0 = 0; c0 < shape[1]; c0 += cols) {
    for (int64_t r0 = 0; r0 < shape[0]; r0 += rows) {
      const int64_t origin = pre(r0, c0);
      // TMA writes the box row-major and dense from its destination, the swizzle applied to the
      // address bits: the layout must say the same, from an address on the swizzle's repeat.
      const int64_t repeat = int64_t{1}
                             << (map.swizzle.bits + map.swizzle.base + map.swizzle.shift);
      bool dense = map.swizzle.is_identity() || origin % repeat == 0;
      for (int64_t r = 0; dense && r < rows; ++r) {
        for (int64_t c = 0; dense && c < cols; ++c)
          dense = pre(r0 + r, c0 + c) == origin + r * cols + c;
      }
      if (!dense) {
        unsupported(op, "has a box " + std::to_string(rows) + "x" + std::to_string(cols) +
                            " that the buffer's layout " + dst.layout +
                            " does not hold densely at (" + std::to_string(r0) + ", " +
                            std::to_string(c0) + ")");
      }
      // Bits first: a 4-bit element's byte offset is half its element offset (a whole-byte
      // element size truncated to 0 for u4 and put every box of a 512-column tile at byte 0).
      boxes.push_back({{r0, c0}, origin * bits / 8});
    }
  }
  // Each box fills rows * cols elements of its own: their byte ranges never overlap.
  std::vector<int64_t> starts;
  for (const auto& box : boxes) starts.push_back(box.second);
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i)
    TESSEL_ASSERT(starts[i] - starts[i - 1] >= rows * cols * bits / 8,
                  "TMA boxes of one shared tile overlap");
  return boxes;
}

const Operation& Emitter::tma_source_tile(const Operation& op) {
  const Operation* tile = op.operand(0)->def();
  if (!tile) unsupported(op, "must copy a tile of a kernel argument (the TMA descriptor's tensor)");
  if (tile->has_attr("masked") && tile->has_attr("pad") && tile->real_attr("pad") != 0.0) {
    unsupported(*tile, "pads with " + std::to_string(tile->real_attr("pad")) +
                           "; TMA fills out-of-bounds elements with zeros");
  }
  if (tile->kind() == OpKind::tile && ir::tile_window_dim(*tile) >= 0 &&
      !tile->has_attr("over_read") && ir::tile_indirect_dim(*tile) < 0) {
    unsupported(op,
                "loads a tile with a window by TMA, which clips at the tensor's bounds, not "
                "the window's: mark the tile over_read if the rows past the window reach no "
                "store, or over_read = finite if they reach one only multiplied by zeros "
                "(src/ir/grouped.h)");
  }
  if (tile->kind() == OpKind::tile &&
      ir::tile_window_dim(*tile) == tile->operand(0)->type().rank() - 1) {
    unsupported(op,
                "loads a tile windowed along its innermost dimension by TMA, whose box must "
                "start 16-byte aligned there (docs/HOPPER.md: an illegal instruction otherwise); "
                "load it with threads");
  }
  return *tile;
}

// TMA's coordinates, innermost first, of the element at `at` (one C expression per dimension of
// the view `g`, in its tensor's coordinates), with the fixed coordinates of the dimensions a
// squeezed tile dropped; and how many there are (the tensor's rank: TMA addresses the whole
// tensor).
std::pair<std::string, int> Emitter::tma_coordinates(const View& g,
                                                     const std::vector<std::string>& at) {
  std::vector<std::string> root = g.root_dims.empty() ? at : g.root_origin;
  for (size_t d = 0; d < g.root_dims.size(); ++d) root[g.root_dims[d]] = at[d];
  // Packed 4-bit tensors are bytes to TMA (the descriptor halves the innermost extent and box):
  // their innermost coordinate counts bytes, two values each (tiles start at even columns).
  if ((g.element == ScalarKind::u4 || g.element == ScalarKind::i4) && !root.empty())
    root.back() = "(" + root.back() + ") / 2";
  std::string coords;
  for (size_t d = root.size(); d-- > 0;) coords += root[d] + (d ? ", " : "");
  return {coords, static_cast<int>(root.size())};
}

std::string Emitter::plus(const std::string& origin, int64_t offset) {
  return offset ? origin + " + " + std::to_string(offset) : origin;
}

std::string Emitter::tma_descriptor(const Operation& op, const Operation& tile, int64_t rows,
                                    int64_t cols, int64_t swizzle, bool optional) {
  const ir::Block& kernel_body = *kernel_.region(0);
  if (tile.kind() != OpKind::tile || tile.operand(0)->owner_block() != &kernel_body ||
      tile.operand(0)->def()) {
    unsupported(op, "must copy a tile of a kernel argument (the TMA descriptor's tensor)");
  }
  const int argument = static_cast<int>(tile.operand(0)->index());
  // The box, innermost dimension first: 1 in the dimensions a squeezed tile drops.
  const int rank = tile.operand(0)->type().rank();
  const std::vector<int> kept = ir::tile_kept_dims(tile);
  std::vector<int64_t> box;
  if (kept.size() == 1) {
    for (int d = rank; d-- > 0;) box.push_back(d == kept[0] ? cols : 1);
  } else if (kept.size() == 2) {
    for (int d = rank; d-- > 0;) box.push_back(d == kept[1] ? cols : d == kept[0] ? rows : 1);
  } else {
    unsupported(op, "copies a tile of " + std::to_string(kept.size()) +
                        " dimensions; TMA boxes here are 1-D or 2-D tiles");
  }
  std::string key = std::to_string(argument) + ":" + std::to_string(rows) + "x" +
                    std::to_string(cols) + ":" + std::to_string(swizzle);
  for (int64_t b : box) key += ":" + std::to_string(b);
  auto it = descriptors_.find(key);
  if (it != descriptors_.end()) {
    // Shared by a guarded and an unguarded use: the unguarded one needs it valid.
    for (KernelParam& p : out_.params) {
      if (p.name == it->second) p.optional = p.optional && optional;
    }
    return it->second;
  }
  const Value* tensor = tile.operand(0);
  std::string name = fresh("tmap_" + tensor->name());
  KernelParam p;
  p.kind = KernelParam::Kind::tma_descriptor;
  p.name = name;
  p.type = tensor->type();
  p.tensor = argument;
  p.box = box;
  p.swizzle_bytes = static_cast<int>(swizzle);
  p.optional = optional;
  out_.params.push_back(p);
  extra_params_.push_back("const __grid_constant__ tessel::device::TmaDescriptor " + name);
  return descriptors_.emplace(key, name).first->second;
}

void Emitter::store_async(const Operation& op) {
  static const std::regex atom_re(R"(tma\.store\.2d\.box(\d+)x(\d+)\.sw(\d+))");
  std::smatch m;
  std::string atom = op.has_attr("atom") ? op.str_attr("atom") : "";
  if (!std::regex_match(atom, m, atom_re)) {
    unsupported(op, "has atom '" + atom + "'; a copy_async store is a 2-D TMA store");
  }
  const int64_t rows = std::stoll(m[1]), cols = std::stoll(m[2]), swizzle = std::stoll(m[3]);
  auto src = shared_.find(op.operand(0));
  if (src == shared_.end() || src->second.transposed) {
    unsupported(op, "stores %" + op.operand(0)->name() + ", which is not a shared buffer");
  }
  const Type& t = op.operand(0)->type();
  // `by = warpgroup`: each warpgroup's thread 0 sends its warpgroup's share of the rows.
  const bool by_warpgroup = op.has_attr("by");
  const int64_t shares = by_warpgroup ? role_threads_ / 128 : 1;
  if (by_warpgroup && (issue_one_ || role_index_ < 0 || role_threads_ % 128 != 0)) {
    unsupported(op, "stores by warpgroup outside a role of whole warpgroups");
  }
  if (t.rank() != 2 || t.static_shape()[0] != rows * shares || t.static_shape()[1] != cols) {
    unsupported(op, "has a box " + std::to_string(rows) + "x" + std::to_string(cols) + " that is " +
                        (by_warpgroup ? "not one warpgroup's share of " : "not its whole ") +
                        "buffer " + t.str());
  }
  const Operation* tile = op.operand(1)->def();
  if (!tile) unsupported(op, "must store into a tile of a kernel argument");
  if (tile->kind() == OpKind::tile && ir::tile_window_dim(*tile) >= 0 &&
      !op.has_attr("inside_window")) {
    unsupported(op,
                "stores into a tile with a window by TMA, which clips at the tensor's bounds "
                "only; stage-stores guards such a store with the box inside the window "
                "(`inside_window`)");
  }
  std::string tmap = tma_descriptor(op, *tile, rows, cols, swizzle, op.has_attr("optional"));
  const View& g = view(op, op.operand(1));
  // TMA clips the box at the tensor's bounds: a masked tile's writes outside are dropped.
  if (by_warpgroup) {
    const int64_t share_bytes = t.static_bytes() / shares;
    const auto [coords, rank] = tma_coordinates(
        g, {"(" + g.origin[0] + ") + " + warpgroup_index_ + " * " + std::to_string(rows),
            g.origin[1]});
    line("if (tid % 128 == 0) tessel::device::tma_store_" + std::to_string(rank) + "d(&" + tmap +
         ", " + src->second.base + " + " + warpgroup_index_ + " * " +
         std::to_string(share_bytes) + ", " + coords + ");");
    return;
  }
  const auto [coords, rank] = tma_coordinates(g, {g.origin[0], g.origin[1]});
  line(std::string(issue_one_ ? "" : "if (tid == 0) ") + "tessel::device::tma_store_" +
       std::to_string(rank) + "d(&" + tmap + ", " + src->second.base + ", " + coords + ");");
}

// The guard of a thread's share of the role's TMA stores: thread 0 of the role, or of each
// warpgroup with `by = warpgroup`; none in a role run by one elected thread.
std::string Emitter::store_thread(const Operation& op) const {
  if (op.has_attr("by")) return "if (tid % 128 == 0) ";
  return issue_one_ ? "" : "if (tid == 0) ";
}

}  // namespace tessel::target::cuda::detail
