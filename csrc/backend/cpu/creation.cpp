// Creation primitives on the CPU.
#include "core/primitives/creation.h"
#include "backend/cpu/backend.h"
#include "backend/cpu/ctypes.h"
#include "core/threads.h"

namespace nuvec::cpu {
namespace {

void eval_arange(const Arange& prim, const std::vector<Array>&, std::vector<Array>& out) {
  Array& o = out[0];
  o.allocate_contiguous();
  for_each_dtype([&](auto d) {
    using T = ctype_t<d.value>;
    if (d.value != o.dtype()) return;
    T* p = o.data<T>();
    double start = prim.start(), step = prim.step();
    parallel_for(o.size(), 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = convert<T>(start + double(i) * step);
    });
  });
}

}  // namespace

void register_creation_kernels(Backend& b) { b.add<Arange, eval_arange>(); }

}  // namespace nuvec::cpu
