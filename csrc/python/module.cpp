// The extension module nuvec._core.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "backend/backends.h"
#ifdef NUVEC_WITH_CUDA
#include "backend/cuda/backend.h"
#endif
#include "core/backend.h"
#include "python/errors.h"

namespace nb = nanobind;

namespace nuvec::python {
void init_runtime(nb::module_& m);
void init_array(nb::module_& m);
void init_ops(nb::module_& m);
void init_shape(nb::module_& m);
void init_indexing(nb::module_& m);
void init_reduce(nb::module_& m);
void init_transforms(nb::module_& m);
void init_compile(nb::module_& m);
void init_vmap(nb::module_& m);
void init_sort(nb::module_& m);
void init_optimizer(nb::module_& m);
void init_distributed(nb::module_& m);  // nuvec.distributed over MPI
void init_scan(nb::module_& m);
void init_matmul(nb::module_& m);
void init_conv(nb::module_& m);
void init_random(nb::module_& m);
void init_io(nb::module_& m);
void init_export(nb::module_& m);
void init_testing(nb::module_& m);
void init_dot(nb::module_& m);
void init_quantized(nb::module_& m);
void init_fast_norms(nb::module_& m);  // nuvec.fast: norms and RoPE
void init_attention(nb::module_& m);
void init_gathered(nb::module_& m);
void init_linalg_spectral(nb::module_& m);  // nuvec.linalg's decompositions
void init_linalg(nb::module_& m);           // nuvec.linalg: LU, triangular, Cholesky
void init_fft(nb::module_& m);
void init_factor_testing(nb::module_& m);  // private: the factorisation kernels' tests
void init_capi_bridge(nb::module_& m);     // _C_API: include/nuvec/python.h's table
}  // namespace nuvec::python

NB_MODULE(_core, m) {
  m.doc() = "nuvec's compiled core: lazy arrays over a multi-threaded SIMD CPU backend.";
  nuvec::register_backends();
  nuvec::python::init_errors(m);
  nuvec::python::init_capi_bridge(m);
  nuvec::python::init_runtime(m);
  nuvec::python::init_array(m);
  nuvec::python::init_ops(m);
  nuvec::python::init_shape(m);
  nuvec::python::init_indexing(m);
  nuvec::python::init_reduce(m);
  nuvec::python::init_transforms(m);
  nuvec::python::init_compile(m);
  nuvec::python::init_vmap(m);
  nuvec::python::init_sort(m);
  nuvec::python::init_optimizer(m);
  nuvec::python::init_distributed(m);
  nuvec::python::init_scan(m);
  nuvec::python::init_matmul(m);
  nuvec::python::init_conv(m);
  nuvec::python::init_random(m);
  nuvec::python::init_io(m);
  nuvec::python::init_export(m);
  nuvec::python::init_testing(m);
  nuvec::python::init_dot(m);
  nuvec::python::init_quantized(m);
  nuvec::python::init_fast_norms(m);
  nuvec::python::init_attention(m);
  nuvec::python::init_gathered(m);
  nuvec::python::init_linalg_spectral(m);
  nuvec::python::init_linalg(m);
  nuvec::python::init_fft(m);
  nuvec::python::init_factor_testing(m);
  m.def(
      "_cpu_isa", [] { return nuvec::backend_for(nuvec::DeviceType::cpu)->description; },
      "The kernel build chosen for this processor.");
#ifdef NUVEC_WITH_CUDA
  m.attr("_cuda_built") = true;
  m.def(
      "_gpu_info",
      [] {
        nb::dict d;
        if (auto info = nuvec::cuda::device_info()) {
          d["device_name"] = info->name;
          d["architecture"] = info->architecture;
          d["memory_size"] = info->memory_size;
        }
        return d;
      },
      "The CUDA device's name, architecture and memory (empty without one).");
  m.def("_cuda_stream_handle", &nuvec::cuda::stream_handle, nb::arg("index"),
        "Test hook: the CUDA stream (its handle) the nuvec stream of this index queues on (0 without a GPU).");
  m.def("_cuda_queue_waits", &nuvec::cuda::queue_waits,
        "Test hook: how many waits have ordered one CUDA stream after another.");
#else
  m.attr("_cuda_built") = false;
  m.def("_gpu_info", [] { return nb::dict(); }, "Empty: this build has no GPU backend.");
#endif
}
