#include "backend/backends.h"

#include "backend/cpu/backend.h"
#include "core/device.h"
#ifdef NUVEC_WITH_CUDA
#include "backend/cuda/backend.h"
#endif

namespace nuvec {

void register_backends() {
  static const bool done = [] {
    cpu::register_cpu_backend();
#ifdef NUVEC_WITH_CUDA
    if (cuda::register_cuda_backend()) set_default_device(Device{DeviceType::gpu, 0});
#endif
    return true;
  }();
  (void)done;
}

}  // namespace nuvec
