// The Hadamard transform's argument rules, as MLX's: one node, or a product for N = 1.
#include "core/ops/hadamard.h"

#include <cmath>

#include "core/ops.h"
#include "core/primitives/hadamard.h"

namespace nuvec {

int64_t hadamard_m(int64_t n) {
  for (int64_t m : {1, 12, 20, 28}) {
    if (n % m) continue;
    int64_t p = n / m;
    if (p > 0 && (p & (p - 1)) == 0) return m;
  }
  return 0;
}

Array hadamard_transform(const Array& a, std::optional<double> scale, Stream s) {
  const char* op = "hadamard_transform";
  if (a.size() == 0) throw OpError(op, "empty arrays are not supported");
  int64_t n = a.ndim() > 0 ? a.shape(-1) : 1;
  // MLX takes the scale as a float32 and computes the default one as 1.0f / sqrt(n).
  float sc = scale ? float(*scale) : float(1.0f / std::sqrt(double(n)));
  Dtype d = is_floating(a.dtype()) ? a.dtype() : Dtype::float32;
  if (n == 1) return sc == 1.0f ? a : binary(BinaryOp::multiply, a, scalar_array(double(sc), d), s);
  if (!hadamard_m(n))
    throw OpError(op, "only sizes n = m * 2^k with m in (1, 12, 20, 28) are supported, not " + std::to_string(n));
  Array x = a.dtype() == d ? a : astype(a, d, s);
  return Array::lazy(a.shape(), d, std::make_shared<Hadamard>(sc, false), {x}, s);
}

}  // namespace nuvec
