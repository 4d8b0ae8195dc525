// Stand-alone probe (not product code): tessel's emitted LayerNorm kernel, compiled by nvcc from
// `tessel compile --emit=cuda` output, beside edited copies of it (one habit of the emitted code
// changed each) and the hand-written register form of rows_columns_probe.cu (`regs 1024`), all in
// one process against both copy kernels (copy16 of the probes: 8 blocks of 512 a SM; the bench's:
// 8 blocks of 256). At 2047 x 32760 tessel's LayerNorm measures 0.92 of the bench's copy and the
// hand-written form 0.965 of the probe's: this tells which part of that is the code, which the
// baseline. Found (bench/results/2026-11-29-rows-emitted-h200.md, calls A-D): the code; the
// emitted kernel spilled 8 bytes at 32 registers (so did the hand-written one under
// `__launch_bounds__(1024, 2)`, 3-4% slower than without), and weight and bias fetched 8 bytes at
// a time removed the spill and most of the gap (what the emitter now does).
//
// The variants come from scripts/gpu/emitted_variants.sh: a header emitted_variants.cuh with each
// edited kernel (extern "C", named ln_<tag>_<variant>, tessel's parameter order: X, g, b, Y, eps,
// M, N; one block a row, 512 bytes of dynamic shared memory) and the list macro
// EMITTED_VARIANTS(V) naming them with their block size, V(kernel, threads).
//
//   nvcc -std=c++17 -O3 -arch=sm_90a -Iscripts/gpu -Iruntime/device -I<dir of the header> \
//     scripts/gpu/rows_emitted_probe.cu -o rows_emitted_probe
//   ./rows_emitted_probe MxN[:TAG] ...   (TAG: only the emitted variants whose name holds it)
#define ROWS_COLUMNS_PROBE_KERNELS_ONLY
#include "rows_columns_probe.cu"

#include "emitted_variants.cuh"

#include <functional>

using Emitted = void (*)(const unsigned short*, const unsigned short*, const unsigned short*,
                         unsigned short*, float, int, int);

// LayerNorm with the row in the registers of THREADS threads, VECS 16-byte vectors each (N <=
// THREADS * VECS * 8), at least MINB blocks a SM by the launch bound: fewer threads a row with
// more registers each than the 1024 x 4 of rows_columns_probe.cu's row_regs (32 registers at two
// blocks a SM, the edge where tessel's emitted form spills).
template <int THREADS, int VECS, int MINB>
__global__ void __launch_bounds__(THREADS, MINB)
    row_regs_tv(const __half* X, const __half* G, const __half* B, __half* Y, int M, int N) {
  __shared__ float scratch[32];
  const int nv = N / 8;
  const uint4* x4 = reinterpret_cast<const uint4*>(X + (size_t)blockIdx.x * N);
  uint4 r[VECS];
#pragma unroll
  for (int i = 0; i < VECS; ++i) {
    const int v = threadIdx.x + i * THREADS;
    r[i] = v < nv ? x4[v] : make_uint4(0, 0, 0, 0);
  }
  float f[8], s = 0.f, q = 0.f;
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    unpack(r[k], f);
    for (int i = 0; i < 8; ++i) {
      s += f[i];
      q = fmaf(f[i], f[i], q);
    }
  }
  s = block_reduce<THREADS, false>(s, scratch);
  q = block_reduce<THREADS, false>(q, scratch);
  const float mean = s / N;
  const float rstd = rsqrtf(q / N - mean * mean + 1e-5f);
  const uint4* g4 = reinterpret_cast<const uint4*>(G);
  const uint4* b4 = reinterpret_cast<const uint4*>(B);
  uint4* y = reinterpret_cast<uint4*>(Y + (size_t)blockIdx.x * N);
#pragma unroll
  for (int k = 0; k < VECS; ++k) {
    const int v = threadIdx.x + k * THREADS;
    if (v >= nv) break;
    float gf[8], bf[8];
    unpack(g4[v], gf);
    unpack(b4[v], bf);
    unpack(r[k], f);
    for (int i = 0; i < 8; ++i) f[i] = (f[i] - mean) * rstd * gf[i] + bf[i];
    y[v] = pack(f);
  }
}

// VARIANTS=a,b,...: only the emitted variants whose names end in _a, _b, ... (default: all).
bool wanted(const std::string& name) {
  const char* only = getenv("VARIANTS");
  if (!only) return true;
  std::string list = std::string(only) + ",";
  for (size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos; at = comma + 1) {
    const std::string suffix = "_" + list.substr(at, comma - at);
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  }
  return false;
}

