// Reduction kernels for one instruction set. Sums are pairwise over blocks reduced with several
// SIMD accumulators (as accurate as NumPy's); column reductions walk rows, adding across the
// contiguous axis, pairwise over blocks of rows; softmax and logsumexp rows use libmvec's exp.
// Every order depends only on the sizes passed in.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "backend/cpu/reduce.h"
#include "backend/cpu/simd/expsin.h"
#include "backend/cpu/simd/simd.h"
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace nuvec::cpu::NUVEC_ISA {
namespace {

template <class T, int N> struct VecN { typedef T type __attribute__((vector_size(N * sizeof(T)))); };
template <class A> constexpr int kLanes = kVecBytes / int(sizeof(A));
template <class A> using VecA = typename VecN<A, kLanes<A>>::type;
template <bool Vectorised, class A> struct PartOf { using type = A; };
template <class A> struct PartOf<true, A> { using type = VecA<A>; };

template <class V> V load_raw(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// kLanes<A> elements of T, converted to A.
template <class A, class T> VecA<A> load_as(const T* p) {
  constexpr int L = kLanes<A>;
  if constexpr (std::is_same_v<A, T>) {
    return load_raw<VecA<A>>(p);
  } else if constexpr (std::is_same_v<T, f16>) {
    static_assert(std::is_same_v<A, float>);
#if defined(__AVX512F__)
    __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
    return load_raw<VecA<A>>(&v);
#elif defined(__AVX2__)
    __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
    return load_raw<VecA<A>>(&v);
#else
    return __builtin_convertvector(load_raw<typename VecN<f16, L>::type>(p), VecA<A>);
#endif
  } else if constexpr (std::is_same_v<T, bf16>) {
    static_assert(std::is_same_v<A, float>);
    auto u = __builtin_convertvector(load_raw<typename VecN<uint16_t, L>::type>(p), typename VecN<uint32_t, L>::type);
    u <<= 16;
    return load_raw<VecA<A>>(&u);
  } else if constexpr (std::is_same_v<T, bool>) {
    return __builtin_convertvector(load_raw<typename VecN<uint8_t, L>::type>(p), VecA<A>);
  } else {
    return __builtin_convertvector(load_raw<typename VecN<T, L>::type>(p), VecA<A>);
  }
}

// float lanes back to T (round to nearest even; NaN stays NaN).
template <class T> void store_from(T* p, VecF v) {
  if constexpr (std::is_same_v<T, float>) {
    store(p, v);
  } else if constexpr (std::is_same_v<T, f16>) {
#if defined(__AVX512F__)
    _mm256_storeu_si256((__m256i*)p, _mm512_cvtps_ph((__m512)v, _MM_FROUND_TO_NEAREST_INT));
#elif defined(__AVX2__)
    _mm_storeu_si128((__m128i*)p, _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT));
#else
    auto h = __builtin_convertvector(v, typename VecN<f16, kLanesF>::type);
    std::memcpy(p, &h, sizeof(h));
#endif
  } else {
    using U = typename VecN<uint32_t, kLanesF>::type;
    U u = load_raw<U>(&v);
    U rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    U nan = (u >> 16) | 0x40u;
    U r = (u & 0x7fffffffu) > 0x7f800000u ? nan : rounded;
    auto h = __builtin_convertvector(r, typename VecN<uint16_t, kLanesF>::type);
    std::memcpy(p, &h, sizeof(h));
  }
}

// The scalar rules of one reduction: its accumulator, identity and combining step (written
// once for scalars and vectors).
template <ReduceOp op, Dtype D> struct Rule {
  using T = ctype_t<D>;
  using A = ctype_t<accumulator(op, D)>;
  static constexpr bool vec = std::is_arithmetic_v<A> && !std::is_same_v<A, bool>;

  static A lift(T x) { return convert<A>(x); }  // to bool: nonzero

  static A identity() {
    if constexpr (op == ReduceOp::sum)
      return A(0);
    else if constexpr (op == ReduceOp::prod)
      return A(1);
    else if constexpr (op == ReduceOp::all)
      return true;
    else if constexpr (op == ReduceOp::any)
      return false;
    else if constexpr (is_complex_v<A>) {
      float inf = std::numeric_limits<float>::infinity();
      return op == ReduceOp::max ? A(-inf, -inf) : A(inf, inf);
    } else if constexpr (std::numeric_limits<A>::has_infinity) {
      return op == ReduceOp::max ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return op == ReduceOp::max ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }

  template <class V> static V combine(V a, V b) {
    if constexpr (op == ReduceOp::sum) {
      return a + b;
    } else if constexpr (op == ReduceOp::prod) {
      return a * b;
    } else if constexpr (op == ReduceOp::all) {
      return a && b;
    } else if constexpr (op == ReduceOp::any) {
      return a || b;
    } else if constexpr (is_complex_v<V>) {  // lexicographic, as NumPy and MLX
      bool gt = b.real() > a.real() || (b.real() == a.real() && b.imag() > a.imag());
      bool lt = b.real() < a.real() || (b.real() == a.real() && b.imag() < a.imag());
      return (op == ReduceOp::max ? gt : lt) ? b : a;
    } else if constexpr (op == ReduceOp::max) {
      return ((b > a) | (b != b)) ? b : a;  // a NaN wins and then stays
    } else {
      return ((b < a) | (b != b)) ? b : a;
    }
  }

  // The lanes of v combined pairwise.
  template <class V> static A horizontal(V v) {
    constexpr int L = kLanes<A>;
    A lanes[L];
    std::memcpy(lanes, &v, sizeof(v));
    for (int w = L / 2; w >= 1; w /= 2)
      for (int k = 0; k < w; ++k) lanes[k] = combine(lanes[k], lanes[k + w]);
    return lanes[0];
  }
};

template <ReduceOp op, Dtype D> struct Kernels : Rule<op, D> {
  using R = Rule<op, D>;
  using T = typename R::T;
  using A = typename R::A;
  static constexpr int L = R::vec ? kLanes<A> : 1;
  static constexpr int64_t kStep = R::vec ? 4 * L : 8;        // elements per unrolled step
  static constexpr int64_t kLeaf = R::vec ? 8 * kStep : 128;  // largest run reduced without splitting
  static constexpr int64_t kRowLeaf = 64;                     // rows reduced without splitting
  static constexpr int kRowsAtOnce = 4;                       // rows_fn's rows in flight together

  // A partial result: one accumulator per lane (joined across lanes once, at the end).
  using Part = typename PartOf<R::vec, A>::type;

  // An element as the reduction reads it: squared first for row_of_squares (Sq).
  template <bool Sq, class V> static V read(V v) {
    if constexpr (Sq)
      return v * v;
    else
      return v;
  }

  // Up to kLeaf elements (a multiple of L when vectorised) of each of N rows, each row with four
  // vector accumulators (eight scalar ones); vectorised, the rows' loads are interleaved, so N
  // streams are in flight.
  template <int N, bool Sq = false> static void leaf(const T* const* p, int64_t n, Part* out) {
    if constexpr (R::vec) {
      VecA<A> acc[N][4];
      for (auto& row : acc)
        for (auto& a : row) a = VecA<A>{} + R::identity();
      int64_t i = 0;
      for (; i + kStep <= n; i += kStep)
        for (int r = 0; r < N; ++r)
          for (int k = 0; k < 4; ++k) acc[r][k] = R::combine(acc[r][k], read<Sq>(load_as<A>(p[r] + i + k * L)));
      for (; i < n; i += L)
        for (int r = 0; r < N; ++r) acc[r][0] = R::combine(acc[r][0], read<Sq>(load_as<A>(p[r] + i)));
      for (int r = 0; r < N; ++r)
        out[r] = R::combine(R::combine(acc[r][0], acc[r][1]), R::combine(acc[r][2], acc[r][3]));
    } else {
      for (int r = 0; r < N; ++r) {
        A acc[8];
        for (auto& a : acc) a = R::identity();
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
          for (int k = 0; k < 8; ++k) acc[k] = R::combine(acc[k], read<Sq>(R::lift(p[r][i + k])));
        for (int w = 4; w >= 1; w /= 2)
          for (int k = 0; k < w; ++k) acc[k] = R::combine(acc[k], acc[k + w]);
        for (; i < n; ++i) acc[0] = R::combine(acc[0], read<Sq>(R::lift(p[r][i])));
        out[r] = acc[0];
      }
    }
  }

  // Halves combined pairwise down to leaves, for N rows of n elements at once: the splits depend
  // on n alone, so each row's part is the same whatever rows share the call.
  template <int N, bool Sq = false> static void tree(const T* const* p, int64_t n, Part* out) {
    if (n <= kLeaf) return leaf<N, Sq>(p, n, out);
    int64_t h = n / 2;
    h -= h % kStep;
    Part rest[N];
    const T* q[N];
    for (int r = 0; r < N; ++r) q[r] = p[r] + h;
    tree<N, Sq>(p, h, out);
    tree<N, Sq>(q, n - h, rest);
    for (int r = 0; r < N; ++r) out[r] = R::combine(out[r], rest[r]);
  }

  // Pairwise over whole vectors, the last n % L elements added at the end, for N rows of n
  // elements back to back.
  template <int N, bool Sq = false> static void pairwise(const T* p, int64_t n, A* out) {
    const T* rows[N];
    Part parts[N];
    for (int r = 0; r < N; ++r) rows[r] = p + r * n;
    const int64_t m = R::vec ? n - n % L : n;
    tree<N, Sq>(rows, m, parts);
    for (int r = 0; r < N; ++r) {
      if constexpr (R::vec)
        out[r] = R::horizontal(parts[r]);
      else
        out[r] = parts[r];
      for (int64_t i = m; i < n; ++i) out[r] = R::combine(out[r], read<Sq>(R::lift(rows[r][i])));
    }
  }

  // out[j] op= x[j] over one row, or over four rows joined pairwise first.
  template <int N> static void add_rows(const T* p, int64_t stride, int64_t w, A* out) {
    auto rows = [&](auto load, int64_t j) {
      if constexpr (N == 1)
        return load(p + j);
      else
        return R::combine(R::combine(load(p + j), load(p + stride + j)),
                          R::combine(load(p + 2 * stride + j), load(p + 3 * stride + j)));
    };
    int64_t j = 0;
    if constexpr (R::vec) {
      for (; j + L <= w; j += L) {
        VecA<A> v = R::combine(load_raw<VecA<A>>(out + j), rows([](const T* q) { return load_as<A>(q); }, j));
        std::memcpy(out + j, &v, sizeof(v));
      }
    }
    for (; j < w; ++j) out[j] = R::combine(out[j], rows([](const T* q) { return R::lift(*q); }, j));
  }

  static void cols_leaf(const T* p, int64_t stride, int64_t rows, int64_t w, A* out) {
    for (int64_t j = 0; j < w; ++j) out[j] = R::identity();
    int64_t i = 0;
    for (; i + 4 <= rows; i += 4) add_rows<4>(p + i * stride, stride, w, out);
    for (; i < rows; ++i) add_rows<1>(p + i * stride, stride, w, out);
  }

  static void merge(A* a, const A* b, int64_t w) {
    int64_t j = 0;
    if constexpr (R::vec) {
      for (; j + L <= w; j += L) {
        VecA<A> v = R::combine(load_raw<VecA<A>>(a + j), load_raw<VecA<A>>(b + j));
        std::memcpy(a + j, &v, sizeof(v));
      }
    }
    for (; j < w; ++j) a[j] = R::combine(a[j], b[j]);
  }

  static void cols(const T* p, int64_t stride, int64_t rows, int64_t w, A* out) {
    if (rows <= kRowLeaf) return cols_leaf(p, stride, rows, w, out);
    int64_t h = rows / 2;
    h -= h % 4;
    cols(p, stride, h, w, out);
    std::unique_ptr<A[]> rest(new A[size_t(w)]);
    cols(p + h * stride, stride, rows - h, w, rest.get());
    merge(out, rest.get(), w);
  }

  static void row_fn(const void* in, int64_t n, void* acc) {
    pairwise<1>(static_cast<const T*>(in), n, static_cast<A*>(acc));
  }
  static void row_of_squares_fn(const void* in, int64_t n, void* acc) {
    pairwise<1, true>(static_cast<const T*>(in), n, static_cast<A*>(acc));
  }
  // kRowsAtOnce rows at a time (one row alone streamed from memory at 10-13 GB/s on the 2-core
  // AMD EPYC, four at once at 13-18; sum over axis 1 of 4096x4096 float32 9-14 -> 19-24 GB/s).
  static void rows_fn(const void* in, int64_t n, int64_t count, void* acc) {
    const T* x = static_cast<const T*>(in);
    A* out = static_cast<A*>(acc);
    int64_t r = 0;
    // Sums (mean, var and the norms' too), max and min: the other ops' rows go one at a time (their
    // four-row copies lengthened the build for little use).
    if constexpr (R::vec && (op == ReduceOp::sum || op == ReduceOp::max || op == ReduceOp::min))
      for (; r + kRowsAtOnce <= count; r += kRowsAtOnce) pairwise<kRowsAtOnce>(x + r * n, n, out + r);
    for (; r < count; ++r) pairwise<1>(x + r * n, n, out + r);
  }
  static void cols_fn(const void* in, int64_t stride, int64_t rows, int64_t w, void* acc) {
    cols(static_cast<const T*>(in), stride, rows, w, static_cast<A*>(acc));
  }
  static void merge_fn(void* a, const void* b, int64_t w) { merge(static_cast<A*>(a), static_cast<const A*>(b), w); }
};

// Softmax and logsumexp rows of T, computed in float32. Tails go through the same vector code
// (padded), so an element's result never depends on where it sits.
template <class T> struct Rows {
  static constexpr int L = kLanesF;
  static constexpr int64_t kLeaf = 1024;
  static constexpr int64_t kCached = 32768;  // longest row whose exps are kept for the final pass

  static VecF load_tail(const T* x, int64_t n, float pad) {
    T t[L];
    std::memcpy(t, x, size_t(n) * sizeof(T));
    VecF v = load_as<float>(t);
    for (int64_t k = n; k < L; ++k) v[k] = pad;
    return v;
  }

  // The row's largest and smallest elements (NaNs skipped) in one pass.
  static std::pair<float, float> extremes(const T* x, int64_t n) {
    VecF hi[4], lo[4];
    for (auto& v : hi) v = VecF{} - INFINITY;
    for (auto& v : lo) v = VecF{} + INFINITY;
    auto up = [](VecF a, VecF b) { return b > a ? b : a; };
    auto down = [](VecF a, VecF b) { return b < a ? b : a; };
    int64_t i = 0;
    for (; i + 4 * L <= n; i += 4 * L)
      for (int k = 0; k < 4; ++k) {
        const VecF v = load_as<float>(x + i + k * L);
        hi[k] = up(hi[k], v), lo[k] = down(lo[k], v);
      }
    for (; i + L <= n; i += L) {
      const VecF v = load_as<float>(x + i);
      hi[0] = up(hi[0], v), lo[0] = down(lo[0], v);
    }
    if (i < n)
      hi[0] = up(hi[0], load_tail(x + i, n - i, -INFINITY)), lo[0] = down(lo[0], load_tail(x + i, n - i, INFINITY));
    const VecF h = up(up(hi[0], hi[1]), up(hi[2], hi[3])), l = down(down(lo[0], lo[1]), down(lo[2], lo[3]));
    float rh = h[0], rl = l[0];
    for (int k = 1; k < L; ++k) rh = h[k] > rh ? h[k] : rh, rl = l[k] < rl ? l[k] : rl;
    return {rh, rl};
  }

  // Whether every x - m of a row (its extremes) is at least -100: exp then needs no check for
  // lanes below its range (expf_mvec's, which costs a compare a vector).
  static bool in_range(std::pair<float, float> e, float m) { return m - e.second < 100.0f; }

  // Σ exp(x - m), pairwise over blocks; stores each exp in e when given. `ahead` > 0 asks for
  // the memory that many bytes further on (the next row) while exp keeps the core busy.
  template <bool kInRange> static float exp_sum(const T* x, int64_t n, float m, float* e, int64_t ahead) {
    if (n > kLeaf) {
      int64_t h = std::max(kLeaf, n / 2 - n / 2 % kLeaf);
      return exp_sum<kInRange>(x, h, m, e, ahead) + exp_sum<kInRange>(x + h, n - h, m, e ? e + h : nullptr, ahead);
    }
    VecF acc[2] = {VecF{}, VecF{}};
    int64_t i = 0;
    for (; i + L <= n; i += L) {
      if (ahead) __builtin_prefetch(reinterpret_cast<const char*>(x + i) + ahead);
      const VecF d = load_as<float>(x + i) - m;
      VecF v = kInRange ? expf_mvec_in_range(d) : expf_mvec(d);
      if (e) store(e + i, v);
      acc[(i / L) & 1] += v;
    }
    if (i < n) {
      VecF v = expf_mvec(load_tail(x + i, n - i, -INFINITY) - m);
      if (e) std::memcpy(e + i, &v, size_t(n - i) * 4);
      for (int64_t k = n - i; k < L; ++k) v[k] = 0;
      acc[1] += v;
    }
    VecF v = acc[0] + acc[1];
    for (int w = L / 2; w >= 1; w /= 2)
      for (int k = 0; k < w; ++k) v[k] += v[k + w];
    return v[0];
  }

  // o = f(x) for vectors of floats; the tail through a padded vector. With `stream`, float32
  // vectors go around the caches (o must be aligned): a large output would only evict what is
  // still to be read, and the lines need not be read before being written.
  template <class S, class F> static void write(const S* x, T* o, int64_t n, bool stream, F f) {
    int64_t i = 0;
#if defined(__AVX512F__) || defined(__AVX2__)
    if constexpr (std::is_same_v<T, float>) {
      if (stream) {
        for (; i + L <= n; i += L) {
          VecF v = f(load_as<float>(x + i));
#if defined(__AVX512F__)
          _mm512_stream_ps(o + i, (__m512)v);
#else
          _mm256_stream_ps(o + i, (__m256)v);
#endif
        }
        _mm_sfence();
      }
    }
#endif
    for (; i + L <= n; i += L) store_from(o + i, f(load_as<float>(x + i)));
    if (i < n) {
      T t[L];
      S s[L] = {};
      std::memcpy(s, x + i, size_t(n - i) * sizeof(S));
      store_from(t, f(load_as<float>(s)));
      std::memcpy(o + i, t, size_t(n - i) * sizeof(T));
    }
  }

  static void softmax(const void* in, void* out, int64_t n, bool stream) {
    const T* x = static_cast<const T*>(in);
    T* o = static_cast<T*>(out);
    stream = stream && reinterpret_cast<uintptr_t>(o) % kVecBytes == 0;
    const auto ext = extremes(x, n);
    const float m = ext.first;
    const bool in_range_row = in_range(ext, m);
    if (n <= kCached) {
      // The row's exps are kept (in cache), so exp runs once per element. Rows lie back to back:
      // the next one is fetched while this one's exps are computed.
      thread_local std::vector<float> scratch;
      if (int64_t(scratch.size()) < n) scratch.resize(size_t(n));
      const int64_t ahead = n * int64_t(sizeof(T));
      float inv = 1.0f / (in_range_row ? exp_sum<true>(x, n, m, scratch.data(), ahead)
                                       : exp_sum<false>(x, n, m, scratch.data(), ahead));
      write(scratch.data(), o, n, stream, [inv](VecF v) { return v * inv; });
    } else if (in_range_row) {
      float inv = 1.0f / exp_sum<true>(x, n, m, nullptr, 0);
      write(x, o, n, stream, [inv, m](VecF v) { return expf_mvec_in_range(v - m) * inv; });
    } else {
      float inv = 1.0f / exp_sum<false>(x, n, m, nullptr, 0);
      write(x, o, n, stream, [inv, m](VecF v) { return expf_mvec(v - m) * inv; });
    }
  }

  static void logsumexp(const void* in, int64_t n, void* out) {
    const T* x = static_cast<const T*>(in);
    const auto ext = extremes(x, n);
    // An infinite max is replaced by 0: exp then gives the right infinity (or 0) and NaNs pass.
    const float m = ext.first, ms = std::isfinite(m) ? m : 0.0f;
    const int64_t ahead = n <= kCached ? n * int64_t(sizeof(T)) : 0;  // see softmax
    float r = ms + std::log(in_range(ext, ms) ? exp_sum<true>(x, n, ms, nullptr, ahead)
                                              : exp_sum<false>(x, n, ms, nullptr, ahead));
    *static_cast<T*>(out) = convert<T>(r);
  }
};

// The first index of a row's extreme (NaN first), in two vector passes: the extreme and whether a
// NaN occurs, lane by lane, then the first element equal to it (or the first NaN).
template <bool Max, class T> uint32_t arg_extreme_row(const void* in, int64_t n) {
  typedef T V __attribute__((vector_size(kVecBytes)));
  constexpr int W = kVecBytes / sizeof(T);
  const T* x = static_cast<const T*>(in);
  auto load_v = [&](int64_t i) {
    V v;
    std::memcpy(&v, x + i, sizeof(v));
    return v;
  };
  V best = V{} + x[0];
  auto nan = best != best;  // all lanes clear
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const V v = load_v(i);
    nan |= v != v;
    if constexpr (Max)
      best = v > best ? v : best;
    else
      best = v < best ? v : best;
  }
  T m = best[0];
  bool any_nan = false;
  for (int j = 0; j < W; ++j) {
    any_nan |= nan[j] != 0;
    m = (Max ? best[j] > m : best[j] < m) ? best[j] : m;
  }
  for (; i < n; ++i) {
    any_nan |= x[i] != x[i];
    m = (Max ? x[i] > m : x[i] < m) ? x[i] : m;
  }
  int64_t k = 0;
  for (; k + W <= n; k += W) {  // a block at a time, then its first hit
    const V v = load_v(k);
    const auto hit = any_nan ? v != v : v == m;
    bool found = false;
    for (int j = 0; j < W; ++j) found |= hit[j] != 0;
    if (found) break;
  }
  for (; k < n; ++k)
    if (any_nan ? x[k] != x[k] : x[k] == m) return uint32_t(k);
  return 0;
}

}  // namespace

void fill_reduce(ReduceTable& t) {
  for_each_dtype([&](auto d) {
    constexpr Dtype D = d.value;
    auto fill = [&](auto o) {
      constexpr ReduceOp op = o.value;
      using K = Kernels<op, D>;
      t.reduce[int(op)][int(D)] = {&K::row_fn, &K::rows_fn, &K::cols_fn, &K::merge_fn};
      if constexpr (op == ReduceOp::sum && D == Dtype::float32)
        t.reduce[int(op)][int(D)].row_of_squares = &K::row_of_squares_fn;
    };
    fill(std::integral_constant<ReduceOp, ReduceOp::sum>{});
    fill(std::integral_constant<ReduceOp, ReduceOp::prod>{});
    fill(std::integral_constant<ReduceOp, ReduceOp::max>{});
    fill(std::integral_constant<ReduceOp, ReduceOp::min>{});
    fill(std::integral_constant<ReduceOp, ReduceOp::all>{});
    fill(std::integral_constant<ReduceOp, ReduceOp::any>{});
    if constexpr (D == Dtype::float32 || D == Dtype::float64) {
      t.arg_row[0][int(D)] = &arg_extreme_row<false, ctype_t<D>>;
      t.arg_row[1][int(D)] = &arg_extreme_row<true, ctype_t<D>>;
    }
    if constexpr (D == Dtype::float32 || D == Dtype::float16 || D == Dtype::bfloat16) {
      t.softmax[int(D)] = &Rows<ctype_t<D>>::softmax;
      t.logsumexp[int(D)] = &Rows<ctype_t<D>>::logsumexp;
    }
  });
}

}  // namespace nuvec::cpu::NUVEC_ISA
