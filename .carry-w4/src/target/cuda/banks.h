// The shared-memory bank model: how many wavefronts one warp-wide shared-memory instruction takes.
//
// Shared memory has 32 banks of 4 bytes; byte address a lies in bank (a / 4) % 32. One wavefront
// serves at most one distinct 4-byte word per bank (threads reading the same word share it: a
// broadcast). A warp's request is split into phases that are served one after another: accesses
// of up to 4 bytes per thread are one phase of 32 lanes; 8-byte accesses two phases of 16 lanes;
// 16-byte accesses (and ldmatrix/stmatrix, whose lanes give 16-byte rows) four phases of 8 lanes.
// A phase costs as many wavefronts as the most distinct words any one bank must deliver, so a
// conflict-free request of B bytes takes ceil(B / 128) wavefronts. The *conflict degree* of a
// request is wavefronts / ideal wavefronts (1 = conflict-free, 8 = an 8-way conflict).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::target::cuda {

// One warp-wide shared-memory instruction: the byte address of each of the 32 lanes (-1 for a lane
// that gives no address) and the bytes every active lane accesses (1, 2, 4, 8 or 16).
struct WarpRequest {
  std::vector<int64_t> address;
  int bytes = 4;
};

struct BankCount {
  int64_t wavefronts = 0;  // what the request costs
  int64_t ideal = 0;       // what it would cost without conflicts
  double degree() const { return ideal == 0 ? 1.0 : double(wavefronts) / double(ideal); }
  BankCount& operator+=(const BankCount& o) {
    wavefronts += o.wavefronts;
    ideal += o.ideal;
    return *this;
  }
  std::string str() const;  // "8 wavefronts (ideal 1, 8-way)"
};

// Wavefronts of one request (UserError for a width other than 1, 2, 4, 8, 16, an unaligned
// address, or more than 32 lanes).
BankCount count_wavefronts(const WarpRequest& request);

}  // namespace tessel::target::cuda
