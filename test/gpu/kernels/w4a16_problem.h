// A W4A16 problem for the GPU tests of examples/kernels/gemm_w4a16.tir (natural weight order):
// random inputs on the host, their device copies, and the float64 reference of rows of
// X · Wᵀ with W the dequantized weights, each rounded to f16 once as the kernel packs them for
// wgmma. Shared by gemm_gpu_test and overlap_gpu_test.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "compile/compile.h"
#include "interp/numerics.h"
#include "runtime/buffer.h"

namespace tessel::testing {

struct W4A16Problem {
  int64_t m, n, k, group;
  interp::HostTensor x, q, s;  // X [M,K] f16 in [-1, 1), Q [N,K] u4, S [K/G, N] f16
  // With zero points (gemm_w4a16_zp.tir): Z [K/G, N] f16, whole numbers 0..15 and every third
  // with a fraction; without, the constant 8.
  bool zero_points;
  interp::HostTensor z;
  std::vector<double> w;  // the dequantized weights (q - z) * s, each step rounded to f16, [N,K]
  runtime::DeviceBuffer dx, dq, ds, dz;

  W4A16Problem(int64_t m_, int64_t n_, int64_t k_, int64_t group_, std::mt19937_64& rng,
               double scale_lo, double scale_hi, bool zero_points_ = false)
      : m(m_), n(n_), k(k_), group(group_), x(ir::ScalarKind::f16, {m_, k_}),
        q(ir::ScalarKind::u4, {n_, k_}), s(ir::ScalarKind::f16, {k_ / group_, n_}),
        zero_points(zero_points_), z(ir::ScalarKind::f16, {k_ / group_, n_}) {
    std::uniform_real_distribution<double> real(-1.0, 1.0), scale(scale_lo, scale_hi);
    std::uniform_int_distribution<int> nibble(0, 15);
    for (int64_t i = 0; i < x.size(); ++i) x.set_float(i, real(rng));
    for (int64_t i = 0; i < q.size(); ++i) q.set_int(i, nibble(rng));
    for (int64_t i = 0; i < s.size(); ++i) s.set_float(i, scale(rng));
    for (int64_t i = 0; i < z.size(); ++i)
      z.set_float(i, zero_points ? nibble(rng) + (i % 3 == 0 ? 0.3 : 0.0) : 8.0);
    w.resize(static_cast<size_t>(n * k));
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t g = (kk / group) * n + j;
        const double centered = interp::round_to(
            ir::ScalarKind::f16, static_cast<double>(q.get_int(j * k + kk)) - z.get_float(g));
        w[j * k + kk] = interp::round_to(ir::ScalarKind::f16, centered * s.get_float(g));
      }
    }
    dx = upload(x);
    dq = upload(q);
    ds = upload(s);
    if (zero_points) dz = upload(z);
  }

  // The kernel's arguments with `in` as X [M,K] and `out` as Y [M,N].
  std::vector<KernelArg> args(const runtime::DeviceBuffer& in,
                              const runtime::DeviceBuffer& out) const {
    std::vector<KernelArg> list{TensorArg{in.ptr(), {m, k}, ir::ScalarKind::f16},
                                TensorArg{dq.ptr(), {n, k}, ir::ScalarKind::u4},
                                TensorArg{ds.ptr(), {k / group, n}, ir::ScalarKind::f16}};
    if (zero_points) list.push_back(TensorArg{dz.ptr(), {k / group, n}, ir::ScalarKind::f16});
    list.push_back(TensorArg{out.ptr(), {m, n}, ir::ScalarKind::f16});
    return list;
  }

  // X as doubles (the input the problem made).
  std::vector<double> x_values() const {
    std::vector<double> xs(static_cast<size_t>(x.size()));
    for (int64_t i = 0; i < x.size(); ++i) xs[i] = x.get_float(i);
    return xs;
  }

  // Row r of in · Wᵀ (in: [M,K] row-major), in float64.
  std::vector<double> reference_row(const std::vector<double>& in, int64_t r) const {
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) sum += in[r * k + kk] * w[j * k + kk];
      row[j] = sum;
    }
    return row;
  }

  static runtime::DeviceBuffer upload(const interp::HostTensor& t) {
    runtime::DeviceBuffer buffer(std::max<size_t>(t.bytes().size(), 16));
    buffer.upload(t.bytes().data(), t.bytes().size());
    return buffer;
  }
};

}  // namespace tessel::testing
