// Constants whose values define the bits of MLX's log and erfinv, for every backend's kernels
// (initializer lists: a CUDA table lives in __constant__ memory, a CPU one is constexpr).
#pragma once

// glibc's logf (ARM's optimized-routines algorithm): 1/c and log(c) for 16 subintervals of
// [0x3f330000, 2 * 0x3f330000) and the cubic's coefficients; the result is
// y = A0 r^4 + A1 r^3 + A2 r^2 + r + k ln2 + log(c), r = z / c - 1, rounded once to float.
#define NUVEC_LOGF_INV_C                                                                                           \
  0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0, 0x1.49539f0f010bp+0, 0x1.3c995b0b80385p+0, 0x1.30d190c8864a5p+0,     \
      0x1.25e227b0b8eap+0, 0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0, 0x1.0953f419900a7p+0, 0x1p+0,               \
      0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1, 0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1, 0x1.886e6037841edp-1, \
      0x1.767dcf5534862p-1
#define NUVEC_LOGF_LOG_C                                                                                             \
  -0x1.57bf7808caadep-2, -0x1.2bef0a7c06ddbp-2, -0x1.01eae7f513a67p-2, -0x1.b31d8a68224e9p-3, -0x1.6574f0ac07758p-3, \
      -0x1.1aa2bc79c81p-3, -0x1.a4e76ce8c0e5ep-4, -0x1.1973c5a611cccp-4, -0x1.252f438e10c1ep-5, 0x0p+0,              \
      0x1.aa5aa5df25984p-5, 0x1.c5e53aa362eb4p-4, 0x1.526e57720db08p-3, 0x1.bc2860d22477p-3, 0x1.1058bc8a07ee1p-2,   \
      0x1.4043057b6ee09p-2
#define NUVEC_LOGF_LN2 0x1.62e42fefa39efp-1
#define NUVEC_LOGF_A0 -0x1.00ea348b88334p-2
#define NUVEC_LOGF_A1 0x1.5575b0be00b6ap-2
#define NUVEC_LOGF_A2 -0x1.ffffef20a4123p-2

// MLX's float32 erfinv: N. Juffa's minimax polynomials in t = log(1 - a^2), split at |t| = 6.125.
#define NUVEC_ERFINV_TAIL                                                                                          \
  3.03697567e-10f, 2.93243101e-8f, 1.22150334e-6f, 2.84108955e-5f, 3.93552968e-4f, 3.02698812e-3f, 4.83185798e-3f, \
      -2.64646143e-1f, 8.40016484e-1f
#define NUVEC_ERFINV_CENTER                                                                                         \
  5.43877832e-9f, 1.43285448e-7f, 1.22774793e-6f, 1.12963626e-7f, -5.61530760e-5f, -1.47697632e-4f, 2.31468678e-3f, \
      1.15392581e-2f, -2.32015476e-1f, 8.86226892e-1f
#define NUVEC_ERFINV_SPLIT 6.125f
