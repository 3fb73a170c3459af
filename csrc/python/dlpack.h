// The DLPack exchange structs (an ABI defined by the DLPack specification, version 0.8/1.0
// legacy layout), and nuvec's export and import through them.
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>

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
// DLPack 1.0's versioned tensor (capsule "dltensor_versioned"): it can say the memory is read-only.
struct DLPackVersion { uint32_t major, minor; };
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;  // bit 0: read-only, bit 1: is a copy
  DLTensor dl_tensor;
};

// A PyCapsule named "dltensor" over the array (evaluated here; `copy`: over a copy of its own), keeping
// it alive.
nb::object to_dlpack(const Array& a, bool copy = false);
// An array over the memory of a DLPack producer (obj.__dlpack__(), asked for DLPack 1.0 first) or of a
// capsule, dtype kept; a copy where `copy` asks for one or sharing is impossible (read-only memory;
// complex128, which becomes complex64). copy=false where a copy is needed raises ValueError. Nothing
// when `obj` is neither a producer nor a capsule.
std::optional<Array> import_dlpack(nb::handle obj, std::optional<bool> copy);

}  // namespace nuvec::python
