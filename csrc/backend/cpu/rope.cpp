// The CPU kernels of rope and norm_rope: a table of each position's cos / sin (one row per
// position, or per batch row and position for per-row offsets), then the rows split among
// threads by the shape alone; each row is computed alone from its table row.
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/fast_norms.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "core/errors.h"
#include "core/primitives/rope.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t kGrain = int64_t(1) << 14;  // elements per piece below which one thread runs it

// The cos and sin of every (batch row, position) a call reads, (batches * t, half) each.
struct Angles { std::vector<float> cs, sn; };

// What a table depends on: equal keys give equal tables. The frequencies as given (their base, or
// the freqs input's values): their inverses are computed only for a new table (a decode step's
// 60 rope calls spent 1.3 us each on the base's 32 powers before finding their table kept).
struct AnglesKey {
  int64_t half, t;
  std::vector<int64_t> offset;
  float base;
  std::vector<float> freqs;  // empty: the powers of base
  float scale;
  bool inverse;
  bool operator==(const AnglesKey&) const = default;
};

// The last few tables made: a model's layers rotate the same positions by the same frequencies
// (a prompt's forward pass through SmolLM2 makes 60 equal tables, one per rope call), and making
// one (float64 angles, fdlibm's kernels) costs a fifth of a (1, 32, 2048, 128) rope.
std::shared_ptr<const Angles> angles_for(AnglesKey key) {
  constexpr size_t kKept = 4, kKeptFloats = size_t(1) << 22;  // at most 4 tables and 32 MiB
  static std::mutex mu;
  static std::vector<std::pair<AnglesKey, std::shared_ptr<const Angles>>> kept;  // most recent last
  {
    std::lock_guard<std::mutex> l(mu);
    for (size_t i = 0; i < kept.size(); ++i)
      if (kept[i].first == key) {
        auto hit = kept[i];
        kept.erase(kept.begin() + std::ptrdiff_t(i));
        kept.push_back(hit);
        return hit.second;
      }
  }
  auto a = std::make_shared<Angles>();
  const int64_t rows = int64_t(key.offset.size()) * key.t, half = key.half;
  std::vector<double> inv(static_cast<size_t>(half));  // the frequencies' inverses
  for (int64_t i = 0; i < half; ++i)
    inv[size_t(i)] =
        key.freqs.empty() ? std::pow(double(key.base), -double(i) / double(half)) : 1.0 / double(key.freqs[size_t(i)]);
  a->cs.resize(size_t(rows * half)), a->sn.resize(a->cs.size());
  auto angles = NUVEC_FOR_ISA(rope_angles);
  parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(half, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      double pos = double(key.offset[size_t(r / key.t)] + r % key.t) * double(key.scale);
      angles(inv.data(), half, pos, key.inverse, &a->cs[size_t(r * half)], &a->sn[size_t(r * half)]);
    }
  });
  std::lock_guard<std::mutex> l(mu);
  kept.emplace_back(std::move(key), a);
  size_t floats = 0;
  for (const auto& e : kept) floats += 2 * e.second->cs.size();
  while (kept.size() > kKept || floats > kKeptFloats) {  // the oldest go (a long prompt's: at once)
    floats -= 2 * kept.front().second->cs.size();
    kept.erase(kept.begin());
  }
  return a;
}

// A call's table. `first` is the index of the offsets input (then freqs) among the primitive's
// inputs.
struct RopeTable {
  int64_t half, t, batches;     // batches: 1 unless the offsets are per batch row
  std::vector<int64_t> offset;  // per table batch row
  std::shared_ptr<const Angles> angles;
  const float *cs, *sn;  // (batches * t, half)

  RopeTable(const RopeParams& p, const std::vector<Array>& in, size_t first, int64_t b, int64_t t_)
      : half(p.dims / 2), t(t_), batches(1), offset{p.offset} {
    size_t k = first;
    if (p.has_offsets) {
      Array o = row_contiguous(in[k++]);
      batches = o.ndim() == 1 ? b : 1;
      if (o.size() != batches)  // a shapeless compiled call can meet a new batch size
        throw KernelError(EvalErrorKind::other,
                          "rope: " + std::to_string(o.size()) + " offsets for " + std::to_string(b) + " batch rows");
      offset.assign(o.data<int32_t>(), o.data<int32_t>() + batches);
    }
    std::vector<float> freqs;
    if (p.has_freqs) {
      Array f = row_contiguous(in[k]);
      freqs.assign(f.data<float>(), f.data<float>() + half);
    }
    angles = angles_for({half, t, offset, p.has_freqs ? 0.0f : float(p.base), std::move(freqs), p.scale, p.inverse});
    cs = angles->cs.data(), sn = angles->sn.data();
  }
  // The table row of row r of x (B, ..., T, D), with rows_per_batch rows per batch row.
  int64_t row_of(int64_t r, int64_t rows_per_batch) const {
    return (batches > 1 ? (r / rows_per_batch) * t : 0) + r % t;
  }
};

