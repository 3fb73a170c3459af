// Private kernels for nuvec.fast (python/nuvec/_fast_attention.py): _sdpa and _plan_attention.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/ops/attention.h"
#include "python/convert.h"

namespace nuvec::python {

namespace {

// The mask argument: None, "causal" or an array.
std::pair<std::string, std::optional<Array>> mask_arg(nb::handle mask) {
  if (mask.is_none()) return {"", std::nullopt};
  if (nb::isinstance<nb::str>(mask)) {
    std::string mode = nb::cast<std::string>(mask);
    if (mode != "causal")
      throw OpError("scaled_dot_product_attention",
                    "invalid mask option '" + mode + "'. Must be 'causal', or an array.");
    return {mode, std::nullopt};
  }
  return {"array", arg(mask)};
}

}  // namespace

void init_attention(nb::module_& m) {
  m.def(
      "_sdpa",
      [](nb::handle q, nb::handle k, nb::handle v, float scale, nb::handle mask, nb::handle sinks, nb::handle stream) {
        auto [mode, marr] = mask_arg(mask);
        std::optional<Array> s;
        if (!sinks.is_none()) s = arg(sinks);
        return scaled_dot_product_attention(arg(q), arg(k), arg(v), scale, mode, marr, s, to_stream(stream));
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("scale"), nb::arg("mask").none(), nb::arg("sinks").none(),
      nb::arg("stream").none(), "scaled_dot_product_attention (nuvec.fast's).");
  m.def(
      "_plan_attention",
      [](const Shape& q, const Shape& k, const Shape& v, nb::handle qd, nb::handle kd, nb::handle vd,
         const std::string& mode, nb::handle md, std::optional<Shape> ms, nb::handle sd, std::optional<Shape> ss) {
        const char* op = "plan_attention";
        AttentionPlan p = plan_attention(q, k, v, *to_dtype(qd, op), *to_dtype(kd, op), *to_dtype(vd, op), mode,
                                         to_dtype(md, op), ms, to_dtype(sd, op), ss);
        nb::dict d;
        d["kernel"] = p.kernel;
        d["compute_dtype"] = std::string(name_of(p.compute));
        d["key_block"] = p.key_block;
        d["key_blocks"] = p.key_blocks;
        d["tile_q"] = p.tile_q;
        d["tile_k"] = p.tile_k;
        d["tasks"] = p.tasks;
        return d;
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("q_dtype"), nb::arg("k_dtype"), nb::arg("v_dtype"),
      nb::arg("mask_mode"), nb::arg("mask_dtype").none(), nb::arg("mask_shape").none(), nb::arg("sinks_dtype").none(),
      nb::arg("sinks_shape").none(), "The plan of an attention call (nuvec.fast.plan_attention's).");
}

}  // namespace nuvec::python
