// Quantization ops: argument checks as MLX's, then one node each.
#include "core/ops/quantized.h"

#include <string>

#include "core/ops.h"

namespace nuvec {

const char* mode_name(QuantMode m) {
  switch (m) {
    case QuantMode::affine: return "affine";
    case QuantMode::mxfp4: return "mxfp4";
    case QuantMode::mxfp8: return "mxfp8";
    case QuantMode::nvfp4: return "nvfp4";
  }
  return "?";
}

QuantSpec quant_spec(const std::string& mode, std::optional<int> group_size, std::optional<int> bits, const char* op) {
  QuantSpec q;
  if (mode == "affine") {
    q = {group_size.value_or(64), bits.value_or(4), QuantMode::affine};
    if (q.group_size != 32 && q.group_size != 64 && q.group_size != 128)
      throw OpError(op, "The requested group size " + std::to_string(q.group_size) +
                            " is not supported. The supported group sizes are 32, 64, and 128.");
    if (q.bits < 1 || q.bits > 8 || q.bits == 7)
      throw OpError(op, "The requested number of bits " + std::to_string(q.bits) +
                            " is not supported. The supported bits are 1, 2, 3, 4, 5, 6 and 8.");
    return q;
  }
  struct Fixed {
    const char* name;
    QuantMode m;
    int g, b;
  };
  for (Fixed f : {Fixed{"mxfp4", QuantMode::mxfp4, 32, 4}, Fixed{"mxfp8", QuantMode::mxfp8, 32, 8},
                  Fixed{"nvfp4", QuantMode::nvfp4, 16, 4}}) {
    if (mode != f.name) continue;
    q = {group_size.value_or(f.g), bits.value_or(f.b), f.m};
    if (q.bits != f.b)
      throw OpError(op, mode + " quantization requires bits to be " + std::to_string(f.b) + " but got " +
                            std::to_string(q.bits) + ".");
    if (q.group_size != f.g)
      throw OpError(op, mode + " quantization requires group size " + std::to_string(f.g) + " but got " +
                            std::to_string(q.group_size) + ".");
    return q;
  }
  throw OpError(op, "Invalid quantization mode '" + mode + "'.");
}

namespace {

void check_global_scale(const std::optional<Array>& g, QuantSpec q, const char* op) {
  if (g && q.mode != QuantMode::nvfp4)
    throw OpError(op, "Global scale is only supported for 'nvfp4' quantization mode.");
  if (g) throw OpError(op, "nvfp4's global_scale is not supported by nuvec (docs/quantization.md)");
}

Shape with_last(Shape s, int64_t last) {
  s.back() = last;
  return s;
}

}  // namespace

std::vector<Array> quantize(const Array& w, QuantSpec q, const std::optional<Array>& global_scale, Stream s) {
  check_global_scale(global_scale, q, "quantize");
  if (!is_floating(w.dtype()))
    throw OpError("quantize",
                  std::string("Only real floating types can be quantized but w has type ") + name_of(w.dtype()) + ".");
  if (w.ndim() < 2)
    throw OpError("quantize", "The matrix to be quantized must have at least 2 dimension but it has only " +
                                  std::to_string(w.ndim()) + ".");
  int64_t k = w.shape(-1);
  if (k % q.group_size != 0 || k * q.bits % 32 != 0)
    throw OpError("quantize", "The last dimension of the matrix needs to be divisible by the quantization group size " +
                                  std::to_string(q.group_size) + ". However the provided  matrix has shape " +
                                  shape_str(w.shape()));
  Shape ws = with_last(w.shape(), q.words(k)), ss = with_last(w.shape(), k / q.group_size);
  Dtype sd = q.has_biases() ? w.dtype() : Dtype::uint8;
  std::vector<Shape> shapes{ws, ss};
  std::vector<Dtype> dtypes{Dtype::uint32, sd};
  if (q.has_biases()) shapes.push_back(ss), dtypes.push_back(sd);
  return Array::lazy_multi(std::move(shapes), std::move(dtypes), std::make_shared<Quantize>(q), {w}, s);
}

Array dequantize(const Array& w, const Array& scales, const std::optional<Array>& biases, QuantSpec q,
                 const std::optional<Array>& global_scale, std::optional<Dtype> dtype, Stream s) {
  check_global_scale(global_scale, q, "dequantize");
  if (q.has_biases() && !biases) throw OpError("dequantize", "Biases must be provided for affine quantization.");
  if (!q.has_biases() && scales.dtype() != Dtype::uint8)
    throw OpError("dequantize",
                  std::string("Scale type must be uint8 but received type ") + name_of(scales.dtype()) + ".");
  if (w.dtype() != Dtype::uint32) throw OpError("dequantize", "The matrix should be given as a uint32");
  if (w.ndim() < 2)
    throw OpError("dequantize", "The matrix to be dequantized must have at least 2 dimension but it has only " +
                                    std::to_string(w.ndim()) + ".");
  int64_t k = w.shape(-1) * 32 / q.bits;
  if (w.shape(-1) * 32 % q.bits != 0 || scales.ndim() != w.ndim() || scales.shape(-1) * q.group_size != k ||
      !std::equal(w.shape().begin(), w.shape().end() - 1, scales.shape().begin()))
    throw OpError("dequantize",
                  "Shape of scales and biases does not match the matrix given the quantization parameters. Provided "
                  "matrix of shape " +
                      shape_str(w.shape()) + " and scales/biases of shape " + shape_str(scales.shape()) +
                      " with group_size=" + std::to_string(q.group_size) + " and bits=" + std::to_string(q.bits) + ".");
  if (!q.has_biases()) {
    Dtype out = dtype.value_or(Dtype::bfloat16);
    if (!is_floating(out))
      throw OpError("dequantize",
                    std::string("Only real floating types are supported but output dtype == ") + name_of(out) + ".");
    return Array::lazy(with_last(w.shape(), k), out, std::make_shared<Dequantize>(q), {w, scales}, s);
  }
  // MLX computes q * scale in the scales' dtype, then adds the biases with promotion.
  Array sc = is_floating(scales.dtype()) ? scales : astype(scales, Dtype::float32, s);
  Array bi = is_floating(biases->dtype()) ? *biases : astype(*biases, Dtype::float32, s);
  bi = broadcast_to(bi, sc.shape(), s);
  Dtype out = dtype.value_or(promote(sc.dtype(), bi.dtype()));
  if (!is_floating(out))
    throw OpError("dequantize",
                  std::string("Only real floating types are supported but output dtype == ") + name_of(out) + ".");
  return Array::lazy(with_last(w.shape(), k), out, std::make_shared<Dequantize>(q), {w, sc, bi}, s);
}

namespace {

// MLX's checks of the packed weight against its scales and biases; returns the dequantized
// weight's last dimension.
int64_t check_weight(const Array& w, const Array& scales, const std::optional<Array>& biases, QuantSpec q,
                     const char* op) {
  if (q.has_biases() && !biases) throw OpError(op, "Biases must be provided for affine quantization.");
  if (!q.has_biases() && scales.dtype() != Dtype::uint8)
    throw OpError(op, std::string("Scale type must be uint8 but received type ") + name_of(scales.dtype()) + ".");
  if (w.dtype() != Dtype::uint32)
    throw OpError(op, std::string("The weight matrix should be uint32 but received ") + name_of(w.dtype()));
  if (q.has_biases() && scales.shape() != biases->shape())
    throw OpError(op, "Scales and biases should have the same shape. Received scales with shape " +
                          shape_str(scales.shape()) + " and biases with " + shape_str(biases->shape()));
  if (w.ndim() < 2) throw OpError(op, "The weight matrix must have at least 2 dimensions, not " + shape_str(w.shape()));
  int64_t k = w.shape(-1) * 32 / q.bits;
  if (w.shape(-1) * 32 % q.bits != 0 || scales.ndim() != w.ndim() || scales.shape(-1) * q.group_size != k ||
      !std::equal(w.shape().begin(), w.shape().end() - 1, scales.shape().begin()))
    throw OpError(op,
                  "The shapes of the weight and scales are incompatible based on bits and group_size. w.shape() "
                  "== " +
                      shape_str(w.shape()) + " and scales.shape() == " + shape_str(scales.shape()) +
                      " with group_size=" + std::to_string(q.group_size) + " and bits=" + std::to_string(q.bits));
  return k;
}

Shape batch_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

// The last dimension x must have, with MLX's message when it has another.
void check_x(const Array& x, const Array& w, int64_t k, int64_t n, bool transpose, QuantSpec q, const char* op) {
  if (x.shape(-1) == k) return;
  throw OpError(op, "Last dimension of first input with shape (..., " + std::to_string(x.shape(-1)) +
                        ") does not match the expanded quantized matrix (" + std::to_string(transpose ? n : k) + ", " +
                        std::to_string(transpose ? k : n) + ") computed from shape " + shape_str(w.shape()) +
                        " with group_size=" + std::to_string(q.group_size) + ", bits=" + std::to_string(q.bits) +
                        " and transpose=" + (transpose ? "true" : "false"));
}

// The product's dtype (MLX: x's and the scales' promotion), and x in float32.
Dtype product_dtype(const Array& x, const Array& scales, const char* op) {
  Dtype out = promote(x.dtype(), scales.dtype());
  if (!is_floating(out)) out = Dtype::float32;
  if (out == Dtype::float64) throw OpError(op, "float64 is not supported");
  return out;
}

Array half_or_f32(const Array& a, Stream s) {
  bool ok = a.dtype() == Dtype::float32 || a.dtype() == Dtype::float16 || a.dtype() == Dtype::bfloat16;
  return ok ? a : astype(a, Dtype::float32, s);
}

Shape cat(Shape a, std::initializer_list<int64_t> tail) {
  a.insert(a.end(), tail);
  return a;
}

// The floating-point modes: the dequantized float32 weight through the dense product (whose rows
// are independent as well).
Array fp_weight(const Array& w, const Array& scales, QuantSpec q, Stream s) {
  return dequantize(w, scales, std::nullopt, q, std::nullopt, Dtype::float32, s);
}

Dtype fp_product_dtype(const Array& x) {
  return is_floating(x.dtype()) && x.dtype() != Dtype::float64 ? x.dtype() : Dtype::float32;
}

// activation_bits: 0 (float x) or 8 for a transposed affine weight of 4 or 8 bits.
void check_activation_bits(int a, bool transpose, QuantSpec q, const char* op) {
  if (a == 0) return;
  if (a != 8) throw OpError(op, "activation_bits must be None or 8, got " + std::to_string(a));
  if (!transpose || q.mode != QuantMode::affine || (q.bits != 4 && q.bits != 8))
    throw OpError(op, "activation_bits=8 needs transpose=True and an affine weight of 4 or 8 bits");
}

}  // namespace

Array quantized_matmul(const Array& x, const Array& w, const Array& scales, const std::optional<Array>& biases,
                       bool transpose, QuantSpec q, Stream s, int activation_bits) {
  const char* op = "quantized_matmul";
  int64_t wk = check_weight(w, scales, biases, q, op);
  check_activation_bits(activation_bits, transpose, q, op);
  if (x.ndim() == 0) throw OpError(op, "x must have at least one dimension");
  int64_t k = transpose ? wk : w.shape(-2), n = transpose ? w.shape(-2) : wk;
  check_x(x, w, k, n, transpose, q, op);
  if (!q.has_biases()) {
    Array wd = fp_weight(w, scales, q, s);
    Array y = matmul(astype(x, Dtype::float32, s), transpose ? swapaxes(wd, -1, -2, s) : wd, s);
    return astype(y, fp_product_dtype(x), s);
  }
  Dtype out = product_dtype(x, scales, op);
  Array xf = x.dtype() == Dtype::float32 ? x : astype(x, Dtype::float32, s);
  Array sc = half_or_f32(scales, s), bi = half_or_f32(*biases, s);
  bool vec = x.ndim() == 1;
  if (vec) xf = reshape(xf, {1, k}, s);
  auto prim = std::make_shared<QuantizedMatmul>(q, transpose, activation_bits);
  int64_t m = xf.shape(-2);
  if (w.ndim() == 2) {
    Shape shape = cat(batch_of(xf), {m, n});
    Array r = Array::lazy(shape, out, prim, {xf, w, sc, bi}, s);
    return vec ? reshape(r, {n}, s) : r;
  }
  Shape batch = broadcast_shapes(batch_of(xf), batch_of(w), op);
  auto full = [&](const Array& a) { return broadcast_to(a, cat(batch, {a.shape(-2), a.shape(-1)}), s); };
  Array r = Array::lazy(cat(batch, {m, n}), out, prim, {full(xf), full(w), full(sc), full(bi)}, s);
  return vec ? reshape(r, cat(batch, {n}), s) : r;
}

Array gather_qmm(const Array& x, const Array& w, const Array& scales, const std::optional<Array>& biases,
                 const std::optional<Array>& lhs_indices, const std::optional<Array>& rhs_indices, bool transpose,
                 QuantSpec q, Stream s, int activation_bits) {
  const char* op = "gather_qmm";
  int64_t wk = check_weight(w, scales, biases, q, op);
  check_activation_bits(activation_bits, transpose, q, op);
  if (x.ndim() < 2)
    throw OpError(op, "Input must have at least two dimensions but got input with shape " + shape_str(x.shape()) + ".");
  int64_t k = transpose ? wk : w.shape(-2), n = transpose ? w.shape(-2) : wk, m = x.shape(-2);
  check_x(x, w, k, n, transpose, q, op);
  // By default every batch item in order: arange over the batch, shaped as it.
  auto indices = [&](const std::optional<Array>& given, const Array& of) {
    if (given) {
      if (!is_integer(given->dtype())) throw OpError(op, "Got indices with invalid dtype. Indices must be integral.");
      return astype(*given, Dtype::uint32, s);
    }
    Shape b = batch_of(of);
    return reshape(arange(0, double(shape_size(b)), 1, Dtype::uint32, s), b, s);
  };
  Array lhs = indices(lhs_indices, x), rhs = indices(rhs_indices, w);
  Shape items = broadcast_shapes(lhs.shape(), rhs.shape(), op);
  Array xf = x.dtype() == Dtype::float32 ? x : astype(x, Dtype::float32, s);
  if (!q.has_biases()) {
    Array wd = fp_weight(w, scales, q, s);
    Array xi = take(reshape(xf, {-1, m, k}, s), broadcast_to(lhs, items, s), 0, s);
    Array wi = take(reshape(wd, {-1, wd.shape(-2), wd.shape(-1)}, s), broadcast_to(rhs, items, s), 0, s);
    return astype(matmul(xi, transpose ? swapaxes(wi, -1, -2, s) : wi, s), fp_product_dtype(x), s);
  }
  Dtype out = product_dtype(x, scales, op);
  return Array::lazy(cat(items, {m, n}), out, std::make_shared<GatherQmm>(q, transpose, activation_bits),
                     {xf, w, half_or_f32(scales, s), half_or_f32(*biases, s), broadcast_to(lhs, items, s),
                      broadcast_to(rhs, items, s)},
                     s);
}

}  // namespace nuvec
