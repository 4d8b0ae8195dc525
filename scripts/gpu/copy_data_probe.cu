// Does a copy's speed depend on the bytes it copies? (not product code) `tessel bench
// memory-bound` times its baseline, copy16, on a source filled with 0x01 bytes, while the row
// programs it compares with read random rows. This probe times the same copy16 (256 threads, 8
// blocks a SM, grid-stride 16-byte words; bench/harness/memory_bench.cpp) over sources of four
// kinds, in turns, each launch queued back to back between events as the bench's
// time_interleaved does:
//   ones     every byte 0x01 (the bench's baseline)
//   zeros    every byte 0
//   random   f16 values drawn from N(0, 2) (the row programs' inputs)
//   bits     uniformly random 32-bit words
//   nvcc -O3 -arch=sm_90a -Iscripts/gpu scripts/gpu/copy_data_probe.cu -o copy_data_probe
//   ./copy_data_probe 2047x32760 8191x8200 ...
#include "probe_common.cuh"

int main(int argc, char** argv) {
  const int sms = print_device();
  std::mt19937 rng(11);
  for (int a = 1; a < argc; ++a) {
    int M, N;
    if (!parse_rows_shape(argv[a], 0, M, N)) return 1;
    const size_t n = (size_t)M * N, bytes = n * 2;
    const long long words = (long long)(bytes / 16);
    const char* names[4] = {"ones", "zeros", "random", "bits"};
    uint4* src[4];
    for (int k = 0; k < 4; ++k) CHECK_CUDA(cudaMalloc(&src[k], bytes));
    CHECK_CUDA(cudaMemset(src[0], 1, bytes));
    CHECK_CUDA(cudaMemset(src[1], 0, bytes));
    {
      std::vector<__half> h = random_rows(n, rng);
      CHECK_CUDA(cudaMemcpy(src[2], h.data(), bytes, cudaMemcpyHostToDevice));
      std::vector<unsigned> w(bytes / 4);
      for (auto& v : w) v = rng();
      CHECK_CUDA(cudaMemcpy(src[3], w.data(), bytes, cudaMemcpyHostToDevice));
    }
    uint4* dst;
    CHECK_CUDA(cudaMalloc(&dst, bytes));
    cudaEvent_t ev[2 * 4 * 30 + 1];
    for (auto& e : ev) cudaEventCreate(&e);
    std::vector<float> ms[4];
    for (int round = 0; round < 3; ++round) {
      for (int k = 0; k < 4; ++k)
        for (int w = 0; w < 3; ++w) copy16_bench<<<sms * 8, 256>>>(src[k], dst, words);
      // In turns: ones, zeros, random, bits, ones, ... each between its own pair of events.
      int e = 0;
      for (int it = 0; it < 30; ++it)
        for (int k = 0; k < 4; ++k) {
          cudaEventRecord(ev[e++]);
          copy16_bench<<<sms * 8, 256>>>(src[k], dst, words);
          cudaEventRecord(ev[e++]);
        }
      CHECK_CUDA(cudaDeviceSynchronize());
      e = 0;
      for (int it = 0; it < 30; ++it)
        for (int k = 0; k < 4; ++k, e += 2) {
          float t;
          cudaEventElapsedTime(&t, ev[e], ev[e + 1]);
          ms[k].push_back(t);
        }
    }
    printf("%dx%d (%.1f MB each way):", M, N, bytes / 1e6);
    for (int k = 0; k < 4; ++k) {
      std::sort(ms[k].begin(), ms[k].end());
      const float med = ms[k][ms[k].size() / 2];
      printf("  %s %.4f ms (%.0f GB/s)", names[k], med, 2.0 * bytes / med / 1e6);
      ms[k].clear();
    }
    printf("\n");
    for (auto& e : ev) cudaEventDestroy(e);
    for (int k = 0; k < 4; ++k) cudaFree(src[k]);
    cudaFree(dst);
  }
  return 0;
}
