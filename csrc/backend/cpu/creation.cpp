// Creation primitives on the CPU.
#include "backend/cpu/ctypes.h"
#include "core/primitives/creation.h"
#include "core/threads.h"

namespace nuvec {

void Arange::eval_cpu(const std::vector<Array>&, std::vector<Array>& out) {
  Array& o = out[0];
  o.allocate_contiguous();
  cpu::for_each_dtype([&](auto d) {
    using T = cpu::ctype_t<d.value>;
    if (d.value != o.dtype()) return;
    T* p = o.data<T>();
    double start = start_, step = step_;
    parallel_for(o.size(), 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = cpu::convert<T>(start + double(i) * step);
    });
  });
}

}  // namespace nuvec
