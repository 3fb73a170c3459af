// The element-wise kernels (Unary, Binary, Select, converting copies) and arange's: one kernel per
// compute dtype with the op as an argument (a switch on a uniform value costs nothing next to
// memory traffic, and keeps instantiations few). Operands are read in their own dtype and
// converted to the compute dtype per element, so mixed dtypes and strided or broadcast inputs need
// no staging copy. The hot float ops on contiguous operands have a kernel of their own with
// 16-byte loads and stores. elementwise.cpp plans the launches.
#include <algorithm>

#include "backend/cuda/ops.cuh"
#include "backend/cuda/stream.h"

namespace nuvec::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;  // grid-stride loops beyond this

// The element offsets of linear index i in each of the first N operands.
template <int N> __device__ inline void offsets_of(const Layout& l, int64_t i, int64_t (&off)[N]) {
  if (l.ndim == 1) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i * l.strides[k][0];
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    int64_t idx;
    if (l.narrow) {  // 32-bit division: a fraction of the 64-bit one's instructions
      uint32_t n = uint32_t(l.shape[d]), j = uint32_t(i);
      idx = j % n;
      i = j / n;
    } else {
      idx = i % l.shape[d];
      i /= l.shape[d];
    }
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * l.strides[k][d];
  }
}

template <class T> bool has_kernel_for(UnaryOp op) {
  switch (op) {
#define NUVEC_CASE(name, F) \
  case UnaryOp::name: return F::template ok<T>;
    NUVEC_UNARY_KERNELS(NUVEC_CASE)
#undef NUVEC_CASE
    default: return false;
  }
}
template <class T> bool has_kernel_for(BinaryOp op) {
  switch (op) {
#define NUVEC_CASE(name, F) \
  case BinaryOp::name: return F::template ok<T>;
    NUVEC_BINARY_KERNELS(NUVEC_CASE)
#undef NUVEC_CASE
  }
  return false;
}

#define NUVEC_GRID_STRIDE(i, n) \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

template <class T> __global__ void unary_kernel(EwArgs a) {
  NUVEC_GRID_STRIDE(i, a.size) {
    int64_t off[2];
    offsets_of(a.layout, i, off);
    Result<T> r;
    apply(UnaryOp(a.op), load_as<T>(a.in[0], a.in_dtype[0], off[1]), a.params, r);
    r.store(a.out, a.out_dtype, off[0]);
  }
}

template <class T> __global__ void binary_kernel(EwArgs a) {
  NUVEC_GRID_STRIDE(i, a.size) {
    int64_t off[3];
    offsets_of(a.layout, i, off);
    Result<T> r;
    apply(BinaryOp(a.op), load_as<T>(a.in[0], a.in_dtype[0], off[1]), load_as<T>(a.in[1], a.in_dtype[1], off[2]),
          a.params, r);
    r.store(a.out, a.out_dtype, off[0]);
  }
}

template <class T> __global__ void select_kernel(EwArgs a) {
  NUVEC_GRID_STRIDE(i, a.size) {
    int64_t off[4];
    offsets_of(a.layout, i, off);
    bool c = load_as<bool>(a.in[0], a.in_dtype[0], off[1]);
    store_as(a.out, a.out_dtype, off[0], load_as<T>(a.in[c ? 1 : 2], a.in_dtype[c ? 1 : 2], off[c ? 2 : 3]));
  }
}

// A copy converts straight from the input's dtype to the output's, T.
template <class T> __global__ void copy_kernel(EwArgs a) {
  NUVEC_GRID_STRIDE(i, a.size) {
    int64_t off[2];
    offsets_of(a.layout, i, off);
    static_cast<T*>(a.out)[off[0]] = load_as<T>(a.in[0], a.in_dtype[0], off[1]);
  }
}

// ---------------------------------------------------------------- the hot float ops
// 16 bytes of S at a time; a scalar operand (one element broadcast) is read once.
template <class S> struct alignas(16) Pack {
  static constexpr int n = 16 / sizeof(S);
  S v[n];
};
template <class S> __device__ inline float to_f32(S v) { return convert<float>(v); }

