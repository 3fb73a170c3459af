#include "python/dlpack.h"

#include <cstring>
#include <string>

#include "core/ops.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

DLDataType dl_type(Dtype d) {
  uint8_t bits = uint8_t(size_of(d) * 8);
  switch (kind_of(d)) {
    case Kind::boolean: return {6, 8, 1};
    case Kind::unsigned_int: return {1, bits, 1};
    case Kind::signed_int: return {0, bits, 1};
    case Kind::complex: return {5, bits, 1};
    case Kind::floating: return {uint8_t(d == Dtype::bfloat16 ? 4 : 2), bits, 1};
  }
  return {2, bits, 1};
}

constexpr DLDataType kComplex128{5, 128, 1};

Dtype from_dl_type(DLDataType t) {
  if (t.lanes != 1) throw OpError("from_dlpack", "vector lanes are not supported");
  auto pick = [&](std::initializer_list<std::pair<int, Dtype>> table) {
    for (auto& [bits, d] : table)
      if (bits == t.bits) return d;
    throw OpError("from_dlpack", "unsupported DLPack type code " + std::to_string(t.code) + " with " +
                                     std::to_string(t.bits) + " bits");
  };
  switch (t.code) {
    case 0: return pick({{8, Dtype::int8}, {16, Dtype::int16}, {32, Dtype::int32}, {64, Dtype::int64}});
    case 1: return pick({{8, Dtype::uint8}, {16, Dtype::uint16}, {32, Dtype::uint32}, {64, Dtype::uint64}});
    case 2: return pick({{16, Dtype::float16}, {32, Dtype::float32}, {64, Dtype::float64}});
    case 4: return pick({{16, Dtype::bfloat16}});
    case 5: return pick({{64, Dtype::complex64}, {128, Dtype::float64}});  // complex128: float64 pairs
    case 6: return pick({{8, Dtype::bool_}});
  }
  throw OpError("from_dlpack", "unsupported DLPack type code " + std::to_string(t.code));
}

struct Export {
  Array array;
  std::vector<int64_t> shape, strides;
  DLManagedTensor tensor;
};

void delete_export(DLManagedTensor* t) { delete static_cast<Export*>(t->manager_ctx); }

void capsule_destructor(PyObject* capsule) {
  // Only a capsule nobody consumed still owns its tensor.
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (t && t->deleter) t->deleter(t);
  }
}

// A row-major copy in memory of its own (contiguous() hands back a row-major input's own buffer).
Array owned_copy(const Array& a) {
  Array c = contiguous(a, default_stream(default_device()));
  eval_now({c});
  if (c.buffer() != a.buffer()) return c;
  Array out = Array::allocate(a.shape(), a.dtype());
  std::memcpy(out.data_bytes(), c.data_bytes(), c.nbytes());
  return out;
}

// Copies borrowed memory (a copy node copies what it does not own) into `dtype`.
Array copy_into(const Array& a, Dtype dtype) {
  Array out = Array::lazy(a.shape(), dtype, std::make_shared<Unary>(UnaryOp::copy, a.dtype(), dtype), {a},
                          default_stream(default_device()));
  eval_now({out});
  return out;
}

// The array over a DLTensor's memory; `release` runs when the last array over it goes.
Array wrap(const DLTensor& d, std::function<void()> release) {
  if (d.device.device_type != 1 && d.device.device_type != 3)  // CPU or CUDA-host memory
    throw OpError("from_dlpack",
                  "only CPU memory can be imported (device type " + std::to_string(d.device.device_type) + ")");
  bool complex128 = std::memcmp(&d.dtype, &kComplex128, sizeof(DLDataType)) == 0;
  Dtype dtype = from_dl_type(d.dtype);
  Shape shape(d.shape, d.shape + d.ndim);
  Strides strides = d.strides ? Strides(d.strides, d.strides + d.ndim) : Array::row_strides(shape);
  if (complex128) {  // float64 (real, imaginary) pairs on a last axis
    for (int64_t& s : strides) s *= 2;
    shape.push_back(2);
    strides.push_back(1);
  }
  size_t item = size_of(dtype);
  if (d.byte_offset % item != 0) throw OpError("from_dlpack", "byte offset is not a multiple of the item size");
  // Extent in bytes, for the buffer's size.
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 0) (strides[i] < 0 ? lo : hi) += (shape[i] - 1) * strides[i];
  char* base = static_cast<char*>(d.data) + d.byte_offset + lo * int64_t(item);
  size_t bytes = size_t(hi - lo + 1) * item;
  auto buffer = Buffer::external(base, bytes, [release = std::move(release)] {
    PyGILState_STATE st = PyGILState_Ensure();  // producers' deleters may touch Python objects
    release();
    PyGILState_Release(st);
  });
  return Array::from_buffer(std::move(shape), dtype, std::move(buffer), std::move(strides), -lo);
}