void to_f32(const char* p, Dtype dt, int64_t d, float* v) {
  for (int64_t j = 0; j < d; ++j) v[j] = load_float(p, dt, j);
}
void from_f32(const float* v, Dtype dt, int64_t d, char* p) {
  for (int64_t j = 0; j < d; ++j) store_float(p, dt, j, v[j]);
}

void eval_rope(const Rope& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& y = out[0];
  y.allocate_contiguous();
  const RopeParams& p = prim.params();
  int64_t d = y.shape(-1), t = y.shape(-2), rows = d ? y.size() / d : 0;
  if (rows == 0) return;
  Array x = row_contiguous(in[0]);
  RopeTable table(p, in, 1, y.shape(0), t);
  int64_t per_batch = rows / y.shape(0), item = int64_t(y.itemsize());
  auto rotate = NUVEC_FOR_ISA(rope_row);
  bool f32 = y.dtype() == Dtype::float32, stream = f32 && stream_output(y.nbytes());
  parallel_for(rows, std::max<int64_t>(1, kGrain / d), [&](int64_t r0, int64_t r1) {
    std::vector<float> buf(f32 ? 0 : size_t(d));
    for (int64_t r = r0; r < r1; ++r) {
      const char* xr = x.data_bytes() + r * d * item;
      char* yr = y.data_bytes() + r * d * item;
      int64_t k = table.row_of(r, per_batch) * table.half;
      if (f32) {
        rotate(reinterpret_cast<const float*>(xr), reinterpret_cast<float*>(yr), table.cs + k, table.sn + k, table.half,
               d, p.traditional, stream);
        continue;
      }
      to_f32(xr, x.dtype(), d, buf.data());
      rotate(buf.data(), buf.data(), table.cs + k, table.sn + k, table.half, d, p.traditional, false);
      from_f32(buf.data(), y.dtype(), d, yr);
    }
    if (stream) stream_fence();
  });
}

// The cache output takes the cache input's buffer when nothing else holds it (each sibling
// output holds the inputs), else a copy; then each row of y is also written at its cache row.
void eval_norm_rope(const NormRope& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const RopeParams& p = prim.params();
  size_t ci = prim.weighted() ? 2 : 1;
  Array &y = out[0], &cache = out[1];
  y.allocate_contiguous();
  donate_or_copy(in[ci], cache, long(out.size()));
  int64_t d = y.shape(-1), t = y.shape(-2), s = cache.shape(-2), rows = d ? y.size() / d : 0;
  if (rows == 0) return;
  RopeTable table(p, in, ci + 1, y.shape(0), t);
  for (int64_t o : table.offset)
    if (o < 0 || o + t > s)
      throw KernelError(EvalErrorKind::index, "norm_rope: rows " + std::to_string(o) + " to " + std::to_string(o + t) +
                                                  " do not fit a cache of " + std::to_string(s) + " rows");
  Array x = row_contiguous(in[0]);
  const float* w = nullptr;
  Array wc;
  if (prim.weighted()) wc = row_contiguous(in[1]), w = wc.data<float>();
  int64_t per_batch = rows / y.shape(0), item = int64_t(y.itemsize());
  auto rms = NUVEC_FOR_ISA(rms_row);
  auto rotate = NUVEC_FOR_ISA(rope_row);
  Dtype dt = y.dtype();
  parallel_for(rows, std::max<int64_t>(1, kGrain / d), [&](int64_t r0, int64_t r1) {
    std::vector<float> buf(size_t(2 * d));
    float *bx = buf.data(), *by = bx + d;
    for (int64_t r = r0; r < r1; ++r) {
      const char* xb = x.data_bytes() + r * d * int64_t(x.itemsize());
      const float* xr = x.dtype() == Dtype::float32 ? reinterpret_cast<const float*>(xb) : bx;
      if (xr == bx) to_f32(xb, x.dtype(), d, bx);
      char* yr = y.data_bytes() + r * d * item;
      float* yf = dt == Dtype::float32 ? reinterpret_cast<float*>(yr) : by;  // float32: in place
      rms(xr, w, yf, d, prim.eps(), false);
      if (dt != Dtype::float32) from_f32(by, dt, d, yr), to_f32(yr, dt, d, by);  // the norm's rounding
      int64_t k = table.row_of(r, per_batch) * table.half;
      rotate(yf, yf, table.cs + k, table.sn + k, table.half, d, p.traditional, false);
      if (dt != Dtype::float32) from_f32(by, dt, d, yr);
      int64_t b = table.batches > 1 ? r / per_batch : 0;
      int64_t cache_row = (r / t) * s + table.offset[size_t(b)] + r % t;
      std::memcpy(cache.data_bytes() + cache_row * d * item, yr, size_t(d * item));
    }
  });
}

}  // namespace

void register_rope_kernels(Backend& b) {
  b.add<Rope, eval_rope>();
  b.add<NormRope, eval_norm_rope>();
}

}  // namespace nuvec::cpu
