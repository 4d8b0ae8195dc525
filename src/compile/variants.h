// Several compiled variants of one kernel, the one to launch chosen per shape: measured once
// (tune), remembered on disk (TuningCache), the base variant before that.
//
// Why. No one tile program is fastest at every shape: a 128x256 tile with the whole K per block
// wins when the output has many tiles, a split of K when it has few and K is long
// (bench/results/2026-11-26-split-k-h200.md: 1.6-1.9x at 16x4096x11008, 0.5x at 512^3). The
// variants are kernels with the same parameters (a tile program and its pinned alternatives:
// another tile, split_k, clusters); KernelVariants launches the one the tuning cache names for the
// arguments' shape, and tune() measures them all on real arguments and records the fastest.
//
// Shape class: the sizes exactly (M=16,N=4096,K=4096), on the device (its name and SM count).
// Bucketing sizes into classes is a later refinement; exact sizes never reuse a choice wrongly.
//
// The cache: `<dir>/<family>.tsv`, one line per (device, shape): `device \t shape \t variant \t
// ms`, where <family> hashes the variants' compile keys (another set of variants, or the same
// programs lowered by another tessel, is another family) and <dir> is the kernel cache's
// directory's `tuning` folder. Written whole to a temporary file and renamed into place; a line
// that does not parse, or names a variant the family does not have, is ignored.
//
// Before anything is tuned for a shape, a cost model picks: for GEMM variants (each given its
// GemmTraits, src/compile/gemm_cost.h) the one the model finds cheapest at the shape; for other
// kernels the attention model (src/compile/attention_cost.h) where every variant has an online-
// softmax key loop, else the base (the first).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compile/attention_cost.h"
#include "compile/compile.h"
#include "compile/gemm_cost.h"

namespace tessel {

class TuningCache {
 public:
  // `directory` empty: the kernel cache's directory (runtime::KernelCache) + "/tuning".
  explicit TuningCache(std::string directory = "");
  const std::string& directory() const { return directory_; }
  // The variant recorded for (family, device, shape), if any.
  std::optional<std::string> lookup(const std::string& family, const std::string& device,
                                    const std::string& shape) const;
  // Records it (replacing an earlier record of the same device and shape). False when the file
  // cannot be written: the cache is an optimization, the caller goes on.
  bool store(const std::string& family, const std::string& device, const std::string& shape,
             const std::string& variant, double ms) const;

 private:
  std::string path(const std::string& family) const;
  std::string directory_;
};

// The cost model's choice among variants with these traits at `sizes` on `sms` SMs: the
// cheapest by gemm_cost when every variant has traits, else 0 (the base). Reads only the tile
// programs' traits, so it needs no compiled kernel (KernelVariants::model_choice is this).
size_t gemm_model_choice(const std::vector<std::optional<GemmTraits>>& traits,
                         const std::map<std::string, int64_t>& sizes, int64_t sms);

class KernelVariants {
 public:
  // `names` name the variants in messages and the cache (the kernels' names when empty). UserError
  // when there are none, or their parameters differ (count, tensor or scalar, element type,
  // rank).
  // `traits`: per variant, for the GEMM cost model (empty, or any nullopt: no model); `attention`:
  // per variant, for the attention model where the GEMM model has no traits (same rule).
  explicit KernelVariants(std::vector<CompiledKernel> variants, std::vector<std::string> names = {},
                          TuningCache cache = TuningCache(),
                          std::vector<std::optional<GemmTraits>> traits = {},
                          std::vector<std::optional<AttentionTraits>> attention = {});

  size_t size() const { return variants_.size(); }
  const std::string& name(size_t i) const { return names_.at(i); }
  CompiledKernel& variant(size_t i) { return variants_.at(i); }
  const std::string& family() const { return family_; }

  // "M=16,N=4096,K=4096" for these arguments (UserError when they do not bind).
  std::string shape_class(const std::vector<KernelArg>& args) const;
  // The variant that launches for `args`: the tuned one for their shape on this device, else the
  // cost model's (model_choice on the device's SMs).
  size_t choose(const std::vector<KernelArg>& args);
  // The cost model's choice at `sizes` on `sms` SMs: the cheapest variant by gemm_cost when every
  // variant has GEMM traits, else attention_model_choice's when every one has attention traits,
  // else 0.
  size_t model_choice(const std::map<std::string, int64_t>& sizes, int64_t sms) const;
  void launch(const std::vector<KernelArg>& args, CUstream stream = nullptr);

  struct Timing {
    std::string variant;
    double median_ms = 0;
  };
  // Times every variant on `args` (`warmup` launches of each, then `iterations` rounds or as many
  // more as span 3 ms of the shortest, at most 300; each round launches every variant once,
  // starting at the next one each round, each between its own device events: the median per
  // variant), records the fastest for their shape and returns the timings; `progress` gets one
  // line per variant once all are measured. The arguments' outputs are overwritten.
  std::vector<Timing> tune(const std::vector<KernelArg>& args, CUstream stream, int warmup,
                           int iterations,
                           const std::function<void(const std::string&)>& progress = {});

 private:
  std::vector<CompiledKernel> variants_;
  std::vector<std::string> names_;
  TuningCache cache_;
  std::vector<std::optional<GemmTraits>> traits_;
  std::vector<std::optional<AttentionTraits>> attention_;
  std::string family_;
  std::map<std::string, size_t> chosen_;  // shape class -> variant, this process's memo
};

// This device in the tuning cache's terms: its name and SM count ("NVIDIA H100 80GB HBM3/132").
std::string tuning_device();

}  // namespace tessel
