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
#include <cmath>
#include <cstdio>
#include <optional>
#include <regex>

#include "layout/layout.h"
#include "layout/parse.h"
#include "layout/swizzle.h"
#include "layout/table.h"
#include "support/float_formats.h"
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

std::optional<StridedBuffer> strided_buffer(const std::string& text,
                                            const std::vector<int64_t>& shape) {
  static const std::regex swizzled_re(R"(^Sw<(\d+),(\d+),(\d+)> o 0 o (.*)$)");
  std::smatch sm;
  StridedBuffer out;
  std::string strided_text = text;
  if (std::regex_match(text, sm, swizzled_re)) {
    out.swizzle = layout::Swizzle(std::stoi(sm[1]), std::stoi(sm[2]), std::stoi(sm[3]));
    strided_text = sm[4].str();
  }
  const size_t rank = shape.size();
  const std::vector<int64_t> table = layout::layout_table(layout::parse_layout(strided_text));
  int64_t count = 1;
  for (int64_t e : shape) count *= e;
  if (static_cast<int64_t>(table.size()) != count || rank < 1 || rank > 2) return std::nullopt;
  out.stride.assign(rank, 0);
  out.stride[0] = count > 1 && shape[0] > 1 ? table[1] : 0;
  if (rank == 2) out.stride[1] = shape[1] > 1 ? table[static_cast<size_t>(shape[0])] : 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t r = i % shape[0], c = rank == 2 ? i / shape[0] : 0;
    if (table[static_cast<size_t>(i)] != r * out.stride[0] + (rank == 2 ? c * out.stride[1] : 0))
      return std::nullopt;
  }
  return out;
}

int64_t strided_offset(const std::vector<int64_t>& coord, const std::vector<int64_t>& stride) {
  int64_t o = 0;
  for (size_t d = 0; d < stride.size(); ++d) o += coord[d] * stride[d];
  return o;
}

std::string thread_offset_expr(const Plan& plan, const std::vector<int64_t>& stride) {
  std::string thread;
  for (size_t d = 0; d < stride.size(); ++d) {
    if (plan.var[d] == "0" || stride[d] == 0) continue;
    thread += (thread.empty() ? "" : " + ") + plan.var[d] +
              (stride[d] == 1 ? "" : " * " + std::to_string(stride[d]));
  }
  return thread;
}

bool aligned_runs(const Plan& plan, const std::vector<int64_t>& stride, int64_t w) {
  bool aligned = plan.values % w == 0;
  for (const Leaf& leaf : plan.leaves) aligned = aligned && strided_offset(leaf.coef, stride) % w == 0;
  for (int64_t v = 0; aligned && v < plan.values; v += w) {
    const int64_t base = strided_offset(plan.value_coord[static_cast<size_t>(v)], stride);
    aligned = base % w == 0;
    for (int64_t u = 1; aligned && u < w; ++u)
      aligned = strided_offset(plan.value_coord[static_cast<size_t>(v + u)], stride) == base + u;
  }
  return aligned;
}

namespace {

// The bits of a word load of packed values (ld.shared.b16 .. b128): packed_words_to_register
// unpacks 4-bit and 8-bit values read so; nothing for any other atom.
std::optional<int64_t> word_load_bits(const std::string& atom) {
  for (int64_t bits : {16, 32, 64, 128}) {
    if (atom == "ld.shared.b" + std::to_string(bits)) return bits;
  }
  return std::nullopt;
}

}  // namespace

