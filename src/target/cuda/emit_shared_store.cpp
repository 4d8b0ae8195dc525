// Register tensors into shared memory with stmatrix, and the parts of a register tensor (slice):
// the first half of an epilogue staged for TMA stores (the second half, copy_async from shared
// into a global tile, is in emit_async.cpp).
//
// stmatrix.x4 (HOPPER.md; atoms.cpp `stmatrix`): a warp stores a 16x16 block of 16-bit elements
// as four 8x8 matrices; lane l = q + 4g holds row g, columns 2q and 2q+1 of each matrix j (at row
// 8 * (j & 1), column 8 * (j >> 1) of the block) as one 32-bit register, and lanes 8j..8j+7 give
// the shared addresses of the rows of matrix j. Which values of the register tensor form such a
// block is read off its layout: for lane 0 of warp 0 every value not yet placed starts a block at
// its coordinate, the block's eight values must be that thread's, and every thread of the role
// must hold the same value indices at the same places relative to its warp's block origin. The
// shared address of a row is the buffer's layout evaluated at run time (a plain row-major layout,
// optionally under a swizzle Sw<B,M,S>, the forms synthesis gives staging buffers).
#include <regex>

#include "layout/layout.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

std::optional<std::string> shared_offset_expr(const std::string& layout, const std::string& row,
                                              const std::string& col) {
  static const std::regex swizzled(
      R"(^Sw<(\d+),(\d+),(\d+)> o 0 o \((\d+),(\d+)\):\((\d+),(\d+)\)$)");
  static const std::regex plain(R"(^\((\d+),(\d+)\):\((\d+),(\d+)\)$)");
  std::smatch m;
  if (std::regex_match(layout, m, swizzled)) {
    std::string o = "((" + row + ") * " + m[6].str() + " + (" + col + ") * " + m[7].str() + ")";
    int64_t b = std::stoll(m[1]), mm = std::stoll(m[2]), s = std::stoll(m[3]);
    // CuTe's Swizzle<B,M,S>: bits [M+S, M+S+B) of the offset are xor-ed into bits [M, M+B).
    return "(" + o + " ^ ((" + o + " >> " + std::to_string(s) + ") & " +
           std::to_string(((int64_t{1} << b) - 1) << mm) + "))";
  }
  if (std::regex_match(layout, m, plain)) {
    return "((" + row + ") * " + m[3].str() + " + (" + col + ") * " + m[4].str() + ")";
  }
  return std::nullopt;
}

std::optional<int64_t> shared_offset_value(const std::string& layout, int64_t row, int64_t col) {
  static const std::regex swizzled(
      R"(^Sw<(\d+),(\d+),(\d+)> o 0 o \((\d+),(\d+)\):\((\d+),(\d+)\)$)");
  static const std::regex plain(R"(^\((\d+),(\d+)\):\((\d+),(\d+)\)$)");
  std::smatch m;
  if (std::regex_match(layout, m, swizzled)) {
    const int64_t o = row * std::stoll(m[6]) + col * std::stoll(m[7]);
    const int64_t b = std::stoll(m[1]), mm = std::stoll(m[2]), s = std::stoll(m[3]);
    return o ^ ((o >> s) & (((int64_t{1} << b) - 1) << mm));
  }
  if (std::regex_match(layout, m, plain)) return row * std::stoll(m[3]) + col * std::stoll(m[4]);
  return std::nullopt;
}

