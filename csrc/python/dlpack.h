// The DLPack exchange structs (an ABI defined by the DLPack specification, version 0.8/1.0
// legacy layout), and nuvec's export and import through them.
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>

#include "core/array.h"

namespace nuvec::python {

namespace nb = nanobind;

struct DLDevice {
  int32_t device_type;  // 1 = CPU
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; may be null for row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// A PyCapsule named "dltensor" over the (evaluated) array, keeping it alive.
nb::object to_dlpack(const Array& a);
// An array sharing the memory of `capsule` (consumed: renamed "used_dltensor").
Array from_dlpack_capsule(nb::handle capsule);

}  // namespace nuvec::python
