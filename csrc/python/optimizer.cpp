// Private kernels for nuvec.optimizers: _adam_update.
#include <nanobind/nanobind.h>

#include "core/primitives/optimizer.h"
#include "python/convert.h"

namespace nuvec::python {

void init_optimizer(nb::module_& m) {
  m.def(
      "_adam_update",
      [](const Array& p, const Array& g, const Array& mom, const Array& v, const Array& lr, nb::handle correction,
         nb::handle decay, float b1, float one_minus_b1, float b2, float one_minus_b2, float eps) {
        auto opt = [](nb::handle h) { return h.is_none() ? std::nullopt : std::optional<Array>(arg(h)); };
        std::optional<Array> c = opt(correction), d = opt(decay);
        // Under a transform (grad, vmap, export) the caller's ops are differentiated or recorded.
        for (const Array* x : {&p, &g, &mom, &v, &lr})
          if (x->traced() & ~replay_only_trace_bits()) return nb::object(nb::none());
        for (const auto& x : {c, d})
          if (x && (x->traced() & ~replay_only_trace_bits())) return nb::object(nb::none());
        std::vector<Array> out =
            adam_update(p, g, mom, v, lr, c, d, {b1, one_minus_b1, b2, one_minus_b2, eps}, to_stream(nb::none()));
        return nb::object(nb::make_tuple(out[0], out[1], out[2]));
      },
      nb::arg("p"), nb::arg("g"), nb::arg("m"), nb::arg("v"), nb::arg("lr"), nb::arg("correction").none(),
      nb::arg("decay").none(), nb::arg("b1"), nb::arg("one_minus_b1"), nb::arg("b2"), nb::arg("one_minus_b2"),
      nb::arg("eps"),
      "One Adam step of float32 p (new p, m, v; None when an operand is traced by a transform other than compile), as "
      "the optimizers' op "
      "path computes it: p *= decay (AdamW); "
      "m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g; p -= lr*m / (sqrt(v) [* correction] + eps). For "
      "nuvec.optimizers.");
}

}  // namespace nuvec::python