int main(int argc, char** argv) {
  const int sms = print_device();
  const int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 2;
  for (int a = 1; a < argc; ++a) {
    // "MxN" or "MxN:TAG": only the emitted variants whose name holds TAG (and the probes).
    std::string arg = argv[a], tag;
    if (arg.find(':') != std::string::npos) {
      tag = arg.substr(arg.find(':') + 1);
      arg = arg.substr(0, arg.find(':'));
    }
    int M, N;
    if (!parse_rows_shape(arg.c_str(), 32768, M, N)) return 1;
    const size_t n = (size_t)M * N;
    const NormInputs in(M, N, a);
    const __half *dx = in.dx, *dg = in.dg, *db = in.db;
    __half* dy;
    CHECK_CUDA(cudaMalloc(&dy, n * 2));
    const auto* ux = reinterpret_cast<const unsigned short*>(dx);
    const auto* ug = reinterpret_cast<const unsigned short*>(dg);
    const auto* ub = reinterpret_cast<const unsigned short*>(db);
    auto* uy = reinterpret_cast<unsigned short*>(dy);
    struct EmittedKernel {
      std::string name;
      Emitted fn;
      int threads;
    };
    std::vector<EmittedKernel> kernels;
#define ADD_EMITTED(name, threads)                                          \
  if ((tag.empty() || std::string(#name).find(tag) != std::string::npos) && \
      wanted(#name))                                                        \
    kernels.push_back({#name, name, threads});
    EMITTED_VARIANTS(ADD_EMITTED)
#undef ADD_EMITTED
    struct Row {
      std::string name;
      std::function<void()> launch;
      int per_sm = 0;
      double rel = 0;
      std::vector<float> ms;
    };
    std::vector<Row> rows;
    for (const EmittedKernel& k : kernels) {
      int per_sm = 0;
      CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.fn, k.threads, 512));
      const Emitted fn = k.fn;
      const int threads = k.threads;
      rows.push_back(
          {k.name, [=] { fn<<<M, threads, 512>>>(ux, ug, ub, uy, 1e-5f, M, N); }, per_sm});
    }
    auto add_probe = [&](const char* name, Kernel fn, int threads) {
      int per_sm = 0;
      CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, 0));
      rows.push_back({name, [=] { fn<<<M, threads>>>(dx, dg, db, dy, M, N); }, per_sm});
    };
    // (Call B also had 512 x 8 at three blocks a SM and 256 x 16 at two and four: 0.65-0.91.)
    if (N > 16384) {
      add_probe("probe regs 1024", row_regs<false, true>, 1024);
      add_probe("probe 1024x4 /2", row_regs_tv<1024, 4, 2>, 1024);
      add_probe("probe 512x8 /2", row_regs_tv<512, 8, 2>, 512);
    } else {
      add_probe("probe 512x4 /4", row_regs_tv<512, 4, 4>, 512);
    }
    // Correctness of every kernel: poisoned output, float64 on four rows.
    for (Row& r : rows) {
      CHECK_CUDA(cudaMemset(dy, 0xff, n * 2));
      r.launch();
      CHECK_CUDA(cudaDeviceSynchronize());
      r.rel = norm_rel_error(in, dy, M, N, /*ln=*/true);
    }
    std::vector<float> copy_probe, copy_bench;
    const long long words = (long long)(n / 8);
    for (int round = 0; round < rounds; ++round) {
      // Every kernel between copies of both kinds, in turns.
      for (Row& r : rows) {
        copy_probe.push_back(median_ms([&] { launch_copy16(dx, dy, n, sms); }));
        copy_bench.push_back(median_ms([&] {
          copy16_bench<<<sms * 8, 256>>>(reinterpret_cast<const uint4*>(dx),
                                         reinterpret_cast<uint4*>(dy), words);
        }));
        r.ms.push_back(median_ms(r.launch));
      }
    }
    auto med = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const float cp = med(copy_probe), cb = med(copy_bench);
    printf("%dx%d: copy16 (probe, 512 x 8) %.4f ms, copy16 (bench, 256 x 8) %.4f ms\n", M, N, cp,
           cb);
    for (const Row& r : rows) {
      printf("%dx%d %-22s %d/SM", M, N, r.name.c_str(), r.per_sm);
      for (float ms : r.ms) printf("  %.4f ms (%.3f / %.3f)", ms, cp / ms, cb / ms);
      printf("  rel err %.2e %s\n", r.rel, r.rel < 2e-3 ? "ok" : "FAIL");
    }
    printf("(each timing: ms, then the fraction of the probe's copy / of the bench's copy)\n");
    cudaFree(dy);
  }
  return 0;
}
