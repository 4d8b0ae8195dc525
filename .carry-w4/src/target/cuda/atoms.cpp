// The instruction atoms and their documented thread-value contracts.
#include "target/cuda/atoms.h"

#include <cstdio>
#include <sstream>

#include "layout/parse.h"
#include "support/diagnostics.h"

namespace tessel::target::cuda {
namespace {

using layout::IntTuple;
using layout::Layout;
using layout::TVLayout;

// Model parameters (H100 SXM, per SM per cycle; estimates that rank choices).
constexpr double kGlobalBytesPerCycle = 15;     // ~3.35 TB/s over 132 SMs at ~1.7 GHz
constexpr double kSharedBytesPerCycle = 128;    // one 128-byte wavefront per cycle
constexpr double kDenseF16MacsPerCycle = 2048;  // wgmma f16/bf16 peak (fp8: twice)
constexpr double kMmaSyncMacsPerCycle = 1024;   // mma.sync reaches about half of the wgmma rate
constexpr double kGlobalLatency = 600, kSharedLatency = 30, kTmaLatency = 700;

TVLayout tv(const std::string& text, IntTuple tile) {
  return TVLayout(layout::parse_layout(text), std::move(tile));
}
IntTuple tile2(int64_t r, int64_t c) {
  return IntTuple::tuple({IntTuple(r), IntTuple(c)});
}
std::string num(int64_t v) {
  return std::to_string(v);
}

int elem_bits_of(ir::ScalarKind kind) {
  return ir::bit_width(kind);
}

}  // namespace

std::string AtomCost::str() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "issue %.4g cyc, latency %.4g cyc", issue_cycles, latency_cycles);
  return buf;
}

int64_t Atom::work() const {
  if (kind == AtomKind::mma) return int64_t(m) * n * k;
  if (src)
    return src->layout().size() == 0
               ? 0
               : layout::product(src->tile_shape()).constant() * elem_bits / 8;
  return 0;
}

std::string Atom::str() const {
  std::ostringstream out;
  out << name << " [" << group_threads << " thread" << (group_threads == 1 ? "" : "s") << ", sm_"
      << min_sm << (min_sm >= 90 ? "a" : "") << "] ";
  if (kind == AtomKind::mma) {
    out << "A " << (a_in_registers ? "reg " : "smem ") << a->str() << "; B " << b->str() << "; C "
        << c->str();
  } else {
    out << ir::to_string(src_space) << " " << src->str() << " -> " << ir::to_string(dst_space)
        << " " << dst->str() << "; vector " << vector_bytes() << " B, align " << align_bytes
        << " B";
    if (!swizzle.is_identity()) out << ", " << swizzle.str();
  }
  out << "; " << cost.str();
  return out.str();
}

Atom vector_copy(ir::MemorySpace src, ir::MemorySpace dst, int bytes, int elem_bits) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16)
    user_error(SourceLocation::unknown(), "a vector access moves 1, 2, 4, 8 or 16 bytes, not ",
               bytes);
  if (elem_bits % 8 != 0 && !(elem_bits == 4)) {
    user_error(SourceLocation::unknown(), "no vector access for ", elem_bits, "-bit elements");
  }
  if (bytes * 8 < elem_bits || (bytes * 8) % elem_bits != 0)
    user_error(SourceLocation::unknown(), "a ", bytes, "-byte access cannot hold whole ", elem_bits,
               "-bit elements");
  if ((src == ir::MemorySpace::reg) == (dst == ir::MemorySpace::reg))
    user_error(SourceLocation::unknown(),
               "a vector load or store moves between memory and registers");
  Atom a;
  bool load = src != ir::MemorySpace::reg;
  ir::MemorySpace mem = load ? src : dst;
  a.name =
      std::string(load ? "ld." : "st.") + std::string(ir::to_string(mem)) + ".b" + num(bytes * 8);
  a.kind = AtomKind::copy;
  a.min_sm = 80;
  a.group_threads = 1;
  a.thread_layout = Layout(IntTuple(1), IntTuple(0));
  int v = bytes * 8 / elem_bits;
  TVLayout t = tv("(1," + num(v) + "):(0,1)", IntTuple::tuple({IntTuple(v)}));
  a.src = t;
  a.dst = t;
  a.src_space = src;
  a.dst_space = dst;
  a.elem_bits = elem_bits;
  a.vector_elems = v;
  a.align_bytes = bytes;
  // Per warp-wide issue (32 instances): bandwidth-bound bytes over the memory's rate.
  double warp_bytes = 32.0 * bytes;
  if (mem == ir::MemorySpace::global) {
    a.cost = {warp_bytes / kGlobalBytesPerCycle, kGlobalLatency};
  } else {
    a.cost = {std::max(1.0, warp_bytes / kSharedBytesPerCycle), kSharedLatency};
  }
  return a;
}

