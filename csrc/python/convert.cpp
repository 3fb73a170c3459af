#include "python/convert.h"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/eval.h"
#include "core/streams.h"
#include "python/dlpack.h"

namespace nuvec::python {

std::optional<Scalar> as_scalar(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw OpError("array", "Python integer is too large for int64");
    return Scalar(int64_t(v));
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) return Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  return std::nullopt;
}

std::optional<int64_t> as_index(nb::handle h, bool& overflow) {
  overflow = false;
  if (!PyIndex_Check(h.ptr())) return std::nullopt;
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int over = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &over);
  overflow = over != 0;
  return int64_t(v);
}

std::optional<int64_t> as_index(nb::handle h) {
  bool overflow;
  auto v = as_index(h, overflow);
  if (overflow) {
    PyErr_SetString(PyExc_OverflowError,
                    ("integer " + nb::cast<std::string>(nb::str(nb::int_(h))) + " does not fit in 64 bits").c_str());
    throw nb::python_error();
  }
  return v;
}

bool is_scalar_int(nb::handle h) {
  if (PyLong_Check(h.ptr())) return true;
  if (!PyIndex_Check(h.ptr())) return false;
  return !nb::hasattr(h, "shape") || nb::len(nb::object(h.attr("shape"))) == 0;
}

std::vector<int64_t> int_list(nb::handle h, const char* op) {
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) {
    if (auto v = as_index(h)) return {*v};
    throw OpError(op, "expected an int or a sequence of ints");
  }
  std::vector<int64_t> out;
  for (nb::handle x : nb::borrow<nb::sequence>(h)) {
    auto v = as_index(x);
    if (!v) throw OpError(op, "expected integers, got " + nb::cast<std::string>(nb::str(x.type().attr("__name__"))));
    out.push_back(*v);
  }
  return out;
}

int to_axis(nb::handle h) {
  bool overflow;
  auto v = as_index(h, overflow);
  if (!v) throw nb::type_error("axis entries must be integers");
  if (overflow || *v < INT_MIN || *v > INT_MAX) throw nb::type_error("an axis must fit in 32 bits");
  return int(*v);
}

std::vector<int> axis_list(nb::handle h) {
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) return {to_axis(h)};
  std::vector<int> out;
  for (nb::handle x : nb::borrow<nb::sequence>(h)) out.push_back(to_axis(x));
  return out;
}

std::optional<Dtype> to_dtype(nb::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  Dtype d = Dtype::float32;
  if (nb::try_cast<Dtype>(h, d, /*convert=*/false)) return d;
  std::string msg = std::string(op) + "(): dtype must be a nuvec Dtype such as nuvec.float32, not " +
                    nb::cast<std::string>(nb::repr(h));
  // A NumPy dtype (.name), a type such as numpy.float32 (.__name__) or a name: say which nuvec dtype is meant.
  nb::object name = nb::borrow(h);
  if (nb::hasattr(h, "__name__"))
    name = h.attr("__name__");
  else if (nb::hasattr(h, "name"))
    name = h.attr("name");
  for (int i = 0; i < kNumDtypes && PyUnicode_Check(name.ptr()); ++i)
    if (nb::cast<std::string>(name) == name_of(Dtype(i))) {
      msg += std::string(" (use nuvec.") + (Dtype(i) == Dtype::bool_ ? "bool_" : name_of(Dtype(i))) + ")";
      break;
    }
  throw nb::type_error(msg.c_str());
}

// None, a Stream (this thread's: StreamError otherwise), a ThreadLocalStream, a Device or a DeviceType.
Stream to_stream(nb::handle h) {
  if (h.is_none()) return default_stream(default_device());
  if (nb::isinstance<Stream>(h)) {
    Stream s = nb::cast<Stream>(h);
    check_usable(s);
    return s;
  }
  if (nb::isinstance<ThreadLocalStream>(h)) return resolve(nb::cast<ThreadLocalStream>(h));
  Device d;
  if (nb::isinstance<Device>(h))
    d = nb::cast<Device>(h);
  else if (nb::isinstance<DeviceType>(h))
    d = Device{nb::cast<DeviceType>(h), 0};
  else
    throw nb::type_error(("stream: expected a Stream, a ThreadLocalStream, a Device, a DeviceType or None, not " +
                          std::string(Py_TYPE(h.ptr())->tp_name))
                             .c_str());
  if (!is_available(d)) throw OpError("stream", "the device is not available in this build");
  return default_stream(d);
}

