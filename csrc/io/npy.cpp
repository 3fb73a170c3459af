// NumPy's .npy: a magic string, a version, a header length, a Python-literal dict header
// ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) padded with spaces, then the data.
// Fortran-ordered files load as a transposed view of the data, still without a copy; big-endian
// data ('>f4') is byte-swapped into a copy.
#include <cctype>

#include "io/io.h"
#include "io/output_file.h"

namespace nuvec::io {
namespace {

constexpr size_t kMaxHeader = size_t(1) << 20;

// The value text after 'key': in the header dict.
std::string field(const std::string& h, const std::string& key, const std::string& path) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) fail(path, "npy header has no '" + key + "'");
  size_t colon = h.find(':', k);
  if (colon == std::string::npos) fail(path, "npy header is malformed near '" + key + "'");
  size_t p = colon + 1;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p >= h.size()) fail(path, "npy header is malformed near '" + key + "'");
  char open = h[p];
  char close = open == '(' ? ')' : open == '\'' ? '\'' : 0;
  size_t end = close ? h.find(close, p + 1) : h.find_first_of(",}", p);
  if (end == std::string::npos) fail(path, "npy header is malformed near '" + key + "'");
  return h.substr(p, end - p + (close ? 1 : 0));
}

// The dtype, and whether the data is big-endian (with more than one byte per element).
std::pair<Dtype, bool> descr_dtype(const std::string& d, const std::string& path) {
  if (d.size() < 5 || d.front() != '\'' || d.back() != '\'') fail(path, "npy descr " + d + " is not a simple dtype");
  std::string s = d.substr(1, d.size() - 2);
  char order = s[0];
  std::string t = s.substr(1);
  std::optional<Dtype> dt = from_npy_code(t);
  if (dt && (order == '<' || order == '|' || order == '=' || order == '>'))
    return {*dt, order == '>' && size_of(*dt) > 1};
  fail(path, "unknown npy dtype '" + s + "'");
}

Shape parse_shape(const std::string& t, const std::string& path) {
  if (t.size() < 2 || t.front() != '(' || t.back() != ')') fail(path, "npy shape " + t + " is not a tuple");
  Shape shape;
  size_t p = 1;
  while (p < t.size() - 1) {
    while (p < t.size() - 1 && (t[p] == ' ' || t[p] == ',')) ++p;
    if (p >= t.size() - 1) break;
    if (!std::isdigit((unsigned char)t[p])) fail(path, "npy shape " + t + " has a non-integer entry");
    size_t q = p;
    while (q < t.size() - 1 && std::isdigit((unsigned char)t[q])) ++q;
    if (q - p > 15) fail(path, "npy shape " + t + " has an absurd dimension");
    shape.push_back(std::stoll(t.substr(p, q - p)));
    p = q;
  }
  return shape;
}

// A little-endian copy of big-endian data (a complex number swaps each of its two parts).
Array swapped(const Bytes& src, size_t offset, const Shape& shape, Dtype dtype) {
  Array a = Array::allocate(shape, dtype);
  size_t word = is_complex(dtype) ? size_of(dtype) / 2 : size_of(dtype);
  const uint8_t* in = src.data + offset;
  auto* out = reinterpret_cast<uint8_t*>(a.data_bytes());
  for (size_t i = 0, n = a.nbytes(); i < n; i += word)
    for (size_t k = 0; k < word; ++k) out[i + k] = in[i + word - 1 - k];
  return a;
}

}  // namespace

Array load_npy(const Bytes& src, size_t offset, size_t size) {
  const std::string& path = src.path;
  if (offset > src.size || size > src.size - offset) fail(path, "npy member lies outside the file");
  Bytes window = src;
  window.data = src.data + offset;
  window.size = size;
  Cursor c(window);
  if (c.read_string(6, "the npy magic") != "\x93NUMPY") fail(path, "not an npy file (wrong magic number)");
  uint8_t major = c.read<uint8_t>("the npy version");
  c.read<uint8_t>("the npy version");
  size_t n;
  if (major == 1)
    n = c.read<uint16_t>("the npy header length");
  else if (major == 2 || major == 3)
    n = c.read<uint32_t>("the npy header length");
  else
    fail(path, "unknown npy version " + std::to_string(major));
  if (n > kMaxHeader) fail(path, "npy header length " + std::to_string(n) + " is absurd");
  std::string h = c.read_string(n, "the npy header");
  auto [dtype, big_endian] = descr_dtype(field(h, "descr", path), path);
  std::string fortran = field(h, "fortran_order", path);
  if (fortran != "False" && fortran != "True") fail(path, "npy fortran_order is neither True nor False");
  Shape shape = parse_shape(field(h, "shape", path), path);
  checked_elements(shape, path, "the npy array");
  size_t need = size_t(shape_size(shape)) * size_of(dtype);
  if (need > c.left())
    fail(path,
         "truncated: the npy data needs " + std::to_string(need) + " bytes, the file has " + std::to_string(c.left()));
  auto read = [&](const Shape& s) {
    return big_endian ? swapped(src, offset + c.pos(), s, dtype) : array_over(src, offset + c.pos(), s, dtype);
  };
  if (fortran == "False") return read(shape);
  // Column-major: the reversed shape in row-major order, viewed back through a transpose.
  Array a = read(Shape(shape.rbegin(), shape.rend()));
  Strides st(a.strides().rbegin(), a.strides().rend());
  return Array::from_buffer(shape, dtype, a.buffer(), st, a.offset());
}

std::string npy_header(const Array& a) {
  const char* code = npy_code(a.dtype());
  if (!code) throw OpError("save", "the .npy format has no bfloat16 (NumPy lacks it); use save_safetensors");
  std::string shape;
  for (int64_t d : a.shape()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  std::string text = std::string("{'descr': '") + (a.itemsize() == 1 ? "|" : "<") + code +
                     "', 'fortran_order': False, 'shape': (" + shape + (a.ndim() == 1 ? ",)" : ")") + ", }";
  text.append((64 - (text.size() + 1 + 10) % 64) % 64, ' ');  // NumPy's layout: data 64-byte aligned
  text += '\n';
  std::string h("\x93NUMPY\x01\x00", 8);
  put_le<uint16_t>(h, uint16_t(text.size()));
  return h + text;
}

void save_npy(const std::string& path, const Array& a) {
  std::string header = npy_header(a);  // checks the dtype before anything is written
  Array data = evaluated_row_major({a})[0];
  OutputFile f(with_suffix(path, "npy"));
  f.write(header);
  if (data.nbytes()) f.write(data.data_bytes(), data.nbytes());
  f.commit();
}

}  // namespace nuvec::io
