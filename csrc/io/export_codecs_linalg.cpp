// The codec rows of nuvec.linalg's primitives and of the Fourier transform (export_codecs.cpp
// holds the core table; codec_for searches every family).
#include <algorithm>
#include <iterator>

#include "core/primitives/fft.h"
#include "core/primitives/linalg.h"
#include "core/primitives/linalg_spectral.h"
#include "io/export_codec_util.h"

namespace nuvec::io::codec {
namespace {

// Decompose's names are its functions' (svd's for svd_values too), so the kinds get their own.
constexpr const char* kDecompositionNames[] = {"qr", "svd", "svd_values", "eigh", "eigvalsh", "eig", "eigvals"};
constexpr int kDecompositions = int(Decomposition::eigvals) + 1;
static_assert(std::size(kDecompositionNames) == kDecompositions);
const char* decomposition_name(Decomposition k) { return kDecompositionNames[int(k)]; }

// Shapeless rules: a (..., N, N) square, and for the solves b (..., N, K) of a's batch shape.
Shape square(const Primitive& p, const std::vector<Array>& in, const Shape&) {
  const Array& a = in[0];
  need(a.ndim() >= 2 && a.shape(-1) == a.shape(-2), p.name(), "the matrices are not square");
  return a.shape();
}
Shape solved(const Primitive& p, const std::vector<Array>& in, const Shape& recorded) {
  square(p, in, recorded);
  const Array &a = in[0], &b = in[1];
  need(b.ndim() == a.ndim() && b.shape(-2) == a.shape(-1) &&
           Shape(a.shape().begin(), a.shape().end() - 2) == Shape(b.shape().begin(), b.shape().end() - 2),
       p.name(), "b does not fit a");
  return b.shape();
}

Shape batch_with(const Array& a, std::initializer_list<int64_t> tail) {
  Shape s(a.shape().begin(), a.shape().end() - 2);
  s.insert(s.end(), tail);
  return s;
}
std::vector<Shape> lu_shapes(const Primitive& p, const std::vector<Array>& in) {
  const Array& a = in[0];
  need(a.ndim() >= 2, p.name(), "fewer than 2 dimensions");
  int64_t m = a.shape(-2), n = a.shape(-1);
  return {a.shape(), batch_with(a, {std::min(m, n)}), batch_with(a, {m})};
}
std::vector<Shape> decompose_shapes(const Primitive& p, const std::vector<Array>& in) {
  const Array& a = in[0];
  need(a.ndim() >= 2, p.name(), "fewer than 2 dimensions");
  int64_t m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  switch (as<Decompose>(p).kind()) {
    case Decomposition::qr: return {batch_with(a, {m, k}), batch_with(a, {k, n})};
    case Decomposition::svd: return {batch_with(a, {m, m}), batch_with(a, {k}), batch_with(a, {n, n})};
    case Decomposition::svd_values: return {batch_with(a, {k})};
    default: break;  // the eigen-decompositions
  }
  need(m == n, p.name(), "the matrices are not square");
  Decomposition d = as<Decompose>(p).kind();
  if (d == Decomposition::eigvalsh || d == Decomposition::eigvals) return {batch_with(a, {n})};
  return {batch_with(a, {n}), a.shape()};
}

const Codec kCodecs[] = {
    NUVEC_PLAIN(LUFactor, "lu_factor", nullptr, outputs<3>, lu_shapes),
    {"solve", is<Solve>, [](const Primitive& p) { return flags({{"transpose", as<Solve>(p).transpose()}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> { return std::make_shared<Solve>(flag_at(j, "transpose")); },
     solved},
    {"solve_triangular", is<TriangularSolve>,
     [](const Primitive& p) {
       const auto& t = as<TriangularSolve>(p);
       return flags({{"upper", t.upper()}, {"transpose", t.transpose()}, {"unit", t.unit()}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<TriangularSolve>(flag_at(j, "upper"), flag_at(j, "transpose"), flag_at(j, "unit"));
     },
     solved},
    {"cholesky", is<Cholesky>, [](const Primitive& p) { return flags({{"upper", as<Cholesky>(p).upper()}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> { return std::make_shared<Cholesky>(flag_at(j, "upper")); },
     square},
    {"inverse", is<Inverse>,
     [](const Primitive& p) {
       return flags({{"triangular", as<Inverse>(p).triangular()}, {"upper", as<Inverse>(p).upper()}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Inverse>(flag_at(j, "triangular"), flag_at(j, "upper"));
     },
     square},
    {"decompose", is<Decompose>,
     [](const Primitive& p) {
       return json_obj({{"kind", json_str(decomposition_name(as<Decompose>(p).kind()))},
                        {"upper", json_int(as<Decompose>(p).upper())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Decompose>(
           by_name<Decomposition>(member(j, "kind"), kDecompositions, decomposition_name), flag_at(j, "upper"));
     },
     nullptr,
     [](const Primitive& p) -> size_t {
       switch (as<Decompose>(p).kind()) {
         case Decomposition::svd: return 3;
         case Decomposition::qr:
         case Decomposition::eigh:
         case Decomposition::eig: return 2;
         default: return 1;
       }
     },
     decompose_shapes},
    {"fft", is<FFT>,
     [](const Primitive& p) {
       const auto& f = as<FFT>(p);
       return json_obj({{"axes", ints(f.axes())},
                        {"inverse", json_int(f.inverse())},
                        {"real", json_int(f.real())},
                        {"scale", real(f.scale())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<FFT>(int32_list(member(j, "axes")), flag_at(j, "inverse"), flag_at(j, "real"),
                                    real_at(j, "scale"));
     },
     nullptr},
};

}  // namespace

std::span<const Codec> linalg_codecs() { return kCodecs; }

}  // namespace nuvec::io::codec
