// Example task programs (Cypress §3.4) and their default mappings (the .tmap file next to each
// program, embedded at build time). Run one with `tessel task NAME`.
#pragma once

#include <string>
#include <vector>

#include "tessel/task.h"

namespace tessel::examples {

using ir::ScalarKind;

struct TaskExample {
  std::string name;
  std::string what;
  task::TaskProgram (*make)(ScalarKind element);
  std::string mapping_file;  // file name, for messages ("gemm.tmap")
  std::string mapping_text;  // its text
};

// C[M,N] = A[M,K] · B[N,K]ᵀ with f32 accumulation: a grid of U×V output tiles, each a loop over K
// in steps of W into a register accumulator, split over WGS warpgroups by rows.
task::TaskProgram gemm_tasks(ScalarKind element);
// D = silu(A·B0ᵀ) * (A·B1ᵀ) (the gated MLP; examples/kernels/dual_gemm.tir as a task program):
// two f32 accumulators over the same K steps, the gate in f32 in the epilogue.
task::TaskProgram dual_gemm_tasks(ScalarKind element);
// C = A·Bᵀ and y[m, 0] = Σ_k A[m,k] in f32 (Cypress §5.2's GEMM + row reduction; y is a column,
// [M, 1]): the row sums of each A slice computed in the GEMM's K loop.
task::TaskProgram gemm_rowsum_tasks(ScalarKind element);
// O = softmax(Q Kᵀ / sqrt(128)) V per head, Q/K/V/O [BH, S, 128] (FlashAttention-2's schedule;
// examples/kernels/flash_attention.tir as a task program): the online softmax over key tiles.
task::TaskProgram attention_tasks(ScalarKind element);
// The causal variant (examples/kernels/flash_attention_causal.tir as a task program): each query
// tile's keys and values only up to its last row (pieces whose extent grows with the tile's
// index, so the key loop ends at the diagonal), keys after the query masked.
task::TaskProgram attention_causal_tasks(ScalarKind element);

const std::vector<TaskExample>& task_examples();
const TaskExample* find_task_example(const std::string& name);

}  // namespace tessel::examples
