// The C API's arrays, vectors of arrays, strings and dtypes.
#include <cstring>
#include <string>

#include "c_api/capi.h"
#include "core/eval.h"
#include "core/ops.h"

using namespace nuvec;
using namespace nuvec::capi;

namespace nuvec::capi {

// nuvec_dtype lists the dtypes in Dtype's order.
Dtype to_dtype(nuvec_dtype d) {
  if (int(d) < 0 || int(d) >= kNumDtypes) throw std::invalid_argument("unknown nuvec_dtype " + std::to_string(int(d)));
  return Dtype(d);
}
nuvec_dtype from_dtype(Dtype d) { return nuvec_dtype(d); }

nuvec_array wrap_array(Array a) { return nuvec_array{new ArrayBox(std::move(a))}; }
const Array& unwrap_array(nuvec_array h, const char* fn) { return get(h, fn).array; }

}  // namespace nuvec::capi

namespace {

// The evaluated, row-major data of `arr` as `want`, or null through the handler.
const void* data_of(nuvec_array arr, Dtype want, const char* fn) {
  try {
    ArrayBox& box = get(arr, fn);
    if (box.array.dtype() != want)
      throw std::invalid_argument(std::string("the array is ") + name_of(box.array.dtype()) + ", not " + name_of(want));
    if (!box.array.evaluated()) throw std::invalid_argument("the array is not evaluated (nuvec_array_eval)");
    if (!box.array.row_contiguous()) {
      box.array = contiguous(box.array, default_stream(default_device()));
      eval({box.array});
    }
    return box.array.data_bytes();
  } catch (...) {
    fail(fn);
    return nullptr;
  }
}

template <class T> int item(T* res, nuvec_array arr, const char* fn) {
  try {
    const Array& a = get(arr, fn).array;
    if (a.size() != 1) throw std::invalid_argument("item of an array of " + std::to_string(a.size()) + " elements");
    Array x = astype(a,
                     Dtype(sizeof(T) == 1                ? Dtype::bool_
                           : std::is_floating_point_v<T> ? (sizeof(T) == 4 ? Dtype::float32 : Dtype::float64)
                           : sizeof(T) == 4              ? Dtype::int32
                                                         : Dtype::int64),
                     default_stream(default_device()));
    eval({x});
    std::memcpy(res, x.data_bytes(), sizeof(T));
    return 0;
  } catch (...) { return fail(fn); }
}

}  // namespace

