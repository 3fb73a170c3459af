// Private bindings of the factorisation kernels (backend/cpu/factor.h) for their tests and
// benchmark: they work in place on writable buffers (NumPy arrays), whose row stride is the
// leading dimension, so no copy is timed and lda > n is a slice of a wider array.
#include <nanobind/nanobind.h>

#include <algorithm>
#include <string>

#include "backend/cpu/factor.h"
#include "backend/cpu/matmul.h"
#include "core/errors.h"

namespace nb = nanobind;

namespace nuvec::python {
namespace {

// A buffer's data and geometry (the object outlives the call, which is all the data is used for).
struct View {
  char* data;
  char kind;  // the struct-format letter: 'f', 'd', 'i', ...
  int64_t ndim, rows, cols, ld;
};

View view(nb::handle h, const char* op, bool writable) {
  Py_buffer b;
  if (PyObject_GetBuffer(h.ptr(), &b, PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) != 0)
    throw nb::python_error();
  std::string fmt = b.format ? b.format : "B";
  View v{static_cast<char*>(b.buf), fmt.empty() ? 'B' : fmt.back(), b.ndim, 1, 1, 0};
  bool ok = (fmt.size() == 1 || (fmt.size() == 2 && (fmt[0] == '<' || fmt[0] == '=' || fmt[0] == '@')));
  if (b.ndim >= 1) v.cols = b.shape[b.ndim - 1];
  if (b.ndim == 2) v.rows = b.shape[0];
  ok &= b.ndim == 1 || b.ndim == 2;
  if (ok && v.cols > 1) ok &= b.strides[b.ndim - 1] == b.itemsize;
  v.ld = v.cols;
  if (ok && b.ndim == 2 && v.rows > 1) {
    ok &= b.strides[0] % b.itemsize == 0 && b.strides[0] / b.itemsize >= v.cols;
    v.ld = b.strides[0] / b.itemsize;
  }
  PyBuffer_Release(&b);
  if (!ok) throw OpError(op, "expected a buffer of rows with contiguous columns");
  v.ld = std::max<int64_t>(v.ld, 1);
  return v;
}

Dtype float_dtype(const View& v, const char* op) {
  if (v.kind == 'f') return Dtype::float32;
  if (v.kind == 'd') return Dtype::float64;
  throw OpError(op, "float32 or float64 only");
}

}  // namespace

void init_factor_testing(nb::module_& m) {
  m.def(
      "_factor_lu",
      [](nb::handle a, nb::handle pivots) {
        View va = view(a, "_factor_lu", true), vp = view(pivots, "_factor_lu", true);
        Dtype d = float_dtype(va, "_factor_lu");
        if (va.ndim != 2 || vp.ndim != 1 || vp.kind != 'i' || vp.cols != std::min(va.rows, va.cols))
          throw OpError("_factor_lu", "a matrix and min(m, n) int32 pivots");
        nb::gil_scoped_release release;
        return cpu::lu_factor(d, va.data, va.rows, va.cols, va.ld, reinterpret_cast<int32_t*>(vp.data));
      },
      nb::arg("a"), nb::arg("pivots"), "P A = L U in place (cpu::lu_factor); returns LAPACK's info.");
  m.def(
      "_factor_triangular_solve",
      [](nb::handle t, nb::handle b, bool lower, bool transpose, bool unit_diagonal) {
        View vt = view(t, "_factor_triangular_solve", false), vb = view(b, "_factor_triangular_solve", true);
        Dtype d = float_dtype(vt, "_factor_triangular_solve");
        if (vt.ndim != 2 || vb.ndim != 2 || vt.rows != vt.cols || vb.rows != vt.rows || vb.kind != vt.kind)
          throw OpError("_factor_triangular_solve", "a square triangle and a matrix of as many rows, one dtype");
        nb::gil_scoped_release release;
        cpu::triangular_solve(d, vt.data, vt.rows, vt.ld, lower, transpose, unit_diagonal, vb.data, vb.cols, vb.ld);
      },
      nb::arg("t"), nb::arg("b"), nb::arg("lower"), nb::arg("transpose"), nb::arg("unit_diagonal"),
      "op(T) X = B in place of B (cpu::triangular_solve).");
  m.def(
      "_factor_multiply_add",
      [](nb::handle a, nb::handle b, nb::handle c) {
        View va = view(a, "_factor_multiply_add", false), vb = view(b, "_factor_multiply_add", false);
        View vc = view(c, "_factor_multiply_add", true);
        Dtype d = float_dtype(vc, "_factor_multiply_add");
        if (va.ndim != 2 || vb.ndim != 2 || vc.ndim != 2 || va.kind != vc.kind || vb.kind != vc.kind ||
            va.cols != vb.rows || vc.rows != va.rows || vc.cols != vb.cols)
          throw OpError("_factor_multiply_add", "C (m x n) += A (m x k) B (k x n), one dtype");
        nb::gil_scoped_release release;
        cpu::gemm(d, {va.data, va.ld, 1}, {vb.data, vb.ld, 1}, va.rows, vb.cols, va.cols, vc.data, vc.ld, true);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"), "C += A B in place (cpu::gemm's accumulate form).");
  m.def(
      "_factor_cholesky",
      [](nb::handle a, bool upper) {
        View va = view(a, "_factor_cholesky", true);
        Dtype d = float_dtype(va, "_factor_cholesky");
        if (va.ndim != 2 || va.rows != va.cols) throw OpError("_factor_cholesky", "a square matrix");
        nb::gil_scoped_release release;
        return cpu::cholesky(d, va.data, va.rows, va.ld, upper);
      },
      nb::arg("a"), nb::arg("upper"), "Cholesky in place in one triangle (cpu::cholesky); returns LAPACK's info.");
}

}  // namespace nuvec::python
