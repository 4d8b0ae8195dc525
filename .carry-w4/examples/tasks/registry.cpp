// The table of example task programs (`tessel task`); their mappings are the .tmap files next to
// them, embedded by examples/CMakeLists.txt (task_mappings.cpp).
#include "tasks/programs.h"

namespace tessel::examples {

std::string embedded_task_mapping(const std::string& file);  // generated

const std::vector<TaskExample>& task_examples() {
  static const std::vector<TaskExample> table = {
      {"gemm", "C = A B^T, A [M,K], B [N,K], f32 accumulation (Cypress 3.4)", &gemm_tasks,
       "gemm.tmap", embedded_task_mapping("gemm.tmap")},
      {"dual_gemm", "D = silu(A B0^T) * (A B1^T), two f32 accumulators sharing A's tiles",
       &dual_gemm_tasks, "dual_gemm.tmap", embedded_task_mapping("dual_gemm.tmap")},
      {"gemm_rowsum", "C = A B^T and y = row sums of A, in the GEMM's K loop (Cypress 5.2)",
       &gemm_rowsum_tasks, "gemm_rowsum.tmap", embedded_task_mapping("gemm_rowsum.tmap")},
      {"flash_attention",
       "O = softmax(Q K^T / sqrt(128)) V, Q/K/V/O [BH,S,128], the online softmax "
       "(FlashAttention-2)",
       &attention_tasks, "flash_attention.tmap", embedded_task_mapping("flash_attention.tmap")},
      {"flash_attention_causal",
       "the causal FlashAttention-2: keys after the query masked, the key loop ending at the "
       "diagonal",
       &attention_causal_tasks, "flash_attention_causal.tmap",
       embedded_task_mapping("flash_attention_causal.tmap")},
  };
  return table;
}

const TaskExample* find_task_example(const std::string& name) {
  for (const TaskExample& e : task_examples())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace tessel::examples
