// Sorting on the CPU. Every real dtype maps to unsigned integer keys whose order is NumPy's
// (NaNs last, -0.0 equal to 0.0), sorted by a stable LSD radix sort; argsort carries each
// element's index in the low bits of the same word, so ties keep their order. Complex numbers
// (whose NaN order does not fit one word) use a comparison sort.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "backend/cpu/copy.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/sort.h"
#include "core/primitives/sort.h"
#include "core/threads.h"

namespace nuvec::cpu {

AxisRows::AxisRows(const Shape& shape, int axis) {
  for (int i = 0; i < int(shape.size()); ++i) {
    if (i < axis) outer *= shape[i];
    else if (i > axis) inner *= shape[i];
  }
  n = shape.empty() ? 1 : shape[axis];
}

Array row_contiguous(const Array& a) {
  if (a.row_contiguous()) return a;
  Array c = Array::allocate(a.shape(), a.dtype());
  copy_into(a, c);
  return c;
}

namespace {

// ---------------------------------------------------------------------------------------- keys
// key(v) is an unsigned integer ordered as v is; value(key) inverts it where `exact(v)`.
template <class T>
struct IntKey {
  using K = std::make_unsigned_t<T>;
  static constexpr K kFlip = std::is_signed_v<T> ? K(K(1) << (8 * sizeof(K) - 1)) : K(0);
  static K key(T v) { return K(K(v) ^ kFlip); }
  static bool exact(T) { return true; }
  static T value(K k) { return T(K(k ^ kFlip)); }
};

struct BoolKey {
  using K = uint8_t;
  static K key(bool v) { return v; }
  static bool exact(bool) { return true; }
  static bool value(K k) { return k != 0; }
};

// Floats by their bits: negatives reversed below positives. NaNs all take the largest key and
// -0.0 takes 0.0's, so neither can be decoded back: rows holding them carry indices instead.
template <class T, class U, U kInf>
struct FloatKey {
  using K = U;
  static constexpr K kSign = K(K(1) << (8 * sizeof(K) - 1));
  static K bits(T v) {
    K u;
    std::memcpy(&u, &v, sizeof(K));
    return u;
  }
  static K key(T v) {
    K u = bits(v);
    if (K(u & ~kSign) > kInf) return K(~K(0));
    if (u == kSign) u = 0;
    return (u & kSign) ? K(~u) : K(u | kSign);
  }
  static bool exact(T v) {
    K u = bits(v);
    return K(u & ~kSign) <= kInf && u != kSign;
  }
  static T value(K k) {
    K u = (k & kSign) ? K(k ^ kSign) : K(~k);
    T v;
    std::memcpy(&v, &u, sizeof(K));
    return v;
  }
};

template <class T> struct KeyOf { using type = IntKey<T>; };
template <> struct KeyOf<bool> { using type = BoolKey; };
template <> struct KeyOf<f16> { using type = FloatKey<f16, uint16_t, 0x7C00>; };
template <> struct KeyOf<bf16> { using type = FloatKey<bf16, uint16_t, 0x7F80>; };
template <> struct KeyOf<float> { using type = FloatKey<float, uint32_t, 0x7F800000u>; };
template <> struct KeyOf<double> { using type = FloatKey<double, uint64_t, 0x7FF0000000000000ull>; };

// NumPy's complex order: [R + Rj, R + nanj, nan + Rj, nan + nanj], lexicographic within each.
bool complex_less(c64 a, c64 b) {
  int ca = (std::isnan(a.real()) ? 2 : 0) + (std::isnan(a.imag()) ? 1 : 0);
  int cb = (std::isnan(b.real()) ? 2 : 0) + (std::isnan(b.imag()) ? 1 : 0);
  if (ca != cb) return ca < cb;
  switch (ca) {
    case 0: return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
    case 1: return a.real() < b.real();
    case 2: return a.imag() < b.imag();
    default: return false;
  }
}

// --------------------------------------------------------------------------------- radix sort
// Below this many elements a comparison sort beats clearing and walking the histograms.
constexpr int64_t kSmallRow = 96;

// Stable LSD radix sort of a[0, n) on `Bytes` key bytes starting at bit `shift`, one byte per
// pass; b is scratch of n elements. Returns the buffer holding the result. A pass whose byte is
// the same in every element moves nothing and is skipped.
template <int Bytes, class E>
E* radix_sort(E* a, E* b, int64_t n, int shift) {
  uint32_t hist[Bytes][256] = {};
  for (int64_t i = 0; i < n; ++i) {
    E e = a[i];
    for (int p = 0; p < Bytes; ++p) ++hist[p][uint8_t(e >> (shift + 8 * p))];
  }
  for (int p = 0; p < Bytes; ++p) {
    uint32_t* h = hist[p];
    bool trivial = false;
    uint32_t sum = 0;
    for (int k = 0; k < 256; ++k) {
      trivial |= h[k] == uint32_t(n);
      uint32_t c = h[k];
      h[k] = sum;
      sum += c;
    }
    if (trivial) continue;
    int sh = shift + 8 * p;
    for (int64_t i = 0; i < n; ++i) {
      E e = a[i];
      b[h[uint8_t(e >> sh)]++] = e;
    }
    std::swap(a, b);
  }
  return a;
}

// Scratch per thread, reused across rows and calls.
template <class E>
E* scratch(int64_t count) {
  thread_local std::vector<char> buf;
  size_t bytes = size_t(count) * sizeof(E);
  if (buf.size() < bytes) buf.resize(bytes);
  return reinterpret_cast<E*>(buf.data());
}

// One row: n elements of `in` at stride `is`; results at stride `os` into values or indices.
struct RowIo {
  int64_t n, is, os;
};

// A key with the element's index below it: ties then compare by position (stable, and a total
// order for partitioning).
template <class K>
using Tagged = std::conditional_t<sizeof(K) <= 4, uint64_t, unsigned __int128>;
template <class K>
constexpr int kTagBits = sizeof(K) <= 4 ? 32 : 64;

template <class T, class Keys, class E = Tagged<typename Keys::K>>
void fill_tagged(const T* in, const RowIo& r, E* a) {
  for (int64_t i = 0; i < r.n; ++i) a[i] = (E(Keys::key(in[i * r.is])) << kTagBits<typename Keys::K>) | E(i);
}

template <class T, class E>
void write_tagged(const E* a, const T* in, const RowIo& r, T* vals, uint32_t* idx) {
  for (int64_t i = 0; i < r.n; ++i) {
    uint32_t j = uint32_t(a[i]);
    if (idx) idx[i * r.os] = j;
    else vals[i * r.os] = in[int64_t(j) * r.is];
  }
}

template <class T>
void sort_row(const T* in, const RowIo& r, T* vals, uint32_t* idx) {
  using Keys = typename KeyOf<T>::type;
  using K = typename Keys::K;
  int64_t n = r.n;
  if (!idx) {
    // Values alone: sort bare keys and decode them, unless a key cannot be decoded.
    K* a = scratch<K>(2 * n);
    bool exact = true;
    for (int64_t i = 0; i < n; ++i) {
      T v = in[i * r.is];
      exact &= Keys::exact(v);
      a[i] = Keys::key(v);
    }
    if (exact) {
      K* s = a;
      if (n <= kSmallRow) std::sort(a, a + n);
      else s = radix_sort<sizeof(K)>(a, a + n, n, 0);
      for (int64_t i = 0; i < n; ++i) vals[i * r.os] = Keys::value(s[i]);
      return;
    }
  }
  using E = Tagged<K>;
  E* a = scratch<E>(2 * n);
  fill_tagged<T, Keys>(in, r, a);
  E* s = a;
  if (n <= kSmallRow) std::sort(a, a + n);
  else s = radix_sort<sizeof(K)>(a, a + n, n, kTagBits<K>);
  write_tagged(s, in, r, vals, idx);
}

void sort_row_complex(const c64* in, const RowIo& r, c64* vals, uint32_t* idx) {
  uint32_t* order = scratch<uint32_t>(r.n);
  std::iota(order, order + r.n, 0u);
  std::stable_sort(order, order + r.n,
                   [&](uint32_t a, uint32_t b) { return complex_less(in[int64_t(a) * r.is], in[int64_t(b) * r.is]); });
  for (int64_t i = 0; i < r.n; ++i) {
    if (idx) idx[i * r.os] = order[i];
    else vals[i * r.os] = in[int64_t(order[i]) * r.is];
  }
}

template <class T>
void partition_row(const T* in, const RowIo& r, int64_t kth, T* vals, uint32_t* idx) {
  if constexpr (std::is_same_v<T, c64>) {
    uint32_t* order = scratch<uint32_t>(r.n);
    std::iota(order, order + r.n, 0u);
    std::nth_element(order, order + kth, order + r.n, [&](uint32_t a, uint32_t b) {
      c64 x = in[int64_t(a) * r.is], y = in[int64_t(b) * r.is];
      return complex_less(x, y) || (!complex_less(y, x) && a < b);
    });
    for (int64_t i = 0; i < r.n; ++i) {
      if (idx) idx[i * r.os] = order[i];
      else vals[i * r.os] = in[int64_t(order[i]) * r.is];
    }
  } else {
    using Keys = typename KeyOf<T>::type;
    using E = Tagged<typename Keys::K>;
    E* a = scratch<E>(r.n);
    fill_tagged<T, Keys>(in, r, a);
    std::nth_element(a, a + kth, a + r.n);
    write_tagged(a, in, r, vals, idx);
  }
}

// Runs row_fn(in_row, io, vals_row, idx_row) for every row along `axis`, rows spread over threads.
template <class T, class F>
void for_each_row(const Array& x, int axis, Array& out, bool indices, F row_fn) {
  AxisRows rows(x.shape(), axis);
  const T* in = x.data<T>();
  T* vals = indices ? nullptr : out.data<T>();
  uint32_t* idx = indices ? out.data<uint32_t>() : nullptr;
  RowIo io{rows.n, rows.inner, rows.inner};
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(1, rows.n));
  parallel_for(rows.count(), grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t b = rows.base(r);
      row_fn(in + b, io, vals ? vals + b : nullptr, idx ? idx + b : nullptr);
    }
  });
}

template <class F>
void dispatch(Dtype d, F f) {
  for_each_dtype([&](auto t) {
    if (t.value == d) f(ctype_t<t.value>{});
  });
}

}  // namespace
}  // namespace nuvec::cpu

namespace nuvec {

void Sort::eval_cpu(const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  Array x = cpu::row_contiguous(in[0]);
  cpu::dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cpu::for_each_row<T>(x, axis_, out[0], indices_, [](const T* i, const cpu::RowIo& r, T* v, uint32_t* ix) {
      if constexpr (std::is_same_v<T, cpu::c64>) cpu::sort_row_complex(i, r, v, ix);
      else cpu::sort_row<T>(i, r, v, ix);
    });
  });
}

void Partition::eval_cpu(const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  Array x = cpu::row_contiguous(in[0]);
  int64_t kth = kth_;
  cpu::dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cpu::for_each_row<T>(x, axis_, out[0], indices_, [kth](const T* i, const cpu::RowIo& r, T* v, uint32_t* ix) {
      cpu::partition_row<T>(i, r, kth, v, ix);
    });
  });
}

}  // namespace nuvec
