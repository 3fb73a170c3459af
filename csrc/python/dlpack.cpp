#include "python/dlpack.h"

#include <string>

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
    case 5: return pick({{64, Dtype::complex64}});
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

}  // namespace

nb::object to_dlpack(const Array& a) {
  auto* e = new Export{a, a.shape(), a.strides(), {}};
  DLTensor& t = e->tensor.dl_tensor;
  t.data = a.buffer()->data();
  t.byte_offset = uint64_t(a.offset()) * a.itemsize();
  t.device = {1, 0};
  t.ndim = a.ndim();
  t.dtype = dl_type(a.dtype());
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  e->tensor.manager_ctx = e;
  e->tensor.deleter = &delete_export;
  return nb::steal(PyCapsule_New(&e->tensor, "dltensor", &capsule_destructor));
}

Array from_dlpack_capsule(nb::handle capsule) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw OpError("from_dlpack", "expected an unconsumed DLPack capsule named 'dltensor'");
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  const DLTensor& d = t->dl_tensor;
  if (d.device.device_type != 1 && d.device.device_type != 3)  // CPU or CUDA-host memory
    throw OpError("from_dlpack",
                  "only CPU memory can be imported (device type " + std::to_string(d.device.device_type) + ")");
  Dtype dtype = from_dl_type(d.dtype);
  Shape shape(d.shape, d.shape + d.ndim);
  Strides strides = d.strides ? Strides(d.strides, d.strides + d.ndim) : Array::row_strides(shape);
  size_t item = size_of(dtype);
  if (d.byte_offset % item != 0) throw OpError("from_dlpack", "byte offset is not a multiple of the item size");
  // Extent in bytes, for the buffer's size.
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < d.ndim; ++i)
    if (shape[i] > 0) (strides[i] < 0 ? lo : hi) += (shape[i] - 1) * strides[i];
  char* base = static_cast<char*>(d.data) + d.byte_offset + lo * int64_t(item);
  size_t bytes = size_t(hi - lo + 1) * item;
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  auto buffer = Buffer::external(base, bytes, [t] {
    if (t->deleter) {
      PyGILState_STATE st = PyGILState_Ensure();  // producers' deleters may touch Python objects
      t->deleter(t);
      PyGILState_Release(st);
    }
  });
  return Array::from_buffer(std::move(shape), dtype, std::move(buffer), std::move(strides), -lo);
}

}  // namespace nuvec::python
