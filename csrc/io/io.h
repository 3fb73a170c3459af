// Readers of array files (safetensors, npy, GGUF). Uncompressed tensor data is not copied: the
// arrays share the file's mapped pages, which the OS reads on first touch. Every header field is
// checked against the file before use; a bad file raises OpError("load", "<path>: <what>").
#pragma once
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "io/mapped_file.h"

namespace nuvec::io {

struct Tensors {
  std::vector<std::pair<std::string, Array>> arrays;  // in file order
  std::map<std::string, std::string> metadata;        // safetensors' __metadata__
};
Tensors load_safetensors(const std::string& path);

// An .npy file, or an .npy held in bytes [offset, offset + size) of `src` (a stored npz member).
Array load_npy(const Bytes& src, size_t offset, size_t size);

// GGUF metadata values: scalars, strings, and arrays of them.
struct GgufValue;
using GgufArray = std::vector<GgufValue>;
struct GgufValue {
  std::variant<bool, int64_t, uint64_t, double, std::string, GgufArray> v;
  Dtype dtype = Dtype::int32;  // the declared element type of numbers (and of an array's items)
};
struct GgufFile {
  std::vector<std::pair<std::string, Array>> arrays;
  std::vector<std::pair<std::string, GgufValue>> metadata;
};
GgufFile load_gguf(const std::string& path);

}  // namespace nuvec::io
