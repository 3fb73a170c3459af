// The quantization family: quantize, dequantize and products with quantized weights, as MLX's
// (docs/quantization.md). A weight row of K values is stored as packed uint32 words (one
// little-endian bit stream of `bits`-bit codes per row) with one scale (and, in affine mode, one
// bias) per `group_size` values.
#pragma once
#include <optional>
#include <string>
#include <typeinfo>

#include "core/primitive.h"

namespace nuvec {

enum class QuantMode { affine, mxfp4, mxfp8, nvfp4 };

struct QuantSpec {
  int group_size = 64, bits = 4;
  QuantMode mode = QuantMode::affine;
  bool operator==(const QuantSpec&) const = default;
  bool has_biases() const { return mode == QuantMode::affine; }
  // Packed uint32 words per row of k values.
  int64_t words(int64_t k) const { return k * bits / 32; }
};

// The mode named `mode` with MLX's defaults for the sizes left out; raises OpError for a mode,
// group size or bit width MLX refuses (`op` names the caller in the message).
QuantSpec quant_spec(const std::string& mode, std::optional<int> group_size, std::optional<int> bits, const char* op);
const char* mode_name(QuantMode m);

// Input w (..., K) floating; outputs the packed words (..., K * bits / 32) uint32, the scales
// (..., K / group_size) and, in affine mode, the biases, of w's dtype (affine) or uint8 (the
// floating-point modes' 8-bit scales). Not differentiable.
class Quantize : public Primitive {
 public:
  explicit Quantize(QuantSpec q) : q_(q) {}
  const char* name() const override { return "quantize"; }
  NUVEC_KERNEL_SLOT
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Quantize*>(&o);
    return p && p->q_ == q_;
  }
  const QuantSpec& spec() const { return q_; }

 private:
  QuantSpec q_;
};

// Inputs: the packed words, scales and (affine) biases, one batch shape; output (..., K) of the
// node's dtype. Affine: w = round_S(round_S(q * scale) + bias) computed in the scales' dtype S
// (then the biases' promotion) as MLX's op chain rounds it, then converted. Differentiable in the
// scales and biases of affine mode (as MLX: the codes, and ones, per group).
class Dequantize : public Primitive {
 public:
  explicit Dequantize(QuantSpec q) : q_(q) {}
  const char* name() const override { return "dequantize"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Dequantize*>(&o);
    return p && p->q_ == q_;
  }
  const QuantSpec& spec() const { return q_; }

 private:
  QuantSpec q_;
};

// What both quantized products carry: the weight's format, its orientation, and x's precision:
// activation_bits 0 (float32, MLX's) or 8 (nuvec's own: x rounded to int8 per group for products
// of at most kRowIndependentRows rows, backend/cpu/quantized.h; gradients as the float product's).
class QuantizedProduct : public Primitive {
 public:
  QuantizedProduct(QuantSpec q, bool transpose, int activation_bits = 0)
      : q_(q), transpose_(transpose), activation_bits_(activation_bits) {}
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const QuantizedProduct*>(&o);
    return p && typeid(*p) == typeid(*this) && p->q_ == q_ && p->transpose_ == transpose_ &&
           p->activation_bits_ == activation_bits_;
  }
  const QuantSpec& spec() const { return q_; }
  bool transpose() const { return transpose_; }
  int activation_bits() const { return activation_bits_; }

 protected:  // the rules of the products (quantized_grad.cpp, quantized_vmap.cpp) read them
  QuantSpec q_;
  bool transpose_;
  int activation_bits_;
};

// Inputs: x (..., M, K) float32, the packed words w, scales and (affine) biases of the weight:
// transposed, w (..., N, K * bits / 32) and scales (..., N, K / group_size) for x @ W.T; else
// w (..., K, N * bits / 32) and scales (..., K, N / group_size) for x @ W. Either w is 2-D (every
// row of x uses it) or every input has the output's batch shape (broadcast views). Output
// (..., M, N) of the node's dtype, computed in float32 (backend/cpu/quantized.h gives the
// sequence of operations, so each row has the bits of its one-row product).
class QuantizedMatmul : public QuantizedProduct {
 public:
  using QuantizedProduct::QuantizedProduct;
  const char* name() const override { return "quantized_matmul"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
};

// quantized_matmul with a gather along the batch: inputs x (X..., M, K) float32, w, scales, biases
// (W..., ...) as quantized_matmul's, then lhs and rhs uint32 indices of one shape I into the
// flattened batches of x and w; output (I..., M, N): item i is x[lhs_i] times weight rhs_i, with
// the bits of that quantized_matmul (so each row has its one-row bits).
class GatherQmm : public QuantizedProduct {
 public:
  using QuantizedProduct::QuantizedProduct;
  const char* name() const override { return "gather_qmm"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
};

// Raises KernelError(index) for the first of gather_qmm's `items` index pairs outside the x and
// weight batches (x_items and w_items items): every backend checks before it computes.
void check_gather_qmm_indices(const uint32_t* lhs, const uint32_t* rhs, int64_t items, int64_t x_items,
                              int64_t w_items);

}  // namespace nuvec
