// A slow reference backend for the tests of the backend seam (tests/test_backend_seam.py): its
// kernels are Python functions over NumPy arrays, keyed by primitive name. The name lookup lives
// here only; real backends index their kernels by the primitive's class slot.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "core/backend.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/reduce.h"

namespace nb = nanobind;

namespace nuvec::python {
namespace {

struct ReferenceBackend {
  Backend backend;
  Backend* previous = nullptr;
  nb::dict kernels;  // primitive name -> function(*inputs as NumPy arrays[, axis=...]) -> array
};

// By device type; never destroyed at exit (it holds Python objects).
ReferenceBackend* g_reference[2] = {};

nb::object to_numpy(const Array& a) { return nb::module_::import_("numpy").attr("asarray")(nb::cast(a)); }

template <DeviceType D> void run_python(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out) {
  nb::gil_scoped_acquire gil;
  ReferenceBackend* r = g_reference[int(D)];
  if (!r || !r->kernels.contains(p.name())) missing_kernel(D);
  Array& o = out[0];
  try {
    nb::list args;
    for (const Array& a : in) args.append(to_numpy(a));
    nb::dict kwargs;
    if (auto* reduce = dynamic_cast<const Reduce*>(&p)) kwargs["axis"] = nb::tuple(nb::cast(reduce->axes()));
    nb::object result = r->kernels[p.name()](*args, **kwargs);
    nb::bytes bytes = nb::borrow<nb::bytes>(
        nb::module_::import_("numpy").attr("asarray")(result, name_of(o.dtype())).attr("tobytes")());
    if (bytes.size() != o.nbytes()) throw KernelError(EvalErrorKind::other, "the reference kernel gave the wrong size");
    o.allocate_contiguous();
    std::memcpy(o.data_bytes(), bytes.c_str(), bytes.size());
  } catch (nb::python_error& e) { throw KernelError(EvalErrorKind::other, e.what()); }
}

template <DeviceType D> void install(nb::dict kernels) {
  if (g_reference[int(D)]) throw OpError("_testing_register_backend", "a reference backend is already registered");
  auto* r = new ReferenceBackend();
  r->backend.name = "reference";
  r->backend.device = D;
  r->backend.description = "a slow reference backend for tests";
  for (int slot : {kernel_slot_of<Unary>(), kernel_slot_of<Binary>(), kernel_slot_of<Reduce>()})
    r->backend.set_kernel(slot, run_python<D>);
  r->kernels = std::move(kernels);
  r->previous = install_backend(&r->backend);
  g_reference[int(D)] = r;
}

}  // namespace

void init_testing(nb::module_& m) {
  m.def(
      "_testing_register_backend",
      [](DeviceType d, nb::dict kernels) {
        if (d == DeviceType::cpu)
          install<DeviceType::cpu>(std::move(kernels));
        else
          install<DeviceType::gpu>(std::move(kernels));
      },
      nb::arg("device"), nb::arg("kernels"),
      "Registers a reference backend for the device type whose kernels are the Python functions in `kernels`, "
      "keyed by primitive name (for tests of the backend seam).");
  m.def(
      "_testing_unregister_backend",
      [](DeviceType d) {
        ReferenceBackend*& r = g_reference[int(d)];
        if (!r) throw OpError("_testing_unregister_backend", "no reference backend is registered");
        restore_backend(d, r->previous);
        delete r;
        r = nullptr;
      },
      nb::arg("device"), "Removes the reference backend, restoring the device's previous backend.");
}

}  // namespace nuvec::python
