// Scans on the CPU. Each output is the strictly sequential combination of its prefix (NumPy's
// order), so results never depend on threads or instruction set. Speed comes from running many
// independent chains at once: along an inner axis the chains are the contiguous columns (one
// vector operation per step); along the last axis several rows are interleaved in blocks so
// that their dependency chains overlap in the processor instead of one row waiting on itself.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "backend/cpu/backend.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/sort.h"
#include "core/primitives/scan.h"
#include "core/threads.h"

namespace nuvec::cpu {
namespace {

// The type a scan accumulates in: half types in float32.
template <class T> using Acc = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;

template <class A> bool has_nan(A v) {
  if constexpr (is_complex_v<A>)
    return std::isnan(v.real()) || std::isnan(v.imag());
  else if constexpr (std::is_floating_point_v<A>)
    return std::isnan(v);
  else
    return false;
}

// Integer arithmetic wraps (as NumPy's), computed unsigned so overflow is defined.
template <class A> A wrap_add(A a, A b) {
  using U = std::make_unsigned_t<A>;
  return A(U(U(a) + U(b)));
}
template <class A> A wrap_mul(A a, A b) {
  using U = std::conditional_t<sizeof(A) < 8, uint64_t, std::make_unsigned_t<A>>;
  return A(U(U(std::make_unsigned_t<A>(a)) * U(std::make_unsigned_t<A>(b))));
}

struct Sum {
  template <class A> static A identity() { return A(0); }
  template <class A> static A apply(A a, A b) {
    if constexpr (is_int_v<A>)
      return wrap_add(a, b);
    else
      return a + b;
  }
};

struct Prod {
  template <class A> static A identity() { return A(1); }
  template <class A> static A apply(A a, A b) {
    if constexpr (std::is_same_v<A, bool>)
      return a && b;
    else if constexpr (is_int_v<A>)
      return wrap_mul(a, b);
    // The textbook product, as NumPy's and the element-wise multiply.
    else if constexpr (is_complex_v<A>)
      return A(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
    else
      return a * b;
  }
};

// Complex numbers compare lexicographically; NaNs propagate (NumPy's maximum and minimum).
template <class A> bool greater(A a, A b) {
  if constexpr (is_complex_v<A>)
    return a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
  else
    return a > b;
}

template <class A> A extreme(bool highest) {
  if constexpr (std::is_same_v<A, bool>) {
    return highest;
  } else if constexpr (is_complex_v<A>) {
    float inf = std::numeric_limits<float>::infinity();
    return highest ? A(inf, inf) : A(-inf, -inf);
  } else if constexpr (std::is_floating_point_v<A>) {
    return highest ? std::numeric_limits<A>::infinity() : -std::numeric_limits<A>::infinity();
  } else {
    return highest ? std::numeric_limits<A>::max() : std::numeric_limits<A>::lowest();
  }
}

struct Max {
  template <class A> static A identity() { return extreme<A>(false); }
  template <class A> static A apply(A a, A b) {
    if (has_nan(a)) return a;
    return has_nan(b) || greater(b, a) ? b : a;
  }
};

struct Min {
  template <class A> static A identity() { return extreme<A>(true); }
  template <class A> static A apply(A a, A b) {
    if (has_nan(a)) return a;
    return has_nan(b) || greater(a, b) ? b : a;
  }
};

struct LogAddExp {
  template <class A> static A identity() {
    if constexpr (is_complex_v<A>)
      return A(-std::numeric_limits<float>::infinity(), 0.0f);
    else
      return -std::numeric_limits<A>::infinity();
  }
  template <class A> static A apply(A a, A b) {
    if constexpr (is_complex_v<A>) {
      // log(e^a + e^b) around the operand of larger real part.
      const A& m = a.real() >= b.real() ? a : b;
      const A& o = a.real() >= b.real() ? b : a;
      if (std::isinf(o.real()) && o.real() < 0) return m;
      return m + std::log(A(1) + std::exp(o - m));
    } else {
      if (std::isnan(a) || std::isnan(b)) return a + b;
      if (a == b) return a + A(M_LN2);  // also infinities of one sign
      A m = a > b ? a : b;
      return m + std::log1p(std::exp(-std::fabs(a - b)));
    }
  }
};

// Rows interleaved per block, and the block's length: enough independent chains to hide an
// operation's latency, and few enough cache lines to stay in L1.
constexpr int kRowGroup = 8;
constexpr int64_t kColBlock = 64;
// Columns of an inner-axis scan handled together (their running values stay in L1).
constexpr int64_t kColChunk = 1024;
constexpr int64_t kGrain = int64_t(1) << 16;  // elements per thread below which we stay serial

template <class T, class Op> struct Scanner {
  using A = Acc<T>;
  bool reverse, inclusive;

  // One step of one chain: element j of src into dst.
  void step(A& acc, const T* src, T* dst, int64_t j) const {
    A x = convert<A>(src[j]);
    if (inclusive) {
      acc = Op::template apply<A>(acc, x);
      dst[j] = convert<T>(acc);
    } else {
      dst[j] = convert<T>(acc);
      acc = Op::template apply<A>(acc, x);
    }
  }

  // Rows [r0, r1) of length n, scanned along their contiguous axis.
  void rows(const T* in, T* out, int64_t r0, int64_t r1, int64_t n) const {
    for (int64_t g = r0; g < r1; g += kRowGroup) {
      int nr = int(std::min<int64_t>(kRowGroup, r1 - g));
      A acc[kRowGroup];
      for (int r = 0; r < nr; ++r) acc[r] = Op::template identity<A>();
      for (int64_t c0 = 0; c0 < n; c0 += kColBlock) {
        int64_t c1 = std::min(n, c0 + kColBlock);
        for (int r = 0; r < nr; ++r) {
          const T* src = in + (g + r) * n;
          T* dst = out + (g + r) * n;
          A a = acc[r];
          if (reverse) {
            for (int64_t c = c0; c < c1; ++c) step(a, src, dst, n - 1 - c);
          } else {
            for (int64_t c = c0; c < c1; ++c) step(a, src, dst, c);
          }
          acc[r] = a;
        }
      }
    }
  }

  // Columns [j0, j1) of one outer slice [n, inner], scanned along n.
  void columns(const T* in, T* out, int64_t n, int64_t inner, int64_t j0, int64_t j1) const {
    A acc[kColChunk];
    for (int64_t j = 0; j < j1 - j0; ++j) acc[j] = Op::template identity<A>();
    for (int64_t s = 0; s < n; ++s) {
      int64_t i = reverse ? n - 1 - s : s;
      const T* src = in + i * inner + j0;
      T* dst = out + i * inner + j0;
      for (int64_t j = 0; j < j1 - j0; ++j) step(acc[j], src, dst, j);
    }
  }

  void run(const T* in, T* out, const AxisRows& ax) const {
    if (ax.inner == 1) {
      int64_t groups = (ax.outer + kRowGroup - 1) / kRowGroup;
      int64_t grain = std::max<int64_t>(1, kGrain / (ax.n * kRowGroup));
      parallel_for(groups, grain, [&](int64_t g0, int64_t g1) {
        rows(in, out, g0 * kRowGroup, std::min(ax.outer, g1 * kRowGroup), ax.n);
      });
      return;
    }
    int64_t chunks = (ax.inner + kColChunk - 1) / kColChunk;
    int64_t grain = std::max<int64_t>(1, kGrain / (ax.n * std::min(ax.inner, kColChunk)));
    parallel_for(ax.outer * chunks, grain, [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        int64_t o = u / chunks, j0 = (u % chunks) * kColChunk;
        int64_t off = o * ax.n * ax.inner;
        columns(in + off, out + off, ax.n, ax.inner, j0, std::min(ax.inner, j0 + kColChunk));
      }
    });
  }
};

template <class T, class Op> void scan_as(const Array& x, Array& out, int axis, bool reverse, bool inclusive) {
  Scanner<T, Op>{reverse, inclusive}.run(x.data<T>(), out.data<T>(), AxisRows(x.shape(), axis));
}

template <class T> void scan_dtype(ScanOp op, const Array& x, Array& out, int axis, bool reverse, bool inclusive) {
  switch (op) {
    case ScanOp::sum:
      if constexpr (!std::is_same_v<T, bool>) return scan_as<T, Sum>(x, out, axis, reverse, inclusive);
      break;
    case ScanOp::prod: return scan_as<T, Prod>(x, out, axis, reverse, inclusive);
    case ScanOp::max: return scan_as<T, Max>(x, out, axis, reverse, inclusive);
    case ScanOp::min: return scan_as<T, Min>(x, out, axis, reverse, inclusive);
    case ScanOp::logaddexp:
      if constexpr (std::is_floating_point_v<Acc<T>> || is_complex_v<T>)
        return scan_as<T, LogAddExp>(x, out, axis, reverse, inclusive);
      break;
  }
  throw KernelError(EvalErrorKind::other, std::string("no CPU kernel for dtype ") + name_of(x.dtype()));
}

void eval_scan(const Scan& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  Array x = row_contiguous(in[0]);
  for_each_dtype([&](auto d) {
    if (d.value == x.dtype())
      scan_dtype<ctype_t<d.value>>(prim.op(), x, out[0], prim.axis(), prim.reverse(), prim.inclusive());
  });
}

}  // namespace

void register_scan_kernels(Backend& b) { b.add<Scan, eval_scan>(); }

}  // namespace nuvec::cpu
