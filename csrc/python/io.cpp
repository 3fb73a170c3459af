// File readers for python/nuvec/io.py (which holds the public load and save functions).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <vector>

#include "io/io.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

nb::dict arrays_dict(const std::vector<std::pair<std::string, Array>>& arrays) {
  nb::dict d;
  for (const auto& [k, a] : arrays) d[nb::str(k.c_str(), k.size())] = nb::cast(a);
  return d;
}

// GGUF metadata as MLX gives it: strings and lists of strings as Python, numbers as arrays.
nb::object gguf_value(const io::GgufValue& v) {
  if (auto* s = std::get_if<std::string>(&v.v)) return nb::str(s->c_str(), s->size());
  if (auto* items = std::get_if<io::GgufArray>(&v.v)) {
    nb::list out;
    for (const auto& x : *items) out.append(gguf_value(x));
    if (!items->empty() && !std::holds_alternative<std::string>(items->front().v))
      return nb::cast(to_array(out, v.dtype));
    return out;
  }
  nb::object scalar;
  if (auto* b = std::get_if<bool>(&v.v)) scalar = nb::bool_(*b);
  else if (auto* i = std::get_if<int64_t>(&v.v)) scalar = nb::int_(*i);
  else if (auto* u = std::get_if<uint64_t>(&v.v)) scalar = nb::int_(*u);
  else scalar = nb::float_(std::get<double>(v.v));
  return nb::cast(to_array(scalar, v.dtype));
}

}  // namespace

void init_io(nb::module_& m) {
  m.def(
      "_load_safetensors",
      [](const std::string& path) {
        io::Tensors t;
        {
          nb::gil_scoped_release release;
          t = io::load_safetensors(path);
        }
        nb::dict meta;
        for (const auto& [k, v] : t.metadata) meta[k.c_str()] = v;
        return nb::make_tuple(arrays_dict(t.arrays), meta);
      },
      nb::arg("path"), "(arrays, metadata) of a safetensors file; the arrays share the mapped file.");
  m.def(
      "_load_npy",
      [](const std::string& path, int64_t offset, int64_t size) {
        nb::gil_scoped_release release;
        io::Bytes b = io::map_file(path);
        if (offset < 0 || size < -1) io::fail(path, "negative offset or size");
        size_t n = size < 0 ? b.size - std::min(b.size, size_t(offset)) : size_t(size);
        return io::load_npy(b, size_t(offset), n);
      },
      nb::arg("path"), nb::arg("offset") = 0, nb::arg("size") = -1,
      "The .npy at bytes [offset, offset + size) of a file (the whole file by default), mapped.");
  m.def(
      "_load_npy_bytes",
      [](nb::bytes data, const std::string& name) {
        auto copy = std::make_shared<std::vector<uint8_t>>((const uint8_t*)data.c_str(),
                                                           (const uint8_t*)data.c_str() + data.size());
        io::Bytes b{copy->data(), copy->size(), copy, name};
        nb::gil_scoped_release release;
        return io::load_npy(b, 0, b.size);
      },
      nb::arg("data"), nb::arg("name"), "An .npy held in memory (a compressed npz member); `name` is for errors.");
  m.def(
      "_load_gguf",
      [](const std::string& path) {
        io::GgufFile f;
        {
          nb::gil_scoped_release release;
          f = io::load_gguf(path);
        }
        nb::dict meta;
        for (const auto& [k, v] : f.metadata) meta[k.c_str()] = gguf_value(v);
        return nb::make_tuple(arrays_dict(f.arrays), meta);
      },
      nb::arg("path"), "(arrays, metadata) of a GGUF file, with Q4_0/Q4_1/Q8_0 as MLX's quantized triples.");
}

}  // namespace nuvec::python
