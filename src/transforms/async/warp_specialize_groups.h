// Which aref each of a mainloop's TMA loads goes through: warp-specialize's grouping of the
// loads into tuple arefs (the rules below), split from warp_specialize.cpp. Internal to
// src/transforms/async.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace tessel::transforms {

// The aref group of each of `loads` (the TMA copies of `loop`'s body, in body order), numbered
// from 0 in order of first appearance. Tiles consumed by the same mmas share one tuple aref (one
// barrier pair; they are released together). When the loop reads an mma's result in its own
// iteration (attention), loads consumed by different mmas get arefs of their own: their slots
// are released at different times (K once S = Q Kᵀ retired, V once P V did), which
// pipeline-arefs and coarse-pipeline exploit; one tuple would hold K's slot until P V is done.
// When an RS wgmma takes A from registers the body computes from some of the loads (W4A16:
// weights and scales dequantized), the tiles it reads from shared memory (its B) go through an
// aref of their own and the others through another: coarse-pipeline then computes A of the
// next iteration (its aref waited for and released) while the wgmma still reads this
// iteration's B slot. The RS rule holds too where the body reads the mmas' results in the
// iteration but every mma takes A computed from loads alone (W4A16 with each scale group's
// scale applied after its wgmma): no mma waits for another, so the B tiles of all of them share
// one aref (one barrier pair) instead of one aref each.
std::vector<size_t> group_loads(const ir::Operation& loop,
                                const std::vector<ir::Operation*>& loads);

}  // namespace tessel::transforms