void eval_now(const std::vector<Array>& arrays) {
  bool pending = false;
  for (const Array& a : arrays) pending |= !a.evaluated();
  if (!pending) return;
  nb::gil_scoped_release release;
  eval(arrays);
}

namespace {

constexpr const char* kNoStrings = "strings are not supported: arrays hold numbers and booleans";

// NumPy's buffer format characters.
std::optional<Dtype> dtype_of_format(const char* fmt, Py_ssize_t itemsize) {
  std::string f(fmt ? fmt : "B");
  while (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@' || f[0] == '|')) f.erase(0, 1);
  if (f == "?") return Dtype::bool_;
  if (f == "e") return Dtype::float16;
  if (f == "f") return Dtype::float32;
  if (f == "d") return Dtype::float64;
  if (f == "Zf") return Dtype::complex64;
  if (f == "bfloat16") return Dtype::bfloat16;  // what nuvec's and MLX's arrays export
  if (f.size() == 1) {
    char c = f[0];
    bool is_signed = c == 'b' || c == 'h' || c == 'i' || c == 'l' || c == 'q' || c == 'n';
    bool is_unsigned = c == 'B' || c == 'H' || c == 'I' || c == 'L' || c == 'Q' || c == 'N';
    if (is_signed || is_unsigned) {
      switch (itemsize) {
        case 1: return is_signed ? Dtype::int8 : Dtype::uint8;
        case 2: return is_signed ? Dtype::int16 : Dtype::uint16;
        case 4: return is_signed ? Dtype::int32 : Dtype::uint32;
        case 8: return is_signed ? Dtype::int64 : Dtype::uint64;
      }
    }
  }
  return std::nullopt;
}

// A copy of a buffer-protocol object, or nothing when it has no (usable) buffer. `as` reads the
// items as that dtype instead of the buffer's format.
std::optional<Array> from_buffer_object(nb::handle obj, std::optional<Dtype> dtype,
                                        std::optional<Dtype> as = std::nullopt) {
  if (!PyObject_CheckBuffer(obj.ptr())) return std::nullopt;
  auto* view = new Py_buffer;
  if (PyObject_GetBuffer(obj.ptr(), view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    delete view;
    return std::nullopt;
  }
  auto release = [view] {
    PyGILState_STATE st = PyGILState_Ensure();
    PyBuffer_Release(view);
    PyGILState_Release(st);
    delete view;
  };
  std::optional<Dtype> src = as ? as : dtype_of_format(view->format, view->itemsize);
  if (!src && view->format && std::string(view->format).find("Zd") != std::string::npos) {
    // complex128 has no nuvec dtype: NumPy narrows it to complex64 first.
    release();
    nb::object narrowed = nb::module_::import_("numpy").attr("asarray")(obj, "complex64");
    return from_buffer_object(narrowed, dtype);
  }
  if (!src) {
    std::string fmt = view->format ? view->format : "?";
    release();
    if (fmt.find_first_of("swU") != std::string::npos) throw OpError("array", kNoStrings);
    throw OpError("array", "unsupported buffer format '" + fmt + "'");
  }
  Shape shape(view->shape, view->shape + view->ndim);
  Strides strides(view->ndim);
  for (int i = 0; i < view->ndim; ++i) {
    if (view->strides[i] % view->itemsize != 0) {
      release();
      throw OpError("array", "buffer strides must be multiples of the item size");
    }
    strides[i] = view->strides[i] / view->itemsize;
  }
  // The buffer spans the view's extent (strides may be negative or leave gaps), which a copy to
  // another device moves whole: the first element sits `-lo` elements into it.
  int64_t lo = 0, hi = 0;
  bool empty = shape_size(shape) == 0;
  for (int i = 0; i < view->ndim && !empty; ++i) (strides[i] < 0 ? lo : hi) += (shape[i] - 1) * strides[i];
  size_t bytes = empty ? 0 : size_t(hi - lo + 1) * size_t(view->itemsize);
  auto buffer = Buffer::external(static_cast<char*>(view->buf) + lo * view->itemsize, bytes, release);
  Array source = Array::from_buffer(shape, *src, std::move(buffer), std::move(strides), -lo);
  // COMPAT: float64 data becomes float32 unless float64 is asked for.
  Dtype target = dtype.value_or(*src == Dtype::float64 ? Dtype::float32 : *src);
  Array out = Array::lazy(shape, target, std::make_shared<Unary>(UnaryOp::copy, *src, target), {source},
                          default_stream(default_device()));
  eval_now({out});
  return out;
}

// NumPy arrays and scalars of ml_dtypes' bfloat16, which NumPy can export neither through the buffer
// protocol nor DLPack: read through their uint16 bits, as MLX takes them.
std::optional<Array> from_ml_dtypes_bfloat16(nb::handle obj, std::optional<Dtype> dtype) {
  if (!nb::hasattr(obj, "dtype")) return std::nullopt;
  nb::object dt = obj.attr("dtype");
  if (!nb::hasattr(dt, "name") || !nb::hasattr(dt, "itemsize")) return std::nullopt;
  nb::object name = dt.attr("name");
  if (!PyUnicode_Check(name.ptr()) || nb::cast<std::string>(name) != "bfloat16") return std::nullopt;
  nb::object bits = nb::module_::import_("numpy").attr("asarray")(obj).attr("view")("uint16");
  return from_buffer_object(bits, dtype, Dtype::bfloat16);
}

enum class ListKind { boolean, integer, floating, complex };

// What a scan of a nested list finds: its shape (the sequences' lengths, then the shape of array
// elements), the widest kind of its Python scalars, and its array elements (anything not a scalar or a
// sequence, converted; an array stands where a nested list of its shape could) with the promotion of
// their dtypes.
struct ListScan {
  Shape shape;
  std::optional<size_t> ndim;  // known at the first scalar or array
  bool has_scalars = false, large_int = false;
  ListKind kind = ListKind::boolean;
  std::vector<Array> arrays;
  std::optional<Dtype> arrays_dtype;
};

[[noreturn]] void ragged() { throw OpError("array", "nested sequences must be rectangular (inhomogeneous shape)"); }

// A scalar or an array of shape `leaf` at `depth`: the shape below `depth` must be the leaf's.
void place_leaf(ListScan& s, size_t depth, const Shape& leaf) {
  size_t ndim = depth + leaf.size();
  if (s.ndim ? *s.ndim != ndim : s.shape.size() > ndim) ragged();
  for (size_t i = depth; i < s.shape.size(); ++i)
    if (s.shape[i] != leaf[i - depth]) ragged();
  s.shape.insert(s.shape.end(), leaf.begin() + (s.shape.size() - depth), leaf.end());
  s.ndim = ndim;
}

void scan_list(nb::handle h, size_t depth, ListScan& s) {
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    if (s.ndim && depth >= *s.ndim) ragged();  // a sequence where scalars were ([1, [2, 3]])
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    int64_t n = int64_t(nb::len(seq));
    if (n == 0) {  // an empty list counts as float32 data, as MLX: [] is float32, [int16 (0,) array, []] too
      s.has_scalars = true;
      s.kind = std::max(s.kind, ListKind::floating);
    }
    if (depth == s.shape.size())
      s.shape.push_back(n);
    else if (s.shape[depth] != n)
      ragged();
    for (nb::handle item : seq) scan_list(item, depth + 1, s);
    return;
  }
  if (PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr())) throw OpError("array", kNoStrings);
  if (std::optional<Scalar> v = as_scalar(h)) {
    s.has_scalars = true;
    ListKind k = std::holds_alternative<bool>(*v)      ? ListKind::boolean
                 : std::holds_alternative<int64_t>(*v) ? ListKind::integer
                 : std::holds_alternative<double>(*v)  ? ListKind::floating
                                                       : ListKind::complex;
    if (int(k) > int(s.kind)) s.kind = k;
    if (auto* i = std::get_if<int64_t>(&*v)) s.large_int |= *i < INT32_MIN || *i > INT32_MAX;
    place_leaf(s, depth, {});
    return;
  }
  s.arrays.push_back(to_array(h));
  const Array& a = s.arrays.back();
  s.arrays_dtype = s.arrays_dtype ? promote(*s.arrays_dtype, a.dtype()) : a.dtype();
  place_leaf(s, depth, a.shape());
}

template <class T> void fill_list(nb::handle h, std::vector<T>& out) {
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    for (nb::handle item : nb::borrow<nb::sequence>(h)) fill_list(item, out);
    return;
  }
  Scalar v = *as_scalar(h);
  std::visit(
      [&](auto x) {
        if constexpr (std::is_same_v<T, std::complex<double>>)
          out.push_back(T(x));
        else if constexpr (std::is_same_v<decltype(x), std::complex<double>>)
          out.push_back(T(x.real()));
        else
          out.push_back(T(x));
      },
      v);
}

