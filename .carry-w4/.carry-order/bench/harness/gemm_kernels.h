// Compiled GEMM kernels as bench cases: which parameter is A, B, C or a bias, read from the
// kernel itself, and the kernel's epilogue replayed on the host over reference products.
//
// A GEMM kernel here is any tile-IR kernel whose main loops compute products C_p = A·B_pᵀ with
// `mma` (A [M,K] or, through a `transpose`, [K,M]; B_p [N,K] through a `transpose` or [K,N];
// row-major global tensors, the same layouts for every product), followed
// by an epilogue of elementwise ops that ends in stores to [M,N] outputs. Nothing is named by
// convention: the roles come from where each parameter flows — A and B_p from the mma operands,
// outputs from the stores, every other tensor (a bias [N], a residual [M,N]) is an input of the
// epilogue. So gemm.tir, gemm_bias_relu.tir (relu(A·Bᵀ + bias)) and a dual GEMM (two products
// sharing A, combined elementwise, one or two outputs) all plug in without code here.
//
// The epilogue is checked by replaying it: `GemmEpilogue` is the kernel's post-loop ops compiled to
// a small straight-line program over one output element (i, j), whose inputs are the products at
// (i, j) and the epilogue inputs' elements there, evaluated with the interpreters' own element
// semantics (interp/element_ops.h: f32 arithmetic in float, casts round to nearest even). Fed with
// cuBLAS's f32 products it gives the reference that every element of the kernel's output is
// compared with; fed with float64 dot products it gives the float64 reference on sampled entries.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/harness/gemm_bench.h"
#include "interp/element_ops.h"
#include "ir/ir.h"

namespace tessel::bench {

// The roles of a GEMM kernel's parameters (indices into the kernel's parameter list).
struct GemmRoles {
  int a = -1;                // A [M,K] (or [K,M] when !a_k_major)
  std::vector<int> b;        // B_p [N,K] (or [K,N] when !b_k_major), one per product p, in the
                             // order the loops yield them
  bool a_k_major = true;     // A stored [M,K]; false: [K,M], read through a transpose
  bool b_k_major = true;     // B stored [N,K], read through a transpose; false: [K,N]
  std::vector<int> outputs;  // [M,N] tensors the epilogue stores, in store order
  std::vector<int> inputs;   // other tensors the epilogue reads (bias [N], residual [M,N], ...)
  std::string m, n, k;       // the size symbols of A's and B's extents
  // A batched GEMM: A, B and the outputs carry a leading dimension of this size symbol, one
  // independent product per index (their tiles squeeze it); empty for a single product.
  std::string batch;
  ir::ScalarKind element = ir::ScalarKind::f16;  // A's element type (B's must match)
  // The kernel computes Cᵀ = B·Aᵀ: its mma reads B as its first operand and A as its second, and
  // the epilogue stores the accumulator's transpose (the roles above are the GEMM's, not the
  // mma's).
  bool swapped = false;
};

// The operand layout in BLAS letters on row-major data: "nt" for A [M,K], B [N,K] (C = A·Bᵀ),
// "nn" for B [K,N], "tn" for A [K,M] and B [K,N], "tt" for A [K,M] and B [N,K].
std::string gemm_layout(const GemmRoles& roles);

// One output's epilogue, compiled from the kernel's ops after its main loops.
class GemmEpilogue {
 public:
  // What an epilogue step reads from.
  struct Step {
    enum class Kind { product, input, constant, convert, elementwise } what;
    int index = 0;          // product: p; input: parameter index
    int axis = 0;           // input of rank 1: 0 = indexed by the row i, 1 = by the column j
    int vector_axis = -1;   // a vector ([M] or [N]) value: the axis it follows; -1 otherwise
    bool rank2 = false;     // input of rank 2 ([M,N]): indexed by (i, j)
    interp::Element value;  // constant
    ir::ScalarKind from = ir::ScalarKind::f32;     // convert
    ir::ScalarKind element = ir::ScalarKind::f32;  // the step's result element type
    ir::ScalarKind compute = ir::ScalarKind::f32;  // elementwise: the kind it computes in
    const ir::Operation* op = nullptr;             // elementwise
    std::vector<int> args;                         // elementwise operands (steps)
  };
  std::vector<Step> steps;       // in evaluation order; the last one is the stored value
  int output = -1;               // the parameter this epilogue stores to
  std::string describe() const;  // e.g. "relu(p0 + bias[j])"-like text for the table
};

// Inputs of the epilogue for one element: products and the epilogue's input tensors, as exact
// values (the tensors already decoded from their element type; [N] vectors, [M,N] matrices).
struct EpilogueInputs {
  const std::map<int, std::vector<double>>* tensors = nullptr;  // parameter index -> values
  int64_t n = 0;                                                // row length of [M,N] inputs
};

// The analysis of one GEMM kernel: roles and one epilogue per output.
class GemmKernelInfo {
 public:
  // UserError naming the kernel and what is missing when `kernel` is not a GEMM in this sense.
  explicit GemmKernelInfo(const ir::Operation& kernel);

  const GemmRoles& roles() const { return roles_; }
  const std::vector<GemmEpilogue>& epilogues() const { return epilogues_; }
  int products() const { return static_cast<int>(roles_.b.size()); }
  // One line: "A=%A B=%B in=%bias; %C = f16(max(add((A·%B^T), f32(%bias[j])), 0))".
  std::string describe() const;
  // When the kernel is C = relu(A·Bᵀ + bias[j]) (casts aside) with the bias and C in A's element
  // type — what cuBLASLt's RELU_BIAS epilogue computes — the bias parameter; else -1.
  int bias_relu_input() const;

  // The value stored into output `o` at (i, j), given the products at (i, j).
  double evaluate(int o, const double* products, int64_t i, int64_t j,
                  const EpilogueInputs& inputs) const;

 private:
  const ir::Operation& kernel_;
  GemmRoles roles_;
  std::vector<GemmEpilogue> epilogues_;
};

// The correctness figures of one run of a GEMM kernel.
struct GemmCheck {
  double rel_err = 0;             // sampled entries (every corner + 1024 random) vs float64
  double rel_err_vs_library = 0;  // every element vs the epilogue over the library's products
  double library_rel_err = 0;     // the library's products + epilogue vs float64 (context)
  double baseline_rel_err = -1;   // a fused library baseline's own output vs float64 (sampled)
};

// Checks a run on the host. `values[p]`: parameter p's elements, decoded (inputs only; outputs may
// be empty); `products[q]`: the library's f32 product A·B_qᵀ (row-major M×N); `outputs[o]`: the
// kernel's output o (roles().outputs order), decoded. `seed` picks the sampled entries.
// `baseline_outputs`, when given, are a fused library baseline's outputs, checked on the samples.
GemmCheck check_gemm(const GemmKernelInfo& info, const GemmShape& shape,
                     const std::vector<std::vector<float>>& values,
                     const std::vector<std::vector<float>>& products,
                     const std::vector<std::vector<float>>& outputs, std::uint64_t seed,
                     const std::vector<std::vector<float>>* baseline_outputs = nullptr);

// The parsed kernel of `spec`: a name of the embedded examples/kernels (gemm, gemm_bf16, ...) or a
// path to a .tir file (its first kernel). `name` receives the name for tables (the file's stem).
std::unique_ptr<ir::Module> load_gemm_kernel(const std::string& spec, std::string* name);

// The target a kernel is compiled for: the one its block_grid pins, else sm_80 for a file stem
// ending in "_sm80", else sm_90a.
std::string gemm_target_name(const ir::Operation& kernel, const std::string& name);

}  // namespace tessel::bench
