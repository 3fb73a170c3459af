// Module-level operations. Each accepts arrays or anything `array()` accepts, and `stream=`.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cmath>

#include "core/ops.h"
#include "core/ops/fp8.h"
#include "core/ops/unique.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

Dtype dtype_or(nb::handle h, Dtype fallback, const char* op) { return to_dtype(h, op).value_or(fallback); }

#define NUVEC_BIND_UNARY(name)                                                                                    \
  m.def(                                                                                                          \
      #name, [](nb::handle a, nb::handle s) { return unary(UnaryOp::name, arg(a), to_stream(s)); }, nb::arg("a"), \
      nb::kw_only(), nb::arg("stream").none() = nb::none(), "Element-wise " #name ".");
#define NUVEC_BIND_BINARY(name)                                                         \
  m.def(                                                                                \
      #name,                                                                            \
      [](nb::handle a, nb::handle b, nb::handle s) {                                    \
        auto [x, y] = binary_args(a, b, #name);                                         \
        return binary(BinaryOp::name, x, y, to_stream(s));                              \
      },                                                                                \
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("stream").none() = nb::none(), \
      "Element-wise " #name " with broadcasting.");

}  // namespace

void init_ops(nb::module_& m) {
  // Element-wise unary.
  NUVEC_UNARY_BINDINGS(NUVEC_BIND_UNARY)  // the registry's ops with this signature
  m.attr("conj") = m.attr("conjugate");

  m.def(
      "round", [](nb::handle a, int decimals, nb::handle s) { return round(arg(a), decimals, to_stream(s)); },
      nb::arg("a"), nb::arg("decimals") = 0, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Rounds half to even, to `decimals` places.");
  m.def(
      "nan_to_num",
      [](nb::handle a, double nan, std::optional<double> posinf, std::optional<double> neginf, nb::handle s) {
        return nan_to_num(arg(a), nan, posinf, neginf, to_stream(s));
      },
      nb::arg("a"), nb::arg("nan") = 0.0, nb::arg("posinf").none() = nb::none(), nb::arg("neginf").none() = nb::none(),
      nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Replaces NaN and infinities with finite numbers (by default the dtype's extremes).");
  m.def(
      "degrees", [](nb::handle a, nb::handle s) { return degrees(arg(a), to_stream(s)); }, nb::arg("a"), nb::kw_only(),
      nb::arg("stream").none() = nb::none(), "Radians to degrees.");
  m.def(
      "radians", [](nb::handle a, nb::handle s) { return radians(arg(a), to_stream(s)); }, nb::arg("a"), nb::kw_only(),
      nb::arg("stream").none() = nb::none(), "Degrees to radians.");

  m.def(
      "positive", [](nb::handle a, nb::handle s) { return positive(arg(a), to_stream(s)); }, nb::arg("a"),
      nb::kw_only(), nb::arg("stream").none() = nb::none(), "The input itself (unary plus).");
  m.def(
      "trunc", [](nb::handle a, nb::handle s) { return trunc(arg(a), to_stream(s)); }, nb::arg("a"), nb::kw_only(),
      nb::arg("stream").none() = nb::none(), "Rounds toward zero; integers and bools are returned as they are.");

  // Element-wise binary.
  NUVEC_BINARY_BINDINGS(NUVEC_BIND_BINARY)  // the registry's ops with this signature

  m.def(
      "divmod",
      [](nb::handle a, nb::handle b, nb::handle s) {
        auto [x, y] = binary_args(a, b, "divmod");
        auto [q, r] = divmod(x, y, to_stream(s));
        nb::list out;  // a list, as MLX returns
        out.append(q);
        out.append(r);
        return out;
      },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "[floor_divide(a, b), remainder(a, b)], a list as MLX's.");
  m.def(
      "logical_xor",
      [](nb::handle a, nb::handle b, nb::handle s) {
        auto [x, y] = binary_args(a, b, "logical_xor");
        return logical_xor(x, y, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Element-wise exclusive or of the inputs read as bools.");
  m.def(
      "isclose",
      [](nb::handle a, nb::handle b, double rtol, double atol, bool equal_nan, nb::handle s) {
        auto [x, y] = binary_args(a, b, "isclose");
        return isclose(x, y, rtol, atol, equal_nan, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::kw_only(),
      nb::arg("equal_nan") = false, nb::arg("stream").none() = nb::none(),
      "|a - b| <= atol + rtol * |b|, element-wise.");
  m.def(
      "allclose",
      [](nb::handle a, nb::handle b, double rtol, double atol, bool equal_nan, nb::handle s) {
        auto [x, y] = binary_args(a, b, "allclose");
        return allclose(x, y, rtol, atol, equal_nan, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::kw_only(),
      nb::arg("equal_nan") = false, nb::arg("stream").none() = nb::none(),
      "Whether isclose holds everywhere (a 0-d bool).");
  m.def(
      "array_equal",
      [](nb::handle a, nb::handle b, bool equal_nan, nb::handle s) {
        auto [x, y] = binary_args(a, b, "array_equal");
        return array_equal(x, y, equal_nan, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("equal_nan") = false, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Whether the shapes and all values are equal (a 0-d bool).");
  m.def(
      "where",
      [](nb::handle c, nb::handle x, nb::handle y, nb::handle s) {
        auto [a, b] = binary_args(x, y, "where");
        return where(arg_like(c, Dtype::bool_, "where"), a, b, to_stream(s));
      },
      nb::arg("condition"), nb::arg("x"), nb::arg("y"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "x where condition is true, else y.");
  m.def(
      "clip",
      [](nb::handle a, nb::handle lo, nb::handle hi, nb::handle s) {
        Array x = arg(a);
        std::optional<Array> l, h;
        if (!lo.is_none()) l = arg_like(lo, x.dtype(), "clip");
        if (!hi.is_none()) h = arg_like(hi, x.dtype(), "clip");
        return clip(x, l, h, to_stream(s));
      },
      nb::arg("a"), nb::arg("a_min").none(), nb::arg("a_max").none(), nb::kw_only(),
      nb::arg("stream").none() = nb::none(), "Limits values to [a_min, a_max] (either may be None).");

  // Creation.
  m.def(
      "zeros",
      [](nb::handle shape, nb::handle dtype, nb::handle s) {
        return full(int_list(shape, "zeros"), scalar_array(int64_t(0), dtype_or(dtype, Dtype::float32, "zeros")),
                    std::nullopt, to_stream(s), "zeros");
      },
      nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "An array of zeros.");
  m.def(
      "ones",
      [](nb::handle shape, nb::handle dtype, nb::handle s) {
        return full(int_list(shape, "ones"), scalar_array(int64_t(1), dtype_or(dtype, Dtype::float32, "ones")),
                    std::nullopt, to_stream(s), "ones");
      },
      nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "An array of ones.");
  m.def(
      "full",
      [](nb::handle shape, nb::handle vals, nb::handle dtype, nb::handle s) {
        std::optional<Dtype> d = to_dtype(dtype, "full");
        Array v = d ? to_array(vals, d) : arg(vals);  // Python floats keep their precision in float64
        return full(int_list(shape, "full"), v, d, to_stream(s));
      },
      nb::arg("shape"), nb::arg("vals"), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
      nb::arg("stream").none() = nb::none(), "An array of `shape` filled with `vals` (broadcast).");
  m.def(
      "zeros_like",
      [](const Array& a, nb::handle dtype, nb::handle s) {
        return filled_like(a, scalar_array(int64_t(0), dtype_or(dtype, a.dtype(), "zeros_like")), to_stream(s),
                           "zeros_like");
      },
      nb::arg("a"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Zeros with a's shape and dtype.");
  m.def(
      "ones_like",
      [](const Array& a, nb::handle dtype, nb::handle s) {
        return filled_like(a, scalar_array(int64_t(1), dtype_or(dtype, a.dtype(), "ones_like")), to_stream(s),
                           "ones_like");
      },
      nb::arg("a"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Ones with a's shape and dtype.");
  // arange's two forms, MLX's overloads: (start, stop, step=None, dtype=None) and (stop, step=None,
  // dtype=None). Numbers are Python bools, ints (within int64) and floats; anything else falls to the
  // next form, and a call that fits neither raises TypeError. Without a dtype, the promotion of the
  // numbers' own: bool, int32 (int64 for a value beyond int32), float32.
  static constexpr auto arange_of = [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype,
                                       nb::handle s) {
    if (stop.is_none()) throw nb::next_overload();
    double v[3] = {0, 0, 1};
    std::optional<Dtype> inferred;
    nb::handle args[3] = {start, stop, step};
    for (int k = 0; k < 3; ++k) {
      PyObject* o = args[k].ptr();
      if (args[k].is_none()) continue;
      Dtype d = Dtype::float32;
      if (PyBool_Check(o)) {
        d = Dtype::bool_, v[k] = o == Py_True;
      } else if (PyLong_Check(o)) {
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) throw nb::next_overload();
        d = i < INT32_MIN || i > INT32_MAX ? Dtype::int64 : Dtype::int32, v[k] = double(i);
      } else if (PyFloat_Check(o)) {
        v[k] = PyFloat_AS_DOUBLE(o);
      } else {
        throw nb::next_overload();
      }
      inferred = inferred ? promote(*inferred, d) : d;
    }
    return arange(v[0], v[1], v[2], to_dtype(dtype, "arange").value_or(*inferred), to_stream(s));
  };
  m.def(
      "arange",
      [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype, nb::handle s) {
        if (!dtype.is_none() && !nb::isinstance<Dtype>(dtype)) throw nb::next_overload();
        if (stop.is_none()) return arange_of(nb::none(), start, step, dtype, s);  // arange(stop, None, step)
        return arange_of(start, stop, step, dtype, s);
      },
      nb::arg("start"), nb::arg("stop").none(), nb::arg("step").none() = nb::none(),
      nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Evenly spaced values in [start, stop) with `step` (default 1).");
  m.def(
      "arange",
      [](nb::handle stop, nb::handle step, nb::handle dtype, nb::handle s) {
        return arange_of(nb::none(), stop, step, dtype, s);
      },
      nb::arg("stop"), nb::arg("step").none() = nb::none(), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
      nb::arg("stream").none() = nb::none());  // its docstring: the first form's
  m.def(
      "linspace",
      [](double start, double stop, int num, bool endpoint, nb::handle dtype, nb::handle s) {
        return linspace(start, stop, num, endpoint, dtype_or(dtype, Dtype::float32, "linspace"), to_stream(s));
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("num") = 50, nb::arg("endpoint") = true,
      nb::arg("dtype").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "`num` evenly spaced values from start to stop (stop included with `endpoint`).");
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> mcols, int64_t k, nb::handle dtype, nb::handle s) {
        return eye(n, mcols.value_or(n), k, dtype_or(dtype, Dtype::float32, "eye"), to_stream(s));
      },
      nb::arg("n"), nb::arg("m").none() = nb::none(), nb::arg("k") = 0, nb::arg("dtype").none() = nb::none(),
      nb::kw_only(), nb::arg("stream").none() = nb::none(), "Ones on the k-th diagonal, zeros elsewhere.");
  m.def(
      "identity",
      [](int64_t n, nb::handle dtype, nb::handle s) {
        return eye(n, n, 0, dtype_or(dtype, Dtype::float32, "identity"), to_stream(s));
      },
      nb::arg("n"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The n x n identity matrix.");
  m.def(
      "tri",
      [](int64_t n, std::optional<int64_t> mcols, int64_t k, nb::handle dtype, nb::handle s) {
        return tri(n, mcols.value_or(n), k, dtype_or(dtype, Dtype::float32, "tri"), to_stream(s));
      },
      nb::arg("n"), nb::arg("m").none() = nb::none(), nb::arg("k") = 0, nb::arg("dtype").none() = nb::none(),
      nb::kw_only(), nb::arg("stream").none() = nb::none(), "Ones at and below the k-th diagonal.");
  m.def(
      "tril", [](nb::handle x, int64_t k, nb::handle s) { return tril(arg(x), k, to_stream(s)); }, nb::arg("x"),
      nb::arg("k") = 0, nb::kw_only(), nb::arg("stream").none() = nb::none(), "Zeros above the k-th diagonal.");
  m.def(
      "triu", [](nb::handle x, int64_t k, nb::handle s) { return triu(arg(x), k, to_stream(s)); }, nb::arg("x"),
      nb::arg("k") = 0, nb::kw_only(), nb::arg("stream").none() = nb::none(), "Zeros below the k-th diagonal.");
  m.def(
      "astype", [](nb::handle a, Dtype d, nb::handle s) { return astype(arg(a), d, to_stream(s)); }, nb::arg("a"),
      nb::arg("dtype").noconvert(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "A copy converted to `dtype`.");
  m.def(
      "view", [](nb::handle a, Dtype d, nb::handle s) { return view(arg(a), d, to_stream(s)); }, nb::arg("a"),
      nb::arg("dtype").noconvert(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The same bytes read as `dtype`.");
  // fp8 (e4m3): nuvec.to_fp8 / from_fp8 (python/nuvec/_fp8.py) check their arguments' types first.
  m.def(
      "_to_fp8", [](const Array& x, nb::handle s) { return to_fp8(x, to_stream(s)); }, nb::arg("x"),
      nb::arg("stream").none() = nb::none(), "e4m3 codes (uint8) of a real floating array.");
  m.def(
      "_from_fp8", [](const Array& x, Dtype d, nb::handle s) { return from_fp8(x, d, to_stream(s)); }, nb::arg("x"),
      nb::arg("dtype"), nb::arg("stream").none() = nb::none(), "e4m3 codes (uint8) decoded to `dtype`.");

  m.def(
      "_unique",
      [](const Array& a, int64_t size, std::optional<Array> fill, nb::handle s) {
        std::vector<Array> r = unique(a, size, fill, to_stream(s));
        return nb::make_tuple(r[0], r[1], r[2], r[3]);
      },
      nb::arg("a"), nb::arg("size"), nb::arg("fill").none(), nb::arg("stream").none() = nb::none(),
      "(values, first indices, inverse, counts) of nuvec.unique (python/nuvec/_composed.py).");

  struct WindowInfo {
    const char* name;
    Window w;
    const char* doc;
  };
  const WindowInfo windows[] = {
      {"bartlett", Window::bartlett, "The triangular window of M points, 1 - |2n / (M - 1) - 1|, in float32."},
      {"blackman", Window::blackman, "The Blackman window of M points, in float32."},
      {"hamming", Window::hamming, "The Hamming window of M points, 0.54 - 0.46 cos(2 pi n / (M - 1)), in float32."},
      {"hanning", Window::hanning, "The Hann window of M points, 0.5 - 0.5 cos(2 pi n / (M - 1)), in float32."},
  };
  for (const WindowInfo& info : windows) {
    Window w = info.w;
    m.def(
        info.name, [w](int64_t M, nb::handle s) { return window(w, M, to_stream(s)); }, nb::arg("M"), nb::kw_only(),
        nb::arg("stream").none() = nb::none(), info.doc);
  }

  // Layout.
  m.def(
      "reshape",
      [](nb::handle a, nb::handle shape, nb::handle s) {
        return reshape(arg(a), int_list(shape, "reshape"), to_stream(s));
      },
      nb::arg("a"), nb::arg("shape"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The same elements in a new shape (a view when strides allow).");
  m.def(
      "transpose",
      [](nb::handle a, std::optional<std::vector<int>> axes, nb::handle s) {
        return transpose(arg(a), axes.value_or(std::vector<int>{}), to_stream(s));
      },
      nb::arg("a"), nb::arg("axes").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Permutes the axes (reverses them by default); a view.");
  m.def(
      "broadcast_to",
      [](nb::handle a, nb::handle shape, nb::handle s) {
        return broadcast_to(arg(a), int_list(shape, "broadcast_to"), to_stream(s));
      },
      nb::arg("a"), nb::arg("shape"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "A view of `a` broadcast to `shape`.");
}

}  // namespace nuvec::python
