// Host launcher of the reference GEMM: argument checks, TMA descriptors, persistent grid size.
#include "bench/reference/reference_gemm.h"

#include <algorithm>
#include <cstring>

#include "bench/reference/reference_gemm_config.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/module.h"
#include "runtime/tma.h"
#include "support/diagnostics.h"

namespace tessel::reference {

namespace cfg = tessel_reference;

std::string to_string(GemmType type) {
  return type == GemmType::f16 ? "f16" : "bf16";
}

struct ReferenceGemm::Loaded {
  runtime::Module module;
  runtime::Function function;
  int max_clusters = 0;  // co-resident clusters of this kernel: the persistent grid's size
  // The descriptors of the last call, reused while the arguments repeat (benchmark loops).
  CUdeviceptr a = 0, b = 0, c = 0;
  int m = -1, n = -1, k = -1;
  CUtensorMap tma_a{}, tma_b{}, tma_c{};
};

namespace {

SourceLocation here() {
  return SourceLocation::at("reference_gemm", 0, 0);
}

runtime::CompileResult compile_reference() {
  runtime::CompileOptions options;
  options.name = "reference_gemm_kernel.cu";
  return runtime::compile_cuda(reference_gemm_source(), options);
}

}  // namespace

void check_reference_gemm_arguments(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n,
                                    int k) {
  if (m < 0 || n < 0 || k < 0) {
    user_error(here(), "the reference GEMM needs M, N, K >= 0, got M=", m, " N=", n, " K=", k);
  }
  if (k % 8 != 0) {
    user_error(here(),
               "the reference GEMM needs K % 8 == 0 (TMA reads rows of A and B with 16-byte ",
               "aligned strides), got K=", k);
  }
  if (m == 0 || n == 0) return;
  if (k > 0 && (a % 16 != 0 || b % 16 != 0)) {
    user_error(here(), "the reference GEMM needs A and B 16-byte aligned (TMA), got A=0x", std::hex,
               a, " B=0x", b);
  }
  if (n % 8 == 0 && c % 16 != 0) {
    user_error(here(), "the reference GEMM needs C 16-byte aligned (TMA store), got C=0x", std::hex,
               c);
  }
  if (c % 2 != 0)
    user_error(here(), "the reference GEMM needs C 2-byte aligned, got C=0x", std::hex, c);
}

ReferenceGemm::ReferenceGemm(GemmType type, ReferenceGemmOptions options)
    : type_(type), options_(options) {
  if (options_.cluster_m != 1 && options_.cluster_m != 2) {
    user_error(here(), "the reference GEMM supports cluster_m 1 or 2, got ", options_.cluster_m);
  }
  if (options_.group_m < options_.cluster_m || options_.group_m % options_.cluster_m != 0) {
    user_error(here(), "the reference GEMM needs group_m to be a positive multiple of cluster_m (",
               options_.cluster_m, "), got ", options_.group_m);
  }
  if (options_.overlap_epilogue && options_.cluster_m != 2) {
    user_error(here(), "the reference GEMM overlaps its epilogue only with cluster_m 2");
  }
  kernel_name_ = "reference_gemm_" + to_string(type_) +
                 (options_.cluster_m == 2 ? "_cluster2" : "") +
                 (options_.overlap_epilogue ? "_overlap" : "");
  compile_result_ = compile_reference();
}

ReferenceGemm::~ReferenceGemm() = default;

void ReferenceGemm::run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n, int k,
                        CUstream stream) {
  check_reference_gemm_arguments(a, b, c, m, n, k);
  if (m == 0 || n == 0) return;
  runtime::context();
  const auto& cu = runtime::driver();
  if (k == 0) {  // C = A·Bᵀ over an empty K is zero; TMA cannot describe a zero-extent tensor.
    runtime::check(cu.cuMemsetD8Async(c, 0, static_cast<size_t>(m) * n * 2, stream),
                   "cuMemsetD8Async");
    return;
  }
  const int cluster_m = options_.cluster_m;
  if (!loaded_) {
    auto loaded = std::make_unique<Loaded>();
    loaded->module = runtime::Module::load(compile_result_.cubin);
    loaded->function = loaded->module.function(kernel_name_);
    loaded->function.set_max_dynamic_shared_bytes(cfg::kSharedBytes);
    // How many clusters fit at once: the persistent grid must not exceed it, or the clusters
    // beyond it would run as a second wave after the first one has finished all its tiles.
    CUlaunchAttribute attribute{};
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = cluster_m;
    attribute.value.clusterDim.y = 1;
    attribute.value.clusterDim.z = 1;
    CUlaunchConfig config{};
    config.gridDimX = runtime::context().sm_count() / cluster_m * cluster_m;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = cfg::kThreads;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = cfg::kSharedBytes;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int clusters = 0;
    runtime::check(cu.cuOccupancyMaxActiveClusters(&clusters, loaded->function.handle(), &config),
                   "cuOccupancyMaxActiveClusters");
    TESSEL_ASSERT(clusters > 0, "the reference GEMM does not fit on this device");
    loaded->max_clusters = clusters;
    loaded_ = std::move(loaded);
  }
  Loaded& l = *loaded_;
  const runtime::TmaElement element =
      type_ == GemmType::f16 ? runtime::TmaElement::f16 : runtime::TmaElement::bf16;
  if (l.a != a || l.b != b || l.c != c || l.m != m || l.n != n || l.k != k) {
    auto matrix = [&](CUdeviceptr address, int rows, int columns, unsigned box_rows,
                      unsigned box_columns) {
      runtime::TmaSpec spec;
      spec.element = element;
      spec.address = address;
      spec.shape = {static_cast<uint64_t>(columns), static_cast<uint64_t>(rows)};
      spec.strides_bytes = {static_cast<uint64_t>(columns) * 2};
      spec.box = {box_columns, box_rows};
      spec.swizzle = runtime::TmaSwizzle::b128;
      return runtime::make_tma_descriptor(spec);
    };
    l.tma_a = matrix(a, m, k, cfg::kBlockM, cfg::kBlockK);
    l.tma_b = matrix(b, n, k, cfg::kBlockN / cluster_m, cfg::kBlockK);  // each CTA loads its share
    // With N % 8 != 0 the rows of C are not 16-byte aligned and the kernel stores without TMA.
    l.tma_c = n % 8 == 0 ? matrix(c, m, n, 64, cfg::kEpilogueN) : CUtensorMap{};
    l.a = a, l.b = b, l.c = c, l.m = m, l.n = n, l.k = k;
  }
  const int tiles_m = (m + cfg::kBlockM * cluster_m - 1) / (cfg::kBlockM * cluster_m);
  const int tiles_n = (n + cfg::kBlockN - 1) / cfg::kBlockN;
  const int clusters = std::min(tiles_m * tiles_n, l.max_clusters);
  CUdeviceptr c_plain = n % 8 == 0 ? 0 : c;
  int group = options_.group_m / cluster_m;  // the kernel counts its raster in cluster rows
  void* args[] = {&l.tma_a, &l.tma_b, &l.tma_c, &c_plain, &m, &n, &k, &group};
  runtime::LaunchConfig launch;
  launch.grid = {static_cast<unsigned>(clusters * cluster_m), 1, 1};
  launch.block = {cfg::kThreads, 1, 1};
  launch.cluster = {static_cast<unsigned>(cluster_m), 1, 1};
  launch.dynamic_shared_bytes = cfg::kSharedBytes;
  launch.stream = stream;
  l.function.launch(launch, args);
}

}  // namespace tessel::reference
