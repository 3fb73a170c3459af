// Random numbers: MLX's counter-based stream of Threefry-2x32 bits for a key.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// What the stream's 32-bit words become (backend/cpu/random_kernels.h gives the formulas):
// raw bits, or float32 uniform, erfinv-of-uniform and normal samples fused onto the generator.
enum class RandomKind { bits, uniform, erfinv, normal };

// input: a key, uint32 [2]. Output: `width`-byte unsigned ints (bits) or float32, shaped as
// recorded. The B output bytes come from W = ceil(B / 4) words and h = ceil(W / 2): words j
// and j + h are the two outputs of threefry(key, (j, j + h)) for j < W / 2, and for odd W the
// middle word is the first output of threefry(key, (W / 2, 0)) (MLX's layout, so the bits of
// an element depend on how many are drawn).
class RandomBits : public Primitive {
 public:
  RandomBits(RandomKind kind, int width) : kind_(kind), width_(width) {}
  const char* name() const override;
  NUVEC_KERNEL_SLOT
  bool is_equivalent(const Primitive& other) const override;
  NUVEC_VMAP_RULE
  RandomKind kind() const { return kind_; }
  int width() const { return width_; }

 private:
  RandomKind kind_;
  int width_;
};

inline const char* RandomBits::name() const {
  switch (kind_) {
    case RandomKind::bits: return "bits";
    case RandomKind::uniform: return "uniform";
    case RandomKind::erfinv: return "erfinv_uniform";
    case RandomKind::normal: return "normal";
  }
  return "random";
}

inline bool RandomBits::is_equivalent(const Primitive& other) const {
  auto* o = dynamic_cast<const RandomBits*>(&other);
  return o && o->kind_ == kind_ && o->width_ == width_;
}

}  // namespace nuvec
