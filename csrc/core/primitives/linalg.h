// The primitives of nuvec.linalg's LU / triangular / Cholesky family. Each works on the last two
// axes, batched over the leading ones (every input has the same batch shape: the ops in
// core/ops/linalg.h broadcast first), in float32 or float64. The other functions (lu, det,
// slogdet, cholesky_inv, solve_triangular's vector form) are ops over these.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// a (..., M, N) -> LU (..., M, N): L below the diagonal (unit diagonal implied), U on and above;
// pivots (..., K) uint32, K = min(M, N): row i was swapped with row pivots[i] (LAPACK's, 0-based);
// perm (..., M) uint32 with a = (L @ U)[perm] (MLX's lu's P). Differentiable for square a.
class LUFactor : public Primitive {
 public:
  const char* name() const override { return "lu_factor"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const LUFactor*>(&o); }
};

// X with a X = b (or a^T X = b when `transpose`): a (..., N, N), b (..., N, K). Raises at
// evaluation when a is singular (as MLX).
class Solve : public Primitive {
 public:
  explicit Solve(bool transpose) : transpose_(transpose) {}
  const char* name() const override { return "solve"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Solve*>(&o);
    return p && p->transpose_ == transpose_;
  }
  bool transpose() const { return transpose_; }

 private:
  bool transpose_;
};

// X with op(T) X = b for the lower (upper) triangle T of t (..., N, N), its diagonal taken as
// ones when `unit`; op(T) is T or T^T. The other triangle is never read. Raises at evaluation on
// a zero on the diagonal (as MLX, whose solve_triangular inverts t).
class TriangularSolve : public Primitive {
 public:
  TriangularSolve(bool upper, bool transpose, bool unit) : upper_(upper), transpose_(transpose), unit_(unit) {}
  const char* name() const override { return "solve_triangular"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const TriangularSolve*>(&o);
    return p && p->upper_ == upper_ && p->transpose_ == transpose_ && p->unit_ == unit_;
  }
  bool upper() const { return upper_; }
  bool transpose() const { return transpose_; }
  bool unit() const { return unit_; }

 private:
  bool upper_, transpose_, unit_;
};

// L with L L^T = S (or U with U^T U = S when `upper`), S the symmetric matrix of a's lower
// (upper) triangle; the other triangle of the result is zero. As MLX, a matrix that is not
// positive definite raises nothing: the factorisation stops where LAPACK's does.
class Cholesky : public Primitive {
 public:
  explicit Cholesky(bool upper) : upper_(upper) {}
  const char* name() const override { return "cholesky"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Cholesky*>(&o);
    return p && p->upper_ == upper_;
  }
  bool upper() const { return upper_; }

 private:
  bool upper_;
};

// a^-1, or when `triangular` the inverse of a's lower (upper) triangle (a triangular result).
// Raises at evaluation when singular (as MLX).
class Inverse : public Primitive {
 public:
  Inverse(bool triangular, bool upper) : triangular_(triangular), upper_(upper) {}
  const char* name() const override { return triangular_ ? "tri_inv" : "inv"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Inverse*>(&o);
    return p && p->triangular_ == triangular_ && p->upper_ == upper_;
  }
  bool triangular() const { return triangular_; }
  bool upper() const { return upper_; }

 private:
  bool triangular_, upper_;
};

}  // namespace nuvec
