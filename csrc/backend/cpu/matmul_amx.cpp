// The bfloat16 product's AMX tiles (backend/cpu/matmul_amx.h). Built with function-level target
// attributes, so the file compiles in the baseline build and runs only where amx_ready() says so
// (Linux on x86-64: the tile state needs its arch_prctl permission; elsewhere never).
#include "backend/cpu/matmul_amx.h"

#include <cstring>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace nuvec::cpu {

#if defined(__x86_64__) && defined(__linux__)

namespace {

// The processor has AMX-TILE and AMX-BF16 (CPUID leaf 7: EDX bits 24 and 22), and Linux lets this
// process use the tile registers (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA: their
// state is too large for the default signal frame, so each process asks once).
bool detect() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 22))) return false;
  constexpr long kReqXcompPerm = 0x1023, kXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXtiledata) == 0;
}

// The bfloat16 products use every tile as 16 rows of 64 bytes: C as 16 x 16 floats, A as 16 rows
// of 32 bfloat16, B as 16 pairs of k rows of 16 columns (each function says which tile holds what).
#define NUVEC_AMX __attribute__((target("amx-tile,amx-bf16")))

}  // namespace

bool amx_ready() {
  static const bool ready = detect();
  return ready;
}

// AMX-INT8: CPUID leaf 7, EDX bit 25.
bool amx_int8_ready() {
  static const bool ready = [] {
    unsigned a, b, c, d;
    return amx_ready() && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 25));
  }();
  return ready;
}

// Tiles 0-3: C (32 x 32), 4-5: A's two 16-row halves, 6-7: B's two 16-column halves.
NUVEC_AMX void amx_tiles(const uint16_t* a, int64_t lda, int64_t row_blocks, const uint16_t* b, int64_t kp, float* c,
                         int64_t ldc) {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
  _tile_loadconfig(&cfg);
  for (int64_t rb = 0; rb < row_blocks; ++rb) {
    const uint16_t* a0 = a + rb * 32 * lda;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t k0 = 0; k0 < kp; k0 += 32) {
      _tile_loadd(4, a0 + k0, lda * 2);
      _tile_loadd(5, a0 + 16 * lda + k0, lda * 2);
      _tile_loadd(6, b + k0 * 32, 128);
      _tile_loadd(7, b + k0 * 32 + 32, 128);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    float* c0 = c + rb * 32 * ldc;
    _tile_stored(0, c0, ldc * 4);
    _tile_stored(1, c0 + 16, ldc * 4);
    _tile_stored(2, c0 + 16 * ldc, ldc * 4);
    _tile_stored(3, c0 + 16 * ldc + 16, ldc * 4);
  }
  _tile_release();
}

NUVEC_AMX void amx_tiles_t(const uint16_t* w, int64_t ldw, const uint16_t* xt, int64_t kp, float* c) {
  TileConfig cfg;
  for (int t = 0; t < 3; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  for (int64_t k0 = 0; k0 < kp; k0 += 32) {
    _tile_loadd(1, w + k0, ldw * 2);
    _tile_loadd(2, xt + k0 * 16, 64);
    _tile_dpbf16ps(0, 1, 2);
  }
  _tile_stored(0, c, 64);
  _tile_release();
}

// Rows 2q and 2q + 1 of W (16 columns from w, fewer past `cols`; zero past k) as one row of a B
// tile: the columns' pairs of values.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline void pair_row(const uint16_t* w, int64_t ldw, int64_t k,
                                                                          int64_t q, int64_t cols, uint16_t* dst) {
  const __mmask16 live = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __m256i zero = _mm256_setzero_si256();
  __m256i r0 = 2 * q < k ? _mm256_maskz_loadu_epi16(live, w + 2 * q * ldw) : zero;
  __m256i r1 = 2 * q + 1 < k ? _mm256_maskz_loadu_epi16(live, w + (2 * q + 1) * ldw) : zero;
  __m256i lo = _mm256_unpacklo_epi16(r0, r1), hi = _mm256_unpackhi_epi16(r0, r1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
}

NUVEC_AMX __attribute__((target("avx512f,avx512bw,avx512vl"))) void amx_rows_times_w(const uint16_t* xa, int64_t kp,
                                                                                     const uint16_t* w, int64_t ldw,
                                                                                     int64_t k, int64_t cols,
                                                                                     float* c) {
  TileConfig cfg;
  for (int t = 0; t < 3; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
  _tile_loadconfig(&cfg);
  const int64_t tiles = (cols + 15) / 16;
  std::memset(c, 0, size_t(tiles) * 256 * sizeof(float));
  alignas(64) uint16_t b[16 * 32];
  // Each chunk of 32 rows of W is read across all the columns (runs of each row), the C tiles
  // going through memory (L1) from chunk to chunk. (Keeping six C tiles in registers over all of
  // k, reading 192 bytes of each row per pass, measured slower.)
  for (int64_t k0 = 0; k0 < kp; k0 += 32) {
    _tile_loadd(1, xa + k0, kp * 2);
    for (int64_t t = 0; t < tiles; ++t) {
      for (int64_t q = 0; q < 16; ++q) pair_row(w + k0 * ldw + 16 * t, ldw, k - k0, q, cols - 16 * t, b + 32 * q);
      _tile_loadd(0, c + 256 * t, 64);
      _tile_loadd(2, b, 64);
      _tile_dpbf16ps(0, 1, 2);
      _tile_stored(0, c + 256 * t, 64);
    }
  }
  _tile_release();
}

#else

bool amx_ready() { return false; }
bool amx_int8_ready() { return false; }
void amx_tiles(const uint16_t*, int64_t, int64_t, const uint16_t*, int64_t, float*, int64_t) {}
void amx_tiles_t(const uint16_t*, int64_t, const uint16_t*, int64_t, float*) {}
void amx_rows_times_w(const uint16_t*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, float*) {}

#endif

}  // namespace nuvec::cpu
