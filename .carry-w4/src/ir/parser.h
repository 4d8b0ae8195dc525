// Parses the tile IR's text (the form ir/printer.h writes) into a module.
//
// Syntax errors and uses of undefined values are UserErrors at `file:line:column`, their message
// followed by the offending line and a caret under the column (source_excerpt); every op keeps
// the line:column where its text starts, so that the verifier reports there too. `//` starts a
// comment that runs to the end of the line (lit tests keep their RUN and CHECK lines in comments).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/ir.h"

namespace tessel::ir {

std::unique_ptr<Module> parse_module(std::string_view text,
                                     const std::string& file_name = "<text>");

// Parses a type such as `register<f32>[128,64]`; throws UserError on bad text.
Type parse_type(std::string_view text);

}  // namespace tessel::ir
