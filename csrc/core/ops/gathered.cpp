// Gathered, segmented and block-masked products: argument rules as MLX's ops, then one node
// (gather_mm, segmented_mm) or a composition around matmul (block_masked_mm).
#include "core/ops/gathered.h"

#include <numeric>
#include <string>

#include "core/ops.h"
#include "core/primitives/gathered.h"

namespace nuvec {
namespace {

Array as_dtype(const Array& x, Dtype d, Stream s) { return x.dtype() == d ? x : astype(x, d, s); }

// The product's dtype; integer products are refused as MLX refuses them.
Dtype real_product_dtype(const Array& a, const Array& b, const char* op) {
  Dtype d = promote(a.dtype(), b.dtype());
  if (!is_floating(d))
    throw OpError(op, std::string("only real floating point types are supported, but ") + name_of(a.dtype()) + " and " +
                          name_of(b.dtype()) + " give " + name_of(d));
  return d;
}

Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

// Every batch entry of x in order: arange over its batch axes, shaped as them.
Array default_indices(const Array& x, Stream s) {
  Shape batch = batch_of(x.shape());
  int64_t n = std::accumulate(batch.begin(), batch.end(), int64_t(1), std::multiplies<>());
  return reshape(arange(0, double(n), 1, Dtype::uint32, s), batch, s);
}

Array checked_indices(const Array& idx, const char* op, const char* what, Stream s) {
  if (!is_integer(idx.dtype()))
    throw OpError(op, std::string("got ") + what + " of dtype " + name_of(idx.dtype()) + "; indices must be integral");
  return as_dtype(idx, Dtype::uint32, s);
}

// The 1-D operand rules of matmul: a vector a is a row, a vector b a column.
std::pair<Array, Array> as_matrices(const Array& a, const Array& b, const char* op, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0) throw OpError(op, "0-d inputs are not supported; inputs must be at least 1-D");
  Array x = a.ndim() == 1 ? expand_dims(a, {0}, s) : a;
  Array y = b.ndim() == 1 ? expand_dims(b, {1}, s) : b;
  if (x.shape(-1) != y.shape(-2))
    throw OpError(op, "the last dimension of a " + shape_str(a.shape()) + " must match the second to last of b " +
                          shape_str(b.shape()));
  Dtype d = real_product_dtype(a, b, op);
  return {as_dtype(x, d, s), as_dtype(y, d, s)};
}

// Drops the axes as_matrices added.
Array drop_vector_axes(const Array& r, const Array& a, const Array& b, Stream s) {
  std::vector<int> axes;
  if (a.ndim() == 1) axes.push_back(r.ndim() - 2);
  if (b.ndim() == 1) axes.push_back(r.ndim() - 1);
  return axes.empty() ? r : squeeze(r, axes, s);
}

Array gather_product(const Array& a, const Array& b, const Array& li, const Array& ri, Stream s) {
  Shape out = li.shape();
  out.insert(out.end(), {a.shape(-2), b.shape(-1)});
  return Array::lazy(out, a.dtype(), std::make_shared<GatherMM>(GatherMM::Kind::product), {a, b, li, ri}, s);
}

}  // namespace

Array gather_mm(const Array& a, const Array& b, const std::optional<Array>& lhs, const std::optional<Array>& rhs, bool,
                Stream s) {
  if (!lhs && !rhs) return matmul(a, b, s);
  auto [x, y] = as_matrices(a, b, "gather_mm", s);
  Array li = checked_indices(lhs ? *lhs : default_indices(x, s), "gather_mm", "lhs_indices", s);
  Array ri = checked_indices(rhs ? *rhs : default_indices(y, s), "gather_mm", "rhs_indices", s);
  Shape I = broadcast_shapes(li.shape(), ri.shape(), "gather_mm");
  Shape out = I;
  out.insert(out.end(), {x.shape(-2), y.shape(-1)});
  check_shape(out, "gather_mm");
  Array r = gather_product(x, y, broadcast_to(li, I, s), broadcast_to(ri, I, s), s);
  return drop_vector_axes(r, a, b, s);
}

Array gather_mm_grad_a(const Array& g, const Array& b, const Array& lhs, const Array& rhs, const Shape& a_shape,
                       Stream s) {
  // Each i's product g[i] @ b[rhs[i]]^T, then summed into a's batch entry lhs[i] in increasing i
  // (the scatter applies its updates in index order).
  Array p = gather_product(g, swapaxes(b, -1, -2, s), default_indices(g, s), rhs, s);
  int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back();
  int64_t entries = std::accumulate(a_shape.begin(), a_shape.end() - 2, int64_t(1), std::multiplies<>());
  Array zeros = full({entries, m, k}, scalar_array(int64_t(0)), g.dtype(), s);
  Array flat = scatter(zeros, {reshape(lhs, {-1}, s)}, reshape(p, {-1, m, k}, s), {0}, ScatterOp::add, s);
  return reshape(flat, a_shape, s);
}

Array gather_mm_grad_b(const Array& a, const Array& g, const Array& lhs, const Array& rhs, const Shape& b_shape,
                       Stream s) {
  return Array::lazy(b_shape, g.dtype(), std::make_shared<GatherMM>(GatherMM::Kind::grad_b), {a, g, lhs, rhs}, s);
}

