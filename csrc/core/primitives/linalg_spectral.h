// The spectral and orthogonal decompositions of nuvec.linalg (docs/linalg.md, "Decompositions"):
// one primitive over a batch of matrices in the last two axes, its kind saying which
// factorisation and outputs. The CPU kernel runs LAPACK (backend/cpu/linalg_spectral.cpp).
#pragma once
#include "core/primitive.h"

namespace nuvec {

// Outputs by kind, for input (..., M, N) with K = min(M, N):
//   qr: Q (..., M, K), R (..., K, N);  svd: U (..., M, M), S (..., K), Vt (..., N, N);
//   svd_values: S;  eigh: w (..., N) ascending, V (..., N, N);  eigvalsh: w;
//   eig: w (..., N), V (..., N, N) complex64;  eigvals: w complex64.
// Eigen- and singular vectors are the columns of V and U (rows of Vt), each of unit norm.
enum class Decomposition { qr, svd, svd_values, eigh, eigvalsh, eig, eigvals };

class Decompose : public Primitive {
 public:
  Decompose(Decomposition kind, bool upper) : kind_(kind), upper_(upper) {}
  const char* name() const override;
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* d = dynamic_cast<const Decompose*>(&o);
    return d && d->kind_ == kind_ && d->upper_ == upper_;
  }
  Decomposition kind() const { return kind_; }
  bool upper() const { return upper_; }  // eigh / eigvalsh: read the upper triangle

 private:
  Decomposition kind_;
  bool upper_;
};

}  // namespace nuvec