template <class T> Array list_array(nb::handle h, const Shape& shape, Dtype source, Dtype target) {
  std::vector<T> values;
  values.reserve(size_t(shape_size(shape)));
  fill_list(h, values);
  Array src = Array::allocate(shape, source);
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    auto* p = src.data<std::complex<float>>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = std::complex<float>(values[i]);
  } else {
    std::memcpy(src.data_bytes(), values.data(), values.size() * sizeof(T));
  }
  return astype(src, target, default_stream(default_device()));
}

// The elements of a list holding arrays, each in `dtype` and flattened, in order.
void flat_elements(nb::handle h, Dtype dtype, const std::vector<Array>& arrays, size_t& next, std::vector<Array>& out) {
  Stream s = default_stream(default_device());
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    for (nb::handle item : nb::borrow<nb::sequence>(h)) flat_elements(item, dtype, arrays, next, out);
    return;
  }
  Array a = as_scalar(h) ? scalar_array(*as_scalar(h), dtype) : astype(arrays[next++], dtype, s);
  out.push_back(reshape(a, {a.size()}, s));
}

// The dtype of a list's Python scalars alone: bool, int32 (int64 when a value needs it), float32, complex64.
Dtype scalars_dtype(const ListScan& s) {
  switch (s.kind) {
    case ListKind::boolean: return Dtype::bool_;
    case ListKind::integer: return s.large_int ? Dtype::int64 : Dtype::int32;
    case ListKind::floating: return Dtype::float32;
    case ListKind::complex: return Dtype::complex64;
  }
  return Dtype::float32;
}

