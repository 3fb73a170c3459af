#include "io/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "core/eval.h"
#include "core/ops.h"

namespace nuvec::io {
namespace {
[[noreturn]] void os_error(const std::string& path) { throw FileError(errno, path); }
}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path) {
  size_t slash = path.rfind('/');
  std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string name = folder + ".nuvec-XXXXXX.tmp";
  fd_ = ::mkstemps(name.data(), 4);  // mode 0600, as Python's tempfile.mkstemp
  if (fd_ < 0) os_error(name);
  tmp_ = name;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void OutputFile::write(const void* data, size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::write(fd_, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) os_error(path_);
    p += k, n -= size_t(k), pos_ += uint64_t(k);
  }
}

void OutputFile::seek(uint64_t pos) {
  if (::lseek(fd_, off_t(pos), SEEK_SET) < 0) os_error(path_);
  pos_ = pos;
}

void OutputFile::commit() {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) os_error(path_);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) os_error(path_);
  tmp_.clear();
}

std::vector<Array> row_major(const std::vector<Array>& arrays) {
  Stream s = resolve_stream(std::nullopt);
  std::vector<Array> out;
  for (const Array& a : arrays) out.push_back(a.evaluated() && a.row_contiguous() ? a : contiguous(a, s));
  return out;
}

std::vector<Array> evaluated_row_major(const std::vector<Array>& arrays) {
  std::vector<Array> out = row_major(arrays);
  eval(out);
  return out;
}

std::string with_suffix(const std::string& path, const std::string& suffix) {
  std::string end = "." + suffix;
  bool has = path.size() >= end.size() && path.compare(path.size() - end.size(), end.size(), end) == 0;
  return has ? path : path + end;
}

}  // namespace nuvec::io
