// Shape ops, composed from views (reshape, transpose, slice, broadcast) and concatenate.
#include "core/ops/shape.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/ops.h"
#include "core/primitives/shape.h"

namespace nuvec {
namespace {

std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* op) {
  std::vector<int> out;
  for (int a : axes) {
    int n = normalize_axis(a, ndim, op);
    if (std::find(out.begin(), out.end(), n) != out.end()) throw OpError(op, "repeated axis");
    out.push_back(n);
  }
  return out;
}

Array slice_axis(const Array& x, int axis, int64_t start, int64_t stop, Stream s) {
  Shape st(x.ndim(), 0), sp = x.shape(), step(x.ndim(), 1);
  st[axis] = start, sp[axis] = stop;
  return slice(x, st, sp, step, s);
}

}  // namespace

Array flatten(const Array& x, int start_axis, int end_axis, Stream s) {
  if (x.ndim() == 0) return reshape(x, {1}, s);
  int a = normalize_axis(start_axis, x.ndim(), "flatten"), b = normalize_axis(end_axis, x.ndim(), "flatten");
  if (a > b) throw OpError("flatten", "start_axis must not come after end_axis");
  Shape shape(x.shape().begin(), x.shape().begin() + a);
  int64_t n = 1;
  for (int i = a; i <= b; ++i) n *= x.shape(i);
  shape.push_back(n);
  shape.insert(shape.end(), x.shape().begin() + b + 1, x.shape().end());
  return reshape(x, shape, s);
}

Array unflatten(const Array& x, int axis, const Shape& shape, Stream s) {
  int a = normalize_axis(axis, x.ndim(), "unflatten");
  if (shape.empty()) throw OpError("unflatten", "shape must not be empty");
  Shape out(x.shape().begin(), x.shape().begin() + a);
  out.insert(out.end(), shape.begin(), shape.end());
  out.insert(out.end(), x.shape().begin() + a + 1, x.shape().end());
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw OpError("unflatten", "only one dimension can be -1");
      infer = int(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.shape(a) % known) throw OpError("unflatten", "cannot infer the dimension");
    out[a + infer] = x.shape(a) / known;
  } else if (known != x.shape(a)) {
    throw OpError("unflatten", "the new dimensions must multiply to " + std::to_string(x.shape(a)));
  }
  return reshape(x, out, s);
}

Array squeeze(const Array& x, const std::optional<std::vector<int>>& axes, Stream s) {
  Shape out;
  if (!axes) {
    for (int64_t d : x.shape())
      if (d != 1) out.push_back(d);
  } else {
    std::vector<int> ax = normalize_axes(*axes, x.ndim(), "squeeze");
    for (int i = 0; i < x.ndim(); ++i) {
      bool drop = std::find(ax.begin(), ax.end(), i) != ax.end();
      if (drop && x.shape(i) != 1)
        throw OpError("squeeze", "cannot squeeze axis " + std::to_string(i) + " of size " + std::to_string(x.shape(i)));
      if (!drop) out.push_back(x.shape(i));
    }
  }
  return reshape(x, out, s);
}

Array expand_dims(const Array& x, const std::vector<int>& axes, Stream s) {
  int nd = x.ndim() + int(axes.size());
  std::vector<int> ax = normalize_axes(axes, nd, "expand_dims");
  Shape out;
  int src = 0;
  for (int i = 0; i < nd; ++i) out.push_back(std::find(ax.begin(), ax.end(), i) != ax.end() ? 1 : x.shape(src++));
  return reshape(x, out, s);
}

Array swapaxes(const Array& x, int axis1, int axis2, Stream s) {
  int a = normalize_axis(axis1, x.ndim(), "swapaxes"), b = normalize_axis(axis2, x.ndim(), "swapaxes");
  std::vector<int> perm(x.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[a], perm[b]);
  return transpose(x, perm, s);
}

Array moveaxis(const Array& x, int source, int destination, Stream s) {
  int a = normalize_axis(source, x.ndim(), "moveaxis"), b = normalize_axis(destination, x.ndim(), "moveaxis");
  std::vector<int> perm;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != a) perm.push_back(i);
  perm.insert(perm.begin() + b, a);
  return transpose(x, perm, s);
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& xs, Stream s) {
  Shape shape;
  for (const Array& x : xs) shape = broadcast_shapes(shape, x.shape(), "broadcast_arrays");
  std::vector<Array> out;
  for (const Array& x : xs) out.push_back(broadcast_to(x, shape, s));
  return out;
}

Array atleast_nd(const Array& x, int n, Stream s) {
  if (x.ndim() >= n) return x;
  Shape shape = x.shape();
  if (n == 3 && x.ndim() == 2) return reshape(x, {shape[0], shape[1], 1}, s);  // NumPy's placement
  if (n == 3 && x.ndim() == 1) return reshape(x, {1, shape[0], 1}, s);
  shape.insert(shape.begin(), n - x.ndim(), 1);
  return reshape(x, shape, s);
}

