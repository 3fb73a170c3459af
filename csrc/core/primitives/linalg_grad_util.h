// Matrix helpers of nuvec.linalg's differentiation rules (linalg_grad.cpp, linalg_spectral_grad.cpp).
#pragma once
#include "core/ops.h"

namespace nuvec::grad {

inline Array mT(const Array& x) { return matrix_transpose(x, x.stream()); }
inline Array mm(const Array& a, const Array& b) { return matmul(a, b, a.stream()); }
// The identity of x's last axis, in x's dtype (broadcasts against x's batch).
inline Array eye_like(const Array& x) { return eye(x.shape(-1), x.shape(-1), 0, x.dtype(), x.stream()); }
// x[..., from:to] along `axis` (-1 or -2).
inline Array slice_axis(const Array& x, int axis, int64_t from, int64_t to) {
  Shape start(x.ndim(), 0), stop = x.shape(), step(x.ndim(), 1);
  start[x.ndim() + axis] = from;
  stop[x.ndim() + axis] = to;
  return slice(x, start, stop, step, x.stream());
}

}  // namespace nuvec::grad
