// Sorting kernels, built once per instruction set (the radix passes run about twice as fast
// with AVX2 and BMI2 than in the baseline build). Every real dtype maps to unsigned integer keys
// whose order is NumPy's (NaNs last, -0.0 equal to 0.0), sorted by a stable LSD radix sort;
// argsort carries each element's index in the low bits of the same word, so ties keep their
// order. Complex numbers (whose NaN order does not fit one word) use a comparison sort.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "backend/cpu/ctypes.h"
#include "backend/cpu/simd/simd.h"
#include "backend/cpu/sort.h"
#include "core/threads.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

// ---------------------------------------------------------------------------------------- keys
// key(v) is an unsigned integer ordered as v is; value(key) inverts it where `exact(v)`.
template <class T> struct IntKey {
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
template <class T, class U, U kInf> struct FloatKey {
  using K = U;
  static constexpr K kSign = K(K(1) << (8 * sizeof(K) - 1));
  static K bits(T v) {
    K u;
    std::memcpy(&u, &v, sizeof(K));
    return u;
  }
  // The key of bits u: one value's, or a vector's lane by lane (B a GCC vector of K; see
  // float_keys). Without branches (the signs of data are random: a branch on them mispredicts half
  // the time): negatives flip every bit, the others the sign bit.
  template <class B> static B key_of(B u) {
    u = u == kSign ? B{} : u;
    const B k = B(u ^ (B(B{} - B(u >> (8 * sizeof(K) - 1))) | kSign));
    return B(u & ~kSign) > kInf ? B(~B{}) : k;
  }
  // Whether bits u (each lane of them) decode back: neither a NaN nor -0.0.
  template <class B> static auto exact_of(B u) { return (B(u & ~kSign) <= kInf) & (u != kSign); }
  static K key(T v) { return key_of(bits(v)); }
  static bool exact(T v) { return exact_of(bits(v)); }
  static T value(K k) {
    K u = K(k ^ (K(K(0) - K(K(k >> (8 * sizeof(K) - 1)) ^ K(1))) | kSign));
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
template <int Bytes, class E> E* radix_sort(E* a, E* b, int64_t n, int shift) {
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

// Rows at least this long are sorted one at a time, each spread over the threads.
constexpr int64_t kLongRow = int64_t(1) << 16;
// A long row is cut into this many fixed pieces (their number never depends on the threads), and
// a thread scatters kPiecesRun of them in a row: neighbouring pieces write next to each other in
// every bucket, so pieces taken one at a time shared lines between the threads at every bucket's
// seams (a 1M-float sort: 3.6 ms one at a time, 3.2 ms two; 8 pieces measured better than 16).
constexpr int kPieces = 8, kPiecesRun = 2;

// radix_sort for a long row: each piece scatters from its own offsets (bucket-major, then
// piece by piece), which is exactly the serial pass's order, so the result is the same. Digits
// of 32-bit keys and wider are 11 bits (three passes for float32 instead of four of 8 bits).
template <int KeyBits, class E> E* radix_sort_parallel(E* a, E* b, int64_t n, int shift) {
  constexpr int Bits = KeyBits >= 32 ? 11 : 8, Buckets = 1 << Bits, Passes = (KeyBits + Bits - 1) / Bits;
  int64_t per = (n + kPieces - 1) / kPieces;
  std::vector<uint32_t> hist(size_t(kPieces) * Buckets);
  for (int p = 0; p < Passes; ++p) {
    const int sh = shift + Bits * p;
    auto digit = [sh](E v) { return uint32_t(v >> sh) & uint32_t(Buckets - 1); };
    parallel_for(kPieces, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        // Four interleaved counts, added after: runs of one digit (a key's top digit often
        // is) would otherwise wait on each increment's store.
        uint32_t part[4][Buckets] = {};
        int64_t i = c * per, e = std::min(n, i + per);
        for (; i + 4 <= e; i += 4)
          for (int u = 0; u < 4; ++u) ++part[u][digit(a[i + u])];
        for (; i < e; ++i) ++part[0][digit(a[i])];
        uint32_t* h = &hist[size_t(c) * Buckets];
        for (int k = 0; k < Buckets; ++k) h[k] = part[0][k] + part[1][k] + part[2][k] + part[3][k];
      }
    });
    bool trivial = false;
    uint32_t sum = 0;
    for (int k = 0; k < Buckets; ++k) {
      uint32_t total = 0;
      for (int c = 0; c < kPieces; ++c) {
        uint32_t& h = hist[size_t(c) * Buckets + k];
        uint32_t v = h;
        h = sum;
        sum += v;
        total += v;
      }
      trivial |= total == uint32_t(n);
    }
    if (trivial) continue;
    parallel_for(kPieces, kPiecesRun, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        uint32_t* h = &hist[size_t(c) * Buckets];
        for (int64_t i = c * per, e = std::min(n, i + per); i < e; ++i) {
          E v = a[i];
          b[h[digit(v)]++] = v;
        }
      }
    });
    std::swap(a, b);
  }
  return a;
}

