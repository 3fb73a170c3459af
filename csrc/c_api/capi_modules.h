// What the generated functions of nuvec.random, nuvec.linalg, nuvec.fft and nuvec.fast
// (tools/gen_capi_modules.py) call beyond the ops' conversions (c_api/capi_ops.h).
#pragma once
#include "c_api/capi_ops.h"
#include "core/ops/attention.h"
#include "core/ops/fast_norms.h"
#include "core/ops/fast_rope.h"
#include "core/ops/fft.h"
#include "core/ops/linalg.h"
#include "core/ops/linalg_composed.h"
#include "core/ops/linalg_spectral.h"
#include "core/ops/paged.h"
#include "core/ops/random.h"
#include "core/primitives/fast_loss.h"

namespace nuvec::capi {

// The key a sampler uses: `key`'s array, or, for an empty handle, the next key of the calling
// thread's global state (as MLX's key=None): c_api/random.cpp.
Array KEY(nuvec_array key, Stream s);
// Seeds the calling thread's global state with random::key(seed).
void seed_global(uint64_t seed);

inline std::optional<Shape> OPT_SHAPE(const int* p, size_t n) { return p ? std::optional(SHAPE(p, n)) : std::nullopt; }
inline std::optional<float> OPTF(nuvec_optional_float v) { return v.has_value ? std::optional(v.value) : std::nullopt; }
// A scalar float32 array of v, or none when v is the parameter's default (mlx-c's normal takes
// float bounds: 0 and 1 are Python's loc=None, scale=None).
inline std::optional<Array> UNLESS(float v, float default_value) {
  return v == default_value ? std::nullopt : std::optional(scalar_array(double(v), Dtype::float32));
}
inline FftNorm FFT_NORM(nuvec_fft_norm n) {
  switch (n) {
    case NUVEC_FFT_NORM_BACKWARD: return FftNorm::backward;
    case NUVEC_FFT_NORM_ORTHO: return FftNorm::ortho;
    case NUVEC_FFT_NORM_FORWARD: return FftNorm::forward;
  }
  throw std::invalid_argument("norm must be one of NUVEC_FFT_NORM_BACKWARD, _ORTHO or _FORWARD");
}
// eigh's UPLO: MLX reads the upper triangle unless it starts with "L".
inline bool UPPER(const std::string& uplo) { return uplo.rfind('L', 0) != 0; }
// mlx-c's attention mask mode: "" (none; with mask_arr, the array), "causal" or "array".
inline std::string MASK_MODE(const std::string& mode, const std::optional<Array>& mask_arr) {
  if (mode == "array" && !mask_arr) throw std::invalid_argument("mask_mode 'array' needs mask_arr");
  if (mode == "causal" && mask_arr) throw std::invalid_argument("mask_mode 'causal' takes no mask_arr");
  return mode.empty() && mask_arr ? "array" : mode;
}

}  // namespace nuvec::capi
