#include "python/indexing.h"

#include <nanobind/stl/string.h>

#include <string>

#include "core/ops.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

constexpr const char* kOp = "getitem";

// One entry of an index after expanding `...` and boolean masks.
struct Entry {
  // `gap` is an ellipsis that stands for no axis: it still separates advanced indices (NumPy).
  enum Kind { integer, range, new_axis, array, gap } kind;
  int64_t start = 0, stop = 0, step = 1;  // range (already clamped); integer uses start
  Array indices;                          // array
};

struct Parsed {
  std::vector<Entry> entries;
  bool advanced = false;
};

// Arrays, lists and NumPy arrays index as arrays; NumPy integer scalars as integers.
bool is_sequence_index(nb::handle h) {
  if (nb::isinstance<Array>(h) || PyList_Check(h.ptr())) return true;
  if (PyLong_Check(h.ptr()) || !nb::hasattr(h, "ndim")) return false;
  return nb::cast<int>(h.attr("ndim")) > 0 || !PyIndex_Check(h.ptr());
}

Parsed parse(const Array& x, nb::handle index, const char* op) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(index.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(index)) items.push_back(h);
  } else {
    items.push_back(index);
  }
  // Convert first: masks consume as many axes as they have dimensions.
  struct Item {
    nb::handle h;
    std::optional<Array> array;
  };
  std::vector<Item> conv;
  int consumed = 0, ellipses = 0;
  for (nb::handle h : items) {
    Item it{h, std::nullopt};
    if (h.is_none() || h.ptr() == Py_Ellipsis) {
      ellipses += h.ptr() == Py_Ellipsis;
    } else if (PyBool_Check(h.ptr())) {
      throw OpError(op, "a Python bool is not a valid index; use a boolean array");
    } else if (is_sequence_index(h)) {
      it.array = to_array(h);
      if (it.array->dtype() == Dtype::bool_)
        consumed += std::max(it.array->ndim(), 1);
      else if (is_integer(it.array->dtype()))
        ++consumed;
      else
        throw OpError(
            op, std::string("arrays used as indices must be integers or booleans, got ") + name_of(it.array->dtype()));
    } else if (PyLong_Check(h.ptr()) || PySlice_Check(h.ptr()) || PyIndex_Check(h.ptr())) {
      ++consumed;
    } else {
      throw OpError(op, "only integers, slices, ellipsis, None, integer arrays and boolean arrays are valid indices");
    }
    conv.push_back(it);
  }
  if (ellipses > 1) throw OpError(op, "an index can only have a single ellipsis");
  if (consumed > x.ndim())
    throw OpError(op, "too many indices for an array of dimension " + std::to_string(x.ndim()), true);
  Parsed p;
  int axis = 0;
  auto full_range = [&](int a) { return Entry{Entry::range, 0, x.shape(a), 1, {}}; };
  for (Item& it : conv) {
    nb::handle h = it.h;
    if (h.is_none()) {
      p.entries.push_back({Entry::new_axis});
    } else if (h.ptr() == Py_Ellipsis) {
      if (x.ndim() == consumed) p.entries.push_back({Entry::gap});
      for (int k = 0; k < x.ndim() - consumed; ++k) p.entries.push_back(full_range(axis++));
    } else if (it.array && it.array->dtype() == Dtype::bool_) {
      const Array& mask = *it.array;
      for (int k = 0; k < mask.ndim(); ++k)
        if (mask.shape(k) != x.shape(axis + k))
          throw OpError(
              op, "boolean index of shape does not match the indexed array's axis " + std::to_string(axis + k), true);
      if (mask.ndim() == 0) throw OpError(op, "0-d boolean indices are not supported");
      if (mask.traced())  // as MLX: a ValueError at the call
        throw OpError(op,
                      "a boolean mask computed from a transform's input (grad, vjp, jvp, vmap) selects a "
                      "number of elements that depends on values; use where() instead");
      Array flags = nonzero_flags(mask, default_stream(default_device()));
      eval_now({flags});  // a data-dependent shape: the mask must be known
      for (Array& idx : nonzero(flags)) p.entries.push_back({Entry::array, 0, 0, 1, idx});
      axis += mask.ndim();
      p.advanced = true;
    } else if (it.array) {
      p.entries.push_back({Entry::array, 0, 0, 1, *it.array});
      ++axis;
      p.advanced = true;
    } else if (PySlice_Check(h.ptr())) {
      Py_ssize_t b, e, st;
      if (PySlice_Unpack(h.ptr(), &b, &e, &st) < 0) {
        PyErr_Clear();
        throw OpError(op, "invalid slice");
      }
      if (st == 0) throw OpError(op, "slice step cannot be zero");
      PySlice_AdjustIndices(Py_ssize_t(x.shape(axis)), &b, &e, st);
      p.entries.push_back({Entry::range, b, e, st, {}});
      ++axis;
    } else {
      bool overflow;
      int64_t i = *as_index(h, overflow), n = x.shape(axis);
      if (overflow || i < -n || i >= n)
        throw OpError(op,
                      "index " + nb::cast<std::string>(nb::str(nb::int_(h))) + " is out of bounds for axis " +
                          std::to_string(axis) + " with size " + std::to_string(n),
                      true);
      p.entries.push_back({Entry::integer, i < 0 ? i + n : i});
      ++axis;
    }
  }
  while (axis < x.ndim()) p.entries.push_back(full_range(axis++));
  return p;
}

