// Layout primitives on the CPU: new strides over the same buffer, or a copy where needed.
#include "core/primitives/shape.h"
#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/sort.h"

namespace nuvec::cpu {
namespace {

void eval_slice(const Slice& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  Strides st(x.ndim());
  int64_t offset = x.offset();
  for (int i = 0; i < x.ndim(); ++i) {
    st[i] = x.strides()[i] * prim.step()[i];
    if (out[0].shape()[i] > 0) offset += prim.start()[i] * x.strides()[i];
  }
  out[0].set_data(x.buffer(), std::move(st), offset);
}

// Into x's own buffer when nothing else holds it, else into a copy; then the window is written.
void eval_slice_update(const SliceUpdate& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array &x = in[0], &u = in[1];
  Array& o = out[0];
  donate_or_copy(x, o);
  Array window = slice_update_window(prim, o, u);
  copy_into(u, window);
}

// As eval_slice_update, the window placed by the start's values (a window that does not fit raises
// before anything is written: taking or copying x's buffer changes no value).
void eval_dynamic_slice_update(const DynamicSliceUpdate& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array &x = in[0], &u = in[1];
  const Array start = row_contiguous(in[2]);
  Array& o = out[0];
  donate_or_copy(x, o);
  Array window =
      Array::from_buffer(u.shape(), o.dtype(), o.buffer(), o.strides(), slice_update_offset(prim, o, u.shape(), start));
  copy_into(u, window);
}

void eval_transpose(const Transpose& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  const std::vector<int>& perm = prim.perm();
  Strides st(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) st[i] = x.strides()[perm[i]];
  out[0].set_data(x.buffer(), std::move(st), x.offset());
}

template <class P> void eval_broadcast(const P&, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  const Shape& shape = out[0].shape();
  Strides st(shape.size(), 0);
  size_t off = shape.size() - x.shape().size();
  for (size_t i = 0; i < x.shape().size(); ++i) st[off + i] = x.shape()[i] == 1 ? 0 : x.strides()[i];
  out[0].set_data(x.buffer(), std::move(st), x.offset());
}

void eval_reshape(const Reshape&, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  Strides st;
  if (reshape_strides(x, out[0].shape(), st)) {
    out[0].set_data(x.buffer(), std::move(st), x.offset());
    return;
  }
  // Strides cannot express it: copy in row-major order, then read with the new shape.
  Array flat = Array::allocate(x.shape(), x.dtype());
  copy_into(x, flat);
  out[0].set_data(flat.buffer(), Array::row_strides(out[0].shape()), 0);
}

void eval_view_dtype(const ViewDtype&, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  if (x.row_contiguous() && (x.offset() * int64_t(x.itemsize())) % int64_t(out[0].itemsize()) == 0) {
    int64_t offset = x.offset() * int64_t(x.itemsize()) / int64_t(out[0].itemsize());
    out[0].set_data(x.buffer(), Array::row_strides(out[0].shape()), offset);
    return;
  }
  Array flat = Array::allocate(x.shape(), x.dtype());
  copy_into(x, flat);
  out[0].set_data(flat.buffer(), Array::row_strides(out[0].shape()), 0);
}

void eval_as_strided(const AsStrided& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  // The input is contiguous (as_strided makes it so), and the op checked the bounds.
  out[0].set_data(in[0].buffer(), prim.strides(), in[0].offset() + prim.offset());
}

void eval_diagonal(const Diagonal& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  int axis1 = prim.axis1(), axis2 = prim.axis2();
  int64_t diag = prim.offset();
  Strides st;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != axis1 && i != axis2) st.push_back(x.strides()[i]);
  st.push_back(x.strides()[axis1] + x.strides()[axis2]);
  int64_t offset = x.offset();
  if (out[0].size() > 0) offset += diag >= 0 ? diag * x.strides()[axis2] : -diag * x.strides()[axis1];
  out[0].set_data(x.buffer(), std::move(st), offset);
}

void eval_contiguous(const Contiguous&, const std::vector<Array>& in, std::vector<Array>& out) {
  if (in[0].row_contiguous()) {
    out[0].set_data(in[0].buffer(), Array::row_strides(out[0].shape()), in[0].offset());
    return;
  }
  out[0].allocate_contiguous();
  copy_into(in[0], out[0]);
}

}  // namespace

void register_views_kernels(Backend& b) {
  b.add<Slice, eval_slice>();
  b.add<SliceUpdate, eval_slice_update>();
  b.add<DynamicSliceUpdate, eval_dynamic_slice_update>();
  b.add<Transpose, eval_transpose>();
  b.add<Broadcast, eval_broadcast<Broadcast>>();
  b.add<BroadcastLike, eval_broadcast<BroadcastLike>>();
  b.add<Reshape, eval_reshape>();
  b.add<ViewDtype, eval_view_dtype>();
  b.add<AsStrided, eval_as_strided>();
  b.add<Diagonal, eval_diagonal>();
  b.add<Contiguous, eval_contiguous>();
}

}  // namespace nuvec::cpu
