// The layouts every backend's kernels ask for: a reshape's view, a slice update's window.
#include "core/primitives/shape.h"

#include <string>

#include "core/errors.h"

namespace nuvec {

bool reshape_strides(const Array& x, const Shape& shape, Strides& out) {
  Shape os;
  Strides ost;
  for (int i = 0; i < x.ndim(); ++i)
    if (x.shape(i) != 1) os.push_back(x.shape(i)), ost.push_back(x.strides()[i]);
  out.assign(shape.size(), 0);
  if (x.size() == 0) {
    out = Array::row_strides(shape);
    return true;
  }
  size_t oi = 0, ni = 0;
  while (ni < shape.size() && oi < os.size()) {
    size_t oj = oi + 1, nj = ni + 1;
    int64_t np = shape[ni], op = os[oi];
    while (np != op) {
      if (np < op)
        np *= shape[nj++];
      else
        op *= os[oj++];
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (ost[k] != os[k + 1] * ost[k + 1]) return false;
    out[nj - 1] = ost[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) out[k - 1] = out[k] * shape[k];
    ni = nj, oi = oj;
  }
  return true;
}

Array slice_update_window(const SliceUpdate& p, const Array& out, const Array& update) {
  Strides st(size_t(out.ndim()));
  int64_t offset = out.offset();
  for (int i = 0; i < out.ndim(); ++i) {
    st[size_t(i)] = out.strides()[size_t(i)] * p.step()[size_t(i)];
    offset += p.start()[size_t(i)] * out.strides()[size_t(i)];
  }
  return Array::from_buffer(update.shape(), out.dtype(), out.buffer(), std::move(st), offset);
}

int64_t slice_update_offset(const DynamicSliceUpdate& p, const Array& out, const Shape& window, const Array& start) {
  const std::vector<int>& axes = p.axes();
  int64_t offset = out.offset();
  for (size_t k = 0; k < axes.size(); ++k) {
    const int d = axes[k];
    int64_t v = start.dtype() == Dtype::int64 ? start.data<int64_t>()[k] : start.data<int32_t>()[k];
    const int64_t n = out.shape(d), len = window[size_t(d)];
    if (v < 0) v += n;
    if (v < 0 || v + len > n)
      throw KernelError(EvalErrorKind::index, "a window of " + std::to_string(len) + " from " + std::to_string(v) +
                                                  " does not fit axis " + std::to_string(d) + " of size " +
                                                  std::to_string(n));
    offset += v * out.strides()[size_t(d)];
  }
  return offset;
}

}  // namespace nuvec
