// The event IR's text form read back (the inverse of events::Program::print), so that the task
// compiler's stages run from a file (`tessel opt` on event IR) and have textual tests.
//
// The text names leaf variants (`call mma_leaf(...)`) whose bodies are C++ (the task program's
// recorded leaf ops), so a parse needs the task program the text was printed from: the header
// `tasks @NAME[sizes](...)` names it, and `program_of(NAME)` supplies it (the tool looks it up
// among the compiled-in task programs of examples/tasks/). Everything else the stages read is in
// the text: the kernel's arguments and sizes (in the order the lowered kernel takes them), the
// tensor table (allocations in their memories, pieces as chains of `.blocks(...)[...]`), events
// with their shapes and `after` sets, lanes, loop extents and the mapping's pins (pipeline,
// warp_specialize, shared_limit). A piece spelled the same way twice is one piece.
//
// Round trip: parse(print(p)).print() == print(p) for every program the stages make. Locations:
// every op and tensor is located at its line:column in the text (errors of later stages point
// there; the mapping's items are no longer known). Every malformed input is a UserError at its
// line:column: unknown words, a tensor used before it is made or made twice, an event referenced
// before its op, a `yield` that is not the body's last event, a leaf the program does not have.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "frontend/task/event_ir.h"

namespace tessel::task::events {

Program parse_program(std::string_view text, const std::string& file,
                      const std::function<const TaskProgram*(const std::string&)>& program_of);

}  // namespace tessel::task::events
