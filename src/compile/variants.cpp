#include "compile/variants.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/context.h"
#include "runtime/kernel_cache.h"
#include "runtime/timing.h"
#include "support/diagnostics.h"
#include "support/hash.h"

namespace tessel {
namespace {

// Each variant's timed launches span at least this long (see tune()).
constexpr double kMinTimedMs = 3.0;
constexpr int kMaxIterations = 300;

struct Record {
  std::string device, shape, variant, ms;
};

std::vector<Record> read_records(const std::string& path) {
  std::vector<Record> records;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, '\t');) fields.push_back(f);
    if (fields.size() != 4 || fields[0].empty() || fields[1].empty() || fields[2].empty()) continue;
    records.push_back({fields[0], fields[1], fields[2], fields[3]});
  }
  return records;
}

// What a variant's launch takes: per kernel argument, tensor or scalar, element type, rank.
std::vector<std::string> argument_kinds(const CompiledKernel& k) {
  std::vector<std::string> kinds;
  for (const auto& p : k.emitted().params) {
    using Kind = target::cuda::KernelParam::Kind;
    if (p.kind != Kind::tensor && p.kind != Kind::scalar) continue;
    kinds.push_back((p.kind == Kind::tensor ? "tensor " : "scalar ") + p.type.str());
  }
  return kinds;
}

// "global<f16>[M,K]" -> "global<f16>[2]": the rank, not the symbols (variants may name sizes
// alike or not; bind() checks the extents at launch).
std::string shape_free(const std::string& kind) {
  const size_t open = kind.find('[');
  if (open == std::string::npos) return kind;
  const size_t commas = static_cast<size_t>(std::count(kind.begin() + open, kind.end(), ','));
  return kind.substr(0, open) + "[" + std::to_string(commas + 1) + "]";
}

}  // namespace

std::string tuning_device() {
  const runtime::Context& c = runtime::context();
  return c.device_name() + "/" + std::to_string(c.sm_count());
}

TuningCache::TuningCache(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty()) directory_ = runtime::KernelCache().directory() + "/tuning";
}

std::string TuningCache::path(const std::string& family) const {
  return directory_ + "/" + family + ".tsv";
}

std::optional<std::string> TuningCache::lookup(const std::string& family, const std::string& device,
                                               const std::string& shape) const {
  std::optional<std::string> found;
  for (const Record& r : read_records(path(family))) {
    if (r.device == device && r.shape == shape) found = r.variant;
  }
  return found;
}

bool TuningCache::store(const std::string& family, const std::string& device,
                        const std::string& shape, const std::string& variant, double ms) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  std::ostringstream text;
  for (const Record& r : read_records(path(family))) {
    if (r.device == device && r.shape == shape) continue;
    text << r.device << '\t' << r.shape << '\t' << r.variant << '\t' << r.ms << '\n';
  }
  text << device << '\t' << shape << '\t' << variant << '\t' << ms << '\n';
  const std::string temporary = path(family) + ".tmp" + std::to_string(fnv1a64(shape + device));
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text.str();
    if (!out) return false;
  }
  std::filesystem::rename(temporary, path(family), error);
  return !error;
}

KernelVariants::KernelVariants(std::vector<CompiledKernel> variants, std::vector<std::string> names,
                               TuningCache cache, std::vector<std::optional<GemmTraits>> traits,
                               std::vector<std::optional<AttentionTraits>> attention)
    : variants_(std::move(variants)),
      names_(std::move(names)),
      cache_(std::move(cache)),
      traits_(std::move(traits)),
      attention_(std::move(attention)) {
  if (variants_.empty()) user_error(SourceLocation::unknown(), "kernel variants: none given");
  if (names_.empty()) {
    for (const CompiledKernel& k : variants_) names_.push_back(k.name());
  }
  if (names_.size() != variants_.size()) {
    user_error(SourceLocation::unknown(), "kernel variants: ", variants_.size(), " kernels but ",
               names_.size(), " names");
  }
  for (size_t i = 0; i < names_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (names_[i] == names_[j]) {
        user_error(SourceLocation::unknown(), "kernel variants: two variants are named ", names_[i],
                   " (the tuning cache tells them apart by name)");
      }
    }
  }
  std::vector<std::string> base = argument_kinds(variants_[0]);
  std::string keys;
  for (size_t i = 0; i < variants_.size(); ++i) {
    std::vector<std::string> kinds = argument_kinds(variants_[i]);
    bool same = kinds.size() == base.size();
    for (size_t a = 0; same && a < kinds.size(); ++a) {
      same = shape_free(kinds[a]) == shape_free(base[a]);
    }
    if (!same) {
      user_error(SourceLocation::unknown(), "kernel variants: @", variants_[i].name(),
                 " takes other arguments than @", variants_[0].name(),
                 " (variants of one kernel take the same tensors and scalars, in order)");
    }
    keys += names_[i] + "=" + variants_[i].cache_key() + ";";
  }
  family_ = names_[0] + "-" + sha256_hex(keys).substr(0, 16);
}

