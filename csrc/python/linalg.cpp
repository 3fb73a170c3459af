// nuvec._core._linalg: the LU / triangular / Cholesky ops of core/ops/linalg.h and pinv, norm and
// cross (core/ops/linalg_composed.h). python/nuvec/linalg.py gives them MLX's signatures.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/ops/linalg.h"
#include "core/ops/linalg_composed.h"
#include "python/convert.h"

namespace nuvec::python {

void init_linalg(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("_linalg", "nuvec.linalg's LU, triangular and Cholesky ops.");
  auto stream = nb::arg("stream").none() = nb::none();
  m.def(
      "lu_factor", [](nb::handle a, nb::handle s) { return linalg::lu_factor(arg(a), to_stream(s)); }, nb::arg("a"),
      stream, "(LU, pivots): L below the diagonal, U on and above; uint32 pivots, 0-based row swaps.");
  m.def(
      "lu",
      [](nb::handle a, nb::handle s) {
        std::vector<Array> r = linalg::lu(arg(a), to_stream(s));
        return nb::make_tuple(r[0], r[1], r[2]);
      },
      nb::arg("a"), stream, "(P, L, U) with a = (L @ U)[P].");
  m.def(
      "solve", [](nb::handle a, nb::handle b, nb::handle s) { return linalg::solve(arg(a), arg(b), to_stream(s)); },
      nb::arg("a"), nb::arg("b"), stream, "x with a @ x = b.");
  m.def(
      "solve_triangular",
      [](nb::handle a, nb::handle b, bool upper, nb::handle s) {
        return linalg::solve_triangular(arg(a), arg(b), upper, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("upper"), stream, "x with tri(a) @ x = b.");
  m.def(
      "inv", [](nb::handle a, nb::handle s) { return linalg::inv(arg(a), to_stream(s)); }, nb::arg("a"), stream,
      "a^-1.");
  m.def(
      "tri_inv", [](nb::handle a, bool upper, nb::handle s) { return linalg::tri_inv(arg(a), upper, to_stream(s)); },
      nb::arg("a"), nb::arg("upper"), stream, "The inverse of a's lower (upper) triangle.");
  m.def(
      "cholesky", [](nb::handle a, bool upper, nb::handle s) { return linalg::cholesky(arg(a), upper, to_stream(s)); },
      nb::arg("a"), nb::arg("upper"), stream, "The Cholesky factor.");
  m.def(
      "cholesky_inv",
      [](nb::handle a, bool upper, nb::handle s) { return linalg::cholesky_inv(arg(a), upper, to_stream(s)); },
      nb::arg("a"), nb::arg("upper"), stream, "The inverse of L L^T (U^T U) from its factor.");
  m.def(
      "det", [](nb::handle a, nb::handle s) { return linalg::det(arg(a), to_stream(s)); }, nb::arg("a"), stream,
      "The determinant.");
  m.def(
      "slogdet", [](nb::handle a, nb::handle s) { return linalg::slogdet(arg(a), to_stream(s)); }, nb::arg("a"), stream,
      "(sign, log|det|).");
  m.def(
      "pinv", [](nb::handle a, nb::handle s) { return linalg::pinv(arg(a), to_stream(s)); }, nb::arg("a"), stream,
      "The pseudo-inverse from the SVD.");
  m.def(
      "norm",
      [](nb::handle a, nb::handle ord, std::optional<std::vector<int>> axes, bool keepdims, nb::handle s) {
        linalg::NormOrder o;
        if (nb::isinstance<nb::str>(ord))
          o = nb::cast<std::string>(ord);
        else if (!ord.is_none())
          o = nb::cast<double>(nb::float_(ord));
        return linalg::norm(arg(a), o, axes, keepdims, to_stream(s));
      },
      nb::arg("a"), nb::arg("ord").none(), nb::arg("axes").none(), nb::arg("keepdims"), stream,
      "Vector (one axis) or matrix (two axes) norms; ord None, a number or a matrix norm's name.");
  m.def(
      "cross",
      [](nb::handle a, nb::handle b, int axis, nb::handle s) {
        return linalg::cross(arg(a), arg(b), axis, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("axis"), stream, "The cross product along `axis`.");
}

}  // namespace nuvec::python