Array concatenate(const std::vector<Array>& xs, std::optional<int> axis, Stream s) {
  if (xs.empty()) throw OpError("concatenate", "need at least one array");
  if (!axis) {
    std::vector<Array> flat;
    for (const Array& x : xs) flat.push_back(reshape(x, {-1}, s));
    return concatenate(flat, 0, s);
  }
  const Array& first = xs[0];
  if (first.ndim() == 0) throw OpError("concatenate", "zero-dimensional arrays cannot be concatenated");
  int ax = normalize_axis(*axis, first.ndim(), "concatenate");
  Shape shape = first.shape();
  Dtype dtype = first.dtype();
  shape[ax] = 0;
  for (const Array& x : xs) {
    if (x.ndim() != first.ndim()) throw OpError("concatenate", "all arrays must have the same number of dimensions");
    for (int i = 0; i < x.ndim(); ++i)
      if (i != ax && x.shape(i) != first.shape(i))
        throw OpError("concatenate", "array shapes differ on axis " + std::to_string(i) + " (" +
                                         std::to_string(x.shape(i)) + " vs " + std::to_string(first.shape(i)) + ")");
    shape[ax] += x.shape(ax);
    dtype = promote(dtype, x.dtype());
  }
  if (xs.size() == 1) return astype(first, dtype, s);
  std::vector<Array> inputs;
  for (const Array& x : xs) inputs.push_back(astype(x, dtype, s));
  return Array::lazy(std::move(shape), dtype, std::make_shared<Concatenate>(ax), std::move(inputs), s);
}

Array stack(const std::vector<Array>& xs, int axis, Stream s) {
  if (xs.empty()) throw OpError("stack", "need at least one array");
  int ax = normalize_axis(axis, xs[0].ndim() + 1, "stack");
  std::vector<Array> expanded;
  for (const Array& x : xs) {
    if (x.shape() != xs[0].shape()) throw OpError("stack", "all arrays must have the same shape");
    expanded.push_back(expand_dims(x, {ax}, s));
  }
  return concatenate(expanded, ax, s);
}

std::vector<Array> split(const Array& x, const Shape& indices, int axis, Stream s) {
  int ax = normalize_axis(axis, x.ndim(), "split");
  int64_t n = x.shape(ax), prev = 0;  // clamped to [0, n]
  std::vector<Array> out;
  for (size_t i = 0; i <= indices.size(); ++i) {
    int64_t stop = i < indices.size() ? indices[i] : n;
    if (stop < 0) stop += n;
    stop = std::clamp<int64_t>(stop, 0, n);
    // NumPy's pieces are x[previous index : index], empty when the indices go backwards.
    out.push_back(slice_axis(x, ax, prev, std::max(stop, prev), s));
    prev = stop;
  }
  return out;
}

std::vector<Array> split_sections(const Array& x, int64_t sections, int axis, Stream s) {
  int ax = normalize_axis(axis, x.ndim(), "split");
  if (sections <= 0) throw OpError("split", "the number of sections must be positive");
  if (x.shape(ax) % sections != 0)
    throw OpError("split", "an axis of size " + std::to_string(x.shape(ax)) + " cannot be split into " +
                               std::to_string(sections) + " equal sections");
  Shape idx;
  for (int64_t i = 1; i < sections; ++i) idx.push_back(i * (x.shape(ax) / sections));
  return split(x, idx, ax, s);
}

Array tile(const Array& x, const Shape& reps, Stream s) {
  for (int64_t r : reps)
    if (r < 0) throw OpError("tile", "repetitions must be non-negative");
  int nd = std::max<int>(x.ndim(), int(reps.size()));
  Shape xs = x.shape(), rs = reps;
  xs.insert(xs.begin(), nd - x.ndim(), 1);
  rs.insert(rs.begin(), nd - rs.size(), 1);
  Shape interleaved, expanded, out;
  for (int i = 0; i < nd; ++i) {
    interleaved.push_back(1), interleaved.push_back(xs[i]);
    expanded.push_back(rs[i]), expanded.push_back(xs[i]);
    out.push_back(rs[i] * xs[i]);
  }
  check_shape(out, "tile");
  return reshape(broadcast_to(reshape(x, interleaved, s), expanded, s), out, s);
}

Array repeat(const Array& x, int64_t repeats, std::optional<int> axis, Stream s) {
  if (repeats < 0) throw OpError("repeat", "repeats must be non-negative");
  if (!axis) return repeat(reshape(x, {-1}, s), repeats, 0, s);
  int ax = normalize_axis(*axis, x.ndim(), "repeat");
  Shape expanded = x.shape(), out = x.shape();
  expanded.insert(expanded.begin() + ax + 1, repeats);
  out[ax] *= repeats;
  check_shape(out, "repeat");
  return reshape(broadcast_to(expand_dims(x, {ax + 1}, s), expanded, s), out, s);
}

