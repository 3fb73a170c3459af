// The FFT ops' argument rules, as MLX's: lengths cropped by a slice and padded by zeros before the
// one FFT node, whose scale carries the norm.
#include "core/ops/fft.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/ops.h"
#include "core/primitives/fft.h"

namespace nuvec {

FftNorm fft_norm(const std::string& norm, const char* op) {
  if (norm == "backward") return FftNorm::backward;
  if (norm == "ortho") return FftNorm::ortho;
  if (norm == "forward") return FftNorm::forward;
  throw OpError(op, "invalid norm '" + norm + "'; expected one of 'backward', 'ortho', 'forward'");
}

Array fftn(const Array& a, const std::optional<Shape>& n, const std::optional<std::vector<int>>& axes_arg, bool real,
           bool inverse, FftNorm norm, Stream s, const char* op) {
  if (n && !axes_arg) throw OpError(op, "`axes` must be given when `s` is");
  std::vector<int> axes = axes_arg.value_or(std::vector<int>{});
  if (!axes_arg)
    for (int i = 0; i < a.ndim(); ++i) axes.push_back(i);
  if (a.ndim() < 1) throw OpError(op, "requires an array with at least one dimension");
  if (n && n->size() != axes.size()) throw OpError(op, "`s` and `axes` have different sizes");
  if (axes.empty()) return a;
  std::vector<int> valid;
  for (int ax : axes) {
    int v = ax < 0 ? ax + a.ndim() : ax;
    if (v < 0 || v >= a.ndim())
      throw OpError(
          op, "invalid axis " + std::to_string(ax) + " for an array with " + std::to_string(a.ndim()) + " dimensions",
          true);
    valid.push_back(v);
  }
  if (std::set<int>(valid.begin(), valid.end()).size() != valid.size()) throw OpError(op, "repeated axes");
  Shape len(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) len[i] = n ? (*n)[i] : a.shape(valid[i]);
  if (real && inverse && !n) len.back() = 2 * (len.back() - 1);
  for (int64_t v : len)
    if (v <= 0) throw OpError(op, "invalid FFT length " + std::to_string(v) + " requested");
  Shape in_shape = a.shape();
  for (size_t i = 0; i < valid.size(); ++i) in_shape[valid[i]] = len[i];
  if (real && inverse) in_shape[valid.back()] = len.back() / 2 + 1;
  Dtype in_type = real && !inverse ? Dtype::float32 : Dtype::complex64;
  Array x = a.dtype() == in_type ? a : astype(a, in_type, s);
  Shape stop = x.shape();
  std::vector<std::pair<int64_t, int64_t>> widths(size_t(x.ndim()), {0, 0});
  bool crop = false, grow = false;
  for (int d = 0; d < x.ndim(); ++d) {
    crop |= in_shape[d] < x.shape(d);
    grow |= in_shape[d] > x.shape(d);
    stop[d] = std::min(stop[d], in_shape[d]);
    widths[size_t(d)].second = std::max<int64_t>(0, in_shape[d] - x.shape(d));
  }
  if (crop) x = slice(x, Shape(size_t(x.ndim()), 0), stop, Shape(size_t(x.ndim()), 1), s);
  if (grow) x = pad(x, widths, "constant", scalar_array(0.0, in_type), s);
  Shape out_shape = in_shape;
  if (real) out_shape[valid.back()] = inverse ? len.back() : len.back() / 2 + 1;
  double total = 1;
  for (int64_t v : len) total *= double(v);
  double scale = norm == FftNorm::ortho                  ? 1.0 / std::sqrt(total)
                 : (norm == FftNorm::forward) != inverse ? 1.0 / total
                                                         : 1.0;
  Dtype out_type = real && inverse ? Dtype::float32 : Dtype::complex64;
  return Array::lazy(out_shape, out_type, std::make_shared<FFT>(valid, inverse, real, scale), {x}, s);
}

Array fftshift(const Array& a, const std::optional<std::vector<int>>& axes_arg, bool inverse, Stream s) {
  const char* op = inverse ? "ifftshift" : "fftshift";
  std::vector<int> axes = axes_arg.value_or(std::vector<int>{});
  if (!axes_arg)
    for (int i = 0; i < a.ndim(); ++i) axes.push_back(i);
  if (axes.empty()) return a;
  Shape shifts;
  for (int ax : axes) {
    int v = ax < 0 ? ax + a.ndim() : ax;
    if (v < 0 || v >= a.ndim())
      throw OpError(
          op, "invalid axis " + std::to_string(ax) + " for an array with " + std::to_string(a.ndim()) + " dimensions",
          true);
    shifts.push_back(inverse ? (a.shape(v) + 1) / 2 : a.shape(v) / 2);
  }
  return roll(a, shifts, axes, s);
}

Array fftfreq(int64_t n, double d, bool real, Stream s) {
  if (n <= 0) throw OpError(real ? "rfftfreq" : "fftfreq", "`n` must be greater than 0");
  Array spacing = scalar_array(double(n) * d, Dtype::float32);
  if (real) return binary(BinaryOp::divide, arange(0, double(n / 2 + 1), 1, Dtype::float32, s), spacing, s);
  Array k = arange(0, double(n), 1, Dtype::int32, s);
  Array negative = binary(BinaryOp::subtract, k, scalar_array(n, Dtype::int32), s);
  k = where(binary(BinaryOp::less, k, scalar_array(int64_t((n + 1) / 2), Dtype::int32), s), k, negative, s);
  return binary(BinaryOp::divide, astype(k, Dtype::float32, s), spacing, s);
}

}  // namespace nuvec
