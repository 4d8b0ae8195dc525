// The translation unit that owns the tests' precompiled header (see test_pch.h).
#include "test_pch.h"