namespace {

// The source index of each position of an axis of n elements padded by `before` and `after`
// with its reflection, as NumPy's pad: without repeating the edge (reflect) or with it.
Array reflected_indices(int64_t n, int64_t before, int64_t after, bool symmetric) {
  Array idx = Array::allocate({before + n + after}, Dtype::int64);
  int64_t* p = idx.data<int64_t>();
  int64_t period = symmetric ? 2 * n : 2 * n - 2;
  for (int64_t i = 0; i < before + n + after; ++i) {
    if (period == 0) {  // one element reflects onto itself
      p[i] = 0;
      continue;
    }
    int64_t k = ((i - before) % period + period) % period;
    p[i] = k < n ? k : period - k - (symmetric ? 1 : 0);
  }
  return idx;
}

}  // namespace

Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& pad_width, const std::string& mode,
          const Array& constant, Stream s) {
  bool reflect = mode == "reflect" || mode == "symmetric";
  if (mode != "constant" && mode != "edge" && !reflect)
    throw OpError("pad", "mode must be 'constant', 'edge', 'reflect' or 'symmetric', got '" + mode + "'");
  if (int(pad_width.size()) != x.ndim()) throw OpError("pad", "pad_width needs one (before, after) pair per axis");
  if (constant.ndim() != 0) throw OpError("pad", "constant_values must be a scalar");
  for (auto [before, after] : pad_width)
    if (before < 0 || after < 0) throw OpError("pad", "pad widths must be non-negative");
  Array r = x;
  for (int ax = 0; ax < x.ndim(); ++ax) {
    auto [before, after] = pad_width[ax];
    if (before == 0 && after == 0) continue;
    int64_t n = r.shape(ax);
    if (reflect) {
      if (n == 0) throw OpError("pad", "cannot pad the empty axis " + std::to_string(ax) + " with mode '" + mode + "'");
      r = take(r, reflected_indices(n, before, after, mode == "symmetric"), ax, s);
      continue;
    }
    auto block = [&](int64_t width, bool at_start) {
      Shape shape = r.shape();
      shape[ax] = width;
      // An empty axis has no edge: MLX pads it with zeros.
      if (mode == "constant" || n == 0)
        return full(shape, astype(mode == "constant" ? constant : scalar_array(int64_t(0)), r.dtype(), s), std::nullopt,
                    s, "pad");
      int64_t i = at_start ? 0 : n - 1;
      return broadcast_to(slice_axis(r, ax, i, i + 1, s), shape, s);
    };
    std::vector<Array> parts;
    if (before) parts.push_back(block(before, true));
    parts.push_back(r);
    if (after) parts.push_back(block(after, false));
    r = concatenate(parts, ax, s);
  }
  return r;
}

Array roll(const Array& x, const Shape& shift, const std::optional<std::vector<int>>& axes, Stream s) {
  if (!axes) {  // the flattened array rolls by the sum of the shifts, as MLX
    int64_t total = std::accumulate(shift.begin(), shift.end(), int64_t(0));
    return reshape(roll(reshape(x, {-1}, s), {total}, std::vector<int>{0}, s), x.shape(), s);
  }
  std::vector<int> ax;
  for (int a : *axes) ax.push_back(normalize_axis(a, x.ndim(), "roll"));
  if (shift.size() < ax.size())
    throw OpError("roll", "at least one shift value per axis is required, " + std::to_string(shift.size()) +
                              " provided for " + std::to_string(ax.size()) + " axes");
  Array r = x;
  for (size_t i = 0; i < ax.size(); ++i) {
    int64_t n = r.shape(ax[i]);
    if (n == 0) continue;
    int64_t k = (shift[i] % n + n) % n;
    if (k == 0) continue;
    r = concatenate({slice_axis(r, ax[i], n - k, n, s), slice_axis(r, ax[i], 0, n - k, s)}, ax[i], s);
  }
  return r;
}

Array as_strided(const Array& x, const Shape& shape, const Strides& strides, int64_t offset, Stream s) {
  check_shape(shape, "as_strided");
  if (shape.size() != strides.size()) throw OpError("as_strided", "shape and strides must have the same length");
  // Every element read must lie inside x's (contiguous) data: nothing outside is ever read.
  int64_t lo = offset, hi = offset;
  bool empty = shape_size(shape) == 0;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 0) (strides[i] < 0 ? lo : hi) += (shape[i] - 1) * strides[i];
  if (!empty && (lo < 0 || hi >= x.size()))
    throw OpError("as_strided", "the view would read outside the array's " + std::to_string(x.size()) + " elements");
  return Array::lazy(shape, x.dtype(), std::make_shared<AsStrided>(strides, offset), {contiguous(x, s)}, s);
}

