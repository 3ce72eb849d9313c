// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON header, then the raw tensor data. The header maps each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the start of the
// data section) and may hold a "__metadata__" object of string -> string.
#pragma once

#include <map>
#include <string>

#include "core/tensor.h"

namespace transduce::io {

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;  // owned, contiguous CPU tensors
  std::map<std::string, std::string> metadata;
};

// Writes atomically (see io/atomic_file.h). Tensors must be defined, contiguous, on the CPU, and
// none may be named "__metadata__". The data is laid out in name order with no gaps; the header
// is compact JSON with sorted keys, padded with spaces to a multiple of 8 bytes, and
// "__metadata__" is omitted when `metadata` is empty, so the same content always gives the same
// bytes. Throws transduce::Error naming `path` on failure.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads and validates the whole file (no mmap). A malformed file is refused with a
// transduce::Error of one line naming `path` and what is wrong.
SafetensorsFile load_safetensors(const std::string& path);

}  // namespace transduce::io
