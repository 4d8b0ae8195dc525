// The headers most test files include, precompiled once for every gtest binary (tessel_add_gtest
// reuses this PCH). gtest alone takes about 2 s of each test file's 4-6 s compile at -O1, and the
// build is half of a CI run on 2 cores. Only headers every test can see (src/, include/, the
// system): a test's own headers stay in the test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "pipeline/pipeline.h"
#include "runtime/buffer.h"
#include "runtime/compiler.h"
#include "runtime/numerics.h"
#include "support/diagnostics.h"