std::string KernelVariants::shape_class(const std::vector<KernelArg>& args) const {
  std::string text;
  for (const auto& [symbol, value] : variants_[0].bind(args)) {
    text += (text.empty() ? "" : ",") + symbol + "=" + std::to_string(value);
  }
  return text;
}

size_t KernelVariants::choose(const std::vector<KernelArg>& args) {
  const std::string shape = shape_class(args);
  auto memo = chosen_.find(shape);
  if (memo != chosen_.end()) return memo->second;
  if (std::optional<std::string> tuned = cache_.lookup(family_, tuning_device(), shape)) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == *tuned) return chosen_[shape] = i;
    }
  }
  return chosen_[shape] = model_choice(variants_[0].bind(args), runtime::context().sm_count());
}

size_t gemm_model_choice(const std::vector<std::optional<GemmTraits>>& traits,
                         const std::map<std::string, int64_t>& sizes, int64_t sms) {
  size_t best = 0;
  double best_cost = 0;
  for (size_t i = 0; i < traits.size(); ++i) {
    if (!traits[i]) return 0;
    const double cost = gemm_cost(*traits[i], sizes, sms);
    if (i == 0 || cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

size_t KernelVariants::model_choice(const std::map<std::string, int64_t>& sizes,
                                    int64_t sms) const {
  const bool gemm = traits_.size() == variants_.size() &&
                    std::all_of(traits_.begin(), traits_.end(), [](const auto& t) { return t; });
  if (gemm) return gemm_model_choice(traits_, sizes, sms);
  if (attention_.size() == variants_.size()) return attention_model_choice(attention_, sizes);
  return 0;
}

void KernelVariants::launch(const std::vector<KernelArg>& args, CUstream stream) {
  variants_[choose(args)].launch(args, stream);
}

std::vector<KernelVariants::Timing> KernelVariants::tune(
    const std::vector<KernelArg>& args, CUstream stream, int warmup, int iterations,
    const std::function<void(const std::string&)>& progress) {
  const std::string shape = shape_class(args);
  // The variants are timed interleaved, launch by launch (runtime::time_all_interleaved): timed
  // one block after another, a card that moves its clocks under its power limit ranked them by
  // when they ran. Measured on the H200 (bench/results/2026-11-29-attention-pingpong-h200.md):
  // attention at L = 16K, two variants 10% apart in the interleaved bench, came out in the
  // wrong order in both rounds of block-by-block tuning.
  std::vector<std::function<void(CUstream)>> launches;
  for (size_t i = 0; i < variants_.size(); ++i) {
    launches.push_back([this, &args, i](CUstream s) { variants_[i].launch(args, s); });
  }
  // Short kernels get more rounds (at least kMinTimedMs of the shortest, at most kMaxIterations):
  // at 10 launches of a 9 µs kernel two variants within noise of each other swap places.
  const std::vector<runtime::TimingResult> probe =
      runtime::time_all_interleaved(launches, warmup, 3, stream);
  double shortest = probe[0].median_ms;
  for (const auto& p : probe) shortest = std::min(shortest, p.median_ms);
  int count = iterations;
  if (shortest > 0) {
    count = std::clamp(static_cast<int>(std::ceil(kMinTimedMs / shortest)), iterations,
                       std::max(iterations, kMaxIterations));
  }
  const std::vector<runtime::TimingResult> timed =
      runtime::time_all_interleaved(launches, 0, count, stream);
  std::vector<Timing> timings;
  size_t best = 0;
  for (size_t i = 0; i < variants_.size(); ++i) {
    timings.push_back({names_[i], timed[i].median_ms});
    if (timed[i].median_ms < timings[best].median_ms) best = i;
    if (progress) {
      std::ostringstream line;
      line << "tune " << shape << ": [" << i + 1 << "/" << variants_.size() << "] " << names_[i]
           << " " << timed[i].median_ms * 1000.0 << " us (median of " << count
           << ", interleaved)";
      progress(line.str());
    }
  }
  cache_.store(family_, tuning_device(), shape, names_[best], timings[best].median_ms);
  chosen_[shape] = best;
  return timings;
}

}  // namespace tessel