Array contiguous(const Array& x, Stream s) {
  return Array::lazy(x.shape(), x.dtype(), std::make_shared<Contiguous>(), {x}, s);
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, bool sparse, const std::string& indexing, Stream s) {
  if (indexing != "xy" && indexing != "ij") throw OpError("meshgrid", "indexing must be 'xy' or 'ij'");
  int n = int(xs.size());
  Shape full_shape;
  for (const Array& x : xs) full_shape.push_back(x.size());
  if (indexing == "xy" && n >= 2) std::swap(full_shape[0], full_shape[1]);
  std::vector<Array> out;
  for (int i = 0; i < n; ++i) {
    Shape shape(n, 1);
    int pos = (indexing == "xy" && n >= 2 && i < 2) ? 1 - i : i;
    shape[pos] = xs[i].size();
    Array r = reshape(xs[i], shape, s);
    out.push_back(sparse ? r : broadcast_to(r, full_shape, s));
  }
  return out;
}

Array diagonal(const Array& x, int64_t offset, int axis1, int axis2, Stream s) {
  if (x.ndim() < 2) throw OpError("diagonal", "the array must have at least 2 dimensions");
  int a = normalize_axis(axis1, x.ndim(), "diagonal"), b = normalize_axis(axis2, x.ndim(), "diagonal");
  if (a == b) throw OpError("diagonal", "axis1 and axis2 cannot be the same");
  int64_t len = offset >= 0 ? std::min(x.shape(a), x.shape(b) - offset) : std::min(x.shape(a) + offset, x.shape(b));
  Shape shape;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != a && i != b) shape.push_back(x.shape(i));
  shape.push_back(std::max<int64_t>(len, 0));
  return Array::lazy(shape, x.dtype(), std::make_shared<Diagonal>(offset, a, b), {x}, s);
}

Array diag(const Array& x, int64_t k, Stream s) {
  if (x.ndim() == 2) return diagonal(x, k, 0, 1, s);
  if (x.ndim() != 1) throw OpError("diag", "the input must be 1-D or 2-D");
  int64_t n = x.size(), m = n + (k < 0 ? -k : k);
  // out[i, j] = x[min(i, j)] on the k-th diagonal: pad x to m, spread along rows or columns.
  Array padded = pad(x, {{0, m - n}}, "constant", scalar_array(int64_t(0), x.dtype()), s);
  Array spread = k >= 0 ? reshape(padded, {m, 1}, s) : reshape(padded, {1, m}, s);
  return where(eye(m, m, k, Dtype::bool_, s), spread, scalar_array(int64_t(0), x.dtype()), s);
}

Array kron(const Array& a, const Array& b, Stream s) {
  int nd = std::max(a.ndim(), b.ndim());
  Shape as = a.shape(), bs = b.shape();
  as.insert(as.begin(), nd - as.size(), 1);
  bs.insert(bs.begin(), nd - bs.size(), 1);
  Shape ai, bi, out;
  for (int i = 0; i < nd; ++i) {
    ai.push_back(as[i]), ai.push_back(1);
    bi.push_back(1), bi.push_back(bs[i]);
    out.push_back(as[i] * bs[i]);
  }
  return reshape(binary(BinaryOp::multiply, reshape(a, ai, s), reshape(b, bi, s), s), out, s);
}

Array flip(const Array& x, const std::optional<std::vector<int>>& axes, Stream s) {
  int nd = x.ndim();
  std::vector<bool> flipped(nd, !axes);
  if (axes)
    for (int ax : *axes) flipped[normalize_axis(ax, nd, "flip")] = true;
  Shape start(nd, 0), stop = x.shape(), step(nd, 1);
  for (int i = 0; i < nd; ++i)
    if (flipped[i] && x.shape(i) > 1) start[i] = x.shape(i) - 1, stop[i] = -1, step[i] = -1;
  return slice(x, start, stop, step, s);
}

Array matrix_transpose(const Array& x, Stream s) {
  if (x.ndim() < 2) throw OpError("matrix_transpose", "the array must have at least 2 dimensions");
  return swapaxes(x, -1, -2, s);
}

std::vector<Array> unstack(const Array& x, int axis, Stream s) {
  int ax = normalize_axis(axis, x.ndim(), "unstack");
  std::vector<Array> out;
  if (x.shape(ax) == 0) return out;
  for (const Array& part : split_sections(x, x.shape(ax), ax, s)) out.push_back(squeeze(part, std::vector<int>{ax}, s));
  return out;
}

}  // namespace nuvec
