// PipelineArefs: the ring depth of every aref (slots) and the wgmma groups in flight of its consumer.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// PipelineArefs: the ring depth of every aref (slots) and the wgmma groups in flight of its consumer.
void pipeline_arefs(ir::Module& module);

}  // namespace tessel::transforms