void Emitter::slice(const Operation& op) {
  auto found = regs_.find(op.operand(0));
  if (found == regs_.end())
    unsupported(op, "needs %" + op.operand(0)->name() + " to be a register tensor");
  const Reg& src = found->second;
  const Plan& from = *src.plan;
  const Plan* to = plan_for(op, op.result()->type());
  const auto& offsets = op.ints_attr("offsets");
  if (to->threads != from.threads) unsupported(op, "changes the threads of the layout");
  // Value v of the part is value map[v] of the whole, the same for every thread.
  std::vector<int64_t> map(to->values, -1);
  for (int64_t t = 0; t < to->threads; ++t) {
    std::map<std::vector<int64_t>, int64_t> where;
    for (int64_t v = 0; v < from.values; ++v) where[from.coord(t, v)] = v;
    for (int64_t v = 0; v < to->values; ++v) {
      std::vector<int64_t> c = to->coord(t, v);
      for (size_t d = 0; d < c.size(); ++d) c[d] += offsets[d];
      auto it = where.find(c);
      if (it == where.end() || (map[v] >= 0 && map[v] != it->second)) {
        unsupported(op, "has a layout whose values are not the same values of " +
                            value_ref(op.operand(0)) + " in every thread (rearrange instead)");
      }
      map[v] = it->second;
    }
  }
  // A packed tensor's part stays packed when it takes whole pairs.
  bool pairs = src.packed && to->values % 2 == 0;
  for (int64_t v = 0; pairs && v < to->values; v += 2)
    pairs = map[v] % 2 == 0 && map[v + 1] == map[v] + 1;
  if (pairs) {
    std::vector<int64_t> needed;
    for (int64_t v = 0; v < to->values; v += 2) needed.push_back(map[v] / 2);
    emit_deferred_pairs(op.operand(0), needed);
    Reg r{fresh(op.result()->name()), to, src.element, true};
    line("unsigned " + r.name + "[" + std::to_string(to->values / 2) + "];  // part of " +
         src.name);
    for (int64_t v = 0; v < to->values; v += 2)
      line(r.name + "[" + std::to_string(v / 2) + "] = " + src.name + "[" +
           std::to_string(map[v] / 2) + "];");
    regs_[op.result()] = r;
    return;
  }
  const Reg& whole = reg(op, op.operand(0));
  Reg r{fresh(op.result()->name()), to, whole.element};
  line("float " + r.name + "[" + std::to_string(to->values) + "];  // part of " + whole.name);
  for (int64_t v = 0; v < to->values; ++v)
    line(r.name + "[" + std::to_string(v) + "] = " + whole.name + "[" + std::to_string(map[v]) +
         "];");
  regs_[op.result()] = r;
}

void Emitter::shared_alloc(const Operation& op) {
  const Type& t = op.result()->type();
  if (t.space() != MemorySpace::shared || !t.has_layout()) {
    unsupported(op, "of a " + std::string(ir::to_string(t.space())) +
                        " tensor without a layout is not emitted (only shared buffers)");
  }
  int64_t bytes = t.static_bytes();
  int64_t align = t.layout().rfind("Sw<3,", 0) == 0 ? 1024 : 128;
  SharedTile tile;
  if (op.num_operands() == 1) {
    // `alloc %tile`: the buffer starts as far into a 128-byte line as the global tile does (128
    // bytes more to move in), so that a warp's 16-byte cp.async's of 512 bytes from a row's line
    // (copy_async {from_line}) write whole lines of shared memory too.
    const std::string phase = op.result()->name() + "_line_phase";
    line("const int " + phase + " = static_cast<int>(reinterpret_cast<unsigned long long>(" +
         tile_start(view(op, op.operand(0))) + ") & 127);  // bytes");
    tile.base = "(tsl_smem + " + std::to_string(alloc_shared(bytes + 128, align)) + " + " +
                phase + ")";
  } else {
    tile.base = "(tsl_smem + " + std::to_string(alloc_shared(bytes, align)) + ")";
  }
  tile.element = t.element();
  tile.shape = t.static_shape();
  tile.layout = t.layout();
  tile.source = op.result();
  tile.bytes = bytes;
  shared_[op.result()] = tile;
  line("// %" + op.result()->name() + ": " + std::to_string(bytes) + " B of shared memory at " +
       tile.base);
}

