// convolve for the C API: python/nuvec/_composed.py composes it from core ops in Python; this is
// the same composition (the windows of the padded longer input times the reversed shorter one).
#include "c_api/capi_ops.h"

namespace nuvec::capi {

Array convolve(const Array& a0, const Array& v0, const std::string& mode, Stream s) {
  if (a0.ndim() != 1 || v0.ndim() != 1) throw OpError("convolve", "inputs must be 1-D");
  if (a0.size() == 0 || v0.size() == 0) throw OpError("convolve", "inputs cannot be empty");
  if (mode != "full" && mode != "same" && mode != "valid")
    throw OpError("convolve", "mode must be 'full', 'same' or 'valid', not '" + mode + "'");
  const bool swap = v0.size() > a0.size();
  const Array& a = swap ? v0 : a0;
  const Array& v = swap ? a0 : v0;
  if (!is_inexact(a.dtype())) throw OpError("convolve", "only inexact dtypes are supported");
  const int64_t n = a.size(), m = v.size();
  Array x = pad(a, {{m - 1, m - 1}}, "constant", scalar_array(int64_t(0), a.dtype()), s);
  const int64_t start = mode == "full" ? 0 : mode == "same" ? (m - 1) / 2 : m - 1;
  const int64_t length = mode == "full" ? n + m - 1 : mode == "same" ? n : n - m + 1;
  Array windows = binary(BinaryOp::add, reshape(arange(start, start + length, 1, Dtype::int32, s), {length, 1}, s),
                         reshape(arange(0, m, 1, Dtype::int32, s), {1, m}, s), s);
  Array products = binary(BinaryOp::multiply, take(x, windows, std::nullopt, s), flip(v, std::nullopt, s), s);
  return sum(products, std::vector<int>{1}, false, s);
}

}  // namespace nuvec::capi
