// The random core for python/nuvec/random.py, which holds the public samplers.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include "core/ops.h"
#include "python/convert.h"

namespace nuvec::python {

void init_random(nb::module_& m) {
  nb::enum_<RandomKind>(m, "_RandomKind")
      .value("uniform", RandomKind::uniform)
      .value("erfinv", RandomKind::erfinv)
      .value("normal", RandomKind::normal);
  m.def(
      "_random_bits",
      [](const Array& key, const Shape& shape, int width, nb::handle s) {
        return random_bits(key, shape, width, to_stream(s));
      },
      nb::arg("key"), nb::arg("shape"), nb::arg("width"), nb::arg("stream").none() = nb::none(),
      "MLX's bit stream of a key: uint8/uint16/uint32 for width 1/2/4.");
  m.def(
      "_random_float",
      [](const Array& key, const Shape& shape, RandomKind kind, nb::handle s) {
        return random_float(key, shape, kind, to_stream(s));
      },
      nb::arg("key"), nb::arg("shape"), nb::arg("kind"), nb::arg("stream").none() = nb::none(),
      "float32 samples of a fused kind, bit for bit MLX's chain of ops.");
}

}  // namespace nuvec::python
