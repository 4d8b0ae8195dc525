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
  std::vector<double> w;       // the dequantized weights (q - 8) * s, rounded to f16, [N,K]
  runtime::DeviceBuffer dx, dq, ds;

  W4A16Problem(int64_t m_, int64_t n_, int64_t k_, int64_t group_, std::mt19937_64& rng,
               double scale_lo, double scale_hi)
      : m(m_), n(n_), k(k_), group(group_), x(ir::ScalarKind::f16, {m_, k_}),
        q(ir::ScalarKind::u4, {n_, k_}), s(ir::ScalarKind::f16, {k_ / group_, n_}) {
    std::uniform_real_distribution<double> real(-1.0, 1.0), scale(scale_lo, scale_hi);
    std::uniform_int_distribution<int> nibble(0, 15);
    for (int64_t i = 0; i < x.size(); ++i) x.set_float(i, real(rng));
    for (int64_t i = 0; i < q.size(); ++i) q.set_int(i, nibble(rng));
    for (int64_t i = 0; i < s.size(); ++i) s.set_float(i, scale(rng));
    w.resize(static_cast<size_t>(n * k));
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        w[j * k + kk] = interp::round_to(
            ir::ScalarKind::f16,
            (static_cast<double>(q.get_int(j * k + kk)) - 8.0) * s.get_float((kk / group) * n + j));
      }
    }
    dx = upload(x);
    dq = upload(q);
    ds = upload(s);
  }

  // The kernel's arguments with `in` as X [M,K] and `out` as Y [M,N].
  std::vector<KernelArg> args(const runtime::DeviceBuffer& in,
                              const runtime::DeviceBuffer& out) const {
    return {TensorArg{in.ptr(), {m, k}, ir::ScalarKind::f16},
            TensorArg{dq.ptr(), {n, k}, ir::ScalarKind::u4},
            TensorArg{ds.ptr(), {k / group, n}, ir::ScalarKind::f16},
            TensorArg{out.ptr(), {m, n}, ir::ScalarKind::f16}};
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
