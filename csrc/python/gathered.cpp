// Gathered, segmented and block-masked products, and the Hadamard transform.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include "core/ops/gathered.h"
#include "core/ops/hadamard.h"
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
  m.def(
      "segmented_mm",
      [](nb::handle a, nb::handle b, nb::handle segments, nb::handle s) {
        return segmented_mm(arg(a), arg(b), arg(segments), to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("segments"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "a[:, s0:s1] @ b[s0:s1, :] for each segment (s0, s1) of `segments` (..., 2).");
  m.def(
      "block_masked_mm",
      [](nb::handle a, nb::handle b, int block_size, nb::handle out, nb::handle lhs, nb::handle rhs, nb::handle s) {
        return block_masked_mm(arg(a), arg(b), block_size, maybe(out), maybe(lhs), maybe(rhs), to_stream(s));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("block_size") = 64, nb::arg("mask_out").none() = nb::none(),
      nb::arg("mask_lhs").none() = nb::none(), nb::arg("mask_rhs").none() = nb::none(), nb::kw_only(),
      nb::arg("stream").none() = nb::none(),
      "a @ b with block_size x block_size blocks of the result, a and b masked (bool) or scaled.");
  m.def(
      "hadamard_transform",
      [](nb::handle a, std::optional<double> scale, nb::handle s) {
        return hadamard_transform(arg(a), scale, to_stream(s));
      },
      nb::arg("a"), nb::arg("scale").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "The Walsh-Hadamard transform along the last axis (n = m * 2^k, m in 1, 12, 20, 28), scaled by `scale` "
      "(default 1 / sqrt(n)).");
}

}  // namespace nuvec::python
