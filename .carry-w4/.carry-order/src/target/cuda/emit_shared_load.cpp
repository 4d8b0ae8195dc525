// Epilogue operands through shared memory (warp-specialize's "Epilogue operands"): the producer's
// 1-D TMA load of a vector tile into an aref slot, and the consumer threads' reads of a slot
// buffer into a register tensor.
//
// The read: each thread loads the values its register layout gives it, `ld.shared` of the width
// the op's atom names (ld.shared.b32: two 16-bit elements), from a buffer in a plain strided
// layout ("256:1", "(R,C):(C,1)": what TMA writes without a swizzle) or such a layout under a
// swizzle ("Sw<3,3,3> o 0 o (128,64):(64,1)": the 128-byte swizzled tile TMA writes for a wgmma
// operand, which a row reduction over the same A tile reads). Under a swizzle the offset is
// computed as the layout says, swizzle(strided offset), at run time from each thread's part and
// the value's; a vector of w elements stays contiguous when it does not cross the swizzle's unit
// of 2^M elements (the atom's width was chosen so: synthesize-shared-layouts' bank model reads
// the same layout). Threads that hold the same elements (a bias row broadcast over the
// accumulator's rows: stride-0 thread modes) read the same addresses, which shared memory serves
// as one broadcast.
//
// Packed 4-bit tiles (a W4A16 GEMM's weights) are read a byte (two values) at a time and
// unpacked on the way: packed4_to_register, below.
#include <optional>
#include <regex>

#include "layout/parse.h"
#include "layout/swizzle.h"
#include "layout/table.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

void Emitter::copy_async_1d(const Operation& op, int64_t extent) {
  const Operation* tile = &tma_source_tile(op);
  const Type& t = op.operand(1)->type();
  if (t.rank() != 1 || t.static_shape()[0] != extent) {
    unsupported(
        op, "has a box of " + std::to_string(extent) + " that is not its whole buffer " + t.str());
  }
  auto dst = shared_.find(op.operand(1));
  if (dst == shared_.end())
    unsupported(
        op, "writes %" + op.operand(1)->name() + ", which is not a shared buffer of an aref slot");
  std::string tmap = tma_descriptor(op, *tile, 1, extent, 0);
  const View& g = view(op, op.operand(0));
  const auto [coords, rank] = tma_coordinates(g, {g.origin[0]});
  line(std::string(issue_one_ ? "" : "if (tid == 0) ") + "tessel::device::tma_load_" +
       std::to_string(rank) + "d(" + dst->second.base + ", &" + tmap + ", " + barrier(op, 2) +
       ", " + coords + ");");
}