// A tile [R, C] at coordinates (i, j) of a shared buffer in a plain strided layout (schedule-
// rows' row held in shared memory: [R, C] slices of an [R, N] buffer at (0, k)): the same
// strides, the base moved to element (i R, j C). Swizzled buffers, masked tiles and tiles of
// views are not emitted (their slices would not be strided buffers of their own).
void Emitter::shared_tile(const Operation& op) {
  auto it = shared_.find(op.operand(0));
  if (it == shared_.end() || it->second.transposed || it->second.source != op.operand(0)) {
    unsupported(op, "of %" + op.operand(0)->name() + ", which is not a shared buffer (an alloc)");
  }
  const SharedTile& parent = it->second;
  if (op.has_attr("masked") || op.has_attr("squeeze") || ir::tile_window_dim(op) >= 0) {
    unsupported(op, "of a shared buffer is masked, squeezed or windowed; shared tiles are plain");
  }
  const std::optional<StridedBuffer> strided = strided_buffer(parent.layout, parent.shape);
  if (!strided || strided->swizzle) {
    unsupported(op, "of a shared buffer in layout " + parent.layout +
                        "; tiles of plain strided buffers are emitted");
  }
  const auto& shape = op.ints_attr("shape");
  const std::vector<int64_t>& stride = strided->stride;
  std::string offset;
  std::vector<layout::IntTuple> tile_shape, tile_stride;
  for (size_t d = 0; d < shape.size(); ++d) {
    const Value* index = op.operand(static_cast<int>(d) + 1);
    const std::optional<int64_t> c = const_int(index);
    const int64_t step = shape[d] * stride[d] * ir::bit_width(parent.element) / 8;
    if (!(c && *c == 0) && step != 0) {
      offset += " + " + (c ? std::to_string(*c * step)
                           : "(" + scalar(op, index) + ") * " + std::to_string(step));
    }
    tile_shape.emplace_back(shape[d]);
    tile_stride.emplace_back(stride[d]);
  }
  SharedTile tile = parent;
  tile.base = offset.empty() ? parent.base : "(" + parent.base + offset + ")";
  tile.shape.assign(shape.begin(), shape.end());
  tile.layout = layout::Layout(layout::IntTuple(tile_shape), layout::IntTuple(tile_stride)).str();
  tile.source = op.result();
  tile.bytes = 0;
  const Type& t = op.result()->type();
  if (t.has_layout()) {
    const std::optional<StridedBuffer> own = strided_buffer(t.layout(), tile.shape);
    if (!own || own->swizzle || own->stride != stride) {
      unsupported(op, "has layout " + t.layout() + ", not its buffer's strides " + tile.layout);
    }
  }
  shared_[op.result()] = tile;
}

// The shared buffer a register -> shared copy writes (its second operand).
const SharedTile& Emitter::store_destination(const Operation& op) {
  auto dst = shared_.find(op.operand(1));
  if (dst == shared_.end() || dst->second.transposed) {
    unsupported(op, "into %" + op.operand(1)->name() + ", which is not a shared buffer");
  }
  return dst->second;
}

// f32, f16 or bf16 registers into a plain strided buffer by st.shared.bN, each thread its own
// values (split-roles' hand-over of partial accumulators: written once per tile, read back by
// another role in the same layout; schedule-rows' row held in shared memory: 16-byte vectors
// along the row, read back by the same threads), so the widest vector the layout allows is all
// that matters. 16-bit values go two to a 32-bit word.
void Emitter::register_to_shared(const Operation& op) {
  const Reg& r = reg_words(op, op.operand(0));
  const Plan& plan = *r.plan;
  const SharedTile& buf = store_destination(op);
  static const std::regex atom_re(R"(st\.shared\.b(32|64|128))");
  std::smatch m;
  const std::string atom = op.str_attr("atom");
  if (!std::regex_match(atom, m, atom_re)) {
    unsupported(op, "has atom '" + atom +
                        "'; f32 registers go to shared memory by st.shared.b32, "
                        "b64 or b128");
  }
  const bool half = r.element == ScalarKind::f16 || r.element == ScalarKind::bf16;
  if ((r.element != ScalarKind::f32 && !half) || buf.element != r.element) {
    unsupported(op, "stores " + std::string(ir::to_string(r.element)) + " into a " +
                        std::string(ir::to_string(buf.element)) +
                        " buffer by st.shared; f32, f16 and bf16 registers of the buffer's type "
                        "are stored this way here");
  }
  if (plan.tile != buf.shape || plan.tile.empty() || plan.tile.size() > 2) {
    unsupported(op, "between tiles of different shapes (or not 1-D or 2-D)");
  }
  const std::optional<StridedBuffer> strided = strided_buffer(buf.layout, buf.shape);
  if (!strided || strided->swizzle) {
    unsupported(op, "writes a shared buffer in layout " + buf.layout +
                        "; st.shared writes a plain strided layout here");
  }
  const std::vector<int64_t>& stride = strided->stride;
  const int64_t w = std::stoll(m[1]) / (half ? 16 : 32);  // elements per vector
  if (half && w < 2) {
    unsupported(op, "stores 16-bit values one at a time; st.shared.b32 and wider here");
  }
  auto offset = [&](const std::vector<int64_t>& c) { return strided_offset(c, stride); };
  if (!aligned_runs(plan, stride, w)) {
    unsupported(op, "has atom '" + atom + "' but the register layout " + plan.text +
                        " does not give each thread aligned runs of " + std::to_string(w) +
                        " consecutive elements of " + buf.layout);
  }
  const std::string thread = thread_offset_expr(plan, stride);
  line("{  // store " + r.name + " -> shared %" + op.operand(1)->name() + " (" + atom + ")");
  ++indent_;
  line(std::string(half ? "unsigned short" : "float") + "* p = reinterpret_cast<" +
       (half ? "unsigned short" : "float") + "*>(" + buf.base + ")" +
       (thread.empty() ? "" : " + " + thread) + ";");
  // One vector store of `words` 32-bit words a step: f32 values, or 16-bit values two to a word
  // (pair_expr packs unpacked values).
  const int64_t words = half ? w / 2 : w;
  const std::string scalar = half ? "unsigned" : "float";
  const std::string vector =
      words == 1 ? scalar : std::string(half ? "uint" : "float") + std::to_string(words);
  for (int64_t v = 0; v < plan.values; v += w) {
    const std::string at = "p + " + std::to_string(offset(plan.value_coord[size_t(v)]));
    std::string parts;
    for (int64_t u = 0; u < words; ++u) {
      parts += (u ? ", " : "") + (half ? pair_expr(r, v + 2 * u, v + 2 * u + 1)
                                       : r.name + "[" + std::to_string(v + u) + "]");
    }
    line("*reinterpret_cast<" + vector + "*>(" + at +
         ") = " + (words == 1 ? parts : "make_" + vector + "(" + parts + ")") + ";");
  }
  --indent_;
  line("}");
}

