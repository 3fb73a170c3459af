// Scan ops: the result dtype of each (MLX's rules), then one Scan node.
#include <string>

#include "core/ops.h"
#include "core/ops/scan.h"

namespace nuvec {

Array scan(ScanOp op, const Array& a, std::optional<int> axis, bool reverse, bool inclusive, std::optional<Dtype> dtype,
           Stream s) {
  const char* name = scan_name(op);
  Array x = dtype ? astype(a, *dtype, s) : a;
  Dtype out = x.dtype();
  if (op == ScanOp::sum && out == Dtype::bool_) out = Dtype::int32;  // counts, as MLX
  if (op == ScanOp::logaddexp) out = at_least_float(out);
  auto [flat, ax] = along_axis(x, axis, name, s);
  // The kernel reads the output's dtype.
  Array in = astype(flat, out, s);
  return Array::lazy(in.shape(), out, std::make_shared<Scan>(op, ax, reverse, inclusive), {in}, s);
}

Array diff(const Array& a, int n, int axis, Stream s) {
  if (n < 0) throw OpError("diff", "order `n` must be non-negative");
  int ax = normalize_axis(axis, a.ndim(), "diff");
  Array r = a;
  for (int i = 0; i < n && r.shape(ax) > 0; ++i) {
    Shape start(r.ndim(), 0), stop = r.shape(), step(r.ndim(), 1);
    start[ax] = 1;
    Array hi = slice(r, start, stop, step, s);
    start[ax] = 0, stop[ax] = r.shape(ax) - 1;
    r = binary(BinaryOp::subtract, hi, slice(r, start, stop, step, s), s);
  }
  return r;
}

}  // namespace nuvec
