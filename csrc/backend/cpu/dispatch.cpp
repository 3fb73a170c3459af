// Chooses the kernel build for this processor once, at first use (every family's builds follow
// that choice through NUVEC_FOR_ISA). NUVEC_CPU_ISA=portable|avx2|avx512 forces a lower one (for
// tests and comparisons).
#include <cstdlib>
#include <cstring>

#include "backend/cpu/kernels.h"

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

KernelTable* build() {
  auto* t = new KernelTable();
  for (auto fill : {NUVEC_FOR_ISA(fill_convert), NUVEC_FOR_ISA(fill_unary), NUVEC_FOR_ISA(fill_binary),
                    NUVEC_FOR_ISA(fill_select), NUVEC_FOR_ISA(fill_transpose)})
    fill(*t);
  return t;
}

}  // namespace

Isa isa() {
  static const Isa chosen = detect();
  return chosen;
}

const char* isa_name(Isa i) {
  switch (i) {
    case Isa::portable: return "portable";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

const KernelTable& kernels() {
  static const KernelTable* t = build();
  return *t;
}

}  // namespace nuvec::cpu
