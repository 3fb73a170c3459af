// where(cond, x, y): all operands arrive as contiguous runs or scalars.
#include "backend/cpu/kernels.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

template <class T>
void select_kernel(const void* const* in, const bool* scalar, void* out, int64_t n, const OpParams&) {
  const bool* c = static_cast<const bool*>(in[0]);
  const T* a = static_cast<const T*>(in[1]);
  const T* b = static_cast<const T*>(in[2]);
  T* o = static_cast<T*>(out);
  int64_t sc = scalar[0] ? 0 : 1, sa = scalar[1] ? 0 : 1, sb = scalar[2] ? 0 : 1;
  for (int64_t i = 0; i < n; ++i) o[i] = c[i * sc] ? a[i * sa] : b[i * sb];
}

}  // namespace

void fill_select(KernelTable& t) {
  for_each_compute_dtype([&](auto d) { t.select[int(d.value)] = &select_kernel<ctype_t<d.value>>; });
}

}  // namespace nuvec::cpu::NUVEC_ISA
