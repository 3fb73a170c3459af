#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace nuvec::io {

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || (n > 0 && i + n >= s.size())) return false;
    for (int k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n + 1;
  }
  return true;
}

void fail(const std::string& path, const std::string& what) {
  // A message quoting a corrupt file's bytes must still be text for Python.
  std::string text = what;
  if (!valid_utf8(text))
    for (char& c : text)
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
  throw OpError("load", path + ": " + text);
}

const std::string& checked_name(const std::string& path, const std::string& name, const char* what) {
  if (!valid_utf8(name)) fail(path, std::string(what) + " '" + name + "' is not valid UTF-8");
  return name;
}

Bytes map_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  Bytes b;
  b.path = path;
  b.size = size_t(st.st_size);
  if (b.size == 0) {
    ::close(fd);
    b.owner = std::make_shared<int>(0);
    static const uint8_t empty = 0;
    b.data = &empty;
    return b;
  }
  void* p = ::mmap(nullptr, b.size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) fail(path, std::string("cannot map: ") + std::strerror(errno));
  size_t n = b.size;
  b.owner = std::shared_ptr<void>(p, [n](void* q) { ::munmap(q, n); });
  b.data = static_cast<const uint8_t*>(p);
  return b;
}

Bytes bytes_in_memory(std::string data, const std::string& name) {
  auto owner = std::make_shared<std::string>(std::move(data));
  return Bytes{reinterpret_cast<const uint8_t*>(owner->data()), owner->size(), owner, name};
}

int64_t checked_elements(const Shape& shape, const std::string& path, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(path, what + " has a negative dimension");
    if (d != 0 && n > (int64_t(1) << 56) / d) fail(path, what + " has an absurd number of elements");
    n *= d;
  }
  return n;
}

Array array_over(const Bytes& src, size_t offset, const Shape& shape, Dtype dtype) {
  size_t bytes = size_t(shape_size(shape)) * size_of(dtype);
  if (offset > src.size || bytes > src.size - offset) fail(src.path, "tensor data runs past the end of the file");
  const uint8_t* p = src.data + offset;
  if (reinterpret_cast<uintptr_t>(p) % size_of(dtype) == 0) {
    std::shared_ptr<void> keep = src.owner;
    auto buf = Buffer::external(const_cast<uint8_t*>(p), bytes, [keep]() mutable { keep.reset(); });
    return Array::from_buffer(shape, dtype, std::move(buf), Array::row_strides(shape), 0);
  }
  Array a = Array::allocate(shape, dtype);  // misaligned in the file: kernels expect aligned elements
  if (bytes) std::memcpy(a.data_bytes(), p, bytes);
  return a;
}

}  // namespace nuvec::io