// complex128 (as float64 pairs) narrowed to complex64, as MLX and NumPy's conversions do.
Array narrow_complex128(const Array& pairs) {
  Stream s = default_stream(default_device());
  Array singles = owned_copy(astype(pairs, Dtype::float32, s));
  Shape shape(pairs.shape().begin(), pairs.shape().end() - 1);
  Array out = reshape(view(singles, Dtype::complex64, s), shape, s);
  eval_now({out});
  return out;
}

// The capsule's tensor as an array (the capsule is consumed), and whether it shares read-only memory
// or needs converting (complex128).
struct Imported {
  Array array;
  bool read_only = false, complex128 = false;
};

Imported consume(nb::handle capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, "dltensor_versioned")) {
    auto* t = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
    if (t->version.major > 1)
      throw OpError("from_dlpack", "DLPack version " + std::to_string(t->version.major) + " is not supported");
    bool c128 = std::memcmp(&t->dl_tensor.dtype, &kComplex128, sizeof(DLDataType)) == 0;
    Array a = wrap(t->dl_tensor, [t] {
      if (t->deleter) t->deleter(t);
    });
    PyCapsule_SetName(c, "used_dltensor_versioned");
    return {a, (t->flags & 1) != 0, c128};
  }
  if (PyCapsule_IsValid(c, "dltensor")) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
    bool c128 = std::memcmp(&t->dl_tensor.dtype, &kComplex128, sizeof(DLDataType)) == 0;
    Array a = wrap(t->dl_tensor, [t] {
      if (t->deleter) t->deleter(t);
    });
    PyCapsule_SetName(c, "used_dltensor");
    return {a, false, c128};
  }
  throw OpError("from_dlpack", "expected an unconsumed DLPack capsule");
}

// obj.__dlpack__(max_version=(1, 0)), or the legacy call for producers without that keyword.
nb::object capsule_of(nb::handle obj) {
  nb::object method = obj.attr("__dlpack__");
  PyObject* kwargs = Py_BuildValue("{s:(ii)}", "max_version", 1, 0);
  PyObject* empty = PyTuple_New(0);
  PyObject* r = PyObject_Call(method.ptr(), empty, kwargs);
  Py_DECREF(empty);
  Py_DECREF(kwargs);
  if (r) return nb::steal(r);
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw nb::python_error();
  PyErr_Clear();
  return method();
}

}  // namespace

nb::object to_dlpack(const Array& a, bool copy) {
  eval_now({a});
  Array src = copy ? owned_copy(a) : a;
  auto* e = new Export{src, src.shape(), src.strides(), {}};
  DLTensor& t = e->tensor.dl_tensor;
  t.data = src.buffer()->data();
  t.byte_offset = uint64_t(src.offset()) * src.itemsize();
  t.device = {1, 0};
  t.ndim = src.ndim();
  t.dtype = dl_type(src.dtype());
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  e->tensor.manager_ctx = e;
  e->tensor.deleter = &delete_export;
  return nb::steal(PyCapsule_New(&e->tensor, "dltensor", &capsule_destructor));
}

std::optional<Array> import_dlpack(nb::handle obj, std::optional<bool> copy) {
  bool producer = nb::hasattr(obj, "__dlpack__");
  if (!producer && !PyCapsule_CheckExact(obj.ptr())) return std::nullopt;
  Imported im = consume(producer ? capsule_of(obj) : nb::borrow(obj));
  bool must_copy = im.read_only || im.complex128;
  if (copy == false && must_copy)
    throw OpError("from_dlpack", im.complex128 ? "complex128 becomes complex64, which needs a copy"
                                               : "read-only memory cannot be shared without a copy");
  if (im.complex128) return narrow_complex128(im.array);
  if (copy == true || must_copy) return copy_into(im.array, im.array.dtype());
  return im.array;
}

}  // namespace nuvec::python
