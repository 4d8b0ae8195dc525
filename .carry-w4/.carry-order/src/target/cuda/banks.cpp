// The shared-memory bank model.
#include "target/cuda/banks.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "support/diagnostics.h"

namespace tessel::target::cuda {

std::string BankCount::str() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%lld wavefronts (ideal %lld, %.3g-way)",
                static_cast<long long>(wavefronts), static_cast<long long>(ideal), degree());
  return buf;
}

BankCount count_wavefronts(const WarpRequest& request) {
  int w = request.bytes;
  if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
    user_error(SourceLocation::unknown(), "a shared-memory access is 1, 2, 4, 8 or 16 bytes, not ",
               w);
  if (request.address.size() > 32)
    user_error(SourceLocation::unknown(), "a warp has 32 lanes, not ", request.address.size());
  int lanes_per_phase = w <= 4 ? 32 : 32 * 4 / w;
  BankCount out;
  for (size_t phase = 0; phase * lanes_per_phase < request.address.size(); ++phase) {
    // bank -> distinct words it must deliver in this phase
    std::map<int, std::set<int64_t>> words;
    for (size_t l = phase * lanes_per_phase;
         l < std::min(request.address.size(), (phase + 1) * lanes_per_phase); ++l) {
      int64_t a = request.address[l];
      if (a < 0) continue;
      if (a % w != 0)
        user_error(SourceLocation::unknown(), "lane ", l, " accesses ", w, " bytes at address ", a,
                   ", which is not ", w, "-byte aligned");
      for (int64_t word = a / 4; word <= (a + w - 1) / 4; ++word) words[word % 32].insert(word);
    }
    size_t worst = 0;
    for (const auto& [bank, set] : words) worst = std::max(worst, set.size());
    out.wavefronts += static_cast<int64_t>(worst);
  }
  // Without conflicts each phase that has an active lane takes one wavefront (a phase never holds
  // more than 128 bytes).
  int64_t phases_used = 0;
  for (size_t phase = 0; phase * lanes_per_phase < request.address.size(); ++phase) {
    for (size_t l = phase * lanes_per_phase;
         l < std::min(request.address.size(), (phase + 1) * lanes_per_phase); ++l) {
      if (request.address[l] >= 0) {
        ++phases_used;
        break;
      }
    }
  }
  out.ideal = phases_used;
  return out;
}

}  // namespace tessel::target::cuda
