// Checkpoint averaging (section 6.1: the base models average the last 5 checkpoints, the big ones
// the last 20).
#pragma once

#include <string>
#include <vector>

namespace transduce {

// Writes to `out_path` (atomically, as safetensors with the config as "config" and the averaged
// checkpoint dirs as "averaged_from" in the metadata) the element-wise mean of the weights of the
// given checkpoint dirs, accumulated in double. They must share one config and one set of tensors.
void average_checkpoints(const std::vector<std::string>& checkpoint_dirs,
                         const std::string& out_path);

}  // namespace transduce