Atom cp_async(int bytes, int elem_bits) {
  if (bytes != 4 && bytes != 8 && bytes != 16)
    user_error(SourceLocation::unknown(), "cp.async moves 4, 8 or 16 bytes, not ", bytes);
  Atom a = vector_copy(ir::MemorySpace::global, ir::MemorySpace::reg, bytes, elem_bits);
  a.name = std::string(bytes == 16 ? "cp.async.cg" : "cp.async.ca") + ".shared.global.b" +
           num(bytes * 8);
  a.dst_space = ir::MemorySpace::shared;
  a.cost = {32.0 * bytes / kGlobalBytesPerCycle, kGlobalLatency};
  return a;
}

namespace {

Atom matrix_copy(bool load, int count, bool trans) {
  if (count != 1 && count != 2 && count != 4) {
    user_error(SourceLocation::unknown(), load ? "ldmatrix" : "stmatrix",
               " moves 1, 2 or 4 matrices (x1, x2, x4), not ", count);
  }
  int64_t rows = count == 1 ? 8 : 16;
  int64_t cols = count == 4 ? 16 : 8;
  IntTuple tile = tile2(rows, cols);
  // Registers: lane l = q + 4g holds row g, columns 2q, 2q+1 of each matrix (.trans: column g,
  // rows 2q, 2q+1); matrix j sits at row 8*(j&1), column 8*(j>>1).
  std::string q_stride = trans ? "2" : num(2 * rows);
  std::string g_stride = trans ? num(rows) : "1";
  std::string pair_stride = trans ? "1" : num(rows);
  std::string reg;
  if (count == 1) {
    reg = "((4,8),2):((" + q_stride + "," + g_stride + ")," + pair_stride + ")";
  } else if (count == 2) {
    reg = "((4,8),(2,2)):((" + q_stride + "," + g_stride + "),(" + pair_stride + ",8))";
  } else {
    reg = "((4,8),(2,2,2)):((" + q_stride + "," + g_stride + "),(" + pair_stride + ",8," +
          num(8 * rows) + "))";
  }
  // Shared memory: lanes 8j..8j+7 give rows 0..7 of matrix j, 8 contiguous 16-bit elements each;
  // lanes past 8*count give no address (stride 0: they repeat lanes 0..).
  std::string mem;
  if (count == 1) {
    mem = "((8,4),8):((1,0),8)";
  } else if (count == 2) {
    mem = "((8,2,2),8):((1,8,0),16)";
  } else {
    mem = "((8,2,2),8):((1,8,128),16)";
  }
  Atom a;
  a.name = std::string(load ? "ldmatrix" : "stmatrix") + ".x" + num(count) +
           (trans ? ".trans" : "") + ".b16";
  a.kind = AtomKind::copy;
  a.min_sm = load ? 80 : 90;
  a.group_threads = 32;
  a.thread_layout = Layout(IntTuple(32), IntTuple(1));
  TVLayout regs = tv(reg, tile), smem = tv(mem, tile);
  a.src = load ? smem : regs;
  a.dst = load ? regs : smem;
  a.src_space = load ? ir::MemorySpace::shared : ir::MemorySpace::reg;
  a.dst_space = load ? ir::MemorySpace::reg : ir::MemorySpace::shared;
  a.elem_bits = 16;
  a.vector_elems = 8;
  a.align_bytes = 16;
  a.transposed = trans;
  a.cost = {std::max(1.0, 128.0 * count / kSharedBytesPerCycle), kSharedLatency};
  return a;
}

}  // namespace

Atom ldmatrix(int count, bool trans) {
  return matrix_copy(true, count, trans);
}
Atom stmatrix(int count, bool trans) {
  return matrix_copy(false, count, trans);
}

