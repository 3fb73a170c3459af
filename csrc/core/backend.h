// The seam between the core and the backends. A backend registers itself for a device type at
// load, with one kernel per primitive class it runs and, if it fuses, its fusion policy.
// Evaluation finds a node's kernel in the backend of the node's stream's device, by the
// primitive's class slot (an index: no name is hashed on the way). The core names no backend.
#pragma once
#include <atomic>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/device.h"
#include "core/primitive.h"

namespace nuvec {

// Fills `outputs` (unevaluated, shapes and dtypes set) from evaluated `inputs`.
using Kernel = void (*)(const Primitive& p, const std::vector<Array>& inputs, std::vector<Array>& outputs);

// A backend's fusion policy: `plan` adds to `fused` the nodes of `order` (on its device) that it
// computes inside their users, never storing them; `eval` evaluates a node of its device whose
// inputs include some of them.
struct Fusion {
  void (*plan)(const std::vector<Node*>& order, const std::vector<Array>& outputs,
               std::unordered_set<Node*>& fused) = nullptr;
  void (*eval)(const Primitive& p, const std::vector<Array>& inputs, std::vector<Array>& outputs,
               const std::unordered_set<Node*>& fused) = nullptr;
};

struct Backend {
  std::string name;
  DeviceType device;
  std::string description;  // what it was built or chosen for (the CPU's instruction set)
  Fusion fusion;
  std::vector<Kernel> kernels;  // by kernel slot; null where it has none
  // Waits for the work its kernels queued (a GPU's kernels return before they finish); null when
  // its kernels finish before they return. Evaluation calls it before returning, as MLX's eval
  // returns with the values computed.
  void (*synchronize)() = nullptr;
  // Called before each of its nodes runs, with the node's stream: a GPU backend queues the node's
  // work on that stream's own queue (a CUDA stream). Null when kernels run where they are called.
  void (*enter)(const Stream& s) = nullptr;

  Kernel kernel(int slot) const { return slot < int(kernels.size()) ? kernels[size_t(slot)] : nullptr; }
  void set_kernel(int slot, Kernel k);
  // Registers F as the kernel of primitive class P.
  template <class P, void (*F)(const P&, const std::vector<Array>&, std::vector<Array>&)> void add() {
    set_kernel(kernel_slot_of<P>(), [](const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out) {
      F(static_cast<const P&>(p), in, out);
    });
  }
};

// Makes `b` the backend of its device type (the caller keeps it alive) and returns the one it
// replaces, or null. Backends register at load, before anything evaluates.
Backend* install_backend(Backend* b);
// Puts `previous` (null: none) back as the backend of `d`.
void restore_backend(DeviceType d, Backend* previous);
namespace detail {
// Atomic: a test backend may come and go while a stream's worker evaluates.
extern std::atomic<Backend*> backends[2];
Kernel find_kernel_slow(const Primitive& p, DeviceType d);
}  // namespace detail

inline Backend* backend_for(DeviceType d) {  // null when none is registered
  return detail::backends[int(d)].load(std::memory_order_acquire);
}

// Kernels that run on every device (their outputs alias their inputs, or they refuse to run),
// registered by the file that creates the primitive, so it is linked wherever the primitive is.
void set_device_free_kernel(int slot, Kernel k);
template <class P, void (*F)(const P&, const std::vector<Array>&, std::vector<Array>&)> bool add_device_free_kernel() {
  set_device_free_kernel(kernel_slot_of<P>(), [](const Primitive& p, const std::vector<Array>& in,
                                                 std::vector<Array>& out) { F(static_cast<const P&>(p), in, out); });
  return true;
}

// The kernel that runs `p` on device type `d`; a KernelError naming the device when there is
// none (evaluation adds the primitive's name). Inline: evaluation asks once per node.
inline Kernel find_kernel(const Primitive& p, DeviceType d) {
  int slot = p.kernel_slot();
  if (Backend* b = backend_for(d))
    if (Kernel k = b->kernel(slot)) return k;
  return detail::find_kernel_slow(p, d);
}
[[noreturn]] void missing_kernel(DeviceType d);

// The nodes of `order` that the backends fuse into their users.
std::unordered_set<Node*> plan_fusion(const std::vector<Node*>& order, const std::vector<Array>& outputs);

}  // namespace nuvec
