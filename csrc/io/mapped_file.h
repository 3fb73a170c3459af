// Read-only views of untrusted files: a memory map shared by the arrays loaded from it, and a
// cursor that checks every read against the end of its span.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/array.h"

namespace nuvec::io {

// An error in a file: OpError("load", "<path>: <what>").
[[noreturn]] void fail(const std::string& path, const std::string& what);

bool valid_utf8(const std::string& s);
// `name` itself, after failing unless it is valid UTF-8 (names and strings become Python str).
const std::string& checked_name(const std::string& path, const std::string& name, const char* what);

// A span of bytes kept alive by `owner` (a mapping or a copy).
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<void> owner;
  std::string path;  // for errors
};

// Maps the whole file read-only (private, so nothing can write through it).
Bytes map_file(const std::string& path);
// Bytes held in memory (read from a Python file object); `name` is for errors.
Bytes bytes_in_memory(std::string data, const std::string& name);

// An array over bytes [offset, offset + nbytes) of `src` without a copy when the offset suits
// the dtype's alignment, else over an aligned copy.
Array array_over(const Bytes& src, size_t offset, const Shape& shape, Dtype dtype);

// Product of dims with overflow and sanity checks; fails naming `what`.
int64_t checked_elements(const Shape& shape, const std::string& path, const std::string& what);

class Cursor {
 public:
  Cursor(const Bytes& b, size_t pos = 0) : b_(b), pos_(pos) {}
  size_t pos() const { return pos_; }
  size_t left() const { return pos_ <= b_.size ? b_.size - pos_ : 0; }
  void need(size_t n, const char* what) const {
    if (n > left()) fail(b_.path, std::string("truncated: ") + what + " runs past the end of the file");
  }
  template <class T> T read(const char* what) {  // little-endian
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(size_t n, const char* what) {
    need(n, what);
    std::string s(reinterpret_cast<const char*>(b_.data + pos_), n);
    pos_ += n;
    return s;
  }
  void skip(size_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }

 private:
  const Bytes& b_;
  size_t pos_;
};

}  // namespace nuvec::io
