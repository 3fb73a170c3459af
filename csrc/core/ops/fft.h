// The discrete Fourier transforms of MLX's mx.fft (docs/fft.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/ops/common.h"

namespace nuvec {

enum class FftNorm { backward, ortho, forward };
FftNorm fft_norm(const std::string& norm, const char* op);  // OpError for other names

// MLX's fftn / ifftn / rfftn / irfftn: over `axes` (all when absent; `n` needs them), each
// cropped or zero-padded to n[i] (the output's length for irfftn, default 2 (m - 1) on the last
// axis), scaled as `norm` says. complex64 out, float32 for irfftn; no axes: `a` itself.
Array fftn(const Array& a, const std::optional<Shape>& n, const std::optional<std::vector<int>>& axes, bool real,
           bool inverse, FftNorm norm, Stream s, const char* op);

// The shift of each of `axes` (all when absent) by n / 2 (fftshift) or (n + 1) / 2 (ifftshift).
Array fftshift(const Array& a, const std::optional<std::vector<int>>& axes, bool inverse, Stream s);

// The sample frequencies of an n-point DFT with sample spacing d (float32): fftfreq's, or the
// n / 2 + 1 non-negative ones of rfftfreq (`real`).
Array fftfreq(int64_t n, double d, bool real, Stream s);

}  // namespace nuvec