// Runs fn(i0, i1) over [0, n): spread over the threads for a long row, else inline.
template <class F> void over(int64_t n, bool long_row, F fn) {
  if (long_row)
    parallel_for(n, int64_t(1) << 15, fn);
  else
    fn(0, n);
}

template <int Bytes, class E> E* radix_sort_row(E* a, E* b, int64_t n, int shift) {
  return n >= kLongRow ? radix_sort_parallel<8 * Bytes>(a, b, n, shift) : radix_sort<Bytes>(a, b, n, shift);
}

// Scratch per thread, reused across rows and calls.
template <class E> E* scratch(int64_t count) {
  thread_local std::vector<char> buf;
  size_t bytes = size_t(count) * sizeof(E);
  if (buf.size() < bytes) buf.resize(bytes);
  return reinterpret_cast<E*>(buf.data());
}

// One row: n elements of `in` at stride `is`; results at stride `os` into values or indices.
struct RowIo { int64_t n, is, os; };

// A key with the element's index below it: ties then compare by position (stable, and a total
// order for partitioning).
template <class K> using Tagged = std::conditional_t<sizeof(K) <= 4, uint64_t, unsigned __int128>;
template <class K> constexpr int kTagBits = sizeof(K) <= 4 ? 32 : 64;

template <class T, class Keys, class E = Tagged<typename Keys::K>> void fill_tagged(const T* in, const RowIo& r, E* a) {
  over(r.n, r.n >= kLongRow, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) a[i] = (E(Keys::key(in[i * r.is])) << kTagBits<typename Keys::K>) | E(i);
  });
}

template <class T, class E> void write_tagged(const E* a, const T* in, const RowIo& r, T* vals, uint32_t* idx) {
  over(r.n, r.n >= kLongRow, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      uint32_t j = uint32_t(a[i]);
      if (idx)
        idx[i * r.os] = j;
      else
        vals[i * r.os] = in[int64_t(j) * r.is];
    }
  });
}

// FloatKey<float>'s keys of in[i0, i1) a vector at a time (its scalar loop does not vectorise);
// `ok` false where one cannot be decoded. Returns where the whole vectors end.
int64_t float_keys(const float* in, uint32_t* a, int64_t i0, int64_t i1, bool& ok) {
  using Keys = KeyOf<float>::type;
  typedef uint32_t VecU __attribute__((vector_size(kVecBytes)));
  VecU exact = ~VecU{};  // lanes that decoded back so far
  int64_t i = i0;
  for (; i + kLanesF <= i1; i += kLanesF) {
    VecU u;
    std::memcpy(&u, in + i, sizeof(u));
    exact &= (VecU)Keys::exact_of(u);
    const VecU k = Keys::key_of(u);
    std::memcpy(a + i, &k, sizeof(k));
  }
  for (int l = 0; l < kLanesF; ++l) ok &= exact[l] != 0;
  return i;
}

