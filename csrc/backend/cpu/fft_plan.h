// FFT plans: made once per length and kept (the plan, and so the order of every operation, depends
// on the length alone). Twiddles are computed in double precision and rounded to float.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace nuvec::cpu {

// Memory for large arrays, on huge pages where the system gives them (fewer TLB misses for the
// four-step passes, which touch a page per row).
struct FftFree {
  void operator()(float* p) const;
};
using FftBig = std::unique_ptr<float[], FftFree>;
FftBig fft_big(size_t floats);
void fft_advise_huge(void* p, size_t bytes);

// Lengths above this run as four steps (rows and columns) when they split into two factors.
constexpr int64_t kFftDirectMax = 16384;
// The largest prime handled as a radix (radices: 8, 4, 2, 3, 5, then odd primes); lengths with a larger prime factor run Bluestein's algorithm.
constexpr int kFftMaxRadix = 31;

struct FftPlan {
  struct Stage {
    int p;
    int64_t m;              // the length of each sub-transform after this step
    std::vector<float> tw;  // w_j^r, j < m, 1 <= r < p (interleaved)
    std::vector<float> cs;  // cos, sin of 2 pi k / p (generic radices)
  };
  int64_t n = 1;
  std::vector<Stage> stages;  // the Stockham steps (no Bluestein)
  // Bluestein: the chirp e^{-i pi k^2 / n} (n values) and the filter's transform over m / m.
  int64_t m = 0;
  std::shared_ptr<const FftPlan> sub;
  std::vector<float> chirp, filter;
  // Four steps for a contiguous sequence: n = n1 * n2, twiddles w^{k1 n2} (split), in the order
  // the column blocks read them: block n2 / kFftLanes, then k1, then n2 % kFftLanes.
  int64_t n1 = 0, n2 = 0, n2p = 0;
  std::shared_ptr<const FftPlan> p1, p2;
  FftBig tw4r, tw4i;
  // For real transforms of length 2n: e^{-2 pi i k / 2n}, k <= n / 2 (interleaved).
  std::vector<float> real_w;

  // Floats each of the block's re, im and the two work arrays need (rows x lanes).
  int64_t block_floats() const;
  // Floats of scratch beyond those (Bluestein's block and its work).
  int64_t scratch_floats() const;
};

// The plan of length n (cached; thread-safe).
const FftPlan& fft_plan(int64_t n);

}  // namespace nuvec::cpu
