// The phase model of one mbarrier.
#include "ir/barrier_model.h"

namespace tessel::ir {

BarrierModel::Status BarrierModel::arrive(int64_t count, int64_t expect_bytes) {
  if (count > pending_) return Status::too_many_arrivals;
  pending_ -= count;
  bytes_ += expect_bytes;
  complete_if_done();
  return Status::ok;
}

BarrierModel::Status BarrierModel::complete_bytes(int64_t bytes) {
  // Early bytes (before the expect_tx that announces them) are fine while an arrival is pending;
  // once none is, the phase could only be waiting for bytes, and more than it expects is a bug.
  if (pending_ == 0 && bytes > bytes_) return Status::too_many_bytes;
  bytes_ -= bytes;
  complete_if_done();
  return Status::ok;
}

void BarrierModel::complete_if_done() {
  if (pending_ != 0 || bytes_ != 0) return;
  ++phase_;
  pending_ = arrivals_;
}

std::string BarrierModel::describe() const {
  return "phase " + std::to_string(phase_) + " (parity " + std::to_string(phase_ & 1) +
         "): " + std::to_string(pending_) + " of " + std::to_string(arrivals_) +
         " arrival(s) pending, " + std::to_string(bytes_) + " byte(s) pending";
}

}  // namespace tessel::ir
