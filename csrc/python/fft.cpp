// nuvec._core._fft: the FFT ops of core/ops/fft.h. python/nuvec/fft.py wraps them with MLX's
// public signatures.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/ops/fft.h"
#include "python/convert.h"

namespace nuvec::python {

void init_fft(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("_fft", "MLX's discrete Fourier transforms.");
  m.def(
      "fftn",
      [](nb::handle a, std::optional<Shape> n, std::optional<std::vector<int>> axes, bool real, bool inverse,
         const std::string& norm, nb::handle s, const std::string& op) {
        return fftn(arg(a), n, axes, real, inverse, fft_norm(norm, op.c_str()), to_stream(s), op.c_str());
      },
      nb::arg("a"), nb::arg("s").none(), nb::arg("axes").none(), nb::arg("real"), nb::arg("inverse"), nb::arg("norm"),
      nb::arg("stream").none(), nb::arg("op"),
      "The transform over `axes` (all when None), each cropped or zero-padded to s[i], scaled by `norm`.");
  m.def(
      "fftshift",
      [](nb::handle a, std::optional<std::vector<int>> axes, bool inverse, nb::handle s) {
        return fftshift(arg(a), axes, inverse, to_stream(s));
      },
      nb::arg("a"), nb::arg("axes").none(), nb::arg("inverse"), nb::arg("stream").none(),
      "Each of `axes` (all when None) rolled by n // 2 ((n + 1) // 2 when `inverse`).");
  m.def(
      "fftfreq", [](int64_t n, double d, bool real, nb::handle s) { return fftfreq(n, d, real, to_stream(s)); },
      nb::arg("n"), nb::arg("d"), nb::arg("real"), nb::arg("stream").none(),
      "The sample frequencies of an n-point DFT (the non-negative ones when `real`), float32.");
}

}  // namespace nuvec::python
