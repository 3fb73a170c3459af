// Reductions, as module functions and as array methods (one binding serves both).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

#include "core/ops.h"
#include "core/ops/reduce.h"
#include "core/ops/sort_composed.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

Axes to_axes(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return axis_list(h);
}

std::optional<int> to_one_axis(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_axis(h);
}

// Defines `name` on the module and as a method of array with the same arguments after `a`.
template <class F, class... Extra>
void def_both(nb::module_& m, nb::handle cls, const char* name, F f, const char* doc, const Extra&... extra) {
  m.def(name, f, nb::arg("a"), extra..., doc);
  nb::setattr(cls, name, nb::cpp_function(f, nb::scope(cls), nb::name(name), nb::is_method(), extra..., doc));
}

using AxesOp = Array (*)(const Array&, const Axes&, bool, Stream);
using DdofOp = Array (*)(const Array&, const Axes&, bool, int, Stream);
using ArgOp = Array (*)(const Array&, std::optional<int>, bool, Stream);

}  // namespace

void init_reduce(nb::module_& m) {
  nb::handle cls = m.attr("array");
  auto axis = nb::arg("axis").none() = nb::none();
  auto keepdims = nb::arg("keepdims") = false;
  auto stream = nb::arg("stream").none() = nb::none();

  const std::pair<const char*, AxesOp> axes_ops[] = {
      {"sum", &sum}, {"prod", &prod}, {"max", &max},   {"min", &min},
      {"all", &all}, {"any", &any},   {"mean", &mean}, {"logsumexp", &logsumexp},
  };
  const char* axes_docs[] = {
      "The sum over `axis` (all axes when None); small integers sum in 32 bits and wrap.",
      "The product over `axis` (all axes when None).",
      "The largest element over `axis` (NaN when one is NaN).",
      "The smallest element over `axis` (NaN when one is NaN).",
      "Whether every element over `axis` is nonzero.",
      "Whether any element over `axis` is nonzero.",
      "The mean over `axis`; integers give float32.",
      "log(sum(exp(a))) over `axis`, computed without overflow.",
  };
  for (size_t i = 0; i < std::size(axes_ops); ++i) {
    AxesOp op = axes_ops[i].second;
    def_both(
        m, cls, axes_ops[i].first,
        [op](nb::handle a, nb::handle ax, bool kd, nb::handle s) { return op(arg(a), to_axes(ax), kd, to_stream(s)); },
        axes_docs[i], axis, keepdims, nb::kw_only(), stream);
  }

  const std::pair<const char*, DdofOp> ddof_ops[] = {{"var", &var}, {"std", &std}};
  const char* ddof_docs[] = {"The variance over `axis`, dividing by N - ddof.",
                             "The standard deviation over `axis`, dividing by N - ddof."};
  for (size_t i = 0; i < std::size(ddof_ops); ++i) {
    DdofOp op = ddof_ops[i].second;
    def_both(
        m, cls, ddof_ops[i].first,
        [op](nb::handle a, nb::handle ax, bool kd, int ddof, nb::handle s) {
          return op(arg(a), to_axes(ax), kd, ddof, to_stream(s));
        },
        ddof_docs[i], axis, keepdims, nb::arg("ddof") = 0, nb::kw_only(), stream);
  }

  const std::pair<const char*, ArgOp> arg_ops[] = {{"argmax", &argmax}, {"argmin", &argmin}};
  const char* arg_docs[] = {"The index of the first largest element over `axis` (of the flattened array when None).",
                            "The index of the first smallest element over `axis` (of the flattened array when None)."};
  for (size_t i = 0; i < std::size(arg_ops); ++i) {
    ArgOp op = arg_ops[i].second;
    def_both(
        m, cls, arg_ops[i].first,
        [op](nb::handle a, nb::handle ax, bool kd, nb::handle s) {
          return op(arg(a), to_one_axis(ax), kd, to_stream(s));
        },
        arg_docs[i], axis, keepdims, nb::kw_only(), stream);
  }

  m.def(
      "softmax",
      [](nb::handle a, nb::handle ax, bool precise, nb::handle s) {
        return softmax(arg(a), to_axes(ax), precise, to_stream(s));
      },
      nb::arg("a"), axis, nb::kw_only(), nb::arg("precise") = false, stream,
      "exp(a) / sum(exp(a)) over `axis` (all axes when None), computed without overflow.");
  m.def(
      "minmax",
      [](nb::handle a, nb::handle ax, bool kd, nb::handle s) { return minmax(arg(a), to_axes(ax), kd, to_stream(s)); },
      nb::arg("a"), axis, keepdims, nb::kw_only(), stream, "(min, max) over `axis` (all axes when None).");
  m.def(
      "count_nonzero",
      [](nb::handle a, nb::handle ax, bool kd, nb::handle s) {
        return count_nonzero(arg(a), to_axes(ax), kd, to_stream(s));
      },
      nb::arg("a"), nb::kw_only(), axis, keepdims, stream,
      "The number of nonzero elements over `axis` (all axes when None), as int32.");
  m.def(
      "trace",
      [](nb::handle a, int64_t offset, int axis1, int axis2, nb::handle dtype, nb::handle s) {
        return trace(arg(a), offset, axis1, axis2, to_dtype(dtype, "trace"), to_stream(s));
      },
      nb::arg("a"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1,
      nb::arg("dtype").none() = nb::none(), nb::kw_only(), stream,
      "The sum of a diagonal (for more dimensions, of each 2-D slice of axis1 and axis2).");
  m.def(
      "median",
      [](nb::handle a, nb::handle axis, bool keepdims, nb::handle s) {
        return median(arg(a), to_axes(axis), keepdims, to_stream(s));
      },
      nb::arg("a"), axis, keepdims, nb::kw_only(), stream,
      "The median over `axis` (all axes when None): the mean of the two middle values for an even "
      "count, NaN where a value is NaN; integers and bools give float32.");
}

}  // namespace nuvec::python
