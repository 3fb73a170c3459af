// where(cond, x, y): all operands arrive as contiguous runs or scalars.
#include <cstring>
#include <type_traits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

#if defined(__AVX512F__)
// A 64-byte vector of elements of T from a run, or one value in every lane.
template <class T, bool One> inline __m512i lanes(const T* p) {
  if constexpr (!One) return _mm512_loadu_si512(p);
  if constexpr (sizeof(T) == 8) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return _mm512_set1_epi64(v);
  } else if constexpr (sizeof(T) == 4) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  } else if constexpr (sizeof(T) == 2) {
    int16_t v;
    std::memcpy(&v, p, 2);
    return _mm512_set1_epi16(v);
  } else {
    int8_t v;
    std::memcpy(&v, p, 1);
    return _mm512_set1_epi8(v);
  }
}

// o[i] = c[i] ? a[i] : b[i] for the whole vectors of [0, n): the conditions' bytes tested into a
// mask, then one blend (elements are copied as bits, NaN payloads and all). Returns how many it did.
template <class T, bool OneA, bool OneB>
int64_t select_vectors(const bool* c, const T* a, const T* b, T* o, int64_t n) {
  constexpr int64_t L = 64 / sizeof(T);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const __m512i av = lanes<T, OneA>(a + (OneA ? 0 : i)), bv = lanes<T, OneB>(b + (OneB ? 0 : i));
    __m512i r;
    if constexpr (sizeof(T) == 8) {
      const __m128i cb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + i));
      r = _mm512_mask_blend_epi64(__mmask8(_mm_test_epi8_mask(cb, cb)), bv, av);
    } else if constexpr (sizeof(T) == 4) {
      const __m128i cb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i));
      r = _mm512_mask_blend_epi32(_mm_test_epi8_mask(cb, cb), bv, av);
    } else if constexpr (sizeof(T) == 2) {
      const __m256i cb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + i));
      r = _mm512_mask_blend_epi16(_mm256_test_epi8_mask(cb, cb), bv, av);
    } else {
      const __m512i cb = _mm512_loadu_si512(c + i);
      r = _mm512_mask_blend_epi8(_mm512_test_epi8_mask(cb, cb), bv, av);
    }
    _mm512_storeu_si512(o + i, r);
  }
  return i;
}
#endif

template <class T, bool OneA, bool OneB> void select_run(const bool* c, const T* a, const T* b, T* o, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  if constexpr (std::is_trivially_copyable_v<T> &&
                (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8))
    i = select_vectors<T, OneA, OneB>(c, a, b, o, n);
#endif
  for (; i < n; ++i) o[i] = c[i] ? a[OneA ? 0 : i] : b[OneB ? 0 : i];
}

template <class T>
void select_kernel(const void* const* in, const bool* scalar, void* out, int64_t n, const OpParams&) {
  const bool* c = static_cast<const bool*>(in[0]);
  const T* a = static_cast<const T*>(in[1]);
  const T* b = static_cast<const T*>(in[2]);
  T* o = static_cast<T*>(out);
  if (scalar[0]) {  // one condition: a copy of one side
    const T* from = c[0] ? a : b;
    const bool one = c[0] ? scalar[1] : scalar[2];
    for (int64_t i = 0; i < n; ++i) o[i] = from[one ? 0 : i];
    return;
  }
  if (scalar[1])
    scalar[2] ? select_run<T, true, true>(c, a, b, o, n) : select_run<T, true, false>(c, a, b, o, n);
  else
    scalar[2] ? select_run<T, false, true>(c, a, b, o, n) : select_run<T, false, false>(c, a, b, o, n);
}

}  // namespace

void fill_select(KernelTable& t) {
  for_each_compute_dtype([&](auto d) { t.select[int(d.value)] = &select_kernel<ctype_t<d.value>>; });
}

}  // namespace nuvec::cpu::NUVEC_ISA
