#include "bench/harness/memory_kernels.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "runtime/context.h"
#include "support/diagnostics.h"
#include "tessel/example_kernels.h"
#include "transforms/layout/schedule_rows.h"

namespace tessel::bench {
namespace {

using Tensors = std::vector<std::vector<double>>;

// The base kernel whose reference a kernel (or variant: `<base>_<anything>`) uses.
std::string reference_name(const std::string& kernel) {
  for (const char* base : {"bias_gelu", "softmax", "rmsnorm", "layernorm", "gemv", "row_scale"}) {
    std::string b = base;
    if (kernel == b || kernel.rfind(b + "_", 0) == 0) return b;
  }
  return kernel;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) user_error(SourceLocation::unknown(), "cannot read kernel file '", path, "'");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Uniform values in [lo, hi) written into a 16-bit float tensor fast: the generic encoder costs
// ~85 ns an element (5-10 s for the 128 MiB tensors of a memory-bound bench), so the values are
// drawn from a grid of 2^20 points of [lo, hi), each encoded once into a table, and a 64-bit
// splitmix generator picks them (~2 ns an element). Other element types take the generic path.
void fill_uniform(interp::HostTensor& h, double lo, double hi, std::mt19937_64& rng) {
  const int bits = ir::bit_width(h.element());
  if (!ir::is_float(h.element()) || bits != 16) {
    std::uniform_real_distribution<double> real(lo, hi);
    for (int64_t i = 0; i < h.size(); ++i) h.set_float(i, real(rng));
    return;
  }
  constexpr int kGridBits = 20;
  std::vector<uint16_t> table(size_t(1) << kGridBits);
  interp::HostTensor one(h.element(), {1});
  for (size_t k = 0; k < table.size(); ++k) {
    one.set_float(0, lo + (hi - lo) * (double(k) + 0.5) / double(table.size()));
    std::memcpy(&table[k], one.bytes().data(), 2);
  }
  uint64_t state = rng();
  uint8_t* out = h.bytes().data();
  for (int64_t i = 0; i < h.size(); ++i) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    std::memcpy(out + 2 * i, &table[z >> (64 - kGridBits)], 2);
  }
}

double gelu(double h) {
  return 0.5 * h * (1.0 + std::tanh(0.7978845608 * (h + 0.044715 * h * h * h)));
}

// The float64 reference of each kernel, from the decoded inputs (in parameter order).
std::vector<double> reference_for(const std::string& kernel, const Tensors& in, int64_t m,
                                  int64_t n, double eps) {
  // Variants (rmsnorm_n8192, gemv_t2048, a file's stem) compute what their base kernel does.
  std::string name = reference_name(kernel);
  std::vector<double> out;
  if (name == "gemv") {
    out.assign(m, 0.0);
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t j = 0; j < n; ++j) s += in[0][i * n + j] * in[1][j];
      out[i] = s;
    }
    return out;
  }
  out.assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    const double* x = &in[0][i * n];
    double* y = &out[i * n];
    if (name == "rmsnorm") {
      double ss = 0;
      for (int64_t j = 0; j < n; ++j) ss += x[j] * x[j];
      double r = 1.0 / std::sqrt(ss / n + eps);
      for (int64_t j = 0; j < n; ++j) y[j] = x[j] * r * in[1][j];
    } else if (name == "layernorm") {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < n; ++j) mean += x[j];
      mean /= n;
      for (int64_t j = 0; j < n; ++j) var += (x[j] - mean) * (x[j] - mean);
      var /= n;
      double r = 1.0 / std::sqrt(var + eps);
      for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * r * in[1][j] + in[2][j];
    } else if (name == "softmax") {
      double mx = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x[j]);
      for (int64_t j = 0; j < n; ++j) s += std::exp(x[j] - mx);
      for (int64_t j = 0; j < n; ++j) y[j] = std::exp(x[j] - mx) / s;
    } else if (name == "bias_gelu") {
      for (int64_t j = 0; j < n; ++j) y[j] = gelu(x[j] + in[1][j]);
    } else if (name == "row_scale") {
      double s = 0;
      for (int64_t j = 0; j < n; ++j) s += x[j];
      for (int64_t j = 0; j < n; ++j) y[j] = x[j] / s;
    } else {
      user_error(SourceLocation::unknown(), "no reference for kernel '", name, "'");
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> memory_kernel_names() {
  return {"bias_gelu", "softmax",       "rmsnorm",       "layernorm",
          "gemv",      "softmax_n8192", "rmsnorm_n8192", "layernorm_n8192"};
}

MemoryCase::MemoryCase(const std::string& kernel, int64_t rows, int64_t cols, uint64_t seed,
                       const std::string& source)
    : name_(kernel), rows_(rows), cols_(cols) {
  std::string text = source;
  // A path to a .tir file: the kernel is its text, named by the file's stem.
  if (text.empty() && kernel.size() > 4 && kernel.compare(kernel.size() - 4, 4, ".tir") == 0) {
    text = read_text_file(kernel);
    size_t slash = kernel.find_last_of('/');
    name_ = kernel.substr(slash == std::string::npos ? 0 : slash + 1);
    name_.resize(name_.size() - 4);
  }
  if (text.empty()) {
    auto it = examples::lowered_kernels().find(kernel);
    if (it == examples::lowered_kernels().end()) {
      user_error(SourceLocation::unknown(), "no example kernel '", kernel, "'");
    }
    text = it->second;
  }
  auto module = ir::parse_module(text, name_ + ".tir");
  ir::Operation& k = *module->kernels.front();
  std::map<std::string, int64_t> sizes;
  const auto& symbols = k.signature().sizes;
  if (!symbols.empty()) sizes[symbols[0]] = rows;
  if (symbols.size() > 1) sizes[symbols[1]] = cols;
  // Unpinned row programs are scheduled for the sizes they will run at (schedule-rows).
  transforms::set_size_hints(k, sizes);
  compiled_ = std::make_unique<CompiledKernel>(compile(k, target::cuda::Target::sm90a()));
  std::mt19937_64 rng(seed);
  // row_scale divides by row sums: keep them away from zero.
  bool positive = reference_name(name_) == "row_scale";
  double lo = positive ? 0.5 : -1.0, hi = positive ? 1.5 : 1.0;
  const ir::Block& body = *k.region(0);
  for (const auto& param : body.arguments()) {
    const ir::Type& t = param->type();
    if (t.is_tensor()) {
      host_.emplace_back(t.element(), interp::concrete_shape(t, sizes));
      ideal_bytes_ += static_cast<int64_t>(host_.back().bytes().size());
      output_ = static_cast<int>(host_.size()) - 1;  // the last tensor is the output
    }
  }
  // Inputs random; the output is poisoned on the device before every checked run (run()).
  for (int i = 0; i < output_; ++i) fill_uniform(host_[i], lo, hi, rng);
  runtime::context();
  for (interp::HostTensor& h : host_) {
    device_.emplace_back(std::max<size_t>(h.bytes().size(), 16));
    device_.back().upload(h.bytes().data(), h.bytes().size());
  }
  size_t t = 0;
  for (const auto& param : body.arguments()) {
    if (param->type().is_tensor()) {
      args_.emplace_back(TensorArg{device_[t].ptr(), host_[t].shape(), host_[t].element()});
      ++t;
    } else {
      args_.emplace_back(eps_);
    }
  }
}

void MemoryCase::launch(CUstream stream) {
  compiled_->launch(args_, stream);
}

void MemoryCase::run() {
  device_[output_].fill_bytes(0xff);
  launch(nullptr);
  runtime::context().synchronize();
  interp::HostTensor& out = host_[output_];
  device_[output_].download(out.bytes().data(), out.bytes().size());
}

const std::vector<double>& MemoryCase::reference() {
  if (reference_.empty()) {
    // The reference covers the checked rows only (every row_step_-th): the inputs of those rows of
    // the first operand (X or A), and the other operands (vectors over the columns) whole.
    int64_t checked = (rows_ + row_step_ - 1) / row_step_;
    Tensors in;
    for (int i = 0; i < output_; ++i) {
      const interp::HostTensor& h = host_[i];
      std::vector<double> v;
      if (i == 0 && h.size() == rows_ * cols_) {
        v.resize(checked * cols_);
        for (int64_t r = 0; r < checked; ++r) {
          for (int64_t j = 0; j < cols_; ++j)
            v[r * cols_ + j] = h.get_float(r * row_step_ * cols_ + j);
        }
      } else {
        v.resize(h.size());
        for (int64_t e = 0; e < h.size(); ++e) v[e] = h.get_float(e);
      }
      in.push_back(std::move(v));
    }
    reference_ = reference_for(name_, in, checked, cols_, eps_);
  }
  return reference_;
}

double MemoryCase::relative_error() {
  const std::vector<double>& ref = reference();
  const interp::HostTensor& out = host_[output_];
  // Output element of reference element e: GEMV's output has one element per row.
  int64_t per_row = out.size() == rows_ ? 1 : cols_;
  double num = 0, den = 0;
  for (int64_t e = 0; e < static_cast<int64_t>(ref.size()); ++e) {
    int64_t r = e / per_row, j = e % per_row;
    double d = out.get_float(r * row_step_ * per_row + j) - ref[e];
    num += d * d;
    den += ref[e] * ref[e];
  }
  if (std::isnan(num)) return INFINITY;
  return std::sqrt(num / std::max(den, 1e-300));
}

}  // namespace tessel::bench
