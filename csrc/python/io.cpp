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

// A file's bytes: a path (mapped) or bytes read from a Python file object (`name` for errors).
io::Bytes source(nb::handle file, const std::string& name) {
  if (nb::isinstance<nb::bytes>(file)) {
    auto b = nb::borrow<nb::bytes>(file);
    return io::bytes_in_memory(std::string(b.c_str(), b.size()), name);
  }
  std::string path = nb::cast<std::string>(file);
  nb::gil_scoped_release release;
  return io::map_file(path);
}

// Element i of an evaluated row-major array as a GGUF number of the array's dtype.
io::GgufValue gguf_number(const Array& a, int64_t i) {
  io::GgufValue v;
  v.dtype = a.dtype();
  switch (a.dtype()) {
    case Dtype::bool_: v.v = a.data<bool>()[i]; break;
    case Dtype::uint8: v.v = int64_t(a.data<uint8_t>()[i]); break;
    case Dtype::uint16: v.v = int64_t(a.data<uint16_t>()[i]); break;
    case Dtype::uint32: v.v = int64_t(a.data<uint32_t>()[i]); break;
    case Dtype::uint64: v.v = a.data<uint64_t>()[i]; break;
    case Dtype::int8: v.v = int64_t(a.data<int8_t>()[i]); break;
    case Dtype::int16: v.v = int64_t(a.data<int16_t>()[i]); break;
    case Dtype::int32: v.v = int64_t(a.data<int32_t>()[i]); break;
    case Dtype::int64: v.v = a.data<int64_t>()[i]; break;
    case Dtype::float32: v.v = double(a.data<float>()[i]); break;
    case Dtype::float16:
    case Dtype::bfloat16:
    case Dtype::float64:
    case Dtype::complex64:
      throw OpError("save_gguf", std::string("metadata cannot hold ") + name_of(a.dtype()) + " values (MLX's rule)");
  }
  return v;
}

// A save_gguf metadata value: a string, a list of strings, or a 0-d or 1-d array of numbers.
io::GgufValue gguf_metadata(const std::string& key, nb::handle value) {
  io::GgufValue v;
  if (nb::isinstance<nb::str>(value)) {
    v.v = nb::cast<std::string>(value);
    return v;
  }
  if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
    io::GgufArray items;
    for (nb::handle x : nb::borrow<nb::sequence>(value)) {
      if (!nb::isinstance<nb::str>(x))
        throw OpError("save_gguf", "metadata '" + key + "': a list must hold only strings");
      items.push_back(io::GgufValue{nb::cast<std::string>(x)});
    }
    v.v = std::move(items);
    return v;
  }
  if (!nb::isinstance<Array>(value))
    throw OpError("save_gguf", "metadata '" + key + "' must be an array, a string or a list of strings, not " +
                                   nb::cast<std::string>(nb::type_name(value.type())));
  Array a = io::row_major({nb::cast<Array>(value)})[0];
  if (a.ndim() > 1) throw OpError("save_gguf", "metadata '" + key + "' has more than one dimension");
  if (a.size() == 0) throw OpError("save_gguf", "metadata '" + key + "' is an empty array");
  eval_now({a});
  if (a.ndim() == 0) return gguf_number(a, 0);
  io::GgufArray items;
  for (int64_t i = 0; i < a.size(); ++i) items.push_back(gguf_number(a, i));
  v.v = std::move(items);
  v.dtype = a.dtype();
  return v;
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
      [](nb::handle file) {
        io::Bytes b = source(file, "<file object>");
        io::Tensors t;
        {
          nb::gil_scoped_release release;
          t = io::load_safetensors(b);
        }
        nb::dict meta;
        for (const auto& [k, v] : t.metadata) meta[k.c_str()] = v;
        return nb::make_tuple(arrays_dict(t.arrays), meta);
      },
      nb::arg("file"), "(arrays, metadata) of a safetensors file (a path, mapped: the arrays share it) or of bytes.");
  m.def(
      "_load_npy",
      [](nb::handle file, int64_t offset, int64_t size, const std::string& name) {
        io::Bytes b = source(file, name);
        nb::gil_scoped_release release;
        if (offset < 0 || size < -1) io::fail(b.path, "negative offset or size");
        size_t n = size < 0 ? b.size - std::min(b.size, size_t(offset)) : size_t(size);
        return io::load_npy(b, size_t(offset), n);
      },
      nb::arg("file"), nb::arg("offset") = 0, nb::arg("size") = -1, nb::arg("name") = "<file object>",
      "The .npy at bytes [offset, offset + size) of a file (a path, mapped) or of bytes (`name` for errors).");
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
      nb::arg("path"),
      "(arrays, metadata) of a GGUF file, with Q4_0/Q4_1/Q8_0 as MLX's quantized triples and the K-quants "
      "dequantized to float16.");
  m.def(
      "_save_gguf",
      [](const std::string& path, nb::handle items, nb::handle metadata) {
        std::vector<std::pair<std::string, io::GgufValue>> meta;
        for (nb::handle item : nb::borrow<nb::sequence>(metadata)) {
          auto pair = nb::borrow<nb::sequence>(item);
          std::string key = nb::cast<std::string>(pair[0]);
          meta.emplace_back(key, gguf_metadata(key, pair[1]));
        }
        io::NamedArrays arrays = prepared(named_arrays(items));
        writing([&] { io::save_gguf(path, arrays, meta); });
      },
      nb::arg("path"), nb::arg("items"), nb::arg("metadata"),
      "Writes (name, array) pairs as GGUF with (key, value) metadata, as MLX's save_gguf.");
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