void Emitter::stmatrix_store(const Operation& op) {
  const Reg& r = reg_words(op, op.operand(0));
  const Plan& plan = *r.plan;
  const SharedTile& buf = store_destination(op);
  std::string atom = op.has_attr("atom") ? op.str_attr("atom") : "";
  if (atom != "stmatrix.x4.b16" && atom != "stmatrix.x4.trans.b16") {
    unsupported(op, "has atom '" + atom +
                        "'; registers go to shared memory by stmatrix.x4.b16 or "
                        "stmatrix.x4.trans.b16");
  }
  // .trans writes each 8x8 matrix transposed: a thread's register pair holds two rows of one
  // column of the tile (a transposed accumulator's), not two columns of one row.
  const bool trans = atom == "stmatrix.x4.trans.b16";
  if (r.element != ScalarKind::f16 && r.element != ScalarKind::bf16) {
    unsupported(op, "stores " + std::string(ir::to_string(r.element)) + "; stmatrix moves 16-bit");
  }
  if (plan.tile.size() != 2 || plan.tile != buf.shape || plan.threads % 32 != 0) {
    unsupported(op, "between tiles of different shapes (or not 2-D, or not whole warps)");
  }
  // Blocks of lane 0 of warp 0: first value and the eight values in register order
  // (matrix j = 0..3, then the pair).
  auto offset_of = [trans](int j, int e) -> std::pair<int64_t, int64_t> {
    if (trans) return {8 * (j & 1) + e, 8 * (j >> 1)};
    return {8 * (j & 1), 8 * (j >> 1) + e};
  };
  std::map<std::vector<int64_t>, int64_t> where;
  for (int64_t v = 0; v < plan.values; ++v) where[plan.coord(0, v)] = v;
  std::vector<bool> placed(plan.values, false);
  std::vector<std::array<int64_t, 8>> blocks;
  for (int64_t v = 0; v < plan.values; ++v) {
    if (placed[v]) continue;
    std::vector<int64_t> o = plan.coord(0, v);
    std::array<int64_t, 8> vals{};
    for (int j = 0; j < 4; ++j) {
      for (int e = 0; e < 2; ++e) {
        auto [dr, dc] = offset_of(j, e);
        auto it = where.find({o[0] + dr, o[1] + dc});
        if (it == where.end() || placed[it->second]) {
          unsupported(op, "register layout " + plan.text +
                              " does not hold 16x16 blocks in stmatrix's fragment order");
        }
        vals[2 * j + e] = it->second;
      }
    }
    for (int64_t x : vals) placed[x] = true;
    blocks.push_back(vals);
  }
  // Every thread: the same values, at (g, 2q) + matrix offsets from its warp's block origin.
  for (int64_t t = 0; t < plan.threads; ++t) {
    int64_t lane = t % 32, w0 = t - lane;
    for (const auto& vals : blocks) {
      std::vector<int64_t> origin = plan.coord(w0, vals[0]);
      for (int j = 0; j < 4; ++j) {
        for (int e = 0; e < 2; ++e) {
          auto [dr, dc] = offset_of(j, e);
          std::vector<int64_t> expect =
              trans
                  ? std::vector<int64_t>{origin[0] + 2 * (lane % 4) + dr, origin[1] + lane / 4 + dc}
                  : std::vector<int64_t>{origin[0] + lane / 4 + dr,
                                         origin[1] + 2 * (lane % 4) + dc};
          if (plan.coord(t, vals[2 * j + e]) != expect) {
            unsupported(op, "register layout " + plan.text +
                                " does not hold 16x16 blocks in stmatrix's fragment order");
          }
        }
      }
    }
  }
  // The origin of each block for this warp: lane 0's coordinate of the block's first value,
  // as index arithmetic of the warp's first thread.
  auto warp_origin = [&](int64_t v, size_t d) {
    std::string e = std::to_string(plan.value_coord[v][d]);
    for (const Leaf& l : plan.leaves) {
      if (l.coef[d] == 0 || l.prefix * l.extent <= 32) continue;  // lane bits only: 0 for lane 0
      e += " + (((tid / 32 * 32) / " + std::to_string(l.prefix) + ") % " +
           std::to_string(l.extent) + ") * " + std::to_string(l.coef[d]);
    }
    return e;
  };
  line("{  // " + r.name + " -> " + buf.base + " by stmatrix.x4" + (trans ? ".trans" : "") + ": " +
       std::to_string(blocks.size()) + " block(s) of 16x16 per warp");
  ++indent_;
  line("const int lane = tid % 32;");
  for (const auto& vals : blocks) {
    std::string row = "(" + warp_origin(vals[0], 0) + ") + 8 * ((lane / 8) & 1) + lane % 8";
    std::string col = "(" + warp_origin(vals[0], 1) + ") + 8 * (lane / 16)";
    auto offset = shared_offset_expr(buf.layout, row, col);
    if (!offset) {
      unsupported(op, "into a buffer of layout " + buf.layout +
                          " (stmatrix stores into row-major, optionally swizzled, buffers)");
    }
    std::string regs;
    for (int j = 0; j < 4; ++j) regs += ", " + pair_expr(r, vals[2 * j], vals[2 * j + 1]);
    line(std::string("tessel::device::stmatrix_x4") + (trans ? "_trans(" : "(") + buf.base +
         " + 2 * " + *offset + regs + ");");
  }
  --indent_;
  line("}");
}