template <class T> void sort_row(const T* in, const RowIo& r, T* vals, uint32_t* idx) {
  using Keys = typename KeyOf<T>::type;
  using K = typename Keys::K;
  int64_t n = r.n;
  if (!idx) {
    // Values alone: sort bare keys and decode them, unless a key cannot be decoded.
    K* a = scratch<K>(2 * n);
    std::atomic<bool> exact{true};
    over(n, n >= kLongRow, [&](int64_t i0, int64_t i1) {
      int64_t i = i0;
      bool ok = true;
      if constexpr (std::is_same_v<T, float>)
        if (r.is == 1) i = float_keys(in, a, i0, i1, ok);
      for (; i < i1; ++i) {
        T v = in[i * r.is];
        ok &= Keys::exact(v);
        a[i] = Keys::key(v);
      }
      if (!ok) exact.store(false, std::memory_order_relaxed);
    });
    if (exact.load()) {
      K* s = a;
      if (n <= kSmallRow)
        std::sort(a, a + n);
      else
        s = radix_sort_row<sizeof(K)>(a, a + n, n, 0);
      over(n, n >= kLongRow, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) vals[i * r.os] = Keys::value(s[i]);
      });
      return;
    }
  }
  using E = Tagged<K>;
  E* a = scratch<E>(2 * n);
  fill_tagged<T, Keys>(in, r, a);
  E* s = a;
  if (n <= kSmallRow)
    std::sort(a, a + n);
  else
    s = radix_sort_row<sizeof(K)>(a, a + n, n, kTagBits<K>);
  write_tagged(s, in, r, vals, idx);
}

void sort_row_complex(const c64* in, const RowIo& r, c64* vals, uint32_t* idx) {
  uint32_t* order = scratch<uint32_t>(r.n);
  std::iota(order, order + r.n, 0u);
  std::stable_sort(order, order + r.n,
                   [&](uint32_t a, uint32_t b) { return complex_less(in[int64_t(a) * r.is], in[int64_t(b) * r.is]); });
  for (int64_t i = 0; i < r.n; ++i) {
    if (idx)
      idx[i * r.os] = order[i];
    else
      vals[i * r.os] = in[int64_t(order[i]) * r.is];
  }
}

// The highest byte in which the n keys at c differ (its shift), or -1 when they are all equal.
template <class E> int first_differing_byte(const E* c, int64_t n) {
  E all = ~E(0), any = 0;
  for (int64_t i = 0; i < n; ++i) all &= c[i], any |= c[i];
  int shift = -1;
  for (E d = all ^ any; d != 0; d >>= 8) shift += 8;
  return shift < 0 ? -1 : shift - 7;
}

// The kth smallest of the n distinct tagged keys at a: a radix select, each step on the highest
// byte in which the keys left differ, keeping the bucket that holds it until a few are left (and
// compacting them in place in `kept`); nth_element's introselect took 6-7 ns an element on random
// floats.
template <class E> E kth_smallest(const E* a, int64_t n, int64_t kth, E* kept) {  // kept: room for n
  const E* c = a;
  for (int shift = first_differing_byte(c, n); shift >= 0 && n > kSmallRow;) {
    uint32_t hist[256] = {};
    for (int64_t i = 0; i < n; ++i) ++hist[uint8_t(c[i] >> shift)];
    int b = 0;
    while (kth >= int64_t(hist[b])) kth -= hist[b++];
    int64_t m = 0;                   // the bucket's keys, in order
    if (int64_t(hist[b]) * 8 < n) {  // few: a branch that is rarely taken
      for (int64_t i = 0; i < n; ++i)
        if (uint8_t(c[i] >> shift) == b) kept[m++] = c[i];
    } else {  // many: every key written, the count moved without a branch
      for (int64_t i = 0; i < n; ++i) {
        kept[m] = c[i];
        m += uint8_t(c[i] >> shift) == b;
      }
    }
    c = kept, n = m;
    shift = first_differing_byte(c, n);
  }
  std::vector<E> last(c, c + n);
  std::nth_element(last.begin(), last.begin() + kth, last.end());
  return last[size_t(kth)];
}