extern "C" {

size_t nuvec_dtype_size(nuvec_dtype dtype) { return size_of(Dtype(dtype)); }

nuvec_string nuvec_string_new(void) { return nuvec_string{new std::string()}; }
nuvec_string nuvec_string_new_data(const char* str) { return nuvec_string{new std::string(str ? str : "")}; }
const char* nuvec_string_data(nuvec_string str) { return str.ctx ? static_cast<std::string*>(str.ctx)->c_str() : ""; }
int nuvec_string_free(nuvec_string str) {
  delete static_cast<std::string*>(str.ctx);
  return 0;
}

nuvec_array nuvec_array_new(void) { return nuvec_array{nullptr}; }
nuvec_array nuvec_array_new_bool(bool val) { return wrap_array(scalar_array(val)); }
nuvec_array nuvec_array_new_int(int val) { return wrap_array(scalar_array(int64_t(val), Dtype::int32)); }
nuvec_array nuvec_array_new_float(float val) { return wrap_array(scalar_array(double(val), Dtype::float32)); }
nuvec_array nuvec_array_new_float64(double val) { return wrap_array(scalar_array(val, Dtype::float64)); }
nuvec_array nuvec_array_new_data(const void* data, const int* shape, int dim, nuvec_dtype dtype) {
  try {
    Shape s(shape, shape + dim);
    for (int64_t n : s)
      if (n < 0) throw std::invalid_argument("a negative dimension");
    Array a = Array::allocate(s, to_dtype(dtype));
    if (a.nbytes()) std::memcpy(a.data_bytes(), data, a.nbytes());
    return wrap_array(std::move(a));
  } catch (...) {
    fail("nuvec_array_new_data");
    return nuvec_array{nullptr};
  }
}
int nuvec_array_set(nuvec_array* arr, const nuvec_array src) {
  try {
    return set(arr, get(src, "nuvec_array_set").array);
  } catch (...) { return fail("nuvec_array_set"); }
}
int nuvec_array_free(nuvec_array arr) { return release(arr); }

int nuvec_array_tostring(nuvec_string* str, const nuvec_array arr) {
  try {
    const Array& a = get(arr, "nuvec_array_tostring").array;
    std::string text = "array(shape=" + shape_str(a.shape()) + ", dtype=" + name_of(a.dtype()) + ")";
    if (str->ctx)
      *static_cast<std::string*>(str->ctx) = std::move(text);
    else
      str->ctx = new std::string(std::move(text));
    return 0;
  } catch (...) { return fail("nuvec_array_tostring"); }
}

size_t nuvec_array_ndim(const nuvec_array arr) { return arr.ctx ? get(arr, "").array.ndim() : 0; }
const int* nuvec_array_shape(const nuvec_array arr) {
  if (!arr.ctx) return nullptr;
  ArrayBox& box = get(arr, "");
  box.shape.assign(box.array.shape().begin(), box.array.shape().end());
  return box.shape.data();
}
int nuvec_array_dim(const nuvec_array arr, int axis) {
  try {
    const Array& a = get(arr, "nuvec_array_dim").array;
    if (axis < -a.ndim() || axis >= a.ndim())
      throw std::out_of_range("axis " + std::to_string(axis) + " of an array of " + std::to_string(a.ndim()) + " axes");
    return int(a.shape(axis));
  } catch (...) {
    fail("nuvec_array_dim");
    return -1;
  }
}
size_t nuvec_array_size(const nuvec_array arr) { return arr.ctx ? get(arr, "").array.size() : 0; }
size_t nuvec_array_itemsize(const nuvec_array arr) { return arr.ctx ? get(arr, "").array.itemsize() : 0; }
size_t nuvec_array_nbytes(const nuvec_array arr) { return arr.ctx ? get(arr, "").array.nbytes() : 0; }
nuvec_dtype nuvec_array_dtype(const nuvec_array arr) { return from_dtype(get(arr, "").array.dtype()); }
int nuvec_array_eval(nuvec_array arr) {
  try {
    ready({});
    eval({get(arr, "nuvec_array_eval").array});
    return 0;
  } catch (...) { return fail("nuvec_array_eval"); }
}

int nuvec_array_item_bool(bool* res, const nuvec_array arr) { return item(res, arr, "nuvec_array_item_bool"); }
int nuvec_array_item_int32(int32_t* res, const nuvec_array arr) { return item(res, arr, "nuvec_array_item_int32"); }
int nuvec_array_item_int64(int64_t* res, const nuvec_array arr) { return item(res, arr, "nuvec_array_item_int64"); }
int nuvec_array_item_float32(float* res, const nuvec_array arr) { return item(res, arr, "nuvec_array_item_float32"); }
int nuvec_array_item_float64(double* res, const nuvec_array arr) { return item(res, arr, "nuvec_array_item_float64"); }

#define NUVEC_DATA(name, ctype, dtype)                                                       \
  const ctype* nuvec_array_data_##name(const nuvec_array arr) {                              \
    return static_cast<const ctype*>(data_of(arr, Dtype::dtype, "nuvec_array_data_" #name)); \
  }
NUVEC_DATA(bool, bool, bool_)
NUVEC_DATA(uint8, uint8_t, uint8)
NUVEC_DATA(uint16, uint16_t, uint16)
NUVEC_DATA(uint32, uint32_t, uint32)
NUVEC_DATA(uint64, uint64_t, uint64)
NUVEC_DATA(int8, int8_t, int8)
NUVEC_DATA(int16, int16_t, int16)
NUVEC_DATA(int32, int32_t, int32)
NUVEC_DATA(int64, int64_t, int64)
NUVEC_DATA(float32, float, float32)
NUVEC_DATA(float64, double, float64)
NUVEC_DATA(float16, uint16_t, float16)
NUVEC_DATA(bfloat16, uint16_t, bfloat16)
NUVEC_DATA(complex64, float, complex64)
#undef NUVEC_DATA

nuvec_vector_array nuvec_vector_array_new(void) { return nuvec_vector_array{new std::vector<Array>()}; }
nuvec_vector_array nuvec_vector_array_new_data(const nuvec_array* data, size_t size) {
  auto* v = new std::vector<Array>();
  for (size_t i = 0; i < size; ++i) v->push_back(get(data[i], "nuvec_vector_array_new_data").array);
  return nuvec_vector_array{v};
}
nuvec_vector_array nuvec_vector_array_new_value(const nuvec_array val) { return nuvec_vector_array_new_data(&val, 1); }
int nuvec_vector_array_set(nuvec_vector_array* vec, const nuvec_vector_array src) {
  try {
    return set(vec, get(src, "nuvec_vector_array_set"));
  } catch (...) { return fail("nuvec_vector_array_set"); }
}
int nuvec_vector_array_append_value(nuvec_vector_array vec, const nuvec_array val) {
  try {
    get(vec, "nuvec_vector_array_append_value").push_back(get(val, "nuvec_vector_array_append_value").array);
    return 0;
  } catch (...) { return fail("nuvec_vector_array_append_value"); }
}
size_t nuvec_vector_array_size(nuvec_vector_array vec) {
  return vec.ctx ? static_cast<std::vector<Array>*>(vec.ctx)->size() : 0;
}
int nuvec_vector_array_get(nuvec_array* res, const nuvec_vector_array vec, size_t idx) {
  try {
    const auto& v = get(vec, "nuvec_vector_array_get");
    if (idx >= v.size())
      throw std::out_of_range("index " + std::to_string(idx) + " of a vector of " + std::to_string(v.size()));
    return set(res, v[idx]);
  } catch (...) { return fail("nuvec_vector_array_get"); }
}
int nuvec_vector_array_free(nuvec_vector_array vec) { return release(vec); }

}  // extern "C"
