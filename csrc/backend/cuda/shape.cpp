// Layout primitives on the GPU that copy data: the views (slice, transpose, broadcast, ...) only
// set strides and offset over the input's buffer, so the CPU's kernels serve both devices.
#include "core/primitives/shape.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/runtime.h"

namespace nuvec::cuda {
namespace {

// Into x's own buffer when nothing else holds it, else into a copy; then the window is written.
void eval_slice_update(const SliceUpdate& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array &x = in[0], &u = in[1];
  Array& o = out[0];
  if (!donate(x, o)) {
    allocate(o);
    copy_into(x, o);
  }
  Array window = slice_update_window(prim, o, u);
  copy_into(u, window);
}

// x's elements in row-major order in a fresh device buffer, read with `shape`.
void copy_row_major(const Array& x, Array& o) {
  o.set_data(row_major_copy(x).buffer(), Array::row_strides(o.shape()), 0);
}

void eval_reshape(const Reshape&, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  Strides st;
  if (reshape_strides(x, out[0].shape(), st))
    out[0].set_data(x.buffer(), std::move(st), x.offset());
  else
    copy_row_major(x, out[0]);  // strides cannot express it
}

void eval_view_dtype(const ViewDtype&, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  if (x.row_contiguous() && (x.offset() * int64_t(x.itemsize())) % int64_t(out[0].itemsize()) == 0) {
    int64_t offset = x.offset() * int64_t(x.itemsize()) / int64_t(out[0].itemsize());
    out[0].set_data(x.buffer(), Array::row_strides(out[0].shape()), offset);
    return;
  }
  copy_row_major(x, out[0]);
}

void eval_contiguous(const Contiguous&, const std::vector<Array>& in, std::vector<Array>& out) {
  if (in[0].row_contiguous()) {
    out[0].set_data(in[0].buffer(), Array::row_strides(out[0].shape()), in[0].offset());
    return;
  }
  allocate(out[0]);
  copy_into(in[0], out[0]);
}

}  // namespace

void register_shape_kernels(Backend& b) {
  b.add<SliceUpdate, eval_slice_update>();
  b.add<Reshape, eval_reshape>();
  b.add<ViewDtype, eval_view_dtype>();
  b.add<Contiguous, eval_contiguous>();
}

}  // namespace nuvec::cuda
