// The Python tile builder: the C++ tile language (include/tessel/tile.h) bound through nanobind, as
// the submodule tessel._tessel.tile (its public face is tessel/tile.py). One implementation of the
// language and one verifier serve C++ and Python; what the binding adds is Python's conventions
// (operators on Python numbers, bodies as Python functions, `global_` for the keyword) and
// locations: every op a Python call makes is located at that call's line in the user's script
// (caller.h), so a verifier error raises tessel.CompileError pointing there.
//
// Two files: builder.cpp, the Builder class and the kernel's build (bodies, loops, branches);
// tile_values.cpp, the values a body handles (Index, Tensor, element types, the free functions);
// tile_values.h, what they share (the session, Call, the conversions from Python objects).
#pragma once

#include <nanobind/nanobind.h>

namespace tessel::python {

void register_builder(nanobind::module_& m);

}  // namespace tessel::python