Array from_list(nb::handle h, std::optional<Dtype> dtype) {
  ListScan s;
  scan_list(h, 0, s);
  Stream st = default_stream(default_device());
  if (s.arrays_dtype) {
    // As MLX: the promotion of the arrays' dtypes and of the scalars' (which are not weak here).
    Dtype target = dtype.value_or(s.has_scalars ? promote(*s.arrays_dtype, scalars_dtype(s)) : *s.arrays_dtype);
    std::vector<Array> parts;
    size_t next = 0;
    flat_elements(h, target, s.arrays, next, parts);
    Array out = reshape(concatenate(parts, 0, st), s.shape, st);
    eval_now({out});
    return out;
  }
  Dtype target = dtype.value_or(scalars_dtype(s));
  Array out = s.kind == ListKind::boolean    ? list_array<uint8_t>(h, s.shape, Dtype::bool_, target)
              : s.kind == ListKind::integer  ? list_array<int64_t>(h, s.shape, Dtype::int64, target)
              : s.kind == ListKind::floating ? list_array<double>(h, s.shape, Dtype::float64, target)
                                             : list_array<std::complex<double>>(h, s.shape, Dtype::complex64, target);
  eval_now({out});
  return out;
}

}  // namespace

Array to_array(nb::handle obj, std::optional<Dtype> dtype) {
  if (nb::isinstance<Array>(obj)) {
    Array a = *nb::inst_ptr<Array>(obj);
    return dtype ? astype(a, *dtype, default_stream(default_device())) : a;
  }
  if (auto v = as_scalar(obj)) return scalar_array(*v, dtype);
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) return from_list(obj, dtype);
  if (auto a = from_buffer_object(obj, dtype)) return *a;
  if (auto a = from_ml_dtypes_bfloat16(obj, dtype)) return *a;
  std::optional<Array> imported;
  try {
    imported = import_dlpack(obj, std::nullopt);
  } catch (nb::python_error& e) {
    // A NumPy array of a dtype DLPack cannot carry (ml_dtypes' float8, int4, ...): say which.
    if (!e.matches(PyExc_BufferError) || !nb::hasattr(obj, "dtype")) throw;
    nb::object name = nb::steal(PyObject_Str(nb::object(obj.attr("dtype")).ptr()));
    if (!name.is_valid()) PyErr_Clear();
    throw OpError("array", "unsupported dtype " + (name.is_valid() ? nb::cast<std::string>(name) : std::string("?")));
  }
  if (auto& a = imported) {
    // COMPAT: float64 data becomes float32 unless float64 is asked for, as through the buffer protocol.
    Dtype target = dtype.value_or(a->dtype() == Dtype::float64 ? Dtype::float32 : a->dtype());
    Array out = Array::lazy(a->shape(), target, std::make_shared<Unary>(UnaryOp::copy, a->dtype(), target), {*a},
                            default_stream(default_device()));
    eval_now({out});
    return out;
  }
  if (nb::hasattr(obj, "__array__")) {
    nb::object arr = nb::module_::import_("numpy").attr("asarray")(obj);
    if (auto a = from_buffer_object(arr, dtype)) return *a;
  }
  if (PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) throw OpError("array", kNoStrings);
  throw OpError("array", std::string("cannot make an array from an object of type ") +
                             nb::cast<std::string>(nb::str(obj.type().attr("__name__"))));
}