template <class T> void partition_row(const T* in, const RowIo& r, int64_t kth, T* vals, uint32_t* idx) {
  if constexpr (std::is_same_v<T, c64>) {
    uint32_t* order = scratch<uint32_t>(r.n);
    std::iota(order, order + r.n, 0u);
    std::nth_element(order, order + kth, order + r.n, [&](uint32_t a, uint32_t b) {
      c64 x = in[int64_t(a) * r.is], y = in[int64_t(b) * r.is];
      return complex_less(x, y) || (!complex_less(y, x) && a < b);
    });
    for (int64_t i = 0; i < r.n; ++i) {
      if (idx)
        idx[i * r.os] = order[i];
      else
        vals[i * r.os] = in[int64_t(order[i]) * r.is];
    }
  } else {
    using Keys = typename KeyOf<T>::type;
    using E = Tagged<typename Keys::K>;
    E* a = scratch<E>(2 * r.n + 1);
    fill_tagged<T, Keys>(in, r, a);
    if (r.n <= kSmallRow) {
      std::nth_element(a, a + kth, a + r.n);
      return write_tagged(a, in, r, vals, idx);
    }
    // Those below the kth smallest first, then it, then those above, each in their order.
    const E pivot = kth_smallest(a, r.n, kth, a + r.n);
    E *b = a + r.n, *below = b, *above = b + kth + 1;  // b has room for n + 1
    if (kth < r.n / 8 || kth > r.n - r.n / 8) {        // one side is small: branches mostly one way
      for (int64_t i = 0; i < r.n; ++i) {
        const E e = a[i];
        if (e < pivot) *below++ = e;
        if (e > pivot) *above++ = e;
      }
    } else {  // without branches: each key is written at both ends, one end moves on
      for (int64_t i = 0; i < r.n; ++i) {
        const E e = a[i];
        *below = e;
        *above = e;
        below += int(e < pivot);
        above += int(e > pivot);
      }
    }
    b[kth] = pivot;
    write_tagged(b, in, r, vals, idx);
  }
}

// Runs row_fn(in_row, io, vals_row, idx_row) for every row along `axis`, rows spread over threads.
template <class T, class F> void for_each_row(const Array& x, int axis, Array& out, bool indices, F row_fn) {
  AxisRows rows(x.shape(), axis);
  const T* in = x.data<T>();
  T* vals = indices ? nullptr : out.data<T>();
  uint32_t* idx = indices ? out.data<uint32_t>() : nullptr;
  RowIo io{rows.n, rows.inner, rows.inner};
  // Long rows spread their own work over the threads (the pool does not nest).
  int64_t grain = rows.n >= kLongRow ? rows.count() : std::max<int64_t>(1, (int64_t(1) << 15) / rows.n);
  parallel_for(rows.count(), grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t b = rows.base(r);
      row_fn(in + b, io, vals ? vals + b : nullptr, idx ? idx + b : nullptr);
    }
  });
}

template <class F> void dispatch(Dtype d, F f) {
  for_each_dtype([&](auto t) {
    if (t.value == d) f(ctype_t<t.value>{});
  });
}

}  // namespace

void sort_axis(const Array& x, int axis, Array& out, bool indices) {
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for_each_row<T>(x, axis, out, indices, [](const T* i, const RowIo& r, T* v, uint32_t* ix) {
      if constexpr (std::is_same_v<T, c64>)
        sort_row_complex(i, r, v, ix);
      else
        sort_row<T>(i, r, v, ix);
    });
  });
}

void partition_axis(const Array& x, int axis, int64_t kth, Array& out, bool indices) {
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for_each_row<T>(x, axis, out, indices,
                    [kth](const T* i, const RowIo& r, T* v, uint32_t* ix) { partition_row<T>(i, r, kth, v, ix); });
  });
}

}  // namespace nuvec::cpu::NUVEC_ISA
