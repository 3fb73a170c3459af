// Scans on the GPU: one thread per row along the axis, combining strictly in order (first to
// last, or last to first), as the CPU does; so every output is the CPU's sequential scan, and
// the same bits run to run. Rows along an inner axis sit side by side in memory, so a warp's
// threads read neighbouring elements at each step.
#include <cmath>

#include "backend/cuda/accumulate.cuh"
#include "backend/cuda/layout.cuh"
#include "core/primitives/scan.h"

namespace nuvec::cuda {
namespace {

constexpr int kBlock = 256;

template <class A> __device__ __forceinline__ A scan_identity(ScanOp op) {
  switch (op) {
    case ScanOp::sum: return to<A>(0);
    case ScanOp::prod: return to<A>(1);
    case ScanOp::max: return extreme<A>(false);
    case ScanOp::min: return extreme<A>(true);
    case ScanOp::logaddexp: return extreme<A>(false);
  }
  return A{};
}

// log(e^a + e^b), as the CPU's (real types only).
template <class A> __device__ __forceinline__ A log_add_exp(A a, A b) {
  if (a != a || b != b) return a + b;
  if (a == b) return a + A(0.69314718055994530942);  // also infinities of one sign
  A m = a > b ? a : b;
  return m + log1p(exp(-fabs(a - b)));
}

template <class A> __device__ __forceinline__ A scan_step(ScanOp op, A a, A b) {
  switch (op) {
    case ScanOp::sum: return add(a, b);
    case ScanOp::prod: return mul(a, b);
    case ScanOp::max:  // a NaN propagates (NumPy's maximum)
      if (is_nan(a)) return a;
      return is_nan(b) || greater(b, a) ? b : a;
    case ScanOp::min:
      if (is_nan(a)) return a;
      return is_nan(b) || greater(a, b) ? b : a;
    case ScanOp::logaddexp:
      if constexpr (std::is_floating_point_v<A>) return log_add_exp(a, b);
      break;
  }
  return a;
}

template <class T> __global__ void scan_kernel(const T* x, Strided kept, int64_t stride, Strided out_kept,
                                               int64_t out_stride, int64_t rows, int64_t n, ScanOp op, bool reverse,
                                               bool inclusive, T* out) {
  using A = Compute<T>;
  int64_t o = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (o >= rows) return;
  const T* src = x + kept.offset(o);
  T* dst = out + out_kept.offset(o);
  A acc = scan_identity<A>(op);
  for (int64_t s = 0; s < n; ++s) {
    int64_t i = reverse ? n - 1 - s : s;
    A v = to<A>(src[i * stride]);
    if (inclusive) {
      acc = scan_step(op, acc, v);
      dst[i * out_stride] = to<T>(acc);
    } else {
      dst[i * out_stride] = to<T>(acc);
      acc = scan_step(op, acc, v);
    }
  }
}

void eval_scan(const Scan& p, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  Dtype d = x.dtype();
  // What the CPU refuses (sums of bool, logcumsumexp of integers) it refuses with its message;
  // complex logcumsumexp needs complex log and exp.
  bool supported = p.op() == ScanOp::logaddexp ? is_floating(d) : !(p.op() == ScanOp::sum && d == Dtype::bool_);
  Strided kept;
  auto others = [&](int i) { return i != p.axis(); };
  if (!supported || x.ndim() == 0 || !walk(x, others, kept)) return on_host(p, in, out);
  allocate(out[0]);
  if (out[0].size() == 0) return;
  Strided out_kept;
  walk(out[0], others, out_kept);  // (merges at least as well as the input's walk)
  int64_t n = x.shape(p.axis()), rows = x.size() / n;
  dispatch(d, [&](auto zero) {
    using T = decltype(zero);
    scan_kernel<T><<<unsigned(ceil_div(rows, kBlock)), kBlock, 0, stream()>>>(
        device_in<T>(x), kept, x.strides()[p.axis()], out_kept, out[0].strides()[p.axis()], rows, n, p.op(),
        p.reverse(), p.inclusive(), device_out<T>(out[0]));
    check_launch("scanning");
  });
}

}  // namespace

void register_scan_kernels(Backend& b) { b.add<Scan, eval_scan>(); }

}  // namespace nuvec::cuda