Atom tma_copy(bool load, int64_t rows, int64_t cols, int elem_bits, int swizzle_bytes) {
  const char* what = load ? "TMA load" : "TMA store";
  if (rows < 1 || rows > 256 || cols < 1 || cols > 256)
    user_error(SourceLocation::unknown(), what, ": box extents are 1..256, not {", rows, ",", cols,
               "}");
  int64_t inner_bytes = cols * elem_bits / 8;
  if ((cols * elem_bits) % 128 != 0)
    user_error(SourceLocation::unknown(), what, ": the inner box extent (", cols, " x ", elem_bits,
               " bits) must be a multiple of 16 bytes");
  int b = 0;
  switch (swizzle_bytes) {
    case 0:
      b = 0;
      break;
    case 32:
      b = 1;
      break;
    case 64:
      b = 2;
      break;
    case 128:
      b = 3;
      break;
    default:
      user_error(SourceLocation::unknown(), what, ": swizzle is 0, 32, 64 or 128 bytes, not ",
                 swizzle_bytes);
  }
  if (swizzle_bytes != 0 && inner_bytes > swizzle_bytes)
    user_error(SourceLocation::unknown(), what, ": the inner box is ", inner_bytes,
               " bytes, more than the ", swizzle_bytes, "-byte swizzle span");
  Atom a;
  a.name = std::string(load ? "tma.load" : "tma.store") + ".2d.box" + num(rows) + "x" + num(cols) +
           (swizzle_bytes ? ".sw" + num(swizzle_bytes) : "");
  a.kind = AtomKind::copy;
  a.min_sm = 90;
  a.group_threads = 1;
  a.thread_layout = Layout(IntTuple(1), IntTuple(0));
  // The box is (rows, cols) with cols contiguous: tile index r + rows*c; one thread moves it all,
  // row by row in memory order, i.e. value v is element (v / cols, v % cols).
  TVLayout box =
      tv("(1,(" + num(cols) + "," + num(rows) + ")):(0,(" + num(rows) + ",1))", tile2(rows, cols));
  a.src = box;
  a.dst = box;
  a.src_space = load ? ir::MemorySpace::global : ir::MemorySpace::shared;
  a.dst_space = load ? ir::MemorySpace::shared : ir::MemorySpace::global;
  a.elem_bits = elem_bits;
  a.vector_elems = static_cast<int>(cols);
  a.align_bytes = 16;
  // In element units: 16-byte chunks (M = log2(128 / elem_bits)), B bits, shift 3.
  int m = 0;
  while ((1 << m) * elem_bits < 128) ++m;
  if (b > 0) a.swizzle = layout::Swizzle(b, m, 3);
  double bytes = double(rows) * inner_bytes;
  a.cost = {bytes / kGlobalBytesPerCycle, kTmaLatency};
  return a;
}

Atom tma_copy_1d(bool load, int64_t extent, int elem_bits) {
  const char* what = load ? "TMA load" : "TMA store";
  if (extent < 1 || extent > 256)
    user_error(SourceLocation::unknown(), what, ": a box extent is 1..256, not ", extent);
  if ((extent * elem_bits) % 128 != 0)
    user_error(SourceLocation::unknown(), what, ": the box (", extent, " x ", elem_bits,
               " bits) must be a multiple of 16 bytes");
  Atom a;
  a.name = std::string(load ? "tma.load" : "tma.store") + ".1d.box" + num(extent);
  a.kind = AtomKind::copy;
  a.min_sm = 90;
  a.group_threads = 1;
  a.thread_layout = Layout(IntTuple(1), IntTuple(0));
  // One thread moves the whole box in memory order: value v is element v.
  TVLayout box = tv("(1," + num(extent) + "):(0,1)", IntTuple::tuple({IntTuple(extent)}));
  a.src = box;
  a.dst = box;
  a.src_space = load ? ir::MemorySpace::global : ir::MemorySpace::shared;
  a.dst_space = load ? ir::MemorySpace::shared : ir::MemorySpace::global;
  a.elem_bits = elem_bits;
  a.vector_elems = static_cast<int>(extent);
  a.align_bytes = 16;
  a.cost = {double(extent) * elem_bits / 8 / kGlobalBytesPerCycle, kTmaLatency};
  return a;
}

Atom mma_sync_m16n8k16(ir::ScalarKind ab) {
  if (ab != ir::ScalarKind::f16 && ab != ir::ScalarKind::bf16) {
    user_error(SourceLocation::unknown(), "mma.sync m16n8k16 takes f16 or bf16, not ",
               ir::to_string(ab));
  }
  Atom a;
  a.name = "mma.sync.m16n8k16.f32." + std::string(ir::to_string(ab));
  a.kind = AtomKind::mma;
  a.min_sm = 80;
  a.group_threads = 32;
  a.thread_layout = Layout(IntTuple(32), IntTuple(1));
  a.m = 16, a.n = 8, a.k = 16;
  a.ab_type = ab;
  a.acc_type = ir::ScalarKind::f32;
  a.a_in_registers = true;
  a.elem_bits = elem_bits_of(ab);
  a.a = tv("((4,8),(2,2,2)):((32,1),(16,8,128))", tile2(16, 16));
  a.b = tv("((4,8),(2,2)):((16,1),(8,64))", tile2(8, 16));
  a.c = tv("((4,8),(2,2)):((32,1),(16,8))", tile2(16, 8));
  double macs = 16.0 * 8 * 16;
  a.cost = {macs / kMmaSyncMacsPerCycle, 33};
  return a;
}

