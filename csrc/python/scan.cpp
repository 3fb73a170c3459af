// Scan ops, and the scan methods of `array` (as MLX has them).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include "core/ops/scan.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

struct ScanInfo {
  ScanOp op;
  bool takes_dtype;  // MLX gives cumsum and cumprod a dtype to convert to first
  const char* doc;
};

const ScanInfo kScans[] = {
    {ScanOp::sum, true, "The cumulative sum along `axis` (the flattened array when None)."},
    {ScanOp::prod, true, "The cumulative product along `axis` (the flattened array when None)."},
    {ScanOp::max, false, "The cumulative maximum along `axis` (the flattened array when None); NaNs propagate."},
    {ScanOp::min, false, "The cumulative minimum along `axis` (the flattened array when None); NaNs propagate."},
    {ScanOp::logaddexp, false, "The cumulative log-sum-exp along `axis` (the flattened array when None)."},
};

}  // namespace

void init_scan(nb::module_& m) {
  nb::object cls = nb::borrow(nb::type<Array>());
  for (const ScanInfo& info : kScans) {
    ScanOp op = info.op;
    const char* name = scan_name(op);
    auto call = [op, name](nb::handle a, std::optional<int> axis, bool reverse, bool inclusive, nb::handle dtype,
                           nb::handle s) {
      return scan(op, arg(a), axis, reverse, inclusive, to_dtype(dtype, name), to_stream(s));
    };
    if (info.takes_dtype) {
      m.def(name, call, nb::arg("a"), nb::arg("axis").none() = nb::none(), nb::kw_only(), nb::arg("reverse") = false,
            nb::arg("inclusive") = true, nb::arg("dtype").none() = nb::none(), nb::arg("stream").none() = nb::none(),
            info.doc);
    } else {
      m.def(
          name,
          [call](nb::handle a, std::optional<int> axis, bool reverse, bool inclusive, nb::handle s) {
            return call(a, axis, reverse, inclusive, nb::none(), s);
          },
          nb::arg("a"), nb::arg("axis").none() = nb::none(), nb::kw_only(), nb::arg("reverse") = false,
          nb::arg("inclusive") = true, nb::arg("stream").none() = nb::none(), info.doc);
    }
    cls.attr(name) =
        nb::cpp_function([call](nb::handle self, std::optional<int> axis, bool reverse, bool inclusive,
                                nb::handle s) { return call(self, axis, reverse, inclusive, nb::none(), s); },
                         nb::scope(cls), nb::name(name), nb::is_method(), nb::arg("axis").none() = nb::none(),
                         nb::kw_only(), nb::arg("reverse") = false, nb::arg("inclusive") = true,
                         nb::arg("stream").none() = nb::none(), "See the function of the same name.");
  }
  m.def(
      "diff", [](nb::handle a, int n, int axis, nb::handle s) { return diff(arg(a), n, axis, to_stream(s)); },
      nb::arg("a"), nb::arg("n") = 1, nb::arg("axis") = -1, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The n-th discrete difference along `axis`: out[i] = a[i + 1] - a[i], n times.");
}

}  // namespace nuvec::python
