// Private binding for nuvec.linalg's decompositions (python/nuvec/_linalg_spectral.py):
// _linalg_decompose(a, kind, upper, stream) -> tuple of outputs; _blas_thread_stats() for tests.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "backend/cpu/blas_threads.h"
#include "core/ops/linalg_spectral.h"
#include "python/convert.h"

namespace nuvec::python {

void init_linalg_spectral(nb::module_& m) {
  m.def(
      "_linalg_decompose",
      [](const Array& a, const std::string& kind, bool upper, nb::handle stream) {
        static const std::pair<const char*, Decomposition> kinds[] = {{"qr", Decomposition::qr},
                                                                      {"svd", Decomposition::svd},
                                                                      {"svd_values", Decomposition::svd_values},
                                                                      {"eigh", Decomposition::eigh},
                                                                      {"eigvalsh", Decomposition::eigvalsh},
                                                                      {"eig", Decomposition::eig},
                                                                      {"eigvals", Decomposition::eigvals}};
        for (auto& [name, k] : kinds)
          if (kind == name) {
            std::vector<Array> out = decompose(a, k, upper, to_stream(stream));
            nb::list l;
            for (Array& o : out) l.append(nb::cast(o));
            return nb::tuple(l);
          }
        throw OpError("linalg", "unknown decomposition " + kind);
      },
      nb::arg("a"), nb::arg("kind"), nb::arg("upper") = false, nb::arg("stream").none() = nb::none(),
      "The outputs of one decomposition of a's matrices (last two axes): kind is qr, svd, svd_values, eigh, "
      "eigvalsh, eig or eigvals; upper: eigh reads the upper triangle. For nuvec.linalg.");
  m.def(
      "_blas_thread_stats",
      [] { return nb::make_tuple(cpu::blas_threads::callback_calls(), cpu::blas_threads::helper_threads()); },
      "(OpenBLAS callback calls, helper threads started) so far: for tests (docs/linalg.md, Threads).");
}

}  // namespace nuvec::python