int64_t range_length(const Entry& e) {
  int64_t n = e.step > 0 ? (e.stop - e.start + e.step - 1) / e.step : (e.start - e.stop - e.step - 1) / -e.step;
  return std::max<int64_t>(n, 0);
}

// Whether the advanced entries (integer arrays, and integers beside them) stand together.
bool advanced_adjacent(const Parsed& p) {
  int first = -1, last = -1, count = 0;
  for (int i = 0; i < int(p.entries.size()); ++i)
    if (p.entries[i].kind == Entry::array || p.entries[i].kind == Entry::integer) {
      if (first < 0) first = i;
      last = i, ++count;
    }
  return count == 0 || last - first + 1 == count;
}

Array basic(const Array& x, const Parsed& p, Stream s) {
  Shape start(x.ndim(), 0), stop = x.shape(), step(x.ndim(), 1), out;
  int axis = 0;
  for (const Entry& e : p.entries) {
    if (e.kind == Entry::gap) continue;
    if (e.kind == Entry::new_axis) {
      out.push_back(1);
      continue;
    }
    if (e.kind == Entry::integer) {
      start[axis] = e.start, stop[axis] = e.start + 1;
    } else {
      start[axis] = e.start, stop[axis] = e.stop, step[axis] = e.step;
      out.push_back(range_length(e));
    }
    ++axis;
  }
  return reshape(slice(x, start, stop, step, s), out, s);
}

}  // namespace

Array get_item(const Array& x, nb::handle index) {
  Stream s = default_stream(default_device());
  Parsed p = parse(x, index, kOp);
  if (!p.advanced) return basic(x, p, s);
  // Slices and new axes first (a view), then one gather over the advanced axes. Integers
  // beside integer arrays are advanced indices too (NumPy's rule).
  Shape start(x.ndim(), 0), stop = x.shape(), step(x.ndim(), 1), view_shape;
  std::vector<Array> arrays;
  std::vector<int> axes;
  int axis = 0, plain_before = -1, plain = 0;
  for (const Entry& e : p.entries) {
    if (e.kind == Entry::gap) continue;
    if (e.kind == Entry::new_axis) {
      view_shape.push_back(1), ++plain;
      continue;
    }
    if (e.kind == Entry::range) {
      start[axis] = e.start, stop[axis] = e.stop, step[axis] = e.step;
      view_shape.push_back(range_length(e)), ++plain;
    } else {
      if (plain_before < 0) plain_before = plain;
      axes.push_back(int(view_shape.size()));
      arrays.push_back(e.kind == Entry::array ? e.indices : scalar_array(e.start, Dtype::int64));
      view_shape.push_back(x.shape(axis));
    }
    ++axis;
  }
  Array view = reshape(slice(x, start, stop, step, s), view_shape, s);
  Array g = gather(view, arrays, axes, s);
  int index_rank = g.ndim() - (view.ndim() - int(axes.size()));
  if (!advanced_adjacent(p) || plain_before <= 0) return g;
  // NumPy puts the broadcast index dimensions where the (adjacent) advanced indices stood.
  std::vector<int> perm;
  for (int i = index_rank; i < index_rank + plain_before; ++i) perm.push_back(i);
  for (int i = 0; i < index_rank; ++i) perm.push_back(i);
  for (int i = index_rank + plain_before; i < g.ndim(); ++i) perm.push_back(i);
  return transpose(g, perm, s);
}