Array arg_like(nb::handle h, Dtype other, const char* op) {
  if (nb::isinstance<Array>(h)) return *nb::inst_ptr<Array>(h);
  // Python scalars are weak (NumPy's float64 and complex128 are Python floats and complexes).
  if (auto v = as_scalar(h)) return weak_scalar(*v, other, op);
  // As MLX: an array-like (a NumPy array or scalar, a buffer, a DLPack producer) is converted to
  // the other operand's dtype (`int8 + np.array([3.5])` and `int32 + np.float32(2.5)` are int8
  // and int32); a list or tuple, which MLX's ops refuse, keeps the dtype its values make.
  const bool listed = PyList_Check(h.ptr()) || PyTuple_Check(h.ptr());
  try {
    return listed ? to_array(h) : to_array(h, other);
  } catch (const OpError& e) {  // an operand that is not array-like: name the op the user called
    throw OpError(op, std::string(e.what()).substr(e.op_name.size() + 2), e.is_index);
  }
}

std::pair<Array, Array> binary_args(nb::handle a, nb::handle b, const char* op) {
  bool a_arr = nb::isinstance<Array>(a), b_arr = nb::isinstance<Array>(b);
  if (a_arr && b_arr) return {*nb::inst_ptr<Array>(a), *nb::inst_ptr<Array>(b)};
  if (a_arr) {
    const Array& x = *nb::inst_ptr<Array>(a);
    return {x, arg_like(b, x.dtype(), op)};
  }
  if (b_arr) {
    const Array& y = *nb::inst_ptr<Array>(b);
    return {arg_like(a, y.dtype(), op), y};
  }
  // Neither is an array: a scalar is weak next to a converted operand.
  auto sa = as_scalar(a), sb = as_scalar(b);
  if (sa && !sb) {
    Array y = to_array(b);
    return {weak_scalar(*sa, y.dtype(), op), y};
  }
  if (sb && !sa) {
    Array x = to_array(a);
    return {x, weak_scalar(*sb, x.dtype(), op)};
  }
  return {to_array(a), to_array(b)};
}

namespace {
nb::object element(const char* p, Dtype d) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (d) {
    case Dtype::bool_: return nb::bool_(get(bool{}));
    case Dtype::uint8: return nb::int_(get(uint8_t{}));
    case Dtype::uint16: return nb::int_(get(uint16_t{}));
    case Dtype::uint32: return nb::int_(get(uint32_t{}));
    case Dtype::uint64: return nb::steal(PyLong_FromUnsignedLongLong(get(uint64_t{})));
    case Dtype::int8: return nb::int_(get(int8_t{}));
    case Dtype::int16: return nb::int_(get(int16_t{}));
    case Dtype::int32: return nb::int_(get(int32_t{}));
    case Dtype::int64: return nb::steal(PyLong_FromLongLong(get(int64_t{})));
    case Dtype::float16: return nb::float_(double(get(_Float16{})));
    case Dtype::float32: return nb::float_(double(get(float{})));
    case Dtype::float64: return nb::float_(get(double{}));
    case Dtype::bfloat16: {
      uint32_t u = uint32_t(get(uint16_t{})) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return nb::float_(double(f));
    }
    case Dtype::complex64: {
      auto c = get(std::complex<float>{});
      return nb::steal(PyComplex_FromDoubles(c.real(), c.imag()));
    }
  }
  return nb::none();
}

nb::object list_at(const Array& a, int axis, const char* p) {
  if (axis == a.ndim()) return element(p, a.dtype());
  nb::list out;
  int64_t step = a.strides()[axis] * int64_t(a.itemsize());
  for (int64_t i = 0; i < a.shape(axis); ++i) out.append(list_at(a, axis + 1, p + i * step));
  return out;
}
}  // namespace

nb::object item(const Array& a) {
  if (a.size() != 1)
    throw OpError("item", "only arrays of one element can be converted to a Python scalar (size " +
                              std::to_string(a.size()) + ")");
  eval_now({a});
  return element(a.data_bytes(), a.dtype());
}

nb::object tolist(const Array& a) {
  eval_now({a});
  if (a.size() == 0 && a.ndim() == 0) return nb::none();
  return list_at(a, 0, a.size() ? a.data_bytes() : nullptr);
}

}  // namespace nuvec::python
