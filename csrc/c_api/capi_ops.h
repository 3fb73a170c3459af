// What the generated op functions (tools/gen_capi.py) call: the argument conversions, kept as
// plain functions so the hundred-odd wrappers stay cheap to compile.
#pragma once
#include "c_api/capi.h"
#include "core/ops.h"
#include "core/ops/gathered.h"
#include "core/ops/hadamard.h"

namespace nuvec::capi {

inline const Array& A(nuvec_array a) { return get(a, "array argument").array; }
inline std::optional<Array> OPT(nuvec_array a) { return a.ctx ? std::optional<Array>(A(a)) : std::nullopt; }
inline const std::vector<Array>& V(nuvec_vector_array v) { return get(v, "vector argument"); }
inline std::vector<int> INTS(const int* p, size_t n) { return std::vector<int>(p, p + n); }
inline std::optional<std::vector<int>> AXES(const int* p, size_t n) {
  return p ? std::optional(INTS(p, n)) : std::nullopt;
}
inline Shape SHAPE(const int* p, size_t n) { return Shape(p, p + n); }
inline Dtype D(nuvec_dtype d) { return to_dtype(d); }
inline Stream S(nuvec_stream s) { return get(s, "stream argument"); }
inline std::vector<std::pair<int64_t, int64_t>> PAIRS(const int* p, size_t n) {
  if (n % 2) throw std::invalid_argument("pad_width holds a (before, after) pair per axis: an even count");
  std::vector<std::pair<int64_t, int64_t>> v;
  for (size_t i = 0; i < n; i += 2) v.emplace_back(p[i], p[i + 1]);
  return v;
}
inline std::vector<Array> VEC(std::pair<Array, Array> p) { return {std::move(p.first), std::move(p.second)}; }
inline int put(nuvec_array* res, Array v) { return set(res, std::move(v)); }
inline int put(nuvec_vector_array* res, std::vector<Array> v) { return set(res, std::move(v)); }

}  // namespace nuvec::capi
