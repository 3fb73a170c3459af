// Gathered products.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include "core/ops/gathered.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {
std::optional<Array> maybe(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return arg(h);
}
}  // namespace

void init_gathered(nb::module_& m) {
  m.def(
      "gather_mm",
      [](nb::handle a, nb::handle b, nb::handle lhs, nb::handle rhs, bool sorted, nb::handle s) {
        return gather_mm(arg(a), arg(b), maybe(lhs), maybe(rhs), sorted, to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("lhs_indices").none() = nb::none(),
      nb::arg("rhs_indices").none() = nb::none(), nb::kw_only(), nb::arg("sorted_indices") = false,
      nb::arg("stream").none() = nb::none(),
      "a[lhs_indices] @ b[rhs_indices]: flat indices into the batch axes of a and b, broadcast together.");
}

}  // namespace nuvec::python
