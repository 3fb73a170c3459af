// The `array` class: properties, conversions, operators.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>

#include "core/eval.h"
#include "core/ops.h"
#include "python/convert.h"
#include "python/dlpack.h"
#include "python/errors.h"
#include "python/indexing.h"

namespace nuvec::python {
namespace {

const char* buffer_format(Dtype d) {
  switch (d) {
    case Dtype::bool_: return "?";
    case Dtype::uint8: return "B";
    case Dtype::uint16: return "H";
    case Dtype::uint32: return "I";
    case Dtype::uint64: return "Q";
    case Dtype::int8: return "b";
    case Dtype::int16: return "h";
    case Dtype::int32: return "i";
    case Dtype::int64: return "q";
    case Dtype::float16: return "e";
    case Dtype::float32: return "f";
    case Dtype::float64: return "d";
    case Dtype::complex64: return "Zf";
    case Dtype::bfloat16:
      return "bfloat16";  // not a struct code, as MLX: memoryview carries the bytes, NumPy refuses it
  }
  return nullptr;
}

// Shape and strides (in bytes) a Py_buffer points into.
struct BufferInfo {
  Array array;
  std::vector<Py_ssize_t> shape, strides;
};

int get_buffer(PyObject* self, Py_buffer* view, int) {
  Array* a = nb::inst_ptr<Array>(nb::handle(self));
  try {
    const char* fmt = buffer_format(a->dtype());
    eval_now({*a});
    auto* info = new BufferInfo{*a, {}, {}};
    for (int i = 0; i < a->ndim(); ++i) {
      info->shape.push_back(Py_ssize_t(a->shape(i)));
      info->strides.push_back(Py_ssize_t(a->strides()[i] * int64_t(a->itemsize())));
    }
    view->obj = self;
    Py_INCREF(self);
    view->buf = a->size() ? a->data_bytes() : a->buffer()->data();
    view->len = Py_ssize_t(a->nbytes());
    view->readonly = 0;
    view->itemsize = Py_ssize_t(a->itemsize());
    view->format = const_cast<char*>(fmt);
    view->ndim = a->ndim();
    view->shape = info->shape.data();
    view->strides = info->strides.data();
    view->suboffsets = nullptr;
    view->internal = info;
    return 0;
  } catch (...) {  // an evaluation error keeps its type (EvalIndexError, ...) through NumPy
    set_python_error(std::current_exception(), PyExc_BufferError);
    return -1;
  }
}

void release_buffer(PyObject*, Py_buffer* view) { delete static_cast<BufferInfo*>(view->internal); }

PyType_Slot array_slots[] = {
    {Py_bf_getbuffer, (void*)get_buffer},
    {Py_bf_releasebuffer, (void*)release_buffer},
    {0, nullptr},
};

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (int64_t d : s) l.append(d);
  return nb::tuple(l);
}

// MLX's operands for operators: arrays, scalars and array-likes (buffers, DLPack, __array__), not lists,
// tuples, strings or unrelated objects.
bool is_operand(nb::handle b) {
  static PyTypeObject* const array_type = (PyTypeObject*)nb::type<Array>().ptr();
  PyObject* o = b.ptr();
  if (Py_TYPE(o) == array_type) return true;  // the common case, without nanobind's type lookup
  if (nb::isinstance<Array>(b) || PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o))
    return true;
  if (PyList_Check(o) || PyTuple_Check(o) || PyUnicode_Check(o)) return false;
  return PyObject_CheckBuffer(o) || nb::hasattr(b, "__dlpack__") || nb::hasattr(b, "__array__");
}

template <BinaryOp op> Array apply(nb::handle a, nb::handle b) {
  auto [x, y] = binary_args(a, b, op_name(op));
  return binary(op, x, y, default_stream(default_device()));
}
template <BinaryOp op> void check_operand(nb::handle other) {
  if (!is_operand(other))
    throw OpError(op_name(op), "an array cannot be combined with an object of type " +
                                   nb::cast<std::string>(nb::str(other.type().attr("__name__"))));
}
template <BinaryOp op> Array forward(nb::handle self, nb::handle other) {
  check_operand<op>(other);
  return apply<op>(self, other);
}
template <BinaryOp op> Array reflected(nb::handle self, nb::handle other) {
  check_operand<op>(other);
  return apply<op>(other, self);
}

