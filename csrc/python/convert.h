// Python values to arrays and back.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <optional>

#include "core/array.h"
#include "core/ops.h"

namespace nuvec::python {

namespace nb = nanobind;

// A Python bool/int/float/complex (NumPy's float64 and complex128 are floats and complexes), else nothing.
std::optional<Scalar> as_scalar(nb::handle h);
// The value of an int, bool, NumPy integer or any object with __index__ (nothing for other objects).
// `overflow` is set when it does not fit in int64; the one-argument form raises OverflowError then
// (MLX's error for a shape entry too large).
std::optional<int64_t> as_index(nb::handle h, bool& overflow);
std::optional<int64_t> as_index(nb::handle h);
// A single integer rather than a sequence of them: an integer-like object that is not a non-0-d array.
bool is_scalar_int(nb::handle h);
// An integer-like or a list/tuple of them (shapes, sizes, shifts); OpError naming `op` otherwise.
std::vector<int64_t> int_list(nb::handle h, const char* op);
// An axis: an integer-like within int's range, else TypeError (as MLX); and one axis or a list/tuple of them.
int to_axis(nb::handle h);
std::vector<int> axis_list(nb::handle h);
// mx.array(obj, dtype): arrays, scalars, nested sequences, buffer-protocol and DLPack objects.
Array to_array(nb::handle obj, std::optional<Dtype> dtype = std::nullopt);
// An op's array argument: an array as is, anything else through to_array.
inline Array arg(nb::handle h) {
  if (nb::isinstance<Array>(h)) return *nb::inst_ptr<Array>(h);
  return to_array(h);
}
// An op's second operand next to an array: Python scalars take the array's dtype (weak).
Array arg_like(nb::handle h, Dtype other, const char* op);
// Both operands of a binary op, with MLX's weak-scalar rules.
std::pair<Array, Array> binary_args(nb::handle a, nb::handle b, const char* op);

// A dtype argument: a nuvec Dtype, or nothing for None. Anything else (a NumPy dtype, a type, a
// name, an int) raises TypeError naming `op`, as MLX rejects them, and the nuvec dtype meant.
std::optional<Dtype> to_dtype(nb::handle h, const char* op);
Stream to_stream(nb::handle h);                   // None, a Stream, a Device or a DeviceType
void eval_now(const std::vector<Array>& arrays);  // releases the GIL while computing
nb::object item(const Array& a);
nb::object tolist(const Array& a);

}  // namespace nuvec::python