Array segmented_mm(const Array& a, const Array& b, const Array& segments, Stream s) {
  const char* op = "segmented_mm";
  if (a.ndim() != 2 || b.ndim() != 2)
    throw OpError(op, "a and b must be matrices (batched products are not supported), not of shapes " +
                          shape_str(a.shape()) + " and " + shape_str(b.shape()));
  if (segments.ndim() < 1 || segments.shape(-1) != 2)
    throw OpError(op, "the segments should have shape (..., 2), not " + shape_str(segments.shape()));
  Dtype d = real_product_dtype(a, b, op);
  if (!is_integer(segments.dtype()))
    throw OpError(op, std::string("segments must be integral, not ") + name_of(segments.dtype()));
  // MLX reads past b here; nuvec refuses the mismatch.
  if (a.shape(1) != b.shape(0))
    throw OpError(
        op, "the last dimension of a " + shape_str(a.shape()) + " must match the first of b " + shape_str(b.shape()));
  Shape out = segments.shape();
  out.back() = a.shape(0);
  out.push_back(b.shape(1));
  check_shape(out, op);
  return Array::lazy(out, d, std::make_shared<SegmentedMM>(),
                     {as_dtype(a, d, s), as_dtype(b, d, s), as_dtype(segments, Dtype::uint32, s)}, s);
}

namespace {

// A mask over blocks (..., rows / bs, cols / bs rounded up) spread over the elements (..., rows, cols).
Array spread(const Array& mask, int64_t bs, int64_t rows, int64_t cols, Stream s) {
  int nd = mask.ndim();
  int64_t br = mask.shape(nd - 2), bc = mask.shape(nd - 1);
  Shape lead = batch_of(mask.shape()), wide = lead, flat = lead, start(nd, 0), stop = lead, step(nd, 1);
  wide.insert(wide.end(), {br, bs, bc, bs});
  flat.insert(flat.end(), {br * bs, bc * bs});
  stop.insert(stop.end(), {rows, cols});
  Array e = expand_dims(mask, {nd - 1, nd + 1}, s);
  return slice(reshape(broadcast_to(e, wide, s), flat, s), start, stop, step, s);
}

// x with a mask applied: a bool mask keeps or zeroes (never reading what it drops), another scales.
Array masked(const Array& x, const Array& mask, int64_t bs, Stream s) {
  Array m = spread(mask, bs, x.shape(-2), x.shape(-1), s);
  if (m.dtype() == Dtype::bool_) return where(m, x, scalar_array(int64_t(0), x.dtype()), s);
  return binary(BinaryOp::multiply, x, m, s);
}

// mask (with the size-1 axes of vector operands added) cast to dtype and broadcast to (batch, r, c).
Array block_mask(const Array& mask, const std::vector<int>& vector_axes, Shape batch, int64_t r, int64_t c, Dtype d,
                 Stream s) {
  Array m = vector_axes.empty() ? mask : expand_dims(mask, vector_axes, s);
  batch.insert(batch.end(), {r, c});
  return broadcast_to(as_dtype(m, d, s), batch, s);
}

}  // namespace

Array block_masked_mm(const Array& a, const Array& b, int block_size, const std::optional<Array>& mask_out,
                      const std::optional<Array>& mask_lhs, const std::optional<Array>& mask_rhs, Stream s) {
  const char* op = "block_masked_mm";
  if (!mask_out && !mask_lhs && !mask_rhs) return matmul(a, b, s);
  if (block_size != 32 && block_size != 64)
    throw OpError(op, "only block sizes 32 and 64 are supported, not " + std::to_string(block_size));
  auto [x, y] = as_matrices(a, b, op, s);
  Dtype d = x.dtype();
  Shape batch = broadcast_shapes(batch_of(x.shape()), batch_of(y.shape()), op);
  int64_t M = x.shape(-2), K = x.shape(-1), N = y.shape(-1), bs = block_size;
  int64_t tm = (M + bs - 1) / bs, tk = (K + bs - 1) / bs, tn = (N + bs - 1) / bs;
  if (mask_lhs || mask_rhs) {
    Array one = scalar_array(true);
    Array ml = mask_lhs ? *mask_lhs : one, mr = mask_rhs ? *mask_rhs : one;
    Dtype md = ml.dtype() == Dtype::bool_ && mr.dtype() == Dtype::bool_ ? Dtype::bool_ : d;
    std::vector<int> va, vb;
    if (a.ndim() == 1) va.push_back(-2);
    if (b.ndim() == 1) vb.push_back(-1);
    if (mask_lhs) x = masked(x, block_mask(ml, va, batch, tm, tk, md, s), bs, s);
    if (mask_rhs) y = masked(y, block_mask(mr, vb, batch, tk, tn, md, s), bs, s);
  }
  Array r = matmul(x, y, s);
  if (mask_out) {
    std::vector<int> v;
    if (a.ndim() == 1) v.push_back(-2);
    if (b.ndim() == 1) v.push_back(-1);
    Dtype md = mask_out->dtype() == Dtype::bool_ ? Dtype::bool_ : d;
    r = masked(r, block_mask(*mask_out, v, batch, tm, tn, md, s), bs, s);
  }
  return drop_vector_axes(r, a, b, s);
}

}  // namespace nuvec
