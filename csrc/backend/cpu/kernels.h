// The table of contiguous CPU kernels, filled once for the processor found at run time
// (AVX-512, AVX2 or portable builds of the same sources in backend/cpu/simd/).
#pragma once
#include <cstdint>
#include <type_traits>
#include <variant>

#include "core/dtype.h"
#include "core/primitives/elementwise.h"

namespace nuvec::cpu {

// in[k] points at n elements of input k, or at one element repeated when in_scalar[k].
using EwKernel = void (*)(const void* const* in, const bool* in_scalar, void* out, int64_t n, const OpParams& p);
// dst[i] = src[i * src_stride] converted, for i < n (strides in elements).
using ConvertKernel = void (*)(const void* src, int64_t src_stride, void* dst, int64_t n);

// dst[r * dst_row + c] = src[r + c * src_col] for r < rows, c < cols (elements of `item` bytes).
using TransposeKernel = void (*)(const void* src, int64_t src_col, void* dst, int64_t dst_row, int64_t rows,
                                 int64_t cols, size_t item);

// The parameter struct an element-wise functor reads (its `Params`, else none), taken once per
// call from the primitive's OpParams: ops record only the struct their op takes (params_fit).
template <class Op, class = void> struct FunctorParams { using type = NoParams; };
template <class Op> struct FunctorParams<Op, std::void_t<typename Op::Params>> { using type = typename Op::Params; };
template <class Op> const typename FunctorParams<Op>::type& functor_params(const OpParams& p) {
  return *std::get_if<typename FunctorParams<Op>::type>(&p);
}

struct KernelTable {
  EwKernel unary[kUnaryOps][kNumDtypes] = {};
  EwKernel binary[kBinaryOps][kNumDtypes] = {};
  EwKernel select[kNumDtypes] = {};
  ConvertKernel convert[kNumDtypes][kNumDtypes] = {};
  TransposeKernel transpose = nullptr;
};

const KernelTable& kernels();
// The kernel of an element-wise primitive for its compute dtype, or null (fused.cpp).
EwKernel elementwise_kernel(const Elementwise& p);

// The instruction set chosen once for this processor (NUVEC_CPU_ISA may force a lower one).
enum class Isa { portable, avx2, avx512 };
Isa isa();
const char* isa_name(Isa i);

// Every kernel family picks its build with this: one of the three builds of the same entry point.
template <class F> F for_isa(F portable, F avx2, F avx512) {
  switch (isa()) {
    case Isa::portable: return portable;
    case Isa::avx2: return avx2;
    case Isa::avx512: return avx512;
  }
  return portable;
}
// The build of `fn` (declared in each ISA's namespace) for this processor.
#if defined(__x86_64__)
#define NUVEC_FOR_ISA(fn) \
  ::nuvec::cpu::for_isa(&::nuvec::cpu::portable::fn, &::nuvec::cpu::avx2::fn, &::nuvec::cpu::avx512::fn)
#else
#define NUVEC_FOR_ISA(fn) (&::nuvec::cpu::portable::fn)
#endif

// A kernel family's table, filled once (on first use) by the build that pick() returns, e.g.
// `[] { return NUVEC_FOR_ISA(fill_conv); }` (so later calls cost only the static's guard).
template <class K, class Pick> const K& kernel_table(Pick pick) {
  static const K* t = [&] {
    auto* k = new K();
    pick()(*k);
    return k;
  }();
  return *t;
}

#define NUVEC_DECLARE_ISA(ns)          \
  namespace ns {                       \
  void fill_convert(KernelTable& t);   \
  void fill_unary(KernelTable& t);     \
  void fill_binary(KernelTable& t);    \
  void fill_select(KernelTable& t);    \
  void fill_transpose(KernelTable& t); \
  }
NUVEC_DECLARE_ISA(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_ISA(avx2)
NUVEC_DECLARE_ISA(avx512)
#endif
#undef NUVEC_DECLARE_ISA

}  // namespace nuvec::cpu