template <class Op, class S>
__global__ void binary_vec_kernel(const S* a, const S* b, S* out, int64_t n, bool a_scalar, bool b_scalar) {
  constexpr int kPack = Pack<S>::n;
  const KernelParams p{};
  float as = to_f32(a[0]), bs = to_f32(b[0]);
  int64_t packs = n / kPack;
  NUVEC_GRID_STRIDE(i, packs) {
    Pack<S> x, y, r;
    if (!a_scalar) x = reinterpret_cast<const Pack<S>*>(a)[i];
    if (!b_scalar) y = reinterpret_cast<const Pack<S>*>(b)[i];
#pragma unroll
    for (int j = 0; j < kPack; ++j)
      r.v[j] = convert<S>(Op::f(a_scalar ? as : to_f32(x.v[j]), b_scalar ? bs : to_f32(y.v[j]), p));
    reinterpret_cast<Pack<S>*>(out)[i] = r;
  }
  NUVEC_GRID_STRIDE(t, n - packs * kPack) {
    int64_t i = packs * kPack + t;
    out[i] = convert<S>(Op::f(a_scalar ? as : to_f32(a[i]), b_scalar ? bs : to_f32(b[i]), p));
  }
}

// out[i] = start + i * step in double (no fused multiply-add, as the CPU computes it).
template <class T> __global__ void arange_kernel(T* out, int64_t n, double start, double step) {
  NUVEC_GRID_STRIDE(i, n) out[i] = convert<T>(start + double(i) * step);
}

int64_t blocks_for(int64_t n) { return std::max<int64_t>(1, std::min(kMaxBlocks, (n + kThreads - 1) / kThreads)); }

// Calls f(tag) for compute dtype d (half types never are one: they compute in float32).
template <class F> void visit_compute(Dtype d, F&& f) {
  visit_dtype(d, [&](auto tag) {
    if constexpr (!is_half_v<ctype_t<tag.value>>) f(tag);
  });
}

}  // namespace

void launch_elementwise(EwKind kind, Dtype compute, const EwArgs& args) {
  auto grid = blocks_for(args.size);
  if (kind == EwKind::copy) {
    visit_dtype(compute, [&](auto tag) { copy_kernel<ctype_t<tag.value>><<<grid, kThreads, 0, stream()>>>(args); });
  } else {
    visit_compute(compute, [&](auto tag) {
      using T = ctype_t<tag.value>;
      if (kind == EwKind::unary)
        unary_kernel<T><<<grid, kThreads, 0, stream()>>>(args);
      else if (kind == EwKind::binary)
        binary_kernel<T><<<grid, kThreads, 0, stream()>>>(args);
      else
        select_kernel<T><<<grid, kThreads, 0, stream()>>>(args);
    });
  }
  check_launch("an element-wise kernel");
}

bool unary_has_kernel(int op, Dtype d) {
  bool ok = false;
  visit_compute(d, [&](auto tag) { ok = has_kernel_for<ctype_t<tag.value>>(UnaryOp(op)); });
  return ok;
}
bool binary_has_kernel(int op, Dtype d) {
  bool ok = false;
  visit_compute(d, [&](auto tag) { ok = has_kernel_for<ctype_t<tag.value>>(BinaryOp(op)); });
  return ok;
}

bool launch_binary_vec(int op, Dtype d, const void* a, const void* b, void* out, int64_t n, bool a_scalar,
                       bool b_scalar) {
  auto launch = [&](auto fn, auto tag) {
    using S = ctype_t<decltype(tag)::value>;
    using Op = decltype(fn);
    int64_t work = std::max<int64_t>(n / Pack<S>::n, n % Pack<S>::n);
    binary_vec_kernel<Op, S><<<blocks_for(work), kThreads, 0, stream()>>>(
        static_cast<const S*>(a), static_cast<const S*>(b), static_cast<S*>(out), n, a_scalar, b_scalar);
    check_launch("an element-wise kernel");
    return true;
  };
  auto for_dtype = [&](auto fn) {
    using std::integral_constant;
    if (d == Dtype::float32) return launch(fn, integral_constant<Dtype, Dtype::float32>{});
    if (d == Dtype::float16) return launch(fn, integral_constant<Dtype, Dtype::float16>{});
    return launch(fn, integral_constant<Dtype, Dtype::bfloat16>{});
  };
  switch (BinaryOp(op)) {
    case BinaryOp::add: return for_dtype(Add{});
    case BinaryOp::subtract: return for_dtype(Subtract{});
    case BinaryOp::multiply: return for_dtype(Multiply{});
    case BinaryOp::divide: return for_dtype(Divide{});
    case BinaryOp::maximum: return for_dtype(Maximum{});
    case BinaryOp::minimum: return for_dtype(Minimum{});
    default: return false;  // the rest take the general kernel
  }
}

void launch_arange(Dtype d, void* out, int64_t n, double start, double step) {
  visit_dtype(d, [&](auto tag) {
    using T = ctype_t<tag.value>;
    arange_kernel<T><<<blocks_for(n), kThreads, 0, stream()>>>(static_cast<T*>(out), n, start, step);
  });
  check_launch("arange");
}

}  // namespace nuvec::cuda
