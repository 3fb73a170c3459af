#include "core/ops/linalg_spectral.h"

#include <algorithm>
#include <string>

namespace nuvec {

namespace {

const char* op_name(Decomposition k) {
  switch (k) {
    case Decomposition::qr: return "linalg.qr";
    case Decomposition::svd:
    case Decomposition::svd_values: return "linalg.svd";
    case Decomposition::eigh: return "linalg.eigh";
    case Decomposition::eigvalsh: return "linalg.eigvalsh";
    case Decomposition::eig: return "linalg.eig";
    case Decomposition::eigvals: return "linalg.eigvals";
  }
  return "linalg";
}

bool square_only(Decomposition k) { return k >= Decomposition::eigh; }

}  // namespace

const char* Decompose::name() const { return op_name(kind_); }

std::vector<Array> decompose(const Array& a, Decomposition kind, bool upper, Stream s) {
  const char* op = op_name(kind);
  Dtype dt = a.dtype();
  bool complex_ok = kind != Decomposition::qr;
  if (dt != Dtype::float32 && dt != Dtype::float64 && !(complex_ok && dt == Dtype::complex64))
    throw OpError(op, std::string("arrays must have type float32, float64") + (complex_ok ? " or complex64" : "") +
                          "; received " + name_of(dt));
  if (a.ndim() < 2)
    throw OpError(op, "arrays must have >= 2 dimensions; received " + std::to_string(a.ndim()) + " dimensions");
  int64_t m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  if (square_only(kind) && m != n) throw OpError(op, "only defined for square matrices");
  Shape batch(a.shape().begin(), a.shape().end() - 2);
  auto with = [&](std::initializer_list<int64_t> tail) {
    Shape sh = batch;
    sh.insert(sh.end(), tail);
    return sh;
  };
  Dtype real = dt == Dtype::complex64 ? Dtype::float32 : dt;
  std::vector<Shape> shapes;
  std::vector<Dtype> dtypes;
  switch (kind) {
    case Decomposition::qr: shapes = {with({m, k}), with({k, n})}, dtypes = {dt, dt}; break;
    case Decomposition::svd: shapes = {with({m, m}), with({k}), with({n, n})}, dtypes = {dt, real, dt}; break;
    case Decomposition::svd_values: shapes = {with({k})}, dtypes = {real}; break;
    case Decomposition::eigh: shapes = {with({n}), with({n, n})}, dtypes = {real, dt}; break;
    case Decomposition::eigvalsh: shapes = {with({n})}, dtypes = {real}; break;
    case Decomposition::eig: shapes = {with({n}), with({n, n})}, dtypes = {Dtype::complex64, Dtype::complex64}; break;
    case Decomposition::eigvals: shapes = {with({n})}, dtypes = {Dtype::complex64}; break;
  }
  return Array::lazy_multi(std::move(shapes), std::move(dtypes), std::make_shared<Decompose>(kind, upper), {a}, s);
}

}  // namespace nuvec
