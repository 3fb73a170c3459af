// The FFT's executors (backend/cpu/fft_exec.h). Threads only ever split independent sequences
// (the columns, then the rows of the four-step split), so no bit depends on their number.
#include "backend/cpu/fft_exec.h"

#include <algorithm>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "core/threads.h"

namespace nuvec::cpu {

const FftLoops& fft_loops() {
  static const FftLoops f{NUVEC_FOR_ISA(fft_pass),     NUVEC_FOR_ISA(fft_gather),   NUVEC_FOR_ISA(fft_scatter),
                          NUVEC_FOR_ISA(fft_mul_rows), NUVEC_FOR_ISA(fft_mul_cells), NUVEC_FOR_ISA(fft_real_post),
                          NUVEC_FOR_ISA(fft_real_pre)};
  return f;
}

FftScratch::FftScratch(const FftPlan& p) {
  int64_t b = p.block_floats();
  mem.reset(new float[size_t(4 * b + p.scratch_floats())]);
  re = mem.get(), im = re + b, wr = im + b, wi = wr + b, extra = wi + b;
}

void fft_block(const FftPlan& p, float* re, float* im, float* wr, float* wi, float* extra) {
  const FftLoops& f = fft_loops();
  constexpr int64_t L = kFftLanes;
  size_t bytes = size_t(p.n * L) * sizeof(float);
  if (p.m) {  // Bluestein: chirp, convolve with the filter through length-m transforms, chirp
    const FftPlan& q = *p.sub;
    int64_t b = q.block_floats();
    float *mr = extra, *mi = mr + b, *xr = mi + b, *xi = xr + b, *more = xi + b;
    std::memcpy(mr, re, bytes);
    std::memcpy(mi, im, bytes);
    std::fill(mr + p.n * L, mr + p.m * L, 0.0f);
    std::fill(mi + p.n * L, mi + p.m * L, 0.0f);
    f.mul_rows(mr, mi, p.n, p.chirp.data());
    fft_block(q, mr, mi, xr, xi, more);
    f.mul_rows(mr, mi, p.m, p.filter.data());
    fft_block(q, mi, mr, xi, xr, more);
    f.mul_rows(mr, mi, p.n, p.chirp.data());
    std::memcpy(re, mr, bytes);
    std::memcpy(im, mi, bytes);
    return;
  }
  float *xr = re, *xi = im, *yr = wr, *yi = wi;
  int64_t s = L;
  for (const auto& st : p.stages) {
    f.pass(st.p, st.m, s, st.tw.data(), st.cs.data(), xr, xi, yr, yi);
    std::swap(xr, yr);
    std::swap(xi, yi);
    s *= st.p;
  }
  if (xr != re) {
    std::memcpy(re, xr, bytes);
    std::memcpy(im, xi, bytes);
  }
}

// x as n1 rows of n2: the n2 columns' transforms (length n1) times w^{k1 n2} into t, then the
// n1 rows' transforms (length n2) of t, written transposed: y[k1 + n1 k2].
void fft_four_step(const FftPlan& p, const float* x, float* y, bool inverse, float scale) {
  const FftLoops& f = fft_loops();
  constexpr int64_t L = kFftLanes;
  int64_t n1 = p.n1, n2 = p.n2;
  std::unique_ptr<float[]> t(new float[size_t(2 * n1 * n2)]);
  float *tr = t.get(), *ti = tr + n1 * n2;
  parallel_for((n2 + L - 1) / L, 1, [&](int64_t begin, int64_t end) {
    FftScratch s(*p.p1);
    for (int64_t c = begin * L; c < std::min(end * L, n2); c += L) {
      int valid = int(std::min(L, n2 - c));
      f.gather(x + 2 * c, x + 2 * c + 1, 2 * n2, 2, n1, valid, s.re, s.im);
      float *r = inverse ? s.im : s.re, *i = inverse ? s.re : s.im;
      fft_block(*p.p1, r, i, inverse ? s.wi : s.wr, inverse ? s.wr : s.wi, s.extra);
      f.mul_cells(r, i, n1, p.tw4r.data() + c, p.tw4i.data() + c, p.n2p);
      f.scatter(s.re, s.im, n1, valid, 1.0f, tr + c, ti + c, n2, 1);
    }
  });
  parallel_for((n1 + L - 1) / L, 1, [&](int64_t begin, int64_t end) {
    FftScratch s(*p.p2);
    for (int64_t k = begin * L; k < std::min(end * L, n1); k += L) {
      int valid = int(std::min(L, n1 - k));
      f.gather(tr + k * n2, ti + k * n2, 1, n2, n2, valid, s.re, s.im);
      if (inverse)
        fft_block(*p.p2, s.im, s.re, s.wi, s.wr, s.extra);
      else
        fft_block(*p.p2, s.re, s.im, s.wr, s.wi, s.extra);
      f.scatter(s.re, s.im, n2, valid, scale, y + 2 * k, y + 2 * k + 1, 2 * n1, 2);
    }
  });
}

}  // namespace nuvec::cpu
