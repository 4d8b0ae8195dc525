#include "bench/harness/cublaslt_baseline.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include "runtime/context.h"
#include "support/diagnostics.h"

namespace tessel::bench {

struct CublasLtBiasRelu::Api {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

// One problem's descriptors and algorithm.
struct CublasLtBiasRelu::Plan {
  const Api* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;  // cuBLASLt's A (our B), B (our A)
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  ~Plan() {
    if (d) api->layout_destroy(d);
    if (b) api->layout_destroy(b);
    if (a) api->layout_destroy(a);
    if (desc) api->desc_destroy(desc);
  }
};

namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    user_error(SourceLocation::unknown(), what, " failed with cuBLAS status ",
               static_cast<int>(status));
  }
}

}  // namespace

CublasLtBiasRelu::CublasLtBiasRelu() {
  runtime::context();
  void* library = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = dlopen("libcublasLt.so", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    user_error(SourceLocation::unknown(),
               "cuBLASLt (libcublasLt.so.13) could not be loaded: ", dlerror());
  }
  api_ = new Api();
  auto resolve = [&](auto& slot, const char* name) {
    void* symbol = dlsym(library, name);
    if (symbol == nullptr) user_error(SourceLocation::unknown(), "cuBLASLt lacks ", name);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(symbol);
  };
  resolve(api_->create, "cublasLtCreate");
  resolve(api_->destroy, "cublasLtDestroy");
  resolve(api_->desc_create, "cublasLtMatmulDescCreate");
  resolve(api_->desc_destroy, "cublasLtMatmulDescDestroy");
  resolve(api_->desc_set, "cublasLtMatmulDescSetAttribute");
  resolve(api_->layout_create, "cublasLtMatrixLayoutCreate");
  resolve(api_->layout_destroy, "cublasLtMatrixLayoutDestroy");
  resolve(api_->pref_create, "cublasLtMatmulPreferenceCreate");
  resolve(api_->pref_destroy, "cublasLtMatmulPreferenceDestroy");
  resolve(api_->pref_set, "cublasLtMatmulPreferenceSetAttribute");
  resolve(api_->heuristic, "cublasLtMatmulAlgoGetHeuristic");
  resolve(api_->matmul, "cublasLtMatmul");
  cublasLtHandle_t handle = nullptr;
  check_lt(api_->create(&handle), "cublasLtCreate");
  handle_ = handle;
  workspace_ = runtime::DeviceBuffer(kWorkspaceBytes);
}

CublasLtBiasRelu::~CublasLtBiasRelu() {
  plan_.reset();
  if (handle_ != nullptr) api_->destroy(static_cast<cublasLtHandle_t>(handle_));
  delete api_;
}

void CublasLtBiasRelu::prepare(GemmElement element, int m, int n, int k) {
  plan_.reset();
  auto plan = std::make_unique<Plan>();
  plan->api = api_;
  cudaDataType type = element == GemmElement::f16 ? CUDA_R_16F : CUDA_R_16BF;
  check_lt(api_->desc_create(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
           "cublasLtMatmulDescCreate");
  cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  check_lt(api_->desc_set(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)),
           "cublasLtMatmulDescSetAttribute(TRANSA)");
  check_lt(api_->desc_set(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)),
           "cublasLtMatmulDescSetAttribute(TRANSB)");
  check_lt(api_->desc_set(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
           "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  // Column-major views: our B is K×N (ld K), taken transposed; our A is K×M (ld K); D is N×M.
  check_lt(api_->layout_create(&plan->a, type, k, n, k), "cublasLtMatrixLayoutCreate(A)");
  check_lt(api_->layout_create(&plan->b, type, k, m, k), "cublasLtMatrixLayoutCreate(B)");
  check_lt(api_->layout_create(&plan->d, type, n, m, n), "cublasLtMatrixLayoutCreate(D)");
  cublasLtMatmulPreference_t preference = nullptr;
  check_lt(api_->pref_create(&preference), "cublasLtMatmulPreferenceCreate");
  uint64_t workspace = kWorkspaceBytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = api_->pref_set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                         &workspace, sizeof(workspace));
  if (status == CUBLAS_STATUS_SUCCESS) {
    // The bias pointer's alignment matters to the heuristic; cuBLAS's allocations are 256-byte
    // aligned, as is ours (set for real in run()).
    const void* aligned = reinterpret_cast<const void*>(uintptr_t{256});
    api_->desc_set(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &aligned, sizeof(aligned));
    status = api_->heuristic(static_cast<cublasLtHandle_t>(handle_), plan->desc, plan->a, plan->b,
                             plan->d, plan->d, preference, 1, &result, &found);
  }
  api_->pref_destroy(preference);
  check_lt(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) {
    user_error(SourceLocation::unknown(), "cuBLASLt has no algorithm for the bias + ReLU GEMM ", m,
               "x", n, "x", k);
  }
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  plan_ = std::move(plan);
}

void CublasLtBiasRelu::run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias, CUdeviceptr c,
                           CUstream stream) {
  TESSEL_ASSERT(plan_ != nullptr, "CublasLtBiasRelu::run before prepare");
  const void* bias_pointer = reinterpret_cast<const void*>(bias);
  check_lt(api_->desc_set(plan_->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_pointer,
                          sizeof(bias_pointer)),
           "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  float alpha = 1.0f, beta = 0.0f;
  check_lt(api_->matmul(static_cast<cublasLtHandle_t>(handle_), plan_->desc, &alpha,
                        reinterpret_cast<const void*>(b), plan_->a,
                        reinterpret_cast<const void*>(a), plan_->b, &beta,
                        reinterpret_cast<const void*>(c), plan_->d, reinterpret_cast<void*>(c),
                        plan_->d, &plan_->algo, reinterpret_cast<void*>(workspace_.ptr()),
                        plan_->workspace, reinterpret_cast<cudaStream_t>(stream)),
           "cublasLtMatmul");
}

}  // namespace tessel::bench
