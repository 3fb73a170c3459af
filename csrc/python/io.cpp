// File readers and writers for python/nuvec/io.py (which holds the public load and save
// functions and their argument handling).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cerrno>
#include <vector>

#include "io/io.h"
#include "io/output_file.h"
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
  if (auto* b = std::get_if<bool>(&v.v))
    scalar = nb::bool_(*b);
  else if (auto* i = std::get_if<int64_t>(&v.v))
    scalar = nb::int_(*i);
  else if (auto* u = std::get_if<uint64_t>(&v.v))
    scalar = nb::int_(*u);
  else
    scalar = nb::float_(std::get<double>(v.v));
  return nb::cast(to_array(scalar, v.dtype));
}

// (name, value) pairs, the values as arrays.
io::NamedArrays named_arrays(nb::handle items) {
  io::NamedArrays out;
  for (nb::handle item : nb::borrow<nb::sequence>(items)) {
    auto pair = nb::borrow<nb::sequence>(item);
    out.emplace_back(nb::cast<std::string>(pair[0]), arg(pair[1]));
  }
  return out;
}

// The arrays row-major and evaluated, so that the writer, run without the GIL, records no node.
io::NamedArrays prepared(io::NamedArrays arrays) {
  std::vector<Array> values;
  for (const auto& [k, a] : arrays) values.push_back(a);
  values = io::row_major(values);
  eval_now(values);
  for (size_t i = 0; i < values.size(); ++i) arrays[i].second = values[i];
  return arrays;
}

// Runs a writer without the GIL; a failed file operation raises OSError (FileNotFoundError,
// PermissionError, ...) as Python's own I/O does.
template <class F> void writing(F&& write) {
  try {
    nb::gil_scoped_release release;
    write();
  } catch (const io::FileError& e) {
    errno = e.code().value();
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, e.path.c_str());
    throw nb::python_error();
  }
}

// Python's zlib, set up as zipfile's ZIP_DEFLATED compressor (so the bytes are zipfile's).
class ZlibDeflater : public io::Deflater {
 public:
  ZlibDeflater() {
    nb::gil_scoped_acquire gil;
    obj_ = nb::module_::import_("zlib").attr("compressobj")(-1, 8, -15);
  }
  ~ZlibDeflater() override {
    nb::gil_scoped_acquire gil;
    obj_.reset();
  }
  std::string compress(const uint8_t* data, size_t n) override {
    nb::gil_scoped_acquire gil;
    auto view = nb::steal(
        PyMemoryView_FromMemory(reinterpret_cast<char*>(const_cast<uint8_t*>(data)), Py_ssize_t(n), PyBUF_READ));
    if (!view.is_valid()) throw nb::python_error();
    return bytes_of(obj_.attr("compress")(view));
  }
  std::string finish() override {
    nb::gil_scoped_acquire gil;
    return bytes_of(obj_.attr("flush")());
  }

 private:
  static std::string bytes_of(nb::handle b) {
    auto bytes = nb::borrow<nb::bytes>(b);
    return std::string(bytes.c_str(), bytes.size());
  }
  nb::object obj_;
};

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
  m.def(
      "_save_npy",
      [](const std::string& path, nb::handle a) {
        Array x = io::row_major({arg(a)})[0];
        eval_now({x});
        writing([&] { io::save_npy(path, x); });
      },
      nb::arg("path"), nb::arg("a"), "Writes one array as .npy (adding the suffix when missing).");
  m.def(
      "_save_npz",
      [](const std::string& path, nb::handle items, bool compressed) {
        io::NamedArrays arrays = prepared(named_arrays(items));
        io::DeflaterFactory deflater;
        if (compressed) deflater = [] { return std::make_unique<ZlibDeflater>(); };
        writing([&] { io::save_npz(path, arrays, deflater); });
      },
      nb::arg("path"), nb::arg("items"), nb::arg("compressed"),
      "Writes (name, array) pairs as an .npz, stored (64-byte aligned) or deflated.");
  m.def(
      "_save_safetensors",
      [](const std::string& path, nb::handle items, const std::vector<std::pair<std::string, std::string>>& metadata) {
        io::NamedArrays arrays = prepared(named_arrays(items));
        writing([&] { io::save_safetensors(path, arrays, metadata); });
      },
      nb::arg("path"), nb::arg("items"), nb::arg("metadata"),
      "Writes (name, array) pairs as .safetensors with (key, value) string metadata.");
}

}  // namespace nuvec::python
