// nuvec._core._random: the samplers of core/ops/random.h. python/nuvec/random.py wraps them with
// the public signatures and supplies the key from the thread's global state when none is given.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "core/ops.h"
#include "core/ops/random.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

std::optional<Array> optional_arg(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return arg(h);
}

// A Python int or float (not a bool) equal to `v`.
bool is_python_number(nb::handle h, double v) {
  if (PyBool_Check(h.ptr()) || !(PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()))) return false;
  return nb::cast<double>(h) == v;
}

}  // namespace

void init_random(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("_random", "MLX's samplers; every one takes an explicit key.");
  m.def("key", &random::key, nb::arg("seed"), "uint32 [seed >> 32, seed & 0xffffffff].");
  m.def(
      "split", [](nb::handle key, int64_t num, nb::handle s) { return random::split(arg(key), num, to_stream(s)); },
      nb::arg("key"), nb::arg("num"), nb::arg("stream").none() = nb::none(), "`num` new keys: (num, 2) uint32.");
  m.def(
      "bits",
      [](const Shape& shape, int width, nb::handle key, nb::handle s) {
        return random::bits(shape, width, arg(key), to_stream(s));
      },
      nb::arg("shape"), nb::arg("width"), nb::arg("key"), nb::arg("stream").none() = nb::none(),
      "The key's bit stream as uint8/uint16/uint32 for width 1/2/4.");
  m.def(
      "uniform",
      [](nb::handle low, nb::handle high, const Shape& shape, Dtype dtype, nb::handle key, nb::handle s) {
        // (1 - 0) * u + 0 == u: the default bounds skip two passes.
        if (is_python_number(low, 0) && is_python_number(high, 1))
          return random::uniform(shape, dtype, arg(key), to_stream(s));
        return random::uniform(arg(low), arg(high), shape, dtype, arg(key), to_stream(s));
      },
      nb::arg("low"), nb::arg("high"), nb::arg("shape"), nb::arg("dtype").noconvert(), nb::arg("key"),
      nb::arg("stream").none() = nb::none(), "Uniform on [low, high).");
  m.def(
      "normal",
      [](const Shape& shape, Dtype dtype, nb::handle loc, nb::handle scale, nb::handle key, nb::handle s) {
        return random::normal(shape, dtype, optional_arg(loc), optional_arg(scale), arg(key), to_stream(s));
      },
      nb::arg("shape"), nb::arg("dtype").noconvert(), nb::arg("loc").none(), nb::arg("scale").none(), nb::arg("key"),
      nb::arg("stream").none() = nb::none(), "Normal samples, * scale + loc.");
  m.def(
      "randint",
      [](nb::handle low, nb::handle high, const Shape& shape, Dtype dtype, nb::handle key, nb::handle s) {
        return random::randint(arg(low), arg(high), shape, dtype, arg(key), to_stream(s));
      },
      nb::arg("low"), nb::arg("high"), nb::arg("shape"), nb::arg("dtype").noconvert(), nb::arg("key"),
      nb::arg("stream").none() = nb::none(), "Integers uniform on [low, high).");
  m.def(
      "bernoulli",
      [](nb::handle p, std::optional<Shape> shape, nb::handle key, nb::handle s) {
        return random::bernoulli(arg(p), shape, arg(key), to_stream(s));
      },
      nb::arg("p"), nb::arg("shape").none(), nb::arg("key"), nb::arg("stream").none() = nb::none(),
      "True with probability p.");
  m.def(
      "truncated_normal",
      [](nb::handle lower, nb::handle upper, std::optional<Shape> shape, Dtype dtype, nb::handle key, nb::handle s) {
        return random::truncated_normal(arg(lower), arg(upper), shape, dtype, arg(key), to_stream(s));
      },
      nb::arg("lower"), nb::arg("upper"), nb::arg("shape").none(), nb::arg("dtype").noconvert(), nb::arg("key"),
      nb::arg("stream").none() = nb::none(), "Normal samples truncated to (lower, upper).");
  m.def(
      "gumbel",
      [](const Shape& shape, Dtype dtype, nb::handle key, nb::handle s) {
        return random::gumbel(shape, dtype, arg(key), to_stream(s));
      },
      nb::arg("shape"), nb::arg("dtype").noconvert(), nb::arg("key"), nb::arg("stream").none() = nb::none(),
      "Standard Gumbel samples.");
  m.def(
      "categorical",
      [](nb::handle logits, int axis, std::optional<Shape> shape, std::optional<int64_t> num_samples, nb::handle key,
         nb::handle s) { return random::categorical(arg(logits), axis, shape, num_samples, arg(key), to_stream(s)); },
      nb::arg("logits"), nb::arg("axis"), nb::arg("shape").none(), nb::arg("num_samples").none(), nb::arg("key"),
      nb::arg("stream").none() = nb::none(), "uint32 indices drawn from unnormalised log-probabilities.");
  m.def(
      "laplace",
      [](const Shape& shape, Dtype dtype, float loc, float scale, nb::handle key, nb::handle s) {
        return random::laplace(shape, dtype, loc, scale, arg(key), to_stream(s));
      },
      nb::arg("shape"), nb::arg("dtype").noconvert(), nb::arg("loc"), nb::arg("scale"), nb::arg("key"),
      nb::arg("stream").none() = nb::none(), "Laplace samples.");
  m.def(
      "permutation",
      [](nb::handle x, int axis, nb::handle key, nb::handle s) {
        if (PyLong_Check(x.ptr())) return random::permutation(nb::cast<int64_t>(x), arg(key), to_stream(s));
        return random::permutation(arg(x), axis, arg(key), to_stream(s));
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("key"), nb::arg("stream").none() = nb::none(),
      "A permutation of arange(x) for an int x, else of x's entries along `axis`.");
  m.def(
      "multivariate_normal",
      [](nb::handle mean, nb::handle cov, const Shape& shape, Dtype dtype, nb::handle key, nb::handle s) {
        return random::multivariate_normal(arg(mean), arg(cov), shape, dtype, arg(key), to_stream(s));
      },
      nb::arg("mean"), nb::arg("cov"), nb::arg("shape"), nb::arg("dtype").noconvert(), nb::arg("key"),
      nb::arg("stream").none() = nb::none(), "Jointly normal samples from the SVD of cov.");
}

}  // namespace nuvec::python
