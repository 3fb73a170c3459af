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

void FftScratch::run(const FftPlan& p, bool inverse) {
  bool moved = inverse ? fft_block(p, im, re, wi, wr, extra) : fft_block(p, re, im, wr, wi, extra);
  if (moved) std::swap(re, wr), std::swap(im, wi);
}

bool fft_block(const FftPlan& p, float* re, float* im, float* wr, float* wi, float* extra) {
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
    if (fft_block(q, mr, mi, xr, xi, more)) std::swap(mr, xr), std::swap(mi, xi);
    f.mul_rows(mr, mi, p.m, p.filter.data());
    if (fft_block(q, mi, mr, xi, xr, more)) std::swap(mr, xr), std::swap(mi, xi);
    f.mul_rows(mr, mi, p.n, p.chirp.data());
    std::memcpy(re, mr, bytes);
    std::memcpy(im, mi, bytes);
    return false;
  }
  float *xr = re, *xi = im, *yr = wr, *yi = wi;
  int64_t s = L;
  for (const auto& st : p.stages) {
    f.pass(st.p, st.m, s, st.tw.data(), st.cs.data(), xr, xi, yr, yi);
    std::swap(xr, yr);
    std::swap(xi, yi);
    s *= st.p;
  }
  return xr != re;
}

// x as n1 rows of n2: the n2 columns' transforms (length n1) times w^{k1 n2} into t, then the
// n1 rows' transforms (length n2) of t, written transposed: y[k1 + n1 k2].
namespace {
void four_step(const FftPlan& p, const float* x, float* y, bool inverse, float scale) {
  const FftLoops& f = fft_loops();
  constexpr int64_t L = kFftLanes;
  int64_t n1 = p.n1, n2 = p.n2;
  FftBig t = fft_big(size_t(2 * n1 * n2));
  float *tr = t.get(), *ti = tr + n1 * n2;
  fft_advise_huge(y, size_t(2 * n1 * n2) * sizeof(float));
  parallel_for((n2 + L - 1) / L, 1, [&](int64_t begin, int64_t end) {
    FftScratch s(*p.p1);
    for (int64_t c = begin * L; c < std::min(end * L, n2); c += L) {
      int valid = int(std::min(L, n2 - c));
      f.gather(x + 2 * c, x + 2 * c + 1, 2 * n2, 2, n1, valid, s.re, s.im);
      s.run(*p.p1, inverse);
      // The twiddles of the inverse are the conjugates: the product in the swapped block.
      f.mul_cells(inverse ? s.im : s.re, inverse ? s.re : s.im, n1, p.tw4r.get() + c * n1, p.tw4i.get() + c * n1,
                  kFftLanes);
      f.scatter(s.re, s.im, n1, valid, 1.0f, tr + c, ti + c, n2, 1);
    }
  });
  parallel_for((n1 + L - 1) / L, 1, [&](int64_t begin, int64_t end) {
    FftScratch s(*p.p2);
    for (int64_t k = begin * L; k < std::min(end * L, n1); k += L) {
      int valid = int(std::min(L, n1 - k));
      f.gather(tr + k * n2, ti + k * n2, 1, n2, n2, valid, s.re, s.im);
      s.run(*p.p2, inverse);
      f.scatter(s.re, s.im, n2, valid, scale, y + 2 * k, y + 2 * k + 1, 2 * n1, 2);
    }
  });
}


// Bluestein on one sequence: a = x chirp (zero-padded to m), its transform times the filter, the
// inverse transform (the forward one of the swapped parts), times the chirp. The inverse of the
// whole is the forward one of the swapped parts. Each element's products are independent.
void bluestein(const FftPlan& p, const float* x, float* y, bool inverse, float scale) {
  int64_t n = p.n, m = p.m;
  FftBig a = fft_big(size_t(2 * m)), b = fft_big(size_t(2 * m));
  const float* c = p.chirp.data();
  const float* f = p.filter.data();
  float *pa = a.get(), *pb = b.get();
  constexpr int64_t kGrain = 1 << 16;
  parallel_for(m, kGrain, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      float xr = k < n ? x[2 * k + inverse] : 0.0f, xi = k < n ? x[2 * k + !inverse] : 0.0f;
      float cr = k < n ? c[2 * k] : 0.0f, ci = k < n ? c[2 * k + 1] : 0.0f;
      pa[2 * k] = xr * cr - xi * ci, pa[2 * k + 1] = xr * ci + xi * cr;
    }
  });
  four_step(*p.sub, pa, pb, false, 1.0f);
  parallel_for(m, kGrain, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {  // the product, parts swapped
      float vr = pb[2 * k], vi = pb[2 * k + 1], fr = f[2 * k], fi = f[2 * k + 1];
      pa[2 * k] = vr * fi + vi * fr, pa[2 * k + 1] = vr * fr - vi * fi;
    }
  });
  four_step(*p.sub, pa, pb, false, 1.0f);
  parallel_for(n, kGrain, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      float vr = pb[2 * k + 1], vi = pb[2 * k], cr = c[2 * k], ci = c[2 * k + 1];
      float zr = (vr * cr - vi * ci) * scale, zi = (vr * ci + vi * cr) * scale;
      y[2 * k + inverse] = zr, y[2 * k + !inverse] = zi;
    }
  });
}
}  // namespace

bool fft_is_long(const FftPlan& p) { return p.n1 > 0 || (p.m > 0 && p.sub->n1 > 0); }

void fft_long(const FftPlan& p, const float* x, float* y, bool inverse, float scale) {
  if (p.n1)
    four_step(p, x, y, inverse, scale);
  else
    bluestein(p, x, y, inverse, scale);
}

}  // namespace nuvec::cpu