// x[index] = v for an index of integers, slices (positive steps), None and Ellipsis: one
// slice_update, which writes in place when x's buffer is free (MLX's path for basic indices).
std::optional<Array> window_set(const Array& x, const Parsed& p, Array v, Stream s) {
  Shape start, stop, step, window, result;  // result: x[index]'s shape
  for (const Entry& e : p.entries) {
    if (e.kind == Entry::new_axis) result.push_back(1);
    if (e.kind != Entry::integer && e.kind != Entry::range) continue;
    int64_t len = e.kind == Entry::integer ? 1 : range_length(e);
    if (len > 0 && e.step <= 0) return std::nullopt;
    start.push_back(len > 0 ? e.start : 0);
    stop.push_back(len > 0 ? e.start + (len - 1) * e.step + 1 : 0);
    step.push_back(len > 0 ? e.step : 1);
    window.push_back(len);
    if (e.kind == Entry::range) result.push_back(len);
  }
  // The value broadcasts to x[index]'s shape (leading dimensions of size 1 may be dropped).
  Shape vs = v.shape();
  while (vs.size() > result.size() && vs.front() == 1) vs.erase(vs.begin());
  if (broadcast_shapes(result, vs, "setitem") != result)
    throw OpError("setitem", "the value cannot be broadcast to the shape of the indexed region");
  Array u = reshape(broadcast_to(reshape(v, vs, s), result, s), window, s);
  return slice_update(x, u, start, stop, step, s);
}

Array update_item(const Array& x, nb::handle index, nb::handle value, ScatterOp op) {
  Stream s = default_stream(default_device());
  const char* name = "setitem";
  Parsed p = parse(x, index, name);
  Array v = arg_like(value, x.dtype(), name);
  if (op == ScatterOp::set && !p.advanced)
    if (auto r = window_set(x, p, v, s)) return *r;
  // Index arrays for every axis of x, shaped so they broadcast to the shape x[index] has.
  bool adjacent = advanced_adjacent(p);
  Shape index_shape;
  for (const Entry& e : p.entries)
    if (e.kind == Entry::array) index_shape = broadcast_shapes(index_shape, e.indices.shape(), name);
  int index_rank = int(index_shape.size());
  // Positions of each result dimension: plain dims in order, the index block at the first
  // advanced entry (adjacent) or at the front.
  int plain_total = 0;
  for (const Entry& e : p.entries) plain_total += e.kind == Entry::range || e.kind == Entry::new_axis;
  int rank = plain_total + index_rank;
  int block_at = 0;
  if (adjacent) {
    for (const Entry& e : p.entries) {
      if (e.kind == Entry::array || e.kind == Entry::integer) break;
      block_at += e.kind == Entry::range || e.kind == Entry::new_axis;
    }
  }
  Shape result(rank, 1);
  for (int i = 0; i < index_rank; ++i) result[block_at + i] = index_shape[i];
  std::vector<Array> arrays;
  std::vector<int> axes;
  int plain = 0, axis = 0;
  for (const Entry& e : p.entries) {
    int pos = plain < block_at || !adjacent ? plain + (adjacent ? 0 : index_rank) : plain + index_rank;
    if (e.kind == Entry::gap) continue;
    if (e.kind == Entry::new_axis) {
      ++plain;
      continue;
    }
    Shape shape(rank, 1);
    Array idx;
    if (e.kind == Entry::range) {
      int64_t len = range_length(e);
      shape[pos] = len, result[pos] = len;
      idx = reshape(arange(double(e.start), double(e.start + len * e.step), double(e.step), Dtype::int64, s), shape, s);
      ++plain;
    } else if (e.kind == Entry::integer) {
      idx = reshape(scalar_array(e.start, Dtype::int64), shape, s);
    } else {
      Array b = broadcast_to(e.indices, index_shape, s);
      for (int i = 0; i < index_rank; ++i) shape[block_at + i] = index_shape[i];
      idx = reshape(b, shape, s);
    }
    arrays.push_back(idx);
    axes.push_back(axis++);
  }
  // The value broadcasts to x[index]'s shape (leading dimensions of size 1 may be dropped).
  Shape vs = v.shape();
  while (int(vs.size()) > rank && vs.front() == 1) vs.erase(vs.begin());
  if (vs != v.shape()) v = reshape(v, vs, s);
  Shape target = broadcast_shapes(result, v.shape(), name);
  if (target != result) throw OpError(name, "the value cannot be broadcast to the shape of the indexed region");
  return scatter(x, arrays, v, axes, op, s);
}

