// Bindings of compile's tape over flat lists of arrays; trees, the cache and state capture are
// handled in Python (python/nuvec/_compile.py).
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/device.h"
#include "core/primitives/compiled.h"
#include "python/callbacks.h"
#include "transforms/compile.h"

namespace nuvec::python {
namespace {

// The cache key of a call whose arguments are all arrays (the common case, kept cheap): each
// array's dtype and shape (rank, shapeless), then the default stream; None otherwise.
nb::object signature(nb::tuple args, bool shapeless) {
  std::vector<int64_t> key;
  for (nb::handle h : args) {
    Array* a = nullptr;
    if (!nb::try_cast(h, a, false) || !a) return nb::none();
    key.push_back(int64_t(a->dtype()));
    key.push_back(a->ndim());
    if (!shapeless) key.insert(key.end(), a->shape().begin(), a->shape().end());
  }
  Stream st = default_stream(default_device());
  key.push_back(st.index);
  key.push_back(int64_t(st.device.type));
  nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(Py_ssize_t(key.size())));
  for (size_t i = 0; i < key.size(); ++i) PyTuple_SET_ITEM(t.ptr(), Py_ssize_t(i), PyLong_FromLongLong(key[i]));
  return t;
}

}  // namespace

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
          "Counts: steps after simplification, nodes per replay, fused groups and the steps inside them.")
      .def_prop_ro(
          "constants",
          [](const Tape& t) {
            std::vector<Array> out;
            for (const auto& c : t.constants) out.push_back(c.second);
            return out;
          },
          "The arrays the trace folded into constants (what the function computed from no input).")
      .def_prop_ro(
          "nodes",
          [](const Tape& t) {
            // Each replayed node: (primitive, shape of its first output, the fused steps' names).
            nb::list out;
            for (const TapeStep& st : t.fused) {
              nb::list members;
              if (auto* c = dynamic_cast<const Compiled*>(st.primitive.get()))
                for (const Instruction& ins : c->program().code) members.append(ins.primitive->name());
              out.append(nb::make_tuple(st.primitive->name(), nb::cast(st.shapes[0]), members));
            }
            return out;
          },
          "What one replay records, node by node: (name, first output's shape, names of the fused steps).");
  m.def(
      "_compile_plans", [](bool on) { return plans_enabled().exchange(on); }, nb::arg("on"),
      "Whether compiled calls run as one node where their trace allows (else as a graph of its steps); returns "
      "the previous setting.");
  m.def(
      "_compile_signature", [](nb::tuple args, bool shapeless) -> nb::object { return signature(args, shapeless); },
      nb::arg("args"), nb::arg("shapeless"), "The cache key of arguments that are all arrays, else None.");
  m.def(
      "_compile_replay_one",
      [](nb::dict cache, nb::tuple args, bool shapeless, nb::object lru) -> nb::object {
        // The fast path of a call: all arguments arrays, a cached trace with one array output
        // (cache[key] = (tape, key)) or a flat tuple of n ((tape, key, n)).
        nb::object key = signature(args, shapeless);
        if (key.is_none()) return key;
        PyObject* entry = PyDict_GetItemWithError(cache.ptr(), key.ptr());
        if (!entry || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 2 || PyTuple_GET_SIZE(entry) > 3)
          return nb::none();
        Tape* tape = nullptr;
        if (!nb::try_cast(nb::handle(PyTuple_GET_ITEM(entry, 0)), tape, false) || !tape) return nb::none();
        std::vector<Array> inputs;
        for (nb::handle h : args) inputs.push_back(nb::cast<Array>(h));
        std::vector<Array> out = tape->replay(inputs);
        // The trace is now the most recently used: moved to lru's end unless it is there already
        // (cache[None] remembers the last key moved; the call took ~40 ns of a 2 us 0-d call).
        PyObject* last = PyDict_GetItemWithError(cache.ptr(), Py_None);
        int same = last ? PyObject_RichCompareBool(last, key.ptr(), Py_EQ) : 0;
        if (same < 0) throw nb::python_error();
        if (!same) {
          lru.attr("move_to_end")(key);
          if (PyDict_SetItem(cache.ptr(), Py_None, key.ptr()) < 0) throw nb::python_error();
        }
        if (PyTuple_GET_SIZE(entry) == 2) return nb::cast(out[0]);
        size_t n = nb::cast<size_t>(nb::handle(PyTuple_GET_ITEM(entry, 2)));
        nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(Py_ssize_t(n)));
        for (size_t i = 0; i < n; ++i) PyTuple_SET_ITEM(t.ptr(), Py_ssize_t(i), nb::cast(out[i]).release().ptr());
        return t;
      },
      nb::arg("cache"), nb::arg("args"), nb::arg("shapeless"), nb::arg("lru"),
      "replay(args)[0] for a cached trace of arrays with one array output (cache[key] = (tape, key)), the tuple "
      "of its n outputs for one with a flat tuple (cache[key] = (tape, key, n)), else None; a hit moves key to the "
      "end of the ordered dict lru (cache[None] keeps the last key moved).");
  m.def(
      "_compile_trace",
      [](nb::callable fun, const std::vector<Array>& inputs, bool shapeless) {
        return std::const_pointer_cast<Tape>(trace_tape(array_fn(fun, "compile"), inputs, shapeless));
      },
      nb::arg("fun"), nb::arg("inputs"), nb::arg("shapeless"),
      "Traces fun (a list of arrays to a list of arrays) once on placeholders shaped as inputs.");
}

}  // namespace nuvec::python