void Emitter::shared_to_global(const Operation& op) {
  auto src = shared_.find(op.operand(0));
  if (src == shared_.end() || src->second.transposed) {
    unsupported(op, "from %" + op.operand(0)->name() + ", which is not a shared buffer");
  }
  const SharedTile& buf = src->second;
  const View& g = view(op, op.operand(1));
  if (buf.shape.size() != 2 || g.shape != buf.shape) {
    unsupported(op, "between tiles of different shapes (or not 2-D)");
  }
  if (buf.element != g.element ||
      (buf.element != ScalarKind::f16 && buf.element != ScalarKind::bf16)) {
    unsupported(op, "of 16-bit elements only, and of one element type");
  }
  const int64_t rows = buf.shape[0], cols = buf.shape[1];
  auto offset = shared_offset_expr(buf.layout, "r", "c");
  if (!offset) unsupported(op, "from a buffer of layout " + buf.layout);
  const int64_t threads = role_index_ >= 0 ? role_threads_ : threads_;
  // Every thread of the role copies elements tid, tid + threads, ...: a fallback (e.g. for rows
  // whose length TMA cannot take), element by element with bounds checks.
  line("for (int i = tid; i < " + std::to_string(rows * cols) +
       "; i += " + std::to_string(threads) + ") {  // " + buf.base + " -> " + g.base + " tile");
  ++indent_;
  line("const int r = i / " + std::to_string(cols) + ", c = i % " + std::to_string(cols) + ";");
  line("const int gr = " + g.origin[0] + " + r, gc = " + g.origin[1] + " + c;");
  line("if (gr < " + g.extent[0] + " && gc < " + g.extent[1] + ") " + g.base + "[(long long)gr * " +
       g.stride[0] + " + gc] = reinterpret_cast<const unsigned short*>(" + buf.base + ")[" +
       *offset + "];");
  --indent_;
  line("}");
}

}  // namespace tessel::target::cuda::detail
