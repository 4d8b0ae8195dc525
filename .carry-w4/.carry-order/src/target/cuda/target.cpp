// The atoms each target offers.
#include "target/cuda/target.h"

#include "support/diagnostics.h"

namespace tessel::target::cuda {

Target Target::named(const std::string& name) {
  if (name == "sm_80") return sm80();
  if (name == "sm_90a" || name == "sm_90") return sm90a();
  user_error(SourceLocation::unknown(), "unknown target '", name, "' (sm_80, sm_90a)");
}

std::vector<Atom> Target::copy_atoms(ir::MemorySpace src, ir::MemorySpace dst,
                                     int elem_bits) const {
  using ir::MemorySpace;
  std::vector<Atom> out;
  bool reg_src = src == MemorySpace::reg, reg_dst = dst == MemorySpace::reg;
  if (reg_src != reg_dst) {
    for (int bytes : {16, 8, 4, 2, 1}) {
      if (bytes * 8 < elem_bits || (bytes * 8) % elem_bits != 0) continue;
      out.push_back(vector_copy(src, dst, bytes, elem_bits));
    }
  }
  if (src == MemorySpace::global && dst == MemorySpace::shared) {
    for (int bytes : {16, 8, 4}) {
      if (bytes * 8 >= elem_bits) out.push_back(cp_async(bytes, elem_bits));
    }
  }
  if (elem_bits == 16 && src == MemorySpace::shared && dst == MemorySpace::reg) {
    for (int count : {4, 2, 1}) {
      out.push_back(ldmatrix(count, false));
      out.push_back(ldmatrix(count, true));
    }
  }
  if (elem_bits == 16 && src == MemorySpace::reg && dst == MemorySpace::shared && sm_ >= 90) {
    for (int count : {4, 2, 1}) {
      out.push_back(stmatrix(count, false));
      out.push_back(stmatrix(count, true));
    }
  }
  std::vector<Atom> kept;
  for (Atom& a : out) {
    if (has(a)) kept.push_back(std::move(a));
  }
  return kept;
}

std::vector<Atom> Target::mma_atoms(ir::ScalarKind ab, ir::ScalarKind acc) const {
  using ir::ScalarKind;
  std::vector<Atom> out;
  if (acc != ScalarKind::f32) return out;
  bool half = ab == ScalarKind::f16 || ab == ScalarKind::bf16;
  bool fp8 = ab == ScalarKind::f8e4m3 || ab == ScalarKind::f8e5m2;
  if (sm_ >= 90 && (half || fp8)) {
    for (int n = 256; n >= 8; n -= 8) {
      out.push_back(wgmma(ab, n, false));
      out.push_back(wgmma(ab, n, true));
    }
  }
  if (half) out.push_back(mma_sync_m16n8k16(ab));
  if (fp8 && sm_ >= 89) out.push_back(mma_sync_m16n8k32_fp8(ab));
  return out;
}

std::vector<Atom> Target::all_atoms() const {
  using ir::MemorySpace;
  std::vector<Atom> out;
  auto add = [&](std::vector<Atom> atoms) {
    for (Atom& a : atoms) out.push_back(std::move(a));
  };
  add(copy_atoms(MemorySpace::global, MemorySpace::reg, 16));
  add(copy_atoms(MemorySpace::reg, MemorySpace::global, 16));
  add(copy_atoms(MemorySpace::shared, MemorySpace::reg, 16));
  add(copy_atoms(MemorySpace::reg, MemorySpace::shared, 16));
  add(copy_atoms(MemorySpace::global, MemorySpace::shared, 16));
  if (sm_ >= 90) {
    for (int sw : {0, 32, 64, 128}) {
      out.push_back(tma_copy(true, 64, sw ? sw / 2 : 64, 16, sw));
      out.push_back(tma_copy(false, 64, sw ? sw / 2 : 64, 16, sw));
    }
  }
  add(mma_atoms(ir::ScalarKind::f16, ir::ScalarKind::f32));
  add(mma_atoms(ir::ScalarKind::f8e4m3, ir::ScalarKind::f32));
  for (int lanes : {2, 4, 8, 16, 32}) out.push_back(warp_shuffle_reduce(lanes));
  return out;
}

}  // namespace tessel::target::cuda