void Emitter::shared_to_register(const Operation& op) {
  auto it = shared_.find(op.operand(0));
  if (it == shared_.end() || it->second.transposed) {
    unsupported(op, "reads %" + op.operand(0)->name() +
                        ", which is not a shared buffer (an aref slot or an alloc)");
  }
  const SharedTile& s = it->second;
  if (s.element == ScalarKind::u4 || s.element == ScalarKind::i4) return packed4_to_register(op, s);
  static const std::regex atom_re(R"(ld\.shared\.b(\d+))");
  std::smatch m;
  const std::string atom = op.has_attr("atom") ? op.str_attr("atom") : "";
  if (!std::regex_match(atom, m, atom_re)) {
    unsupported(op, "has atom '" + atom + "'; a shared -> register copy is ld.shared.bN");
  }
  if (s.element != ScalarKind::f16 && s.element != ScalarKind::bf16 &&
      s.element != ScalarKind::f32) {
    unsupported(op, "reads " + std::string(ir::to_string(s.element)) +
                        " elements; f16, bf16 and f32 are read from shared memory here");
  }
  const int64_t bytes = s.element == ScalarKind::f32 ? 4 : 2;
  const int64_t w = std::stoll(m[1]) / 8 / bytes;
  if (w < 1 || (w > 1 && w * bytes > 16) || (w & (w - 1)) != 0) {
    unsupported(op, "has atom '" + atom + "', which does not move whole " + std::to_string(bytes) +
                        "-byte elements in 1 to 16 bytes");
  }
  // The buffer's layout as one stride per dimension (checked against its table), under an
  // optional swizzle "Sw<B,M,S> o 0 o ..." (SharedMap reads the same text for the mainloops).
  const size_t rank = s.shape.size();
  static const std::regex swizzled_re(R"(^Sw<(\d+),(\d+),(\d+)> o 0 o (.*)$)");
  std::smatch sm;
  std::optional<layout::Swizzle> swizzle;
  std::string strided_text = s.layout;
  if (std::regex_match(s.layout, sm, swizzled_re)) {
    swizzle = layout::Swizzle(std::stoi(sm[1]), std::stoi(sm[2]), std::stoi(sm[3]));
    strided_text = sm[4].str();
  }
  const layout::Layout l = layout::parse_layout(strided_text);
  std::vector<int64_t> table = layout::layout_table(l);
  int64_t count = 1;
  for (int64_t e : s.shape) count *= e;
  std::vector<int64_t> stride(rank, 0);
  bool strided = static_cast<int64_t>(table.size()) == count && rank >= 1 && rank <= 2;
  if (strided) {
    stride[0] = count > 1 && s.shape[0] > 1 ? table[1] : 0;
    if (rank == 2) stride[1] = s.shape[1] > 1 ? table[static_cast<size_t>(s.shape[0])] : 0;
    for (int64_t i = 0; strided && i < count; ++i) {
      int64_t r = i % s.shape[0], c = rank == 2 ? i / s.shape[0] : 0;
      strided = table[static_cast<size_t>(i)] == r * stride[0] + (rank == 2 ? c * stride[1] : 0);
    }
  }
  if (!strided) {
    unsupported(op, "reads a shared buffer in layout " + s.layout +
                        "; threads read rank-1 or rank-2 buffers in a plain strided layout here");
  }
  // 16-bit elements read two or more at a time stay packed, as loaded (see Reg): an epilogue
  // operand held beside the accumulators in half the registers. gemm_bias_relu's bias row (64
  // values a thread) unpacked into floats at the load made ptxas spill 44 bytes once overlap-
  // epilogue carried the tile (NVRTC, -v); packed, and unpacked where the cast reads it, none.
  const Value* result = op.result();
  const Plan* result_plan = plan_for(op, result->type());
  const bool packed = bytes == 2 && w >= 2 && result_plan &&
                      packable(result->type().element(), result_plan->values);
  Reg& r = packed ? new_packed_reg(op) : new_reg(op);
  const Plan& plan = *r.plan;
  if (plan.tile != s.shape) unsupported(op, "between tiles of different shapes");
  if (r.element != s.element) unsupported(op, "changes the element type; cast instead");
  auto offset = [&](const std::vector<int64_t>& c) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) o += c[d] * stride[d];
    return o;
  };
  // Every thread's part of the offset, and every vector's, must be w-aligned and its w values
  // consecutive in the buffer: what the atom was chosen for (warp-specialize's read_width).
  bool aligned = plan.values % w == 0;
  for (const Leaf& leaf : plan.leaves) aligned = aligned && offset(leaf.coef) % w == 0;
  for (int64_t v = 0; aligned && v < plan.values; v += w) {
    int64_t base = offset(plan.value_coord[static_cast<size_t>(v)]);
    aligned = base % w == 0;
    for (int64_t u = 1; aligned && u < w; ++u)
      aligned = offset(plan.value_coord[static_cast<size_t>(v + u)]) == base + u;
  }
  if (!aligned) {
    unsupported(op, "has atom '" + atom + "' but the register layout " + plan.text +
                        " does not give each thread aligned runs of " + std::to_string(w) +
                        " consecutive elements of " + s.layout);
  }
  if (swizzle && swizzle->shift <= 0)
    unsupported(op, "reads a buffer under " + swizzle->str() + "; a positive shift is read here");
  if (swizzle && w > (int64_t{1} << swizzle->base)) {
    unsupported(op, "has atom '" + atom + "', whose " + std::to_string(w) +
                        "-element vectors cross the swizzle's unit of " +
                        std::to_string(int64_t{1} << swizzle->base) + " elements in " + s.layout);
  }
  const char* type = bytes == 4 ? "const float" : "const unsigned short";
  std::string thread;
  for (size_t d = 0; d < rank; ++d) {
    if (plan.var[d] == "0" || stride[d] == 0) continue;
    thread += (thread.empty() ? "" : " + ") + plan.var[d] +
              (stride[d] == 1 ? "" : " * " + std::to_string(stride[d]));
  }
  const std::string bf = s.element == ScalarKind::bf16 ? "true" : "false";
  line("{  // load " + r.name + " <- shared %" + op.operand(0)->name() + " (" + atom + ")");
  ++indent_;
  if (swizzle) {
    // The thread's strided offset, then each value's address through the swizzle: bits
    // [M+S, M+S+B) of the offset xor-ed into bits [M, M+B) (CuTe's Swizzle<B,M,S>).
    line(std::string(type) + "* p = reinterpret_cast<" + type + "*>(" + s.base + ");");
    line("const int o = " + (thread.empty() ? std::string("0") : thread) + ";");
  } else {
    line(std::string(type) + "* p = reinterpret_cast<" + type + "*>(" + s.base + ")" +
         (thread.empty() ? "" : " + " + thread) + ";");
  }
  const int64_t zzz = swizzle ? ((int64_t{1} << swizzle->bits) - 1) << swizzle->base : 0;
  for (int64_t v = 0; v < plan.values; v += w) {
    const int64_t c = offset(plan.value_coord[static_cast<size_t>(v)]);
    const std::string oc = "(o + " + std::to_string(c) + ")";
    const std::string at = swizzle ? "p + (" + oc + " ^ ((" + oc + " >> " +
                                         std::to_string(swizzle->shift) + ") & " +
                                         std::to_string(zzz) + "))"
                                   : "p + " + std::to_string(c);
    const std::string slot = r.name + "[" + std::to_string(v) + "]";
    if (packed) {
      const std::string word = r.name + "[" + std::to_string(v / 2) + "]";
      if (w == 2) {
        line(word + " = *reinterpret_cast<const unsigned*>(" + at + ");");
      } else {
        const std::string vec = w == 4 ? "uint2" : "uint4";
        line("{ const " + vec + " u = *reinterpret_cast<const " + vec + "*>(" + at + "); " +
             r.name + "[" + std::to_string(v / 2) + "] = u.x; " + r.name + "[" +
             std::to_string(v / 2 + 1) + "] = u.y;" +
             (w == 8 ? " " + r.name + "[" + std::to_string(v / 2 + 2) + "] = u.z; " + r.name + "[" +
                           std::to_string(v / 2 + 3) + "] = u.w;"
                     : std::string()) +
             " }");
      }
    } else if (w > 1) {
      line(bytes == 2
               ? "tsl_load16<" + std::to_string(w) + ">(" + at + ", &" + slot + ", " + bf + ");"
               : "tsl_load32<" + std::to_string(w) + ">(" + at + ", &" + slot + ");");
    } else {
      line(slot + " = " + (bytes == 2 ? "tsl_load(" + at + ", " + bf + ")" : "*(" + at + ")") +
           ";");
    }
  }
  --indent_;
  line("}");
}

