// The integers check-protocol's model computes (protocol_run.h): the kernel's values stored flat
// per role, and the evaluation of its index arithmetic — sizes, constants, sm_count, split-k's
// arrival count, find_group over a pattern of group sizes — that loop bounds, branches, slots
// and parities depend on.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"
#include "transforms/async/protocol_run.h"

namespace tessel::transforms::protocol {

// A map from the kernel's values to T, stored flat.
template <typename T>
class ValueMap {
 public:
  explicit ValueMap(const ValueIds& ids) : ids_(&ids), values_(ids.size()), set_(ids.size()) {}
  T& operator[](const ir::Value* v) {
    int i = ids_->at(v);
    TESSEL_ASSERT(i >= 0, "check-protocol: a value outside the kernel");
    set_[i] = 1;
    return values_[i];
  }
  const T* find(const ir::Value* v) const {
    int i = ids_->at(v);
    return i >= 0 && set_[i] ? &values_[i] : nullptr;
  }
  // find(v) for a value set here; else the value of its integer `const` (ValueIds::constant).
  const T* find_or_constant(const ir::Value* v) const {
    int i = ids_->at(v);
    if (i < 0) return nullptr;
    return set_[i] ? &values_[i] : ids_->constant(i);
  }
  bool count(const ir::Value* v) const { return find(v) != nullptr; }
  // The same by value id (ValueIds::at), for ops decoded once per kernel.
  T& at_id(int i) {
    set_[i] = 1;
    return values_[i];
  }
  const T* find_or_constant_id(int i) const {
    return set_[i] ? &values_[i] : ids_->constant(i);
  }
  const ValueIds& ids() const { return *ids_; }

 private:
  const ValueIds* ids_;
  std::vector<T> values_;
  std::vector<uint8_t> set_;
};
using Env = ValueMap<int64_t>;

// Evaluates the kernel's integer scalars on concrete sizes. An op the model cannot follow
// throws Scalars::Failure, which the run reports with its context (protocol_run.cpp).
class Scalars {
 public:
  struct Failure {
    const ir::Operation* op;
    std::string what;
  };
  Scalars(const ir::Operation& kernel, const std::map<std::string, int64_t>& sizes,
          int64_t sm_count)
      : kernel_(&kernel), sizes_(&sizes), sm_count_(sm_count) {}

  // What every counter_arrive returns: the last arrival (n - 1) or the first (0).
  void set_last_arrival(bool last) { last_arrival_ = last; }

  // `v` in `env`, or the value of its integer `const`; anything else fails.
  int64_t value(const Env& env, const ir::Value* v) const;
  // Evaluates `op` into `env` if it is a scalar op (sizes, constants, sm_count, counter_arrive,
  // select, integer elementwise arithmetic, find_group); false for any other op.
  bool eval(const ir::Operation& op, Env& env) const;

  // How eval treats `op` on every run (ValueIds decodes each op of the kernel with it once).
  static DecodedOp decode(const ir::Operation& op, const ValueIds& ids);
  // Evaluates an op decoded DecodedOp::arith into `env`.
  void arith(const ir::Operation& op, const DecodedOp& d, Env& env) const;

 private:
  bool find_group(const ir::Operation& op, Env& env) const;

  const ir::Operation* kernel_;
  const std::map<std::string, int64_t>* sizes_;
  int64_t sm_count_;
  bool last_arrival_ = true;
};

}  // namespace tessel::transforms::protocol
