// The batched GEMM (examples/kernels/gemm_batched.tir: A [L,M,K], B [L,N,K], C [L,M,N], a third
// grid dimension over the batch, every tile squeezing the batch index): lowered by the default
// pipeline and run in the interpreter with the roles interleaved, on few SMs so that one block
// walks tiles of several problems, against plain loops (f32 sums in K order from +0, rounded to
// f16) bit for bit; and its CUDA for sm_90a: 3-D TMA boxes of extent 1 along the batch, 3-D TMA
// stores, nothing spilled.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "tessel/example_kernels.h"
#include "pin_grid.h"
#include "sm90a_compile.h"

namespace tessel {
namespace {

using interp::HostTensor;

std::vector<float> batched_reference(const HostTensor& A, const HostTensor& B, int64_t L,
                                     int64_t M, int64_t N, int64_t K) {
  std::vector<float> out(L * M * N);
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        float sum = 0.0f;
        for (int64_t k = 0; k < K; ++k) {
          sum = sum + static_cast<float>(A.get_float((l * M + m) * K + k)) *
                          static_cast<float>(B.get_float((l * N + n) * K + k));
        }
        out[(l * M + m) * N + n] = static_cast<float>(static_cast<_Float16>(sum));
      }
    }
  }
  return out;
}

// `cluster`: the block_grid pinned `cluster = [2,1,1]` (blocks paired along M, B's tile
// multicast within the pair, both blocks in the same problem).
void check_batched(std::map<std::string, int64_t> sizes, int64_t sm_count, bool cluster = false) {
  SCOPED_TRACE("L = " + std::to_string(sizes["L"]) + " M = " + std::to_string(sizes["M"]) +
               " N = " + std::to_string(sizes["N"]) + " K = " + std::to_string(sizes["K"]) +
               " on " + std::to_string(sm_count) + " SMs" + (cluster ? " in 2x1 clusters" : ""));
  std::string text = examples::lowered_kernels().at("gemm_batched");
  if (cluster) text = testing::pin_block_grid(text, "cluster = [2,1,1]");
  auto module = ir::parse_module(text, "gemm_batched.tir");
  pipeline::lower(*module);
  const ir::Operation& kernel = *module->kernels.front();
  if (cluster) {
    bool multicast = false;
    ir::walk(const_cast<ir::Operation*>(&kernel),
             [&](ir::Operation* op) { multicast = multicast || op->has_attr("multicast"); });
    EXPECT_TRUE(multicast) << "no multicast load in the clustered kernel";
  }
  const int64_t L = sizes["L"], M = sizes["M"], N = sizes["N"], K = sizes["K"];
  for (const char* schedule : {"round-robin", "producer-first", "consumer-first", "random:5"}) {
    SCOPED_TRACE(schedule);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::vector<HostTensor> store;
    for (const auto& arg : kernel.region(0)->arguments()) {
      HostTensor t(arg->type().element(), interp::concrete_shape(arg->type(), sizes));
      for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, real(rng));  // C: poisoned too
      store.push_back(std::move(t));
    }
    std::vector<interp::Argument> args;
    for (auto& t : store) args.push_back(&t);
    interp::RunOptions options;
    options.sizes = sizes;
    options.sm_count = sm_count;
    options.schedule = interp::Schedule::parse(schedule);
    interp::interpret(kernel, args, options);
    const std::vector<float> want = batched_reference(store[0], store[1], L, M, N, K);
    int64_t bad = 0;
    for (int64_t i = 0; i < L * M * N; ++i) {
      if (store[2].get_float(i) != want[i] && bad++ < 5) {
        ADD_FAILURE() << "C[" << i / (M * N) << "," << i / N % M << "," << i % N
                      << "] = " << store[2].get_float(i) << ", reference " << want[i];
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

// Ragged M and N (partial tiles in every problem), N % 8 != 0 (the stores TMA cannot take) and
// == 0, K of one partial block and of several; 3 SMs for up to 16 units: each block's tiles cross
// from one problem into the next.
TEST(BatchedGemm, InterpretedLoweredKernelMatchesPlainLoopsBitForBit) {
  check_batched({{"L", 3}, {"M", 130}, {"N", 300}, {"K", 72}}, 3);
  check_batched({{"L", 4}, {"M", 64}, {"N", 264}, {"K", 136}}, 3);
  check_batched({{"L", 2}, {"M", 1}, {"N", 8}, {"K", 8}}, 3);
}

// In 2x1 clusters: an odd tile count along M (the second block of each problem's last cluster
// past the tiles: it still loads its share of B for its peer), 4 SMs (two clusters) and 2 (one),
// problems crossing between clusters.
TEST(BatchedGemm, ClusteredKernelMatchesPlainLoopsBitForBit) {
  check_batched({{"L", 3}, {"M", 300}, {"N", 130}, {"K", 72}}, 4, true);
  check_batched({{"L", 2}, {"M", 130}, {"N", 264}, {"K", 136}}, 2, true);
  check_batched({{"L", 5}, {"M", 64}, {"N", 8}, {"K", 8}}, 4, true);
}

// On sm_90a: A's and B's tiles are 3-D TMA boxes at (k, row, batch), the output goes out through
// 3-D TMA stores (after stmatrix into the staging buffers), the persistent loop takes the batch
// slowest, and ptxas keeps every wgmma asynchronous with nothing spilled.
TEST(BatchedGemm, CompilesToThreeDimensionalTmaWithoutSpills) {
  auto module = ir::parse_module(examples::lowered_kernels().at("gemm_batched"),
                                 "gemm_batched.tir");
  CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
  const std::string& cuda = kernel.cuda_source();
  EXPECT_NE(cuda.find("tma_load_3d((tsl_smem + 0 + (slot) * 16384), &tmap_A, &ring_full[slot], "
                      "k * 64, bm * 128, bl * 1);"),
            std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("&tmap_B, &ring_full[slot], k * 64, bn * 256, bl * 1);"), std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("tessel::device::tma_store_3d(&tmap_C, "), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("const int bl = (unit) / (tiles);"), std::string::npos) << cuda;
  // The by-hand fallback for rows TMA cannot store addresses the problem's own rows.
  EXPECT_NE(cuda.find("(C + static_cast<long long>("), std::string::npos) << cuda;
  bool three_d_box = false;
  for (const auto& p : kernel.emitted().params) {
    if (p.kind == target::cuda::KernelParam::Kind::tma_descriptor && p.box.size() == 3)
      three_d_box = three_d_box || p.box.back() == 1;
  }
  EXPECT_TRUE(three_d_box);
  const std::string log = testing::ptxas_report(cuda);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
  EXPECT_NE(log.find(", 0 bytes spill stores"), std::string::npos) << log;
}

}  // namespace
}  // namespace tessel
