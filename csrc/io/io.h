// Readers and writers of array files (safetensors, npy, npz; GGUF is read only). Uncompressed
// tensor data is not copied on reading: the arrays share the file's mapped pages, which the OS
// reads on first touch. Every header field is checked against the file before use; a bad file
// raises OpError("load", "<path>: <what>"). Writers evaluate the arrays, then write through an
// OutputFile (io/output_file.h), adding the format's suffix to the path when it is missing.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "io/mapped_file.h"

namespace nuvec::io {

struct Tensors {
  std::vector<std::pair<std::string, Array>> arrays;  // in file order
  std::map<std::string, std::string> metadata;        // safetensors' __metadata__
};
Tensors load_safetensors(const Bytes& file);  // a mapped file (map_file) or bytes in memory

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

using NamedArrays = std::vector<std::pair<std::string, Array>>;

// MLX's save_gguf: float32, float16, int8, int16 and int32 tensors; metadata of strings, string
// lists and numbers (a number's dtype is its GGUF type; an array's items share one).
void save_gguf(const std::string& path, const NamedArrays& arrays,
               const std::vector<std::pair<std::string, GgufValue>>& metadata);

// NumPy's .npy header for `a` (version 1.0, data 64-byte aligned); OpError("save") for bfloat16.
std::string npy_header(const Array& a);
void save_npy(const std::string& path, const Array& a);

// A raw deflate stream for one compressed npz member. The core links no zlib: the front end
// supplies it (Python's zlib module), so the bytes are those zipfile would write.
struct Deflater {
  virtual ~Deflater() = default;
  virtual std::string compress(const uint8_t* data, size_t n) = 0;
  virtual std::string finish() = 0;
};
using DeflaterFactory = std::function<std::unique_ptr<Deflater>()>;
// Members `name.npy`, stored (and 64-byte aligned, so loads map them) or, with a deflater, deflated.
void save_npz(const std::string& path, const NamedArrays& arrays, const DeflaterFactory& deflater);

// `metadata` (string pairs, in order) becomes __metadata__ when not empty.
void save_safetensors(const std::string& path, const NamedArrays& arrays,
                      const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace nuvec::io
