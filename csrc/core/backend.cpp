#include "core/backend.h"

#include "core/errors.h"

namespace nuvec {

std::atomic<Backend*> detail::backends[2] = {};

namespace {

std::vector<Kernel>& device_free_kernels() {
  static std::vector<Kernel> kernels;
  return kernels;
}

void put(std::vector<Kernel>& table, int slot, Kernel k) {
  if (slot >= int(table.size())) table.resize(size_t(slot) + 1, nullptr);
  table[size_t(slot)] = k;
}

}  // namespace

void Backend::set_kernel(int slot, Kernel k) { put(kernels, slot, k); }

Backend* install_backend(Backend* b) { return detail::backends[int(b->device)].exchange(b); }

void restore_backend(DeviceType d, Backend* previous) { detail::backends[int(d)].store(previous); }

void set_device_free_kernel(int slot, Kernel k) { put(device_free_kernels(), slot, k); }

void missing_kernel(DeviceType d) {
  Backend* b = backend_for(d);
  std::string where = b ? "the " + b->name + " backend" : "no backend is registered for it";
  throw KernelError(EvalErrorKind::other,
                    std::string("no kernel for this primitive on the ") + device_name(d) + " device (" + where + ")");
}

Kernel detail::find_kernel_slow(const Primitive& p, DeviceType d) {
  int slot = p.kernel_slot();
  const std::vector<Kernel>& free = device_free_kernels();
  if (slot < int(free.size()) && free[size_t(slot)]) return free[size_t(slot)];
  missing_kernel(d);
}

std::unordered_set<Node*> plan_fusion(const std::vector<Node*>& order, const std::vector<Array>& outputs) {
  std::unordered_set<Node*> fused;
  for (auto& slot : detail::backends)
    if (Backend* b = slot.load(std::memory_order_acquire); b && b->fusion.plan) b->fusion.plan(order, outputs, fused);
  return fused;
}

}  // namespace nuvec
