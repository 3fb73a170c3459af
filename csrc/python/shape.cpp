// Module-level shape and indexing functions.
#include <nanobind/nanobind.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <numeric>

#include "core/ops.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

std::vector<Array> array_list(nb::handle h, const char* op) {
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) throw OpError(op, "expected a list or tuple of arrays");
  std::vector<Array> out;
  for (nb::handle v : nb::borrow<nb::sequence>(h)) out.push_back(arg(v));
  return out;
}

std::optional<int> optional_axis(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_axis(h);
}

nb::list to_list(const std::vector<Array>& xs) {
  nb::list l;
  for (const Array& x : xs) l.append(nb::cast(x));
  return l;
}

}  // namespace

void init_shape(nb::module_& m) {
  auto S = [](nb::handle s) { return to_stream(s); };
#define STREAM nb::kw_only(), nb::arg("stream").none() = nb::none()
  m.def(
      "flatten", [=](nb::handle a, int start, int end, nb::handle s) { return flatten(arg(a), start, end, S(s)); },
      nb::arg("a"), nb::arg("start_axis") = 0, nb::arg("end_axis") = -1, STREAM,
      "Merges axes start_axis..end_axis into one.");
  m.def(
      "unflatten",
      [=](nb::handle a, int axis, nb::handle shape, nb::handle s) {
        return unflatten(arg(a), axis, int_list(shape, "unflatten"), S(s));
      },
      nb::arg("a"), nb::arg("axis"), nb::arg("shape"), STREAM, "Splits one axis into `shape`.");
  m.def(
      "squeeze",
      [=](nb::handle a, nb::handle axis, nb::handle s) {
        std::optional<std::vector<int>> ax;
        if (!axis.is_none()) ax = axis_list(axis);
        return squeeze(arg(a), ax, S(s));
      },
      nb::arg("a"), nb::arg("axis").none() = nb::none(), STREAM, "Removes axes of size 1.");
  m.def(
      "expand_dims",
      [=](nb::handle a, nb::handle axis, nb::handle s) { return expand_dims(arg(a), axis_list(axis), S(s)); },
      nb::arg("a"), nb::arg("axis"), STREAM, "Inserts axes of size 1.");
  m.def(
      "swapaxes", [=](nb::handle a, int x, int y, nb::handle s) { return swapaxes(arg(a), x, y, S(s)); }, nb::arg("a"),
      nb::arg("axis1"), nb::arg("axis2"), STREAM, "Swaps two axes (a view).");
  m.def(
      "moveaxis", [=](nb::handle a, int x, int y, nb::handle s) { return moveaxis(arg(a), x, y, S(s)); }, nb::arg("a"),
      nb::arg("source"), nb::arg("destination"), STREAM, "Moves an axis (a view).");
  m.def(
      "broadcast_arrays",
      [=](nb::args xs, nb::kwargs kw) {
        std::vector<Array> arrays;
        for (nb::handle x : xs) arrays.push_back(arg(x));
        return to_list(broadcast_arrays(arrays, to_stream(kw.contains("stream") ? kw["stream"] : nb::none())));
      },
      "Broadcasts the arrays against each other.");
  for (int n = 1; n <= 3; ++n) {
    std::string name = "atleast_" + std::to_string(n) + "d";
    m.def(
        name.c_str(),
        [=](nb::args xs, nb::kwargs kw) -> nb::object {
          Stream s = to_stream(kw.contains("stream") ? kw["stream"] : nb::none());
          std::vector<Array> out;
          for (nb::handle x : xs) out.push_back(atleast_nd(arg(x), n, s));
          if (out.size() == 1) return nb::cast(out[0]);
          return to_list(out);
        },
        "Views with at least this many dimensions.");
  }
  m.def(
      "concatenate",
      [=](nb::handle xs, nb::handle axis, nb::handle s) {
        return concatenate(array_list(xs, "concatenate"), optional_axis(axis), S(s));
      },
      nb::arg("arrays"), nb::arg("axis").none() = 0, STREAM, "Joins arrays along an axis (None flattens).");
  m.attr("concat") = m.attr("concatenate");
  m.def(
      "stack", [=](nb::handle xs, int axis, nb::handle s) { return stack(array_list(xs, "stack"), axis, S(s)); },
      nb::arg("arrays"), nb::arg("axis") = 0, STREAM, "Joins arrays along a new axis.");
  m.def(
      "split",
      [=](nb::handle a, nb::handle sections, int axis, nb::handle s) {
        Array x = arg(a);
        if (is_scalar_int(sections)) return to_list(split_sections(x, *as_index(sections), axis, S(s)));
        return to_list(split(x, int_list(sections, "split"), axis, S(s)));
      },
      nb::arg("a"), nb::arg("indices_or_sections"), nb::arg("axis") = 0, STREAM,
      "Splits into equal sections or at the given indices (views).");
  m.def(
      "tile", [=](nb::handle a, nb::handle reps, nb::handle s) { return tile(arg(a), int_list(reps, "tile"), S(s)); },
      nb::arg("a"), nb::arg("reps"), STREAM, "Repeats the whole array along each axis.");
  m.def(
      "repeat",
      [=](nb::handle a, int64_t repeats, nb::handle axis, nb::handle s) {
        return repeat(arg(a), repeats, optional_axis(axis), S(s));
      },
      nb::arg("array"), nb::arg("repeats"), nb::arg("axis").none() = nb::none(), STREAM,
      "Repeats each element (flattened when axis is None).");
  m.def(
      "pad",
      [=](nb::handle a, nb::handle width, const std::string& mode, nb::handle value, nb::handle s) {
        Array x = arg(a);
        std::vector<std::pair<int64_t, int64_t>> pw;
        // int, (before, after), or one pair per axis, as NumPy.
        if (is_scalar_int(width)) {
          int64_t w = *as_index(width);
          pw.assign(x.ndim(), {w, w});
        } else {
          nb::sequence seq = nb::borrow<nb::sequence>(width);
          bool pairs = nb::len(seq) > 0 && !is_scalar_int(seq[0]);
          if (!pairs) {
            auto v = int_list(width, "pad");
            if (v.size() == 1) v.push_back(v[0]);
            if (v.size() != 2) throw nb::type_error("pad(): pad_width must be an int, a pair, or one pair per axis");
            pw.assign(x.ndim(), {v[0], v[1]});
          } else if (nb::len(seq) == 1) {
            auto v = int_list(seq[0], "pad");
            if (v.size() == 1) v.push_back(v[0]);
            pw.assign(x.ndim(), {v.at(0), v.at(1)});
          } else {
            for (nb::handle p : seq) {
              auto v = int_list(p, "pad");
              if (v.size() == 1) v.push_back(v[0]);
              if (v.size() != 2) throw OpError("pad", "each pad_width entry must be a (before, after) pair");
              pw.emplace_back(v[0], v[1]);
            }
          }
        }
        return pad(x, pw, mode, arg_like(value, x.dtype(), "pad"), S(s));
      },
      nb::arg("a"), nb::arg("pad_width"), nb::arg("mode") = "constant", nb::arg("constant_values") = 0, STREAM,
      "Pads with a constant, the edge values, or the reflection of the array ('reflect' without the edge, "
      "'symmetric' with it).");
  m.def(
      "roll",
      [=](nb::handle a, nb::handle shift, nb::handle axis, nb::handle s) {
        // As MLX: shifts add up along one axis (or the flattened array); an int shift serves every axis.
        Shape sh = int_list(shift, "roll");
        std::optional<std::vector<int>> ax;
        if (!axis.is_none()) ax = axis_list(axis);
        if (ax && is_scalar_int(axis) && !sh.empty()) sh = {std::accumulate(sh.begin(), sh.end(), int64_t(0))};
        if (ax && is_scalar_int(shift)) sh.assign(ax->size(), sh[0]);
        return roll(arg(a), sh, ax, S(s));
      },
      nb::arg("a"), nb::arg("shift"), nb::arg("axis").none() = nb::none(), STREAM,
      "Rolls elements along axes (flattened when axis is None).");
  m.def(
      "as_strided",
      [=](nb::handle a, nb::handle shape, nb::handle strides, int64_t offset, nb::handle s) {
        Array x = arg(a);
        Shape sh = shape.is_none() ? x.shape() : int_list(shape, "as_strided");
        Strides st = strides.is_none() ? Array::row_strides(sh) : int_list(strides, "as_strided");
        return as_strided(x, sh, st, offset, S(s));
      },
      nb::arg("a"), nb::arg("shape").none() = nb::none(), nb::arg("strides").none() = nb::none(), nb::arg("offset") = 0,
      STREAM, "A view of the row-major data with these strides (in elements).");
  m.def(
      "contiguous", [=](nb::handle a, bool, nb::handle s) { return contiguous(arg(a), S(s)); }, nb::arg("a"),
      nb::kw_only(), nb::arg("allow_col_major") = false, nb::arg("stream").none() = nb::none(),
      "The array in row-major order (a copy only when needed).");
  m.def(
      "broadcast_shapes",
      [](nb::args shapes) {
        if (shapes.size() == 0) throw OpError("broadcast_shapes", "at least one shape is required");
        Shape out;
        for (nb::handle h : shapes) {
          if (is_scalar_int(h) || !PySequence_Check(h.ptr()))
            throw nb::type_error("broadcast_shapes: shapes must be sequences of ints");
          out = broadcast_shapes(out, int_list(h, "broadcast_shapes"), "broadcast_shapes");
        }
        nb::list dims;
        for (int64_t d : out) dims.append(d);
        return nb::tuple(dims);
      },
      nb::arg("shapes"), "The shape the given shapes broadcast to, as a tuple.");
  m.def(
      "meshgrid",
      [=](nb::args xs, bool sparse, const std::string& indexing, nb::handle s) {
        std::vector<Array> arrays;
        for (nb::handle x : xs) arrays.push_back(arg(x));
        return nb::tuple(to_list(meshgrid(arrays, sparse, indexing, S(s))));  // a tuple, as MLX
      },
      nb::arg("arrays"), nb::arg("sparse") = false, nb::arg("indexing") = "xy", nb::arg("stream").none() = nb::none(),
      "Coordinate grids.");
  m.def(
      "diagonal",
      [=](nb::handle a, int64_t offset, int axis1, int axis2, nb::handle s) {
        return diagonal(arg(a), offset, axis1, axis2, S(s));
      },
      nb::arg("a"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1, STREAM,
      "The diagonal of two axes, as the last axis (a view).");
  m.def(
      "diag", [=](nb::handle a, int64_t k, nb::handle s) { return diag(arg(a), k, S(s)); }, nb::arg("a"),
      nb::arg("k") = 0, STREAM, "A diagonal of a matrix, or a matrix with the vector on a diagonal.");
  m.def(
      "flip",
      [=](nb::handle a, nb::handle axis, nb::handle s) {
        std::optional<std::vector<int>> axes;
        if (!axis.is_none()) axes = axis_list(axis);
        return flip(arg(a), axes, S(s));
      },
      nb::arg("a"), nb::arg("axis").none() = nb::none(), STREAM,
      "Reverses the order of elements along `axis` (every axis when None); a view.");
  m.def(
      "matrix_transpose", [=](nb::handle a, nb::handle s) { return matrix_transpose(arg(a), S(s)); }, nb::arg("a"),
      STREAM, "Swaps the last two axes; a view.");
  m.def(
      "unstack",
      [=](nb::handle x, int axis, nb::handle s) {
        nb::list parts = to_list(unstack(arg(x), axis, S(s)));
        return nb::steal<nb::tuple>(PyList_AsTuple(parts.ptr()));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = 0, nb::arg("stream").none() = nb::none(),
      "The slices of x along `axis`, as a tuple.");
  m.def(
      "kron", [=](nb::handle a, nb::handle b, nb::handle s) { return kron(arg(a), arg(b), S(s)); }, nb::arg("a"),
      nb::arg("b"), STREAM, "The Kronecker product.");

  m.def(
      "take",
      [=](nb::handle a, nb::handle idx, nb::handle axis, nb::handle s) {
        Array i = PyLong_Check(idx.ptr()) ? scalar_array(nb::cast<int64_t>(idx)) : arg(idx);
        return take(arg(a), i, optional_axis(axis), S(s));
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("axis").none() = nb::none(), STREAM,
      "Elements at the indices along an axis (of the flattened array when axis is None).");
  m.def(
      "take_along_axis",
      [=](nb::handle a, nb::handle idx, nb::handle axis, nb::handle s) {
        return take_along_axis(arg(a), arg(idx), optional_axis(axis), S(s));
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("axis").none(), STREAM, "NumPy's take_along_axis.");
  m.def(
      "put_along_axis",
      [=](nb::handle a, nb::handle idx, nb::handle values, nb::handle axis, nb::handle s) {
        Array x = arg(a);
        return put_along_axis(x, arg(idx), arg_like(values, x.dtype(), "put_along_axis"), optional_axis(axis), S(s));
      },
      nb::arg("a"), nb::arg("indices"), nb::arg("values"), nb::arg("axis").none(), STREAM,
      "A copy of a with values put at the indices along an axis.");
  m.def(
      "slice",
      [=](nb::handle a, nb::handle start, nb::handle axes, nb::handle sizes, nb::handle s) {
        Array st = PyList_Check(start.ptr()) || PyTuple_Check(start.ptr()) ? to_array(start, Dtype::int64) : arg(start);
        return slice_dynamic(arg(a), st, axis_list(axes), int_list(sizes, "slice"), S(s));
      },
      nb::arg("a"), nb::arg("start_indices"), nb::arg("axes"), nb::arg("slice_size"), STREAM,
      "A slice whose start is an array (known only when evaluated).");
  m.def(
      "slice_update",
      [=](nb::handle a, nb::handle update, nb::handle start, nb::handle axes, nb::handle s) {
        Array st = PyList_Check(start.ptr()) || PyTuple_Check(start.ptr()) ? to_array(start, Dtype::int64) : arg(start);
        Array x = arg(a);
        return slice_update_dynamic(x, arg_like(update, x.dtype(), "slice_update"), st, axis_list(axes), S(s));
      },
      nb::arg("a"), nb::arg("update"), nb::arg("start_indices"), nb::arg("axes"), STREAM,
      "A copy of a with `update` written at an array-valued start (a negative start counts from the "
      "axis' end; a window that does not fit raises IndexError when evaluated).");
  m.def(
      "nonzero",
      [](nb::handle a) {
        nb::list l;
        Array flags = nonzero_flags(arg(a), default_stream(default_device()));
        eval_now({flags});
        for (const Array& x : nonzero(flags)) l.append(nb::cast(x));
        return nb::tuple(l);
      },
      nb::arg("a"), "Indices of the nonzero elements, one int64 array per axis (evaluates a now).");
#undef STREAM
}

}  // namespace nuvec::python
