// Reports that passes write for a person (`tessel opt --report=KIND`): the figures behind a choice.
//
// A pass appends lines under a kind ("search" for instruction selection, "banks" for the shared-
// memory bank model); the tool prints the kinds that were asked for after the passes ran. Lines
// are collected only for enabled kinds, so passes pay nothing when nobody reads them.
#pragma once

#include <string>
#include <vector>

namespace tessel::transforms {

void enable_report(const std::string& kind);
bool report_enabled(const std::string& kind);
void report(const std::string& kind, std::string line);
// The lines of `kind` so far, removed from the report.
std::vector<std::string> take_report(const std::string& kind);
// The kinds that passes write.
const std::vector<std::string>& report_kinds();

// Registers the passes of this layer with the IR's pass registry (idempotent).
void register_passes();

}  // namespace tessel::transforms
