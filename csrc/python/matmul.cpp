// Matrix products: matmul and the contractions built on it, and the array's @ operator.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/ops.h"
#include "core/ops/matmul.h"
#include "core/primitives/matmul.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

Array tensordot_axes(const Array& a, const Array& b, nb::handle axes, Stream s) {
  if (is_scalar_int(axes)) return tensordot(a, b, to_axis(axes), s);
  if ((PyList_Check(axes.ptr()) || PyTuple_Check(axes.ptr())) && nb::len(axes) == 2) {
    nb::sequence pair = nb::borrow<nb::sequence>(axes);
    return tensordot(a, b, axis_list(pair[0]), axis_list(pair[1]), s);
  }
  throw OpError("tensordot", "axes must be an int or a pair of axis lists");
}

std::vector<Array> arrays(const nb::args& xs) {
  std::vector<Array> out;
  for (nb::handle h : xs) out.push_back(arg(h));
  return out;
}

}  // namespace

void init_matmul(nb::module_& m) {
  m.attr("ROW_INDEPENDENT_ROWS") = kRowIndependentRows;
  m.def(
      "matmul", [](nb::handle a, nb::handle b, nb::handle s) { return matmul(arg(a), arg(b), to_stream(s)); },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Matrix product with NumPy's rules: 1-D operands are vectors, batch axes broadcast.");
  m.def(
      "addmm",
      [](nb::handle c, nb::handle a, nb::handle b, double alpha, double beta, nb::handle s) {
        return addmm(arg(c), arg(a), arg(b), alpha, beta, to_stream(s));
      },
      nb::arg("c"), nb::arg("a"), nb::arg("b"), nb::arg("alpha") = 1.0, nb::arg("beta") = 1.0, nb::kw_only(),
      nb::arg("stream").none() = nb::none(), "alpha * (a @ b) + beta * c.");
  m.def(
      "inner", [](nb::handle a, nb::handle b, nb::handle s) { return inner(arg(a), arg(b), to_stream(s)); },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Sum product over the last axes.");
  m.def(
      "outer", [](nb::handle a, nb::handle b, nb::handle s) { return outer(arg(a), arg(b), to_stream(s)); },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Outer product of the flattened operands.");
  m.def(
      "vecdot",
      [](nb::handle a, nb::handle b, int axis, nb::handle s) { return vecdot(arg(a), arg(b), axis, to_stream(s)); },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("axis") = -1, nb::arg("stream").none() = nb::none(),
      "sum(conj(a) * b) along `axis`, broadcasting the other axes.");
  m.def(
      "tensordot",
      [](nb::handle a, nb::handle b, nb::handle axes, nb::handle s) {
        return tensordot_axes(arg(a), arg(b), axes, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("axes") = 2, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Contraction over the last `axes` axes of a and the first of b, or over a pair of axis lists.");
  m.def(
      "einsum",
      [](const std::string& subscripts, nb::args operands, nb::handle s) {
        return einsum(subscripts, arrays(operands), to_stream(s));
      },
      nb::arg("subscripts"), nb::arg("operands"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Contractions in Einstein notation: products, sums, transposes, diagonals, ellipses.");
  m.def(
      "einsum_path",
      [](const std::string& subscripts, nb::args operands) {
        EinsumPath p = einsum_path(subscripts, arrays(operands));
        nb::list path;
        for (const auto& step : p.path) {
          nb::list positions;
          for (int k : step) positions.append(k);
          path.append(nb::tuple(positions));
        }
        return nb::make_tuple(path, p.info);
      },
      nb::arg("subscripts"), nb::arg("operands"),
      "einsum's contraction order (a list of position tuples) and a printable summary of its cost.");

  nb::object cls = m.attr("array");
  nb::setattr(
      cls, "__matmul__",
      nb::cpp_function([](const Array& a, nb::handle b) { return matmul(a, arg(b), default_stream(default_device())); },
                       nb::is_method(), nb::name("__matmul__"), nb::scope(cls)));
  nb::setattr(
      cls, "__rmatmul__",
      nb::cpp_function([](const Array& a, nb::handle b) { return matmul(arg(b), a, default_stream(default_device())); },
                       nb::is_method(), nb::name("__rmatmul__"), nb::scope(cls)));
  // `x @= y` replaces the array inside the Python object, as MLX (other names for it see the new value).
  nb::setattr(cls, "__imatmul__",
              nb::cpp_function(
                  [](nb::handle self, nb::handle b) -> nb::object {
                    Array& x = *nb::inst_ptr<Array>(self);
                    x = matmul(x, arg(b), default_stream(default_device()));
                    return nb::borrow(self);
                  },
                  nb::is_method(), nb::name("__imatmul__"), nb::scope(cls)));
}

}  // namespace nuvec::python
