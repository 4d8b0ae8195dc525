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

TimingResult time_launches(const std::function<void(CUstream)>& launch, int warmup, int iterations,
                           CUstream stream) {
  if (iterations < 1) user_error(SourceLocation::unknown(), "time_launches: iterations must be >= 1");
  context();
  const DriverApi& api = driver();
  for (int i = 0; i < warmup; ++i) launch(stream);
  check(api.cuStreamSynchronize(stream), "cuStreamSynchronize (warm-up launches)");
  std::vector<CUevent> events(2 * static_cast<std::size_t>(iterations));
  for (CUevent& event : events) check(api.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int i = 0; i < iterations; ++i) {
    check(api.cuEventRecord(events[2 * i], stream), "cuEventRecord");
    launch(stream);
    check(api.cuEventRecord(events[2 * i + 1], stream), "cuEventRecord");
  }
  CUresult synced = api.cuEventSynchronize(events.back());
  TimingResult result;
  if (synced == CUDA_SUCCESS) {
    for (int i = 0; i < iterations; ++i) {
      float ms = 0;
      check(api.cuEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]), "cuEventElapsedTime");
      result.samples_ms.push_back(ms);
    }
  }
  for (CUevent event : events) api.cuEventDestroy(event);
  check(synced, "cuEventSynchronize (timed launches)");
  result.median_ms = median(result.samples_ms);
  result.min_ms = *std::min_element(result.samples_ms.begin(), result.samples_ms.end());
  result.max_ms = *std::max_element(result.samples_ms.begin(), result.samples_ms.end());
  result.mean_ms = std::accumulate(result.samples_ms.begin(), result.samples_ms.end(), 0.0) /
                   static_cast<double>(result.samples_ms.size());
  return result;
}

}  // namespace tessel::runtime
