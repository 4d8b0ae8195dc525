#include "runtime/timing.h"

#include <algorithm>
#include <numeric>

#include "runtime/context.h"
#include "runtime/driver.h"
#include "support/diagnostics.h"

namespace tessel::runtime {

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  std::size_t middle = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[middle] : 0.5 * (samples[middle - 1] + samples[middle]);
}

std::size_t interleaved_kernel(std::size_t launch, std::size_t kernels) {
  return (launch / kernels + launch % kernels) % kernels;
}

namespace {

TimingResult summarize(std::vector<double> samples) {
  TimingResult result;
  result.samples_ms = std::move(samples);
  result.median_ms = median(result.samples_ms);
  result.min_ms = *std::min_element(result.samples_ms.begin(), result.samples_ms.end());
  result.max_ms = *std::max_element(result.samples_ms.begin(), result.samples_ms.end());
  result.mean_ms = std::accumulate(result.samples_ms.begin(), result.samples_ms.end(), 0.0) /
                   static_cast<double>(result.samples_ms.size());
  return result;
}

// Launches each of `kernels` in turn, `iterations` rounds, each launch between its own events;
// returns one sample list per kernel. Round r starts at kernel r mod n, so that each kernel takes
// every place in the round equally often: on a card at its power limit a launch's time depends on
// what ran before it (the same 26 ms attention kernel measured 10% faster first in each round,
// after a slower library kernel, than third: bench/results/2026-11-29-attention-pingpong-h200.md).
std::vector<std::vector<double>> time_rounds(
    const std::vector<const std::function<void(CUstream)>*>& kernels, int warmup, int iterations,
    CUstream stream) {
  if (iterations < 1) user_error(SourceLocation::unknown(), "timing: iterations must be >= 1");
  context();
  const DriverApi& api = driver();
  for (int i = 0; i < warmup; ++i) {
    for (const auto* kernel : kernels) (*kernel)(stream);
  }
  check(api.cuStreamSynchronize(stream), "cuStreamSynchronize (warm-up launches)");
  const std::size_t launches = kernels.size() * static_cast<std::size_t>(iterations);
  std::vector<CUevent> events(2 * launches);
  for (CUevent& event : events) check(api.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  // Launch `launch`'s events are at 2 * launch; interleaved_kernel says whose they are.
  for (std::size_t launch = 0; launch < launches; ++launch) {
    check(api.cuEventRecord(events[2 * launch], stream), "cuEventRecord");
    (*kernels[interleaved_kernel(launch, kernels.size())])(stream);
    check(api.cuEventRecord(events[2 * launch + 1], stream), "cuEventRecord");
  }
  CUresult synced = api.cuEventSynchronize(events.back());
  std::vector<std::vector<double>> samples(kernels.size());
  if (synced == CUDA_SUCCESS) {
    for (std::size_t launch = 0; launch < launches; ++launch) {
      float ms = 0;
      check(api.cuEventElapsedTime(&ms, events[2 * launch], events[2 * launch + 1]),
            "cuEventElapsedTime");
      samples[interleaved_kernel(launch, kernels.size())].push_back(ms);
    }
  }
  for (CUevent event : events) api.cuEventDestroy(event);
  check(synced, "cuEventSynchronize (timed launches)");
  return samples;
}

}  // namespace

TimingResult time_launches(const std::function<void(CUstream)>& launch, int warmup, int iterations,
                           CUstream stream) {
  return summarize(std::move(time_rounds({&launch}, warmup, iterations, stream)[0]));
}

std::pair<TimingResult, TimingResult> time_interleaved(const std::function<void(CUstream)>& first,
                                                       const std::function<void(CUstream)>& second,
                                                       int warmup, int iterations,
                                                       CUstream stream) {
  auto samples = time_rounds({&first, &second}, warmup, iterations, stream);
  return {summarize(std::move(samples[0])), summarize(std::move(samples[1]))};
}

std::vector<TimingResult> time_all_interleaved(
    const std::vector<std::function<void(CUstream)>>& kernels, int warmup, int iterations,
    CUstream stream) {
  std::vector<const std::function<void(CUstream)>*> pointers;
  for (const auto& kernel : kernels) pointers.push_back(&kernel);
  std::vector<TimingResult> results;
  for (auto& samples : time_rounds(pointers, warmup, iterations, stream)) {
    results.push_back(summarize(std::move(samples)));
  }
  return results;
}

}  // namespace tessel::runtime
