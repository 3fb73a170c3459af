// Private entry points of nuvec.fast's norms, RoPE and cross entropy (python/nuvec/_fast_norms.py wraps them
// with MLX's signatures and docstrings).
#include <nanobind/nanobind.h>

#include "core/ops/fast_norms.h"
#include "core/ops/fast_rope.h"
#include "core/primitives/fast_loss.h"
#include "python/convert.h"

namespace nuvec::python {

namespace {

std::optional<Array> opt(nb::handle h) { return h.is_none() ? std::nullopt : std::optional<Array>(arg(h)); }
std::optional<float> opt_float(nb::handle h) {
  return h.is_none() ? std::nullopt : std::optional<float>(nb::cast<float>(h));
}
RopeOffset to_offset(nb::handle h) {
  if (nb::isinstance<Array>(h)) return arg(h);
  if (PyLong_Check(h.ptr())) return nb::cast<int64_t>(h);
  return arg(h);
}

}  // namespace

void init_fast_norms(nb::module_& m) {
  m.def(
      "_fast_cross_entropy",
      [](nb::handle logits, nb::handle targets, nb::handle s) {
        return cross_entropy(arg(logits), arg(targets), to_stream(s));
      },
      nb::arg("logits"), nb::arg("targets"), nb::arg("stream").none());
  m.def(
      "_fast_rms_norm",
      [](nb::handle x, nb::handle w, float eps, nb::handle s) { return rms_norm(arg(x), opt(w), eps, to_stream(s)); },
      nb::arg("x"), nb::arg("weight").none(), nb::arg("eps"), nb::arg("stream").none());
  m.def(
      "_fast_layer_norm",
      [](nb::handle x, nb::handle w, nb::handle b, float eps, nb::handle s) {
        return layer_norm(arg(x), opt(w), opt(b), eps, to_stream(s));
      },
      nb::arg("x"), nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("eps"), nb::arg("stream").none());
  m.def(
      "_fast_add_rms_norm",
      [](nb::handle x, nb::handle r, nb::handle w, float eps, nb::handle s) {
        auto [y, h] = add_rms_norm(arg(x), arg(r), opt(w), eps, to_stream(s));
        return nb::make_tuple(y, h);
      },
      nb::arg("x"), nb::arg("residual"), nb::arg("weight").none(), nb::arg("eps"), nb::arg("stream").none());
  m.def(
      "_fast_rope",
      [](nb::handle a, int64_t dims, bool traditional, nb::handle base, float scale, nb::handle offset,
         nb::handle freqs, nb::handle s) {
        return rope(arg(a), dims, traditional, opt_float(base), scale, to_offset(offset), opt(freqs), to_stream(s));
      },
      nb::arg("a"), nb::arg("dims"), nb::arg("traditional"), nb::arg("base").none(), nb::arg("scale"),
      nb::arg("offset"), nb::arg("freqs").none(), nb::arg("stream").none());
  m.def(
      "_fast_norm_rope",
      [](nb::handle x, nb::handle w, float eps, nb::handle cache, nb::handle offset, int64_t dims, bool traditional,
         nb::handle base, float scale, nb::handle freqs, nb::handle s) {
        auto [y, c] = norm_rope(arg(x), opt(w), eps, arg(cache), to_offset(offset), dims, traditional, opt_float(base),
                                scale, opt(freqs), to_stream(s));
        return nb::make_tuple(y, c);
      },
      nb::arg("x"), nb::arg("weight").none(), nb::arg("eps"), nb::arg("cache"), nb::arg("offset"), nb::arg("dims"),
      nb::arg("traditional"), nb::arg("base").none(), nb::arg("scale"), nb::arg("freqs").none(),
      nb::arg("stream").none());
}

}  // namespace nuvec::python
