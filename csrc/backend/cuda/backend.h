// The CUDA backend's registration, as the rest of the library sees it (no CUDA header needed).
// Registered at import when a CUDA device is present: the CUDA runtime is linked statically and
// loads the driver on first use, so a machine without one imports nuvec and sees no GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nuvec::cuda {

// Registers the backend if a CUDA device is present; returns whether it did.
bool register_cuda_backend();

struct DeviceInfo {
  std::string name, architecture;  // "NVIDIA H200", "sm_90"
  size_t memory_size = 0;
};
std::optional<DeviceInfo> device_info();  // the registered device's; none without one

// Test hooks: the CUDA stream (its handle) the nuvec stream of `index` queues on, and how many
// waits have ordered one queue after another.
uintptr_t stream_handle(int index);
uint64_t queue_waits();

}  // namespace nuvec::cuda