void Emitter::shared_to_register(const Operation& op) {
  auto it = shared_.find(op.operand(0));
  if (it == shared_.end() || it->second.transposed) {
    unsupported(op, "reads %" + op.operand(0)->name() +
                        ", which is not a shared buffer (an aref slot or an alloc)");
  }
  const SharedTile& s = it->second;
  if (s.element == ScalarKind::u4 || s.element == ScalarKind::i4) return packed4_to_register(op, s);
  if (s.element == ScalarKind::f8e4m3 || s.element == ScalarKind::f8e5m2) {
    const std::string atom = op.has_attr("atom") ? op.str_attr("atom") : "";
    if (const std::optional<int64_t> bits = word_load_bits(atom))
      return packed_words_to_register(op, s, *bits);
    unsupported(op, "reads fp8 values with atom '" + atom +
                        "'; they are read from shared memory two or more at a time "
                        "(ld.shared.b16 .. b128)");
  }
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
  const std::optional<StridedBuffer> strided = strided_buffer(s.layout, s.shape);
  if (!strided) {
    unsupported(op, "reads a shared buffer in layout " + s.layout +
                        "; threads read rank-1 or rank-2 buffers in a plain strided layout here");
  }
  const std::vector<int64_t>& stride = strided->stride;
  const std::optional<layout::Swizzle>& swizzle = strided->swizzle;
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
  auto offset = [&](const std::vector<int64_t>& c) { return strided_offset(c, stride); };
  // Every thread's part of the offset, and every vector's, must be w-aligned and its w values
  // consecutive in the buffer: what the atom was chosen for (warp-specialize's read_width).
  if (!aligned_runs(plan, stride, w)) {
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
  const std::string thread = thread_offset_expr(plan, stride);
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
  if (const std::optional<int64_t> bits = word_load_bits(atom))
    return packed_words_to_register(op, s, *bits);
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


namespace {

// The C expression of a shared layout "[Sw<B,M,S> o 0 o ]L" at the tile index `index` (any
// layout L: the sum of each flattened mode's coordinate times its stride, then the swizzle).
std::string shared_layout_expr(const std::string& text, const std::string& index) {
  const size_t o = text.rfind(" o ");
  const layout::Layout base =
      layout::flatten(layout::parse_layout(o == std::string::npos ? text : text.substr(o + 3)));
  std::string sum;
  int64_t prefix = 1;
  for (int i = 0; i < base.rank(); ++i) {
    const int64_t extent = base.mode(i).shape().as_int(), stride = base.mode(i).stride().as_int();
    if (extent > 1 && stride != 0) {
      std::string c = prefix == 1 ? "(" + index + ")" : "((" + index + ") / " + std::to_string(prefix) + ")";
      if (i + 1 < base.rank()) c = "(" + c + " % " + std::to_string(extent) + ")";
      sum += (sum.empty() ? "" : " + ") + c + (stride == 1 ? "" : " * " + std::to_string(stride));
    }
    prefix *= extent;
  }
  if (sum.empty()) sum = "0";
  if (o == std::string::npos) return "(" + sum + ")";
  int b = 0, m = 0, sh = 0;
  long long off = 0;
  std::sscanf(text.c_str(), "Sw<%d,%d,%d> o %lld", &b, &m, &sh, &off);
  TESSEL_ASSERT(off == 0, "shared layout with an offset: ", text);
  return "((" + sum + ") ^ (((" + sum + ") >> " + std::to_string(sh) + ") & " +
         std::to_string(((int64_t{1} << b) - 1) << m) + "))";
}

// The f16x2 word of an integer constant in both halves (exact: |value| < 2048).
std::string f16x2_word(int64_t value) {
  const unsigned h = float_to_f16_bits(static_cast<float>(value));
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08Xu", (h << 16) | h);
  return buf;
}

}  // namespace

// Packed 4-bit values, or 8-bit floats, read a word or more at a time (ld.shared.b16 .. b128,
// which synthesis chose because each thread's values, in the tile's layout, fill aligned runs of
// 2 .. 32 elements of the buffer: a tile of weights stored in permuted column blocks,
// ir/column_blocks.h).
// A run's values may sit in any order inside it; each thread's runs must have the same shape in
// every thread (value v at the same place of the same run), and, as for byte reads, runs whose
// offsets differ by one constant in every thread share one run-time address.
//
// Unpacking, when every use is a cast to f16: if each pair of values (2j, 2j + 1) sits in one
// 32-bit word at nibbles p and p + 4 (p < 4) — the interleaved order — one lop3 and one packed
// sub or fma make the pair's f16x2 word (device u4_pair_to_f16x2). If the cast's only use
// subtracts a scalar integer constant c (the zero point), c is folded into that same instruction
// and the sub is not emitted: q - c is exact either way, so the result is bit for bit the same.
// Any other placement extracts nibble by nibble.
//
// fp8 (e4m3, e5m2) values are read only for casts to f16, which is exact: each pair (2j, 2j + 1)
// becomes one f16x2 word by one cvt.rn.f16x2.e4m3x2 (or e5m2x2) of a 16-bit half — the pair's own
// half of a word when value 2j is its low byte and 2j + 1 its high byte, else the two bytes put
// together first.
void Emitter::packed_words_to_register(const Operation& op, const SharedTile& s, int64_t bits) {
  const std::string atom = op.str_attr("atom");
  const Value* result = op.result();
  const Plan* plan_p = plan_for(op, result->type());
  if (plan_p->tile != s.shape || plan_p->tile.size() != 2)
    unsupported(op, "between tiles of different shapes (or not 2-D)");
  if (result->type().element() != s.element)
    unsupported(op, "changes the element type; cast instead");
  const Plan& plan = *plan_p;
  const bool fp8 = s.element == ScalarKind::f8e4m3 || s.element == ScalarKind::f8e5m2;
  const int64_t element_bits = fp8 ? 8 : 4;
  const int64_t per_word = 32 / element_bits;
  const int64_t n = bits / element_bits;  // values a load moves
  if (plan.values % n != 0) unsupported(op, "holds values that do not fill whole " + atom + " runs");
  const SharedMap map = shared_map(s.layout);
  const int64_t rows = s.shape[0];
  std::vector<std::vector<int64_t>> off(static_cast<size_t>(plan.threads));
  for (int64_t t = 0; t < plan.threads; ++t) {
    for (int64_t v = 0; v < plan.values; ++v) {
      const std::vector<int64_t> c = plan.coord(t, v);
      off[size_t(t)].push_back(map.at(c[0] + rows * c[1]));
    }
  }
  // Runs: value v is at place pos[v] of run run[v] (numbered as thread 0 first meets them).
  std::vector<int64_t> run(static_cast<size_t>(plan.values)), pos(static_cast<size_t>(plan.values));
  std::vector<int64_t> first;  // a value of each run
  std::vector<int64_t> run_start0;
  for (int64_t v = 0; v < plan.values; ++v) {
    const int64_t start = off[0][size_t(v)] - off[0][size_t(v)] % n;
    auto it = std::find(run_start0.begin(), run_start0.end(), start);
    if (it == run_start0.end()) {
      run_start0.push_back(start);
      first.push_back(v);
      it = run_start0.end() - 1;
    }
    run[size_t(v)] = it - run_start0.begin();
    pos[size_t(v)] = off[0][size_t(v)] % n;
  }
  const int64_t runs = static_cast<int64_t>(first.size());
  bool same = runs * n == plan.values;
  for (int64_t t = 1; same && t < plan.threads; ++t) {
    for (int64_t v = 0; same && v < plan.values; ++v) {
      const int64_t f = first[size_t(run[size_t(v)])];
      same = off[size_t(t)][size_t(v)] % n == pos[size_t(v)] &&
             off[size_t(t)][size_t(v)] - pos[size_t(v)] ==
                 off[size_t(t)][size_t(f)] - pos[size_t(f)];
    }
  }
  if (!same) {
    unsupported(op, "has atom '" + atom + "' but the register layout " + plan.text +
                        " does not give every thread whole runs of " + std::to_string(n) +
                        " values of " + s.layout + " placed alike");
  }
  // Address classes of the runs (differences in elements, whole loads and constant over threads).
  std::vector<int64_t> rep_of(static_cast<size_t>(runs), -1), delta(static_cast<size_t>(runs), 0);
  std::vector<int64_t> reps;
  auto start = [&](int64_t t, int64_t r) {
    const int64_t f = first[size_t(r)];
    return off[size_t(t)][size_t(f)] - pos[size_t(f)];
  };
  for (int64_t r = 0; r < runs; ++r) {
    for (int64_t q : reps) {
      const int64_t d = start(0, r) - start(0, q);
      bool constant = d % n == 0;
      for (int64_t t = 1; constant && t < plan.threads; ++t) constant = start(t, r) - start(t, q) == d;
      if (constant) {
        rep_of[size_t(r)] = q;
        delta[size_t(r)] = d;
        break;
      }
    }
    if (rep_of[size_t(r)] < 0) {
      rep_of[size_t(r)] = r;
      reps.push_back(r);
    }
  }
  // The uses: casts to f16 only (then f16x2 words), and a folded zero point.
  bool to_f16 = true;
  int uses = 0;
  const Operation* cast_op = nullptr;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
    for (const Value* v : user->operands()) {
      if (v != result) continue;
      ++uses;
      cast_op = user;
      to_f16 = to_f16 && user->kind() == OpKind::cast &&
               user->result()->type().element() == ScalarKind::f16 &&
               user->result()->type().layout() == result->type().layout();
    }
  });
  to_f16 = to_f16 && uses > 0;
  if (fp8 && !to_f16)
    unsupported(op, "reads fp8 values for a use other than casts to f16 (the only unpacking here)");
  const Operation* folded = nullptr;
  int64_t minus = 0;
  if (!fp8 && to_f16 && uses == 1) {
    int cast_uses = 0;
    const Operation* user_op = nullptr;
    ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
      for (const Value* v : user->operands()) {
        if (v == cast_op->result()) {
          ++cast_uses;
          user_op = user;
        }
      }
    });
    const Operation* c = user_op && user_op->num_operands() == 2 ? user_op->operand(1)->def()
                                                                 : nullptr;
    if (cast_uses == 1 && user_op->kind() == OpKind::sub && user_op->operand(0) == cast_op->result() &&
        user_op->result()->type().element() == ScalarKind::f16 &&
        user_op->result()->type().layout() == cast_op->result()->type().layout() &&
        user_op->operand(1)->type().is_scalar() && c && c->kind() == OpKind::constant &&
        c->attr("value") && c->attr("value")->kind == ir::Attribute::Kind::real &&
        c->real_attr("value") == std::floor(c->real_attr("value")) &&
        std::abs(c->real_attr("value")) <= 512) {
      folded = user_op;
      minus = static_cast<int64_t>(c->real_attr("value"));
    }
  }
  const bool is_signed = s.element == ScalarKind::i4;
  // Pairs (2j, 2j + 1) at nibbles p, p + 4 of one word: the interleaved order.
  bool interleaved = !fp8 && to_f16 && plan.values % 2 == 0;
  for (int64_t j = 0; interleaved && 2 * j < plan.values; ++j) {
    const int64_t a = 2 * j, b = a + 1;
    interleaved = run[size_t(a)] == run[size_t(b)] && pos[size_t(a)] % 8 < 4 &&
                  pos[size_t(b)] == pos[size_t(a)] + 4;
  }
  const int64_t words = plan.values / per_word;
  const std::string raw = fresh(result->name() + "_words");
  line("unsigned " + raw + "[" + std::to_string(words) + "];  // packed " +
       std::to_string(element_bits) + "-bit, " + std::to_string(runs) + " run(s) of " +
       std::to_string(n) + " values");
  line("{  // load " + raw + " <- shared %" + op.operand(0)->name() + " (" + atom + ", " +
       std::to_string(reps.size()) + " address class(es))");
  ++indent_;
  const std::string vec = bits == 16 ? "unsigned short" : bits == 32 ? "unsigned" : bits == 64 ? "uint2" : "uint4";
  for (int64_t q : reps) {
    const std::vector<int64_t>& c = plan.value_coord[size_t(first[size_t(q)])];
    const std::string index = "(" + plan.var[0] + ") + " + std::to_string(c[0]) + " + " +
                              std::to_string(rows) + " * ((" + plan.var[1] + ") + " +
                              std::to_string(c[1]) + ")";
    line("const " + vec + "* p" + std::to_string(q) + " = reinterpret_cast<const " + vec + "*>(" +
         s.base + " + ((" + shared_layout_expr(s.layout, index) + " - " +
         std::to_string(pos[size_t(first[size_t(q)])]) + ")" + (fp8 ? "" : " >> 1") + "));");
  }
  for (int64_t r = 0; r < runs; ++r) {
    const std::string at = "p" + std::to_string(rep_of[size_t(r)]) + "[" +
                            std::to_string(delta[size_t(r)] / n) + "]";
    const std::string w = raw + "[" + std::to_string(r * n / per_word) + "]";
    if (bits == 16) {
      line(raw + "[" + std::to_string(r / 2) + "] " + (r % 2 ? "|= (unsigned)" : "= (unsigned)") +
           at + (r % 2 ? " << 16;" : ";"));
    } else if (bits == 32) {
      line(w + " = " + at + ";");
    } else {
      std::string l = "{ const " + vec + " u = " + at + ";";
      const char* parts[] = {"x", "y", "z", "w"};
      for (int64_t i = 0; i < bits / 32; ++i)
        l += " " + raw + "[" + std::to_string(r * n / per_word + i) + "] = u." + parts[i] + ";";
      line(l + " }");
    }
  }
  --indent_;
  line("}");
  // The element of value v in the words: word (run * n + pos) / per_word, bits element_bits *
  // ((run * n + pos) % per_word).
  auto nibble = [&](int64_t v) { return run[size_t(v)] * n + pos[size_t(v)]; };
  if (fp8) {
    const Reg& r = (regs_[result] = Reg{fresh(result->name()), plan_p, ScalarKind::f16, true});
    line("unsigned " + r.name + "[" + std::to_string(plan.values / 2) + "];  // f16x2 pairs");
    const std::string kind = s.element == ScalarKind::f8e4m3 ? "tessel::device::Fp8::e4m3"
                                                             : "tessel::device::Fp8::e5m2";
    auto byte = [&](int64_t x) {
      return "((" + raw + "[" + std::to_string(x / 4) + "] >> " + std::to_string(8 * (x % 4)) +
             ") & 0xFFu)";
    };
    for (int64_t j = 0; 2 * j < plan.values; ++j) {
      const int64_t a = nibble(2 * j), b = nibble(2 * j + 1);
      const std::string half =
          a % 2 == 0 && b == a + 1
              ? "(unsigned short)(" + raw + "[" + std::to_string(a / 4) + "]" +
                    (a % 4 ? " >> 16" : "") + ")"
              : "(unsigned short)(" + byte(a) + " | (" + byte(b) + " << 8))";
      line(r.name + "[" + std::to_string(j) + "] = tessel::device::fp8x2_to_f16x2<" + kind + ">(" +
           half + ");");
    }
    return;
  }
  if (!to_f16) {
    const Reg& r = new_reg(op);
    for (int64_t v = 0; v < plan.values; ++v) {
      const int64_t x = nibble(v);
      const std::string nib = "((" + raw + "[" + std::to_string(x / 8) + "] >> " +
                              std::to_string(4 * (x % 8)) + ") & 15u" +
                              (is_signed ? " ^ 8u)" : ")");
      line(r.name + "[" + std::to_string(v) + "] = __uint_as_float(0x4B000000u | " + nib +
           ") - " + (is_signed ? "8388616.0f;" : "8388608.0f;"));
    }
    return;
  }
  const Value* named = folded ? folded->result() : result;
  const Reg& r = (regs_[named] = Reg{fresh(named->name()), plan_p, ScalarKind::f16, true});
  if (folded) {
    fused_.insert(cast_op);
    fused_.insert(folded);
  }
  const int64_t c = minus + (is_signed ? 8 : 0);
  line("unsigned " + r.name + "[" + std::to_string(plan.values / 2) + "];  // f16x2 pairs" +
       (folded ? ", " + std::to_string(minus) + " subtracted (%" + folded->result()->name() + ")"
               : std::string()));
  if (is_signed) {
    line("#pragma unroll");
    line("for (int i = 0; i < " + std::to_string(words) + "; ++i) " + raw +
         "[i] ^= 0x88888888u;  // i4: n ^ 8, 8 more subtracted");
  }
  // Unpacked where each slice stands when slices in this block are the only readers (a part's
  // unpacking then follows the wgmmas of the part before it and runs under them: ptxas
  // interleaves it with those wgmmas and does not hoist it above their fence); else here.
  bool defer = unpack_at_slices_;
  int slices = 0;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
    for (const Value* v : user->operands()) {
      if (v != named) continue;
      ++slices;
      defer = defer && user->kind() == OpKind::slice && user->parent_block() == op.parent_block();
    }
  });
  defer = defer && slices > 0;
  std::vector<std::string> pair_lines;
  for (int64_t j = 0; 2 * j < plan.values; ++j) {
    const int64_t a = nibble(2 * j), b = nibble(2 * j + 1);
    const std::string slot = r.name + "[" + std::to_string(j) + "]";
    if (interleaved) {
      const int64_t p = a % 8;
      pair_lines.push_back(slot + " = tessel::device::u4_pair_to_f16x2(" + raw + "[" +
                           std::to_string(a / 8) + "], " + std::to_string(p) + ", " +
                           f16x2_word(p % 2 ? -(64 + c) : 1024 + c) + ");");
    } else {
      auto at = [&](int64_t x) {
        return "((" + raw + "[" + std::to_string(x / 8) + "] >> " + std::to_string(4 * (x % 8)) +
               ") & 15u)";
      };
      pair_lines.push_back("asm(\"sub.rn.f16x2 %0, %1, %2;\" : \"=r\"(" + slot + ") : \"r\"(" +
                           at(a) + " | (" + at(b) + " << 16) | 0x64006400u), \"r\"(" +
                           f16x2_word(1024 + c) + "));");
    }
  }
  if (defer) {
    deferred_pairs_[named] = std::move(pair_lines);
    return;
  }
  for (const std::string& l : pair_lines) line(l);
}

}  // namespace tessel::target::cuda::detail
