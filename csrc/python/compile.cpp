// Bindings of compile's tape over flat lists of arrays; trees, the cache and state capture are
// handled in Python (python/nuvec/_compile.py).
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "core/primitives/compiled.h"
#include "python/callbacks.h"
#include "transforms/compile.h"

namespace nuvec::python {

void init_compile(nb::module_& m) {
  nb::class_<Tape>(m, "_Tape", "A traced, simplified and fused graph (what compile replays).")
      .def("replay", &Tape::replay, nb::arg("inputs"), "The outputs for these inputs.")
      .def_prop_ro(
          "stats",
          [](const Tape& t) {
            nb::dict d;
            size_t groups = 0, grouped = 0;
            for (const TapeStep& st : t.fused)
              if (auto* c = dynamic_cast<const Compiled*>(st.primitive.get()))
                ++groups, grouped += c->program().code.size();
            d["steps"] = t.steps.size();
            d["nodes"] = t.fused.size();
            d["fused_groups"] = groups;
            d["fused_steps"] = grouped;
            d["constants"] = t.constants.size();
            return d;
          },
          "Counts: steps after simplification, nodes per replay, fused groups and the steps inside them.");
  m.def(
      "_compile_trace",
      [](nb::callable fun, const std::vector<Array>& inputs, bool shapeless) {
        return std::const_pointer_cast<Tape>(trace_tape(array_fn(fun, "compile"), inputs, shapeless));
      },
      nb::arg("fun"), nb::arg("inputs"), nb::arg("shapeless"),
      "Traces fun (a list of arrays to a list of arrays) once on placeholders shaped as inputs.");
}

}  // namespace nuvec::python
