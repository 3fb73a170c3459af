// Sorting ops: sort, argsort, partition, argpartition, topk, searchsorted.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "core/ops/sort.h"
#include "core/ops/sort_composed.h"
#include "python/convert.h"

namespace nuvec::python {

void init_sort(nb::module_& m) {
  m.def(
      "sort", [](nb::handle a, std::optional<int> axis, nb::handle s) { return sort(arg(a), axis, to_stream(s)); },
      nb::arg("a"), nb::arg("axis").none() = -1, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "A sorted copy along `axis` (the flattened array when None): stable, NaNs last.");
  m.def(
      "argsort",
      [](nb::handle a, std::optional<int> axis, nb::handle s) { return argsort(arg(a), axis, to_stream(s)); },
      nb::arg("a"), nb::arg("axis").none() = -1, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The uint32 indices that sort along `axis` (the flattened array when None): stable, NaNs last.");
  m.def(
      "partition",
      [](nb::handle a, int64_t kth, std::optional<int> axis, nb::handle s) {
        return partition(arg(a), kth, axis, to_stream(s));
      },
      nb::arg("a"), nb::arg("kth"), nb::arg("axis").none() = -1, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "A copy with the kth element in its sorted place, none larger before it and none smaller after.");
  m.def(
      "argpartition",
      [](nb::handle a, int64_t kth, std::optional<int> axis, nb::handle s) {
        return argpartition(arg(a), kth, axis, to_stream(s));
      },
      nb::arg("a"), nb::arg("kth"), nb::arg("axis").none() = -1, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The uint32 indices that partition along `axis` around the kth element.");
  m.def(
      "topk",
      [](nb::handle a, int64_t k, std::optional<int> axis, nb::handle s) {
        return topk(arg(a), k, axis, to_stream(s));
      },
      nb::arg("a"), nb::arg("k"), nb::arg("axis").none() = -1, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The k largest elements along `axis` (the flattened array when None), in no promised order.");
  m.def(
      "searchsorted",
      [](nb::handle a, nb::handle v, const std::string& side, nb::handle s) {
        if (side != "left" && side != "right")
          throw OpError("searchsorted", "side must be 'left' or 'right', not '" + side + "'");
        return searchsorted(arg(a), arg(v), side == "right", to_stream(s));
      },
      nb::arg("sorted_sequence"), nb::arg("values"), nb::arg("side") = "left", nb::kw_only(),
      nb::arg("stream").none() = nb::none(),
      "Where `values` go in the 1-D ascending `sorted_sequence` to keep it sorted: per value, the count of "
      "elements below it (\"left\") or not above it (\"right\"), NaN last; uint32, values' shape.");
}

}  // namespace nuvec::python