Atom mma_sync_m16n8k32_fp8(ir::ScalarKind ab) {
  if (ab != ir::ScalarKind::f8e4m3 && ab != ir::ScalarKind::f8e5m2) {
    user_error(SourceLocation::unknown(), "mma.sync m16n8k32 takes f8e4m3 or f8e5m2, not ",
               ir::to_string(ab));
  }
  Atom a;
  a.name = "mma.sync.m16n8k32.f32." + std::string(ir::to_string(ab));
  a.kind = AtomKind::mma;
  a.min_sm = 89;
  a.group_threads = 32;
  a.thread_layout = Layout(IntTuple(32), IntTuple(1));
  a.m = 16, a.n = 8, a.k = 32;
  a.ab_type = ab;
  a.acc_type = ir::ScalarKind::f32;
  a.a_in_registers = true;
  a.elem_bits = 8;
  // A (16,32): lane q + 4g holds row g (+8), columns 4q..4q+3 (+16).
  a.a = tv("((4,8),(4,2,2)):((64,1),(16,8,256))", tile2(16, 32));
  // B (8,32): column n = g, k = 4q..4q+3 (+16).
  a.b = tv("((4,8),(4,2)):((32,1),(8,128))", tile2(8, 32));
  a.c = tv("((4,8),(2,2)):((32,1),(16,8))", tile2(16, 8));
  double macs = 16.0 * 8 * 32;
  a.cost = {macs / (2 * kMmaSyncMacsPerCycle), 33};
  return a;
}

Atom wgmma(ir::ScalarKind ab, int n, bool a_in_registers) {
  bool fp8 = ab == ir::ScalarKind::f8e4m3 || ab == ir::ScalarKind::f8e5m2;
  bool half = ab == ir::ScalarKind::f16 || ab == ir::ScalarKind::bf16;
  if (!fp8 && !half)
    user_error(SourceLocation::unknown(), "no wgmma for ", ir::to_string(ab),
               " inputs (f16, bf16, f8e4m3, f8e5m2)");
  if (n < 8 || n > 256 || n % 8 != 0)
    user_error(SourceLocation::unknown(), "wgmma N is a multiple of 8 in [8, 256], not ", n);
  int k = fp8 ? 32 : 16;
  Atom a;
  a.name = "wgmma.m64n" + num(n) + "k" + num(k) + ".f32." + std::string(ir::to_string(ab)) +
           (a_in_registers ? ".rs" : ".ss");
  a.kind = AtomKind::mma;
  a.min_sm = 90;
  a.group_threads = 128;
  a.thread_layout = Layout(IntTuple(128), IntTuple(1));
  a.m = 64, a.n = n, a.k = k;
  a.ab_type = ab;
  a.acc_type = ir::ScalarKind::f32;
  a.a_in_registers = a_in_registers;
  a.elem_bits = elem_bits_of(ab);
  // C: thread t = q + 4g + 32w, register i: row 16w + g + 8((i>>1)&1), col 8(i>>2) + 2q + (i&1).
  a.c = tv("((4,8,4),(2,2," + num(n / 8) + ")):((128,1,16),(64,8,512))", tile2(64, n));
  if (a_in_registers) {
    a.a = fp8 ? tv("((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))", tile2(64, 32))
              : tv("((4,8,4),(2,2,2)):((128,1,16),(64,8,512))", tile2(64, 16));
  } else {
    // Read through a descriptor by the warpgroup as a whole: no thread holds it (thread mode 1).
    a.a = tv("(1,(64," + num(k) + ")):(0,(1,64))", tile2(64, k));
  }
  a.b = tv("(1,(" + num(n) + "," + num(k) + ")):(0,(1," + num(n) + "))", tile2(n, k));
  double macs = 64.0 * n * k;
  double issue = macs / (kDenseF16MacsPerCycle * (fp8 ? 2 : 1));
  a.cost = {issue, issue + 64};
  return a;
}

Atom warp_shuffle_reduce(int lanes) {
  if (lanes < 2 || lanes > 32 || (lanes & (lanes - 1)) != 0)
    user_error(SourceLocation::unknown(),
               "a shuffle reduction spans 2..32 lanes (a power of two), not ", lanes);
  int steps = 0;
  while ((1 << steps) < lanes) ++steps;
  Atom a;
  a.name = "shfl.bfly.x" + num(steps) + ".b32";
  a.kind = AtomKind::reduce;
  a.min_sm = 80;
  a.group_threads = 32;
  a.thread_layout = Layout(IntTuple(32), IntTuple(1));
  a.src = tv("(" + num(lanes) + ",1):(1,0)", IntTuple::tuple({IntTuple(lanes)}));
  a.dst = tv("(" + num(lanes) + ",1):(0,0)", IntTuple::tuple({IntTuple(lanes)}));
  a.src_space = a.dst_space = ir::MemorySpace::reg;
  a.elem_bits = 32;
  a.cost = {double(steps), 25.0 * steps};
  return a;
}

}  // namespace tessel::target::cuda
