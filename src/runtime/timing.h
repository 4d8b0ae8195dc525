// Timing kernels with device events: warm up, then time many launches and take the median.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace tessel::runtime {

struct TimingResult {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double mean_ms = 0;
  std::vector<double> samples_ms;  // one per timed launch, in launch order
};

// Runs `launch(stream)` `warmup` times, then `iterations` times each between its own pair of
// events, and reports statistics of those event times. Launch gaps are excluded from each sample
// because the events bracket the device work; asynchronous faults surface as a UserError.
TimingResult time_launches(const std::function<void(CUstream)>& launch, int warmup, int iterations,
                           CUstream stream);

// Times two kernels side by side: after `warmup` launches of each, each of `iterations` rounds
// launches both (`first` then `second` in even rounds, the other way round in odd ones: each
// takes each place equally often), each between its own pair of events. Interleaving launch by
// launch exposes both to the same clocks and temperature, so their ratio is steadier than that
// of two separate timing blocks on a card that moves its clocks under its power limit.
std::pair<TimingResult, TimingResult> time_interleaved(const std::function<void(CUstream)>& first,
                                                       const std::function<void(CUstream)>& second,
                                                       int warmup, int iterations, CUstream stream);

// Times any number of kernels the same way: after `warmup` launches of each, each of `iterations`
// rounds launches every kernel once, round r starting at kernel r mod n, each between its own
// pair of events; one result per kernel, in the order given.
std::vector<TimingResult> time_all_interleaved(
    const std::vector<std::function<void(CUstream)>>& kernels, int warmup, int iterations,
    CUstream stream);

// Which of `kernels` kernels the interleaved timings launch `launch`-th (counting from 0 after
// the warm-up): round launch / kernels, its place launch % kernels, each round starting at the
// next kernel so that every kernel takes every place equally often.
std::size_t interleaved_kernel(std::size_t launch, std::size_t kernels);

// The median of `samples` (mean of the two middle values for an even count); 0 for none.
double median(std::vector<double> samples);

}  // namespace tessel::runtime
