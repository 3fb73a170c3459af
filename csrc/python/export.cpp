// Function export for python/nuvec/_export.py (which holds export_function, import_function,
// exporter and their argument handling): tracing, replaying, and the function file.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cerrno>
#include <unordered_set>

#include "io/export.h"
#include "io/output_file.h"
#include "python/callbacks.h"
#include "transforms/trace.h"

namespace nuvec::python {

void init_export(nb::module_& m) {
  using io::FunctionTrace;
  nb::class_<FunctionTrace>(m, "_FunctionTrace", "One traced call of an exported function.")
      .def_ro("positional", &FunctionTrace::positional)
      .def_ro("keywords", &FunctionTrace::keywords)
      .def_ro("shapeless", &FunctionTrace::shapeless)
      .def_ro("inputs", &FunctionTrace::inputs)
      .def("__call__", [](const FunctionTrace& t, const std::vector<Array>& inputs) { return io::replay(t, inputs); });
  m.def(
      "_trace_function",
      [](nb::callable fun, const std::vector<Array>& examples, int positional, std::vector<std::string> keywords,
         bool shapeless) {
        TraceLevel level("export_function");
        ReplayOnlyLevel replay_only(level);  // the file is only replayed: record what compile records
        std::vector<Array> tracers = make_tracers(examples, level);
        std::vector<Array> outs = array_fn(fun, "export_function")(tracers);
        std::unordered_set<Node*> leaves;
        for (const Array& x : tracers) leaves.insert(x.node());
        return std::make_shared<FunctionTrace>(io::record_trace(tracers, outs, traced_order(outs, leaves, level.bit()),
                                                                positional, std::move(keywords), shapeless));
      },
      "The trace of fun(list of tracers) -> list of arrays.");
  m.def(
      "_save_function",
      [](const std::string& path, const std::vector<std::shared_ptr<FunctionTrace>>& traces,
         const std::string& metadata) {
        try {
          nb::gil_scoped_release release;
          io::save_function(path, traces, metadata);
        } catch (const io::FileError& e) {
          errno = e.code().value();
          PyErr_SetFromErrnoWithFilename(PyExc_OSError, e.path.c_str());
          throw nb::python_error();
        }
      },
      "Writes the traces to a function file (docs/export.md).");
  m.def(
      "_load_function",
      [](const std::string& path) {
        io::Bytes file;
        {
          nb::gil_scoped_release release;
          file = io::map_file(path);
        }
        return io::load_function(file);
      },
      "The traces and metadata of a function file.");
}

}  // namespace nuvec::python
