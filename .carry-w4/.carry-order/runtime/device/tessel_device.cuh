// The tessel device library: everything generated kernels include (`#include "tessel_device.cuh"`).
// Compiles under NVRTC for sm_90a with no host headers; see common.cuh for the rules.
#pragma once

#include "cluster.cuh"
#include "common.cuh"
#include "convert.cuh"
#include "cp_async.cuh"
#include "ldmatrix.cuh"
#include "mbarrier.cuh"
#include "mma_sync.cuh"
#include "sync.cuh"
#include "tma.cuh"
#include "warpgroup.cuh"
#include "wgmma.cuh"