// Packed 4-bit values (two a byte, value 2k in the low nibble of byte k, as TMA copies them from
// global memory) into registers: each thread loads the bytes of its pairs of values consecutive
// along the buffer's contiguous dimension (ld.shared.b8, the atom synthesis chose). The buffer is
// row-major, optionally swizzled (TMA's 32-, 64- or 128-byte modes). A swizzle makes each byte's
// offset a non-linear function of the thread, but mostly only through the thread's part: the
// pairs fall into classes whose offsets differ from one representative's by the same constant
// in every thread (checked over all threads), so each class costs one run-time swizzle and its
// loads use immediate offsets.
//
// Unpacking: when every use of the values is a cast to f16, each byte becomes one f16x2 word of
// its two values — OR-ing the nibbles into the mantissa of 1024.0 (0x6400) and subtracting 1024
// in one packed instruction — and the register tensor is held packed (16-bit pairs, as the RS
// wgmma and the packed elementwise ops take them). Otherwise each value becomes the float of its
// value, by the same trick with 2^23 (I2F would run at a quarter of the rate on sm_90). i4 takes
// the nibble's sign: its value is (n ^ 8) - 8.
void Emitter::packed4_to_register(const Operation& op, const SharedTile& s) {
  const std::string atom = op.has_attr("atom") ? op.str_attr("atom") : "";
  if (atom != "ld.shared.b8") {
    unsupported(op, "reads packed 4-bit values with atom '" + atom +
                        "'; they are read from shared memory a byte (two values) at a time "
                        "(ld.shared.b8)");
  }
  const Value* result = op.result();
  bool to_f16 = true;
  int uses = 0;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
    for (const Value* v : user->operands()) {
      if (v != result) continue;
      ++uses;
      to_f16 = to_f16 && user->kind() == OpKind::cast &&
               user->result()->type().element() == ScalarKind::f16 &&
               user->result()->type().layout() == result->type().layout();
    }
  });
  to_f16 = to_f16 && uses > 0;
  const Plan* plan_p = plan_for(op, result->type());
  if (plan_p->tile != s.shape || plan_p->tile.size() != 2)
    unsupported(op, "between tiles of different shapes (or not 2-D)");
  if (result->type().element() != s.element)
    unsupported(op, "changes the element type; cast instead");
  const Plan& plan = *plan_p;
  if (plan.values % 2 != 0) unsupported(op, "holds an odd number of values per thread");
  // Each thread's values pair up along the columns: value v and v + 1 are columns 2j, 2j + 1.
  const int64_t pairs = plan.values / 2;
  std::vector<std::vector<int64_t>> offset(static_cast<size_t>(pairs));
  for (int64_t j = 0; j < pairs; ++j) {
    for (int64_t t = 0; t < plan.threads; ++t) {
      const std::vector<int64_t> a = plan.coord(t, 2 * j), b = plan.coord(t, 2 * j + 1);
      if (a[1] % 2 != 0 || b[0] != a[0] || b[1] != a[1] + 1) {
        unsupported(op, "has a register layout " + plan.text +
                            " whose values do not come in pairs of one byte (columns 2j, 2j + 1)");
      }
      std::optional<int64_t> o = shared_offset_value(s.layout, a[0], a[1]);
      if (!o) {
        unsupported(op, "reads a shared buffer in layout " + s.layout +
                            "; packed 4-bit values are read from row-major (optionally swizzled) "
                            "buffers");
      }
      offset[static_cast<size_t>(j)].push_back(*o);
    }
  }
  // Classes: pair j joins the first representative r whose offsets differ from its own by one
  // constant (even: whole bytes) in every thread.
  std::vector<int64_t> rep_of(static_cast<size_t>(pairs), -1), delta(static_cast<size_t>(pairs), 0);
  std::vector<int64_t> reps;
  for (int64_t j = 0; j < pairs; ++j) {
    const auto& oj = offset[static_cast<size_t>(j)];
    for (int64_t r : reps) {
      const auto& orr = offset[static_cast<size_t>(r)];
      const int64_t d = oj[0] - orr[0];
      bool same = d % 2 == 0;
      for (size_t t = 1; same && t < oj.size(); ++t) same = oj[t] - orr[t] == d;
      if (same) {
        rep_of[static_cast<size_t>(j)] = r;
        delta[static_cast<size_t>(j)] = d;
        break;
      }
    }
    if (rep_of[static_cast<size_t>(j)] < 0) {
      rep_of[static_cast<size_t>(j)] = j;
      reps.push_back(j);
    }
  }
  const bool is_signed = s.element == ScalarKind::i4;
  // Packed: the words are f16x2 of the values (value_expr reads them as f16, which they are).
  const Reg& r =
      to_f16 ? (regs_[result] = Reg{fresh(result->name()), plan_p, s.element, true}) : new_reg(op);
  if (to_f16) line("unsigned " + r.name + "[" + std::to_string(pairs) + "];  // f16x2 pairs");
  line("{  // load " + r.name + " <- shared %" + op.operand(0)->name() + " (" + atom + ", " +
       std::to_string(reps.size()) + " address class(es), unpacked to " +
       (to_f16 ? "f16x2)" : "floats)"));
  ++indent_;
  for (int64_t rep : reps) {
    const std::vector<int64_t>& c = plan.value_coord[static_cast<size_t>(2 * rep)];
    std::optional<std::string> e =
        shared_offset_expr(s.layout, "(" + plan.var[0] + ") + " + std::to_string(c[0]),
                           "(" + plan.var[1] + ") + " + std::to_string(c[1]));
    line("const unsigned char* p" + std::to_string(rep) + " = " + s.base + " + ((" + *e +
         ") >> 1);");
  }
  const std::string flip = is_signed ? " ^ 0x88u" : "";
  for (int64_t j = 0; j < pairs; ++j) {
    const std::string byte = "p" + std::to_string(rep_of[static_cast<size_t>(j)]) + "[" +
                             std::to_string(delta[static_cast<size_t>(j)] / 2) + "]";
    if (to_f16) {
      line(r.name + "[" + std::to_string(j) + "] = tessel::device::u4x2_to_f16x2(" + byte + flip +
           (is_signed ? ", true" : ", false") + ");");
    } else {
      const std::string b = "b" + std::to_string(j);
      auto value = [&](const std::string& nibble) {
        return "(__uint_as_float(0x4B000000u | (" + nibble + ")) - " +
               (is_signed ? "8388616.0f" : "8388608.0f") + ")";
      };
      line("{ const unsigned " + b + " = " + byte + flip + "; " + r.name + "[" +
           std::to_string(2 * j) + "] = " + value(b + " & 15u") + "; " + r.name + "[" +
           std::to_string(2 * j + 1) + "] = " + value(b + " >> 4") + "; }");
    }
  }
  --indent_;
  line("}");
}

}  // namespace tessel::target::cuda::detail
