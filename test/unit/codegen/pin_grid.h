// Pins on an example's block_grid, as the tests write them: `pin_block_grid(text, "split_k = 3")`
// turns the first `block_grid %a, %b : ...` of a tile program's text into
// `block_grid %a, %b {split_k = 3} : ...`. Shared by the codegen and GPU tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace tessel::testing {

inline std::string pin_block_grid(std::string text, const std::string& pins) {
  const size_t grid = text.find("= block_grid ");
  const size_t colon = grid == std::string::npos ? grid : text.find(" :", grid);
  const size_t line_end = grid == std::string::npos ? grid : text.find('\n', grid);
  if (colon == std::string::npos || colon > line_end || text[colon - 1] == '}') {
    ADD_FAILURE() << "no block_grid without attributes to pin {" << pins << "} on";
    return text;
  }
  text.insert(colon, " {" + pins + "}");
  return text;
}

}  // namespace tessel::testing
