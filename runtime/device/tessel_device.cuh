// The tessel device library: everything generated kernels include (`#include "tessel_device.cuh"`).
// Compiles under NVRTC for sm_90a with no host headers; see common.cuh for the rules.
#pragma once

#include "common.cuh"
#include "convert.cuh"
#include "mbarrier.cuh"
#include "sync.cuh"
#include "warpgroup.cuh"
#include "tma.cuh"
#include "wgmma.cuh"
#include "ldmatrix.cuh"
#include "cp_async.cuh"
#include "cluster.cuh"
