// Private kernels for nuvec.fast (python/nuvec/_fast_attention.py): _sdpa, _plan_attention,
// _paged_write and _paged_attention.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/ops/attention.h"
#include "core/ops/paged.h"
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
      "_paged_write",
      [](nb::handle kp, nb::handle vp, nb::handle k, nb::handle v, nb::handle slots, nb::handle stream) {
        auto [ko, vo] = paged_write(arg(kp), arg(vp), arg(k), arg(v), arg(slots), to_stream(stream));
        return nb::make_tuple(ko, vo);
      },
      nb::arg("k_pages"), nb::arg("v_pages"), nb::arg("keys"), nb::arg("values"), nb::arg("slot_mapping"),
      nb::arg("stream").none(), "paged_write (nuvec.fast's).");
  m.def(
      "_paged_attention",
      [](nb::handle q, nb::handle kp, nb::handle vp, nb::handle tables, nb::handle lens, float scale,
         nb::handle stream) {
        return paged_attention(arg(q), arg(kp), arg(vp), arg(tables), arg(lens), scale, to_stream(stream));
      },
      nb::arg("q"), nb::arg("k_pages"), nb::arg("v_pages"), nb::arg("block_tables"), nb::arg("context_lens"),
      nb::arg("scale"), nb::arg("stream").none(), "paged_attention (nuvec.fast's).");
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
