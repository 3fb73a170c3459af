#include "python/indexing.h"

#include <string>

#include "core/ops.h"

namespace nuvec::python {

Array get_item(const Array& x, nb::handle index) {
  const char* op = "getitem";
  std::vector<nb::handle> items;
  if (PyTuple_Check(index.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(index)) items.push_back(h);
  } else {
    items.push_back(index);
  }
  // How many array axes the indices consume, to size the ellipsis.
  int consumed = 0, ellipses = 0;
  for (nb::handle h : items) {
    if (h.is_none()) continue;
    if (h.ptr() == Py_Ellipsis) {
      ++ellipses;
      continue;
    }
    if (PyLong_Check(h.ptr()) || PySlice_Check(h.ptr())) {
      ++consumed;
      continue;
    }
    throw OpError(op, "only integers, slices, ellipsis and None are supported as indices here; array indices "
                      "come with the indexing issue");
  }
  if (ellipses > 1) throw OpError(op, "an index can only have a single ellipsis");
  if (consumed > x.ndim())
    throw OpError(op, "too many indices for an array of dimension " + std::to_string(x.ndim()), true);
  int nd = x.ndim();
  Shape start(nd, 0), stop = x.shape(), step(nd, 1);
  Shape out_shape;  // after dropping integer axes and inserting None axes
  int axis = 0;
  auto take_axis = [&](nb::handle h) {
    int64_t n = x.shape(axis);
    if (PyLong_Check(h.ptr())) {
      int64_t i = nb::cast<int64_t>(h);
      if (i < -n || i >= n)
        throw OpError(op, "index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) +
                              " with size " + std::to_string(n), true);
      if (i < 0) i += n;
      start[axis] = i, stop[axis] = i + 1, step[axis] = 1;
    } else {
      Py_ssize_t b, e, st;
      if (PySlice_Unpack(h.ptr(), &b, &e, &st) < 0) {
        PyErr_Clear();
        throw OpError(op, "invalid slice");
      }
      if (st == 0) throw OpError(op, "slice step cannot be zero");
      Py_ssize_t len = PySlice_AdjustIndices(Py_ssize_t(n), &b, &e, st);
      start[axis] = b, stop[axis] = e, step[axis] = st;
      out_shape.push_back(len);
    }
    ++axis;
  };
  for (nb::handle h : items) {
    if (h.is_none()) {
      out_shape.push_back(1);
    } else if (h.ptr() == Py_Ellipsis) {
      for (int k = 0; k < nd - consumed; ++k) out_shape.push_back(x.shape(axis++));
    } else {
      take_axis(h);
    }
  }
  while (axis < nd) out_shape.push_back(x.shape(axis++));
  Stream s = default_stream(default_device());
  Array r = x;
  bool sliced = false;
  for (int i = 0; i < nd; ++i) sliced |= start[i] != 0 || stop[i] != x.shape(i) || step[i] != 1;
  if (sliced) r = slice(x, start, stop, step, s);
  return reshape(r, out_shape, s);
}

}  // namespace nuvec::python
