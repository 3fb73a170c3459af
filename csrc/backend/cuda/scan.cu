// Scans on the GPU: one thread per row along the axis, combining strictly in order (first to
// last, or last to first), as the CPU does; so every output is the CPU's sequential scan, and
// the same bits run to run. Rows along an inner axis sit side by side in memory, so a warp's
// threads read neighbouring elements at each step. Long rows of the scans whose steps regroup
// exactly (integers, max, min) are cut into chunks scanned in parallel from their prefixes.
#include <cmath>

#include "backend/cuda/accumulate.cuh"
#include "backend/cuda/layout.cuh"
#include "core/primitives/scan.h"

namespace nuvec::cuda {
namespace {

constexpr int kBlock = 256;

template <class A> __device__ __forceinline__ A scan_identity(ScanOp op) {
  switch (op) {
    case ScanOp::sum: return convert<A>(0);
    case ScanOp::prod: return convert<A>(1);
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

// Thread g walks chunk c = g / rows of row o = g % rows: the scan's steps [c * len, (c + 1) * len),
// starting from start[o * chunks + c] (or the identity). With `totals` it only combines, storing
// the chunk's total there; else it writes the outputs.
template <class T> __global__ void scan_kernel(const T* x, Strided kept, int64_t stride, Strided out_kept,
                                               int64_t out_stride, int64_t rows, int64_t n, int64_t len, int64_t chunks,
                                               ScanOp op, bool reverse, bool inclusive, const Compute<T>* start,
                                               Compute<T>* totals, T* out) {
  using A = Compute<T>;
  int64_t g = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (g >= rows * chunks) return;
  int64_t o = g % rows, c = g / rows;
  const T* src = x + kept.offset(o);
  int64_t at = out_kept.offset(o);
  A acc = start ? start[o * chunks + c] : scan_identity<A>(op);
  int64_t end = (c + 1) * len < n ? (c + 1) * len : n;
  for (int64_t s = c * len; s < end; ++s) {
    int64_t i = reverse ? n - 1 - s : s;
    A v = convert<A>(src[i * stride]);
    if (totals) {
      acc = scan_step(op, acc, v);
    } else if (inclusive) {
      acc = scan_step(op, acc, v);
      out[at + i * out_stride] = convert<T>(acc);
    } else {
      out[at + i * out_stride] = convert<T>(acc);
      acc = scan_step(op, acc, v);
    }
  }
  if (totals) totals[o * chunks + c] = acc;
}

// Whether any grouping of the steps gives the sequential scan's bits: wrapping integer arithmetic,
// and max and min (the first of equal values, and the first NaN, win either way). Half types
// (which round each output) and complex numbers are left out.
bool regroupable(ScanOp op, Dtype d) {
  if (is_half(d) || is_complex(d) || op == ScanOp::logaddexp) return false;
  return op == ScanOp::max || op == ScanOp::min || !is_inexact(d);
}

constexpr int64_t kChunk = 2048;       // steps one thread takes in a long row of a regroupable scan
constexpr int64_t kFewRows = 1 << 14;  // rows below which long rows are cut into chunks

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
  int64_t n = x.shape(p.axis()), rows = x.size() / n, stride = x.strides()[p.axis()];
  int64_t out_stride = out[0].strides()[p.axis()];
  // Long rows of a regroupable scan: each chunk's total, then each row's totals scanned
  // (exclusive), then each chunk scanned from its start. Otherwise one thread per row.
  int64_t chunks = regroupable(p.op(), d) && rows < kFewRows ? ceil_div(n, kChunk) : 1;
  visit_dtype(d, [&](auto tag) {
    using T = ctype_t<tag.value>;
    using A = Compute<T>;
    auto launch = [&](const T* src, const Strided& k, int64_t st, const Strided& ok, int64_t ost, int64_t steps,
                      int64_t len, int64_t parts, bool rev, bool incl, const A* start, A* totals, T* dst) {
      scan_kernel<T><<<unsigned(ceil_div(rows * parts, kBlock)), kBlock, 0, stream()>>>(
          src, k, st, ok, ost, rows, steps, len, parts, p.op(), rev, incl, start, totals, dst);
      check_launch("scanning");
    };
    const T* src = device_in<T>(x);
    T* dst = device_out<T>(out[0]);
    if (chunks == 1)
      return launch(src, kept, stride, out_kept, out_stride, n, n, 1, p.reverse(), p.inclusive(), nullptr, nullptr,
                    dst);
    if constexpr (std::is_same_v<A, T>) {
      auto buf = scratch(size_t(2 * rows * chunks) * sizeof(A));
      A* totals = scratch_data<A>(buf);
      A* starts = totals + rows * chunks;
      launch(src, kept, stride, out_kept, out_stride, n, kChunk, chunks, p.reverse(), true, nullptr, totals, nullptr);
      Strided per_row;  // the totals (and the starts) as [rows][chunks]
      per_row.nd = 1, per_row.shape[0] = rows, per_row.strides[0] = chunks;
      launch(totals, per_row, 1, per_row, 1, chunks, chunks, 1, false, false, nullptr, nullptr, starts);
      launch(src, kept, stride, out_kept, out_stride, n, kChunk, chunks, p.reverse(), p.inclusive(), starts, nullptr,
             dst);
    }
  });
}

}  // namespace

void register_scan_kernels(Backend& b) { b.add<Scan, eval_scan>(); }

}  // namespace nuvec::cuda
