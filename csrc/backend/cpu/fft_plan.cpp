// FFT plans: the radices of the Stockham steps (8s for short lengths, 4s, then 2, 3, 5 and other
// primes up to kFftMaxRadix), Bluestein's chirp and filter for lengths with a larger prime factor,
// the four-step split of long lengths, and every twiddle (angles reduced exactly in integers, then
// cos and sin in double, rounded once to float).
#include "backend/cpu/fft_plan.h"

#include <sys/mman.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numbers>

#include "backend/cpu/fft.h"
#include "backend/cpu/kernels.h"

namespace nuvec::cpu {
namespace {

// e^{-2 pi i num / den}, num reduced modulo den first.
void push_root(std::vector<float>& v, int64_t num, int64_t den) {
  num %= den;
  double a = -2.0 * std::numbers::pi * double(num) / double(den);
  v.push_back(float(std::cos(a)));
  v.push_back(float(std::sin(a)));
}

std::vector<int> radices(int64_t n) {
  std::vector<int> r;
  // Radix 8 saves passes while the block (n x 8 lanes) stays in the L2 cache; past that its 32
  // streams conflict there more than radix 4's 16 (measured: 1024 faster, 4096 slower with 8s).
  if (n <= 2048)
    while (n % 8 == 0) r.push_back(8), n /= 8;
  while (n % 4 == 0) r.push_back(4), n /= 4;
  for (int p = 2; p <= kFftMaxRadix && n > 1; ++p)
    while (n % p == 0) r.push_back(p), n /= p;
  if (n > 1) return {};  // a prime factor above kFftMaxRadix
  return r;
}

// Bluestein's transform length: the 2^a 3^b 5^c at least n of least estimated cost, a step of
// radix 4 or 2 counting 1 per point and one of 3 or 5 counting 1.5 (their butterflies cost more
// per level), so 2048 beats 2025.
int64_t smooth_at_least(int64_t n) {
  int64_t best = 0;
  double best_cost = 0;
  for (int64_t a = 1; a < 4 * n; a *= 2)
    for (int64_t b = a, nb = 0; b < 4 * n; b *= 3, ++nb)
      for (int64_t c = b, nc = 0; c < 4 * n; c *= 5, ++nc) {
        if (c < n) continue;
        double levels = std::ceil(std::log2(double(a)) / 2) + 1.5 * double(nb + nc);
        double cost = double(c) * levels;
        if (!best || cost < best_cost) best = c, best_cost = cost;
      }
  return best;
}

void add_stages(FftPlan& p, const std::vector<int>& rs) {
  int64_t len = p.n;
  for (int r : rs) {
    FftPlan::Stage st{r, len / r, {}, {}};
    st.tw.reserve(size_t(2 * (r - 1) * st.m));
    for (int64_t j = 0; j < st.m; ++j)
      for (int k = 1; k < r; ++k) push_root(st.tw, j * k, len);
    if (r > 5 && r != 8)
      for (int k = 0; k < r; ++k) {  // cos and sin of +2 pi k / r
        double a = 2.0 * std::numbers::pi * k / r;
        st.cs.push_back(float(std::cos(a)));
        st.cs.push_back(float(std::sin(a)));
      }
    p.stages.push_back(std::move(st));
    len /= r;
  }
}

void add_bluestein(FftPlan& p) {
  int64_t n = p.n;
  p.m = smooth_at_least(2 * n - 1);
  p.sub = std::shared_ptr<const FftPlan>(&fft_plan(p.m), [](const FftPlan*) {});
  for (int64_t k = 0; k < n; ++k) push_root(p.chirp, k * k % (2 * n), 2 * n);
  // b_j = conj(chirp_|j|) for |j| < n, wrapped modulo m; its transform, / m, in double.
  std::vector<double> br(size_t(p.m), 0.0), bi(size_t(p.m), 0.0);
  for (int64_t k = 0; k < n; ++k) {
    double a = std::numbers::pi * double(k * k % (2 * n)) / double(n);
    br[size_t(k)] = br[size_t((p.m - k) % p.m)] = std::cos(a);
    bi[size_t(k)] = bi[size_t((p.m - k) % p.m)] = std::sin(a);
  }
  // A direct O(m log m) transform in double: radix-2/3/5 recursion on the smooth length, its
  // twiddles read from one table of the m roots of unity.
  std::vector<double> fr(size_t(p.m)), fi(size_t(p.m)), rc(size_t(p.m)), rs(size_t(p.m));
  for (int64_t j = 0; j < p.m; ++j) {
    double a = -2.0 * std::numbers::pi * double(j) / double(p.m);
    rc[size_t(j)] = std::cos(a), rs[size_t(j)] = std::sin(a);
  }
  auto dft = [&](auto&& self, const double* xr, const double* xi, int64_t len, int64_t stride, double* yr,
                 double* yi) -> void {
    if (len == 1) {
      yr[0] = xr[0], yi[0] = xi[0];
      return;
    }
    int64_t r = len % 2 == 0 ? 2 : len % 3 == 0 ? 3 : 5, sub = len / r, step = p.m / len;
    std::vector<double> tr(static_cast<size_t>(len)), ti(static_cast<size_t>(len));
    for (int64_t q = 0; q < r; ++q)
      self(self, xr + q * stride, xi + q * stride, sub, stride * r, tr.data() + q * sub, ti.data() + q * sub);
    for (int64_t k = 0; k < len; ++k) {
      double sr = 0, si = 0;
      for (int64_t q = 0; q < r; ++q) {
        size_t w = size_t(q * k % len * step);
        double c = rc[w], s = rs[w], vr = tr[size_t(q * sub + k % sub)], vi = ti[size_t(q * sub + k % sub)];
        sr += vr * c - vi * s;
        si += vr * s + vi * c;
      }
      yr[k] = sr, yi[k] = si;
    }
  };
  dft(dft, br.data(), bi.data(), p.m, 1, fr.data(), fi.data());
  for (int64_t k = 0; k < p.m; ++k) {
    p.filter.push_back(float(fr[size_t(k)] / double(p.m)));
    p.filter.push_back(float(fi[size_t(k)] / double(p.m)));
  }
}

void add_four_step(FftPlan& p) {
  int64_t n = p.n, n1 = 0;
  for (int64_t d = 8; d * d <= n; ++d)
    if (n % d == 0) n1 = d;
  if (!n1) return;
  p.n1 = n1, p.n2 = n / n1, p.n2p = (p.n2 + kFftLanes - 1) / kFftLanes * kFftLanes;
  p.p1 = std::shared_ptr<const FftPlan>(&fft_plan(p.n1), [](const FftPlan*) {});
  p.p2 = std::shared_ptr<const FftPlan>(&fft_plan(p.n2), [](const FftPlan*) {});
  p.tw4r = fft_big(size_t(n1 * p.n2p));
  p.tw4i = fft_big(size_t(n1 * p.n2p));
  std::fill(p.tw4r.get(), p.tw4r.get() + n1 * p.n2p, 0.0f);
  std::fill(p.tw4i.get(), p.tw4i.get() + n1 * p.n2p, 0.0f);
  std::vector<float> w;
  for (int64_t k1 = 0; k1 < n1; ++k1)
    for (int64_t j = 0; j < p.n2; ++j) {
      w.clear();
      push_root(w, k1 * j, n);
      size_t at = size_t(j / kFftLanes * n1 * kFftLanes + k1 * kFftLanes + j % kFftLanes);
      p.tw4r[at] = w[0];
      p.tw4i[at] = w[1];
    }
}

std::unique_ptr<FftPlan> make_plan(int64_t n) {
  auto p = std::make_unique<FftPlan>();
  p->n = n;
  std::vector<int> rs = radices(n);
  if (n > 1 && rs.empty())
    add_bluestein(*p);
  else
    add_stages(*p, rs);
  if (n > kFftDirectMax) add_four_step(*p);
  for (int64_t k = 0; 2 * k <= n; ++k) push_root(p->real_w, k, 2 * n);
  return p;
}

}  // namespace

void FftFree::operator()(float* p) const { std::free(p); }

constexpr size_t kHuge = size_t(2) << 20;

void fft_advise_huge(void* p, size_t bytes) {
#if defined(MADV_HUGEPAGE)
  auto a = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) / kHuge * kHuge;
  auto e = (reinterpret_cast<uintptr_t>(p) + bytes) / kHuge * kHuge;
  if (e > a) madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
#endif
}

FftBig fft_big(size_t floats) {
  size_t bytes = (floats * sizeof(float) + kHuge - 1) / kHuge * kHuge;
  auto* p = static_cast<float*>(std::aligned_alloc(kHuge, bytes));
  if (!p) throw std::bad_alloc();
  fft_advise_huge(p, bytes);
  return FftBig(p);
}

int64_t FftPlan::block_floats() const { return n * kFftLanes + kFftLanes; }

int64_t FftPlan::scratch_floats() const {
  return m ? 4 * sub->block_floats() + sub->scratch_floats() : 0;
}

const FftPlan& fft_plan(int64_t n) {
  static std::recursive_mutex mu;
  static std::map<int64_t, std::unique_ptr<FftPlan>> plans;
  std::lock_guard<std::recursive_mutex> lock(mu);
  auto it = plans.find(n);
  if (it != plans.end()) return *it->second;
  auto p = make_plan(n);
  return *plans.emplace(n, std::move(p)).first->second;
}

}  // namespace nuvec::cpu
