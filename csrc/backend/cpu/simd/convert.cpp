// Conversion kernels: strided source of one dtype to a contiguous run of another.
#include "backend/cpu/kernels.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

template <class S, class D> void convert_kernel(const void* src, int64_t stride, void* dst, int64_t n) {
  const S* s = static_cast<const S*>(src);
  D* d = static_cast<D*>(dst);
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) d[i] = convert<D>(s[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = convert<D>(s[i * stride]);
  }
}

}  // namespace

void fill_convert(KernelTable& t) {
  for_each_dtype([&](auto from) {
    for_each_dtype([&](auto to) {
      t.convert[int(from.value)][int(to.value)] = &convert_kernel<ctype_t<from.value>, ctype_t<to.value>>;
    });
  });
}

}  // namespace nuvec::cpu::NUVEC_ISA
