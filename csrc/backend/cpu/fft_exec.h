// The FFT's executors over the per-ISA loops: a block of kFftLanes sequences through a plan
// (Stockham steps or Bluestein), and one long contiguous sequence in four steps on the pool.
#pragma once
#include <memory>

#include "backend/cpu/fft.h"
#include "backend/cpu/fft_plan.h"

namespace nuvec::cpu {

struct FftLoops {
  decltype(&portable::fft_pass) pass;
  decltype(&portable::fft_gather) gather;
  decltype(&portable::fft_scatter) scatter;
  decltype(&portable::fft_mul_rows) mul_rows;
  decltype(&portable::fft_mul_cells) mul_cells;
  decltype(&portable::fft_real_post) real_post;
  decltype(&portable::fft_real_pre) real_pre;
};
const FftLoops& fft_loops();  // this processor's build

// The block's p.n rows transformed, forward; the inverse is the forward transform of the block
// with re and im swapped (pass them, and the work arrays, swapped). True when the result is in the
// work arrays (the caller swaps the roles rather than copy).
bool fft_block(const FftPlan& p, float* re, float* im, float* wr, float* wi, float* extra);

// A block (re, im: block_floats() each) with its work arrays and Bluestein's scratch.
struct FftScratch {
  explicit FftScratch(const FftPlan& p);
  // The block through p (inverse: with re and im swapped); re and im then hold the result.
  void run(const FftPlan& p, bool inverse);
  std::unique_ptr<float[]> mem;
  float *re, *im, *wr, *wi, *extra;
};


// y = scale * DFT(x) for one contiguous interleaved sequence of p.n values, x != y: in four steps
// (p.n1 > 0), or Bluestein's algorithm over four-step transforms (p.m > 0, p.sub->n1 > 0).
bool fft_is_long(const FftPlan& p);
void fft_long(const FftPlan& p, const float* x, float* y, bool inverse, float scale);

}  // namespace nuvec::cpu
