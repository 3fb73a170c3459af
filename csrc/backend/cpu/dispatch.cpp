// Chooses the kernel build for this processor once, at first use. NUVEC_CPU_ISA=portable|avx2|avx512
// forces a lower one (for tests and comparisons).
#include <cstdlib>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "core/device.h"

namespace nuvec::cpu {
namespace {

Isa detect() {
  const char* want = std::getenv("NUVEC_CPU_ISA");
  auto allowed = [&](const char* name) { return !want || std::strcmp(want, name) == 0; };
#if defined(__x86_64__)
  __builtin_cpu_init();
  bool has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  bool has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  if (has512 && allowed("avx512")) return Isa::avx512;
  // Asking for AVX-512 on a processor without it falls back to AVX2.
  if (has2 && (allowed("avx2") || std::strcmp(want, "avx512") == 0)) return Isa::avx2;
#endif
  return Isa::portable;
}

#define NUVEC_FILL_ALL(ns) \
  ns::fill_convert(*t), ns::fill_unary(*t), ns::fill_binary(*t), ns::fill_select(*t), ns::fill_transpose(*t)

KernelTable* build() {
  auto* t = new KernelTable();
  switch (isa()) {
#if defined(__x86_64__)
    case Isa::avx512:
      t->isa = "avx512";
      NUVEC_FILL_ALL(avx512);
      return t;
    case Isa::avx2:
      t->isa = "avx2";
      NUVEC_FILL_ALL(avx2);
      return t;
#endif
    default:
      t->isa = "portable";
      NUVEC_FILL_ALL(portable);
      return t;
  }
}

}  // namespace

Isa isa() {
  static const Isa chosen = detect();
  return chosen;
}

const KernelTable& kernels() {
  static const KernelTable* t = build();
  return *t;
}

}  // namespace nuvec::cpu

const char* nuvec::cpu_kernel_isa() { return cpu::kernels().isa; }