namespace {
// x[mask] = v for one boolean array mask over x's leading axes, as MLX's masked scatter, without
// reading the mask (so it works under vmap and grad): v broadcasts to every selected element
// (v's rank at most that of the trailing axes), or gives the selected elements their values in
// order along its first axis (one axis more).
std::optional<Array> masked_set(const Array& x, nb::handle index, const Array& v) {
  const char* name = "setitem";
  Stream s = default_stream(default_device());
  if (PyTuple_Check(index.ptr()) && PyTuple_GET_SIZE(index.ptr()) == 1) index = PyTuple_GET_ITEM(index.ptr(), 0);
  if (!nb::isinstance<Array>(index)) return std::nullopt;
  Array mask = nb::cast<Array>(index);
  int k = mask.ndim();
  if (mask.dtype() != Dtype::bool_ || k == 0) return std::nullopt;
  if (k > x.ndim() || !std::equal(mask.shape().begin(), mask.shape().end(), x.shape().begin()))
    throw OpError(name, "the boolean mask must have the shape of the array's leading axes", true);
  Shape trailing(x.shape().begin() + k, x.shape().end());
  Shape mask_shape = mask.shape();
  mask_shape.resize(x.ndim(), 1);
  Array values = v;
  if (v.ndim() == int(trailing.size()) + 1) {
    int64_t rows = v.shape(0);
    Array flat = reshape(mask, {mask.size()}, s);
    if (!mask.traced()) {  // a concrete mask: check now that there are values enough
      Array count = sum(astype(flat, Dtype::int64, s), std::nullopt, false, s);
      eval_now({count});
      if (count.data<int64_t>()[0] > rows)
        throw OpError(name, "the value has fewer rows (" + std::to_string(rows) + ") than the mask selects (" +
                                std::to_string(count.data<int64_t>()[0]) + ")");
    }
    if (rows == 0) return x;
    Shape src_shape = trailing;
    src_shape.insert(src_shape.begin(), rows);
    // The selected element i takes row i: an exclusive count of the selected ones before it.
    Array pos = scan(ScanOp::sum, astype(flat, Dtype::int64, s), 0, false, false, std::nullopt, s);
    pos = binary(BinaryOp::minimum, pos, scalar_array(rows - 1, Dtype::int64), s);
    values = reshape(gather(broadcast_to(v, src_shape, s), {pos}, {0}, s), x.shape(), s);
  } else if (v.ndim() > int(trailing.size())) {
    throw OpError(name, "the value must broadcast to the array's axes after the mask's, or have one more axis");
  }
  return where(reshape(mask, mask_shape, s), astype(values, x.dtype(), s), x, s);
}

// x.at[index]: the pending update's target, as MLX's `ArrayAt`.
struct AtIndexer { Array x; };
struct AtTarget {
  Array x;
  nb::object index;
};
}  // namespace

// One `.at` method: combine with `op`; subtract and divide combine the negated or inverted value
// (MLX's definition).
template <ScatterOp op, std::optional<UnaryOp> (*transform)()> Array at_update(const AtTarget& t, nb::handle v) {
  if (auto u = transform()) {
    Array value = unary(*u, arg_like(v, t.x.dtype(), op_name(*u)), default_stream(default_device()));
    return update_item(t.x, t.index, nb::cast(value), op);
  }
  return update_item(t.x, t.index, v, op);
}
std::optional<UnaryOp> as_is() { return std::nullopt; }
std::optional<UnaryOp> negated() { return UnaryOp::negative; }
std::optional<UnaryOp> inverted() { return UnaryOp::reciprocal; }

void init_indexing(nb::module_& m) {
  nb::class_<AtTarget>(m, "ArrayAt", "x.at[index]: functional updates that accumulate over repeated indices.")
      .def("add", &at_update<ScatterOp::add, as_is>, nb::arg("value"))
      .def("subtract", &at_update<ScatterOp::add, negated>, nb::arg("value"))
      .def("multiply", &at_update<ScatterOp::multiply, as_is>, nb::arg("value"))
      .def("divide", &at_update<ScatterOp::multiply, inverted>, nb::arg("value"))
      .def("maximum", &at_update<ScatterOp::maximum, as_is>, nb::arg("value"))
      .def("minimum", &at_update<ScatterOp::minimum, as_is>, nb::arg("value"));
  nb::class_<AtIndexer>(m, "ArrayAtIndexer")
      .def(
          "__getitem__", [](const AtIndexer& a, nb::object index) { return AtTarget{a.x, index}; },
          nb::arg("index").none());
  nb::object cls = m.attr("array");
  cls.attr("at") = nb::steal(
      PyObject_CallFunction((PyObject*)&PyProperty_Type, "O",
                            nb::cpp_function([](const Array& x) { return AtIndexer{x}; }, nb::is_method()).ptr()));
  cls.attr("__setitem__") = nb::cpp_function(
      [](Array& x, nb::handle index, nb::handle value) {
        if (auto r = masked_set(x, index, arg_like(value, x.dtype(), "setitem")))
          x = *r;
        else
          x = update_item(x, index, value, ScatterOp::set);
      },
      nb::is_method(), nb::arg("index").none(), nb::arg("value"));
}

}  // namespace nuvec::python