// `x op= y` replaces the array inside the Python object, as MLX: other names for it see the new value.
template <BinaryOp op> nb::object in_place(nb::handle self, nb::handle other) {
  Array& x = *nb::inst_ptr<Array>(self);
  if (op == BinaryOp::divide && !is_inexact(x.dtype()))
    throw OpError("divide", "in-place division cannot make an integer array floating point; use x = x / y");
  x = forward<op>(self, other);
  return nb::borrow(self);
}

// == and != with an object that is not an operand give a Python bool, as MLX.
template <BinaryOp op> nb::object compare(nb::handle a, nb::handle b) {
  if (!is_operand(b)) return nb::bool_(op == BinaryOp::not_equal);
  return nb::cast(apply<op>(a, b));
}

}  // namespace

void init_array(nb::module_& m) {
  nb::class_<Array> cls(m, "array", nb::type_slots(array_slots), nb::is_weak_referenceable(),
                        "An N-dimensional array, evaluated lazily.");
  cls.def(
         "__init__",
         [](Array* self, nb::handle val, std::optional<Dtype> dtype) { new (self) Array(to_array(val, dtype)); },
         nb::arg("val"), nb::arg("dtype").noconvert().none() = nb::none(),
         "Makes an array from a scalar, a nested sequence, a NumPy array, a buffer or a DLPack object.")
      .def_prop_ro("shape", [](const Array& a) { return shape_tuple(a.shape()); })
      .def_prop_ro("ndim", [](const Array& a) { return a.ndim(); })
      .def_prop_ro("size", [](const Array& a) { return a.size(); })
      .def_prop_ro("dtype", [](const Array& a) { return a.dtype(); })
      .def_prop_ro("itemsize", [](const Array& a) { return a.itemsize(); })
      .def_prop_ro("nbytes", [](const Array& a) { return a.nbytes(); })
      .def_prop_ro("T", [](const Array& a) { return transpose(a, {}, default_stream(default_device())); })
      .def("item", &item, "The single element as a Python scalar.")
      .def("tolist", &tolist, "The elements as nested Python lists.")
      .def(
          "astype", [](const Array& a, Dtype d, nb::handle s) { return astype(a, d, to_stream(s)); },
          nb::arg("dtype").noconvert(), nb::arg("stream").none() = nb::none(), "A copy converted to `dtype`.")
      .def(
          "view", [](const Array& a, Dtype d, nb::handle s) { return view(a, d, to_stream(s)); },
          nb::arg("dtype").noconvert(), nb::arg("stream").none() = nb::none(), "The same bytes read as `dtype`.")
      .def("__len__",
           [](const Array& a) {
             if (a.ndim() == 0) throw nb::type_error("len() of a 0-d array");
             return a.shape(0);
           })
      .def("__iter__",
           [](nb::handle self) {
             const Array& a = *nb::inst_ptr<Array>(self);
             if (a.ndim() == 0) throw nb::type_error("iteration over a 0-d array");
             nb::list rows;
             for (int64_t i = 0; i < a.shape(0); ++i) rows.append(nb::cast(get_item(a, nb::int_(i))));
             return nb::iter(rows);
           })
      .def("__bool__",
           [](const Array& a) {
             if (a.size() != 1)
               throw OpError("bool", "the truth value of an array with more than one element is ambiguous");
             return nb::cast<bool>(nb::bool_(item(a)));
           })
      .def("__int__", [](const Array& a) { return nb::int_(item(a)); })
      .def("__float__", [](const Array& a) { return nb::float_(item(a)); })
      .def("__index__",
           [](const Array& a) {
             if (!is_integer(a.dtype()) && a.dtype() != Dtype::bool_)
               throw nb::type_error("only integer arrays can be used as an index");
             return nb::int_(item(a));
           })
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def(
          "__getitem__", [](const Array& a, nb::handle idx) { return get_item(a, idx); }, nb::arg("index").none())
      .def(
          "__dlpack__",
          [](const Array& a, nb::handle, nb::handle, std::optional<std::pair<int, int>> dl_device,
             std::optional<bool> copy) {
            if (dl_device && *dl_device != std::pair<int, int>{1, 0}) {
              PyErr_SetString(PyExc_BufferError, "only CPU DLPack export is supported");
              throw nb::python_error();
            }
            return to_dlpack(a, copy.value_or(false));
          },
          nb::kw_only(), nb::arg("stream").none() = nb::none(), nb::arg("max_version").none() = nb::none(),
          nb::arg("dl_device").none() = nb::none(), nb::arg("copy").none() = nb::none())
      .def("__bytes__",
           [](nb::handle self) {  // the elements' bytes in row-major order, as MLX
             nb::object view = nb::steal(PyMemoryView_FromObject(self.ptr()));
             if (!view.is_valid()) throw nb::python_error();
             return view.attr("tobytes")();
           })
      .def("__dlpack_device__", [](const Array&) { return nb::make_tuple(1, 0); })
      .def("__copy__", [](const Array& a) { return a; })
      .def(
          "__deepcopy__", [](const Array& a, nb::handle) { return a; }, nb::arg("memo"))
      // Arithmetic (Python scalars are weak, as MLX).
      .def("__add__", &forward<BinaryOp::add>)
      .def("__radd__", &reflected<BinaryOp::add>)
      .def("__iadd__", &in_place<BinaryOp::add>)
      .def("__sub__", &forward<BinaryOp::subtract>)
      .def("__rsub__", &reflected<BinaryOp::subtract>)
      .def("__isub__", &in_place<BinaryOp::subtract>)
      .def("__mul__", &forward<BinaryOp::multiply>)
      .def("__rmul__", &reflected<BinaryOp::multiply>)
      .def("__imul__", &in_place<BinaryOp::multiply>)
      .def("__truediv__", &forward<BinaryOp::divide>)
      .def("__rtruediv__", &reflected<BinaryOp::divide>)
      .def("__itruediv__", &in_place<BinaryOp::divide>)
      .def("__floordiv__", &forward<BinaryOp::floor_divide>)
      .def("__rfloordiv__", &reflected<BinaryOp::floor_divide>)
      .def("__ifloordiv__", &in_place<BinaryOp::floor_divide>)
      .def("__mod__", &forward<BinaryOp::remainder>)
      .def("__rmod__", &reflected<BinaryOp::remainder>)
      .def("__imod__", &in_place<BinaryOp::remainder>)
      .def("__divmod__",
           [](nb::handle a, nb::handle b) {
             return nb::make_tuple(forward<BinaryOp::floor_divide>(a, b), forward<BinaryOp::remainder>(a, b));
           })
      .def("__rdivmod__",
           [](nb::handle a, nb::handle b) {
             return nb::make_tuple(reflected<BinaryOp::floor_divide>(a, b), reflected<BinaryOp::remainder>(a, b));
           })
      .def("__pow__", &forward<BinaryOp::power>)
      .def("__rpow__", &reflected<BinaryOp::power>)
      .def("__ipow__", &in_place<BinaryOp::power>)
      .def("__and__", &forward<BinaryOp::bitwise_and>)
      .def("__rand__", &reflected<BinaryOp::bitwise_and>)
      .def("__iand__", &in_place<BinaryOp::bitwise_and>)
      .def("__or__", &forward<BinaryOp::bitwise_or>)
      .def("__ror__", &reflected<BinaryOp::bitwise_or>)
      .def("__ior__", &in_place<BinaryOp::bitwise_or>)
      .def("__xor__", &forward<BinaryOp::bitwise_xor>)
      .def("__rxor__", &reflected<BinaryOp::bitwise_xor>)
      .def("__ixor__", &in_place<BinaryOp::bitwise_xor>)
      .def("__lshift__", &forward<BinaryOp::left_shift>)
      .def("__rlshift__", &reflected<BinaryOp::left_shift>)
      .def("__ilshift__", &in_place<BinaryOp::left_shift>)
      .def("__rshift__", &forward<BinaryOp::right_shift>)
      .def("__rrshift__", &reflected<BinaryOp::right_shift>)
      .def("__irshift__", &in_place<BinaryOp::right_shift>)
      .def("__eq__", &compare<BinaryOp::equal>)
      .def("__ne__", &compare<BinaryOp::not_equal>)
      .def("__lt__", &forward<BinaryOp::less>)
      .def("__le__", &forward<BinaryOp::less_equal>)
      .def("__gt__", &forward<BinaryOp::greater>)
      .def("__ge__", &forward<BinaryOp::greater_equal>)
      .def("__neg__", [](const Array& a) { return unary(UnaryOp::negative, a, default_stream(default_device())); })
      .def("__pos__", [](const Array& a) { return a; })
      .def("__abs__", [](const Array& a) { return unary(UnaryOp::abs, a, default_stream(default_device())); })
      .def("__invert__",
           [](const Array& a) { return unary(UnaryOp::bitwise_invert, a, default_stream(default_device())); });
}

}  // namespace nuvec::python
