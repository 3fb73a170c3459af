// Writing array files safely: into a temporary file in the target's folder that replaces the
// target only when complete, so a failed save never leaves a half-written file where a good one
// was. I/O failures throw FileError (the binding raises them as OSError).
#pragma once
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "core/array.h"

namespace nuvec::io {

struct FileError : std::system_error {
  FileError(int err, const std::string& path) : std::system_error(err, std::generic_category(), path), path(path) {}
  std::string path;
};

class OutputFile {
 public:
  explicit OutputFile(const std::string& path);  // creates the temporary
  ~OutputFile();                                 // removes it unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t n);
  void write(const std::string& s) { write(s.data(), s.size()); }
  uint64_t tell() const { return pos_; }
  void seek(uint64_t pos);
  void commit();  // renames the temporary over the target

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  uint64_t pos_ = 0;
};

// Each array row-major: itself when evaluated so, else a contiguous copy (a node to evaluate).
std::vector<Array> row_major(const std::vector<Array>& arrays);
// The same, evaluated. The writers call it; it records no node for arrays that row_major and
// eval have prepared (Python's binding does so first: recording a node needs the GIL).
std::vector<Array> evaluated_row_major(const std::vector<Array>& arrays);

// `path` with ".<suffix>" added unless it ends so (MLX's save functions add it).
std::string with_suffix(const std::string& path, const std::string& suffix);

template <class T> void put_le(std::string& out, T v) {  // little-endian, as every array format stores numbers
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

}  // namespace nuvec::io
