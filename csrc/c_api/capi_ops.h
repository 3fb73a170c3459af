// What the generated op functions (tools/gen_capi.py) call: the argument conversions, kept as
// plain functions so the hundred-odd wrappers stay cheap to compile.
#pragma once
#include "c_api/capi.h"
#include "core/ops.h"
#include "core/ops/fp8.h"
#include "core/ops/gathered.h"
#include "core/ops/hadamard.h"
#include "core/ops/quantized.h"
#include "core/ops/sort_composed.h"
#include "core/ops/unique.h"

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
inline std::optional<int> OPTI(nuvec_optional_int v) { return v.has_value ? std::optional(v.value) : std::nullopt; }
inline std::optional<Dtype> OPTD(nuvec_optional_dtype v) {
  return v.has_value ? std::optional(D(v.value)) : std::nullopt;
}
inline std::string STR(const char* p) {
  if (!p) throw std::invalid_argument("a string argument is NULL");
  return p;
}
// searchsorted's side, "left" or "right", as its `right` flag.
inline bool RIGHT(const std::string& side) {
  if (side != "left" && side != "right")
    throw std::invalid_argument("side must be 'left' or 'right', not '" + side + "'");
  return side == "right";
}
inline Stream S(nuvec_stream s) { return get(s, "stream argument"); }
inline std::vector<std::pair<int64_t, int64_t>> PAIRS(const int* p, size_t n) {
  if (n % 2) throw std::invalid_argument("pad_width holds a (before, after) pair per axis: an even count");
  std::vector<std::pair<int64_t, int64_t>> v;
  for (size_t i = 0; i < n; i += 2) v.emplace_back(p[i], p[i + 1]);
  return v;
}
inline std::vector<Array> VEC(std::pair<Array, Array> p) { return {std::move(p.first), std::move(p.second)}; }
// numpy.convolve of two 1-D arrays (mode full, same or valid), as nuvec.convolve: c_api/convolve.cpp.
Array convolve(const Array& a, const Array& v, const std::string& mode, Stream s);
// nonzero(a): a's flags are evaluated now (the result's size depends on them): c_api/nonzero.cpp.
std::vector<Array> nonzero(const Array& a, Stream s);
inline int put(nuvec_array* res, Array v) { return set(res, std::move(v)); }
inline int put(nuvec_vector_array* res, std::vector<Array> v) { return set(res, std::move(v)); }

}  // namespace nuvec::capi
