// Private bindings of nuvec.distributed: the MPI engine (loading, the world group, settings) and
// the collectives' ops over groups of more than one process.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/primitives/distributed.h"
#include "python/convert.h"

namespace nuvec::python {

using GroupPtr = std::shared_ptr<dist::Group>;

void init_distributed(nb::module_& m) {
  using release = nb::call_guard<nb::gil_scoped_release>;
  nb::class_<dist::Group>(m, "_DistGroup", "A group of MPI processes (an MPI communicator).")
      .def("rank", &dist::Group::rank)
      .def("size", &dist::Group::size)
      .def("split", &dist::Group::split, nb::arg("color"), nb::arg("key"), release(),
           "MPI_Comm_split: a collective over the group.");
  m.def("_dist_load", &dist::load, nb::arg("libraries"),
        "Opens the first of the MPI libraries (paths or sonames) that loads; whether one is loaded.");
  m.def("_dist_library_version", &dist::library_version, "The loaded MPI's name and version.");
  m.def("_dist_world", &dist::world, release(), "The group of every process (MPI_Init on first use).");
  m.def(
      "_dist_configure",
      [](double timeout, bool check) {
        dist::set_timeout(timeout);
        dist::set_check(check);
      },
      nb::arg("timeout"), nb::arg("check"),
      "Seconds a transfer may wait for its peers (<= 0: forever), and whether collectives check that every rank "
      "called the same one.");
  m.def("_dist_finalize", &dist::finalize, release(), "MPI_Finalize, or MPI_Abort after a failed transfer.");
  m.def(
      "_dist_all_reduce",
      [](nb::handle x, int op, const GroupPtr& g, nb::handle s) {
        return distributed::all_reduce(arg(x), dist::ReduceOp(op), g, to_stream(s));
      },
      nb::arg("x"), nb::arg("op"), nb::arg("group"), nb::arg("stream").none(),
      "x summed (op 0), maxed (1) or minned (2) over the group.");
  m.def(
      "_dist_all_gather",
      [](nb::handle x, const GroupPtr& g, nb::handle s) { return distributed::all_gather(arg(x), g, to_stream(s)); },
      nb::arg("x"), nb::arg("group"), nb::arg("stream").none(), "Every rank's x along axis 0.");
  m.def(
      "_dist_sum_scatter",
      [](nb::handle x, const GroupPtr& g, nb::handle s) { return distributed::sum_scatter(arg(x), g, to_stream(s)); },
      nb::arg("x"), nb::arg("group"), nb::arg("stream").none(), "This rank's block of the sum over the group.");
  m.def(
      "_dist_send",
      [](nb::handle x, int dst, const GroupPtr& g, nb::handle s) {
        return distributed::send(arg(x), dst, g, to_stream(s));
      },
      nb::arg("x"), nb::arg("dst"), nb::arg("group"), nb::arg("stream").none(), "x sent to rank dst.");
  m.def(
      "_dist_recv",
      [](nb::handle shape, nb::handle dtype, int src, const GroupPtr& g, nb::handle s) {
        auto dt = to_dtype(dtype, "recv");
        if (!dt) throw nb::type_error("recv: dtype must be a nuvec Dtype");
        return distributed::recv(int_list(shape, "recv"), *dt, src, g, to_stream(s));
      },
      nb::arg("shape"), nb::arg("dtype"), nb::arg("src"), nb::arg("group"), nb::arg("stream").none(),
      "An array received from rank src.");
}

}  // namespace nuvec::python
