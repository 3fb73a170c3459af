// quantized_matmul and gather_qmm on the GPU (docs/cuda.md, "Quantized products"): MLX's affine
// weights, x @ W.T. Up to kRowIndependentRows rows of x per product: the one-row kernel
// (quantized.cu), so each row has the bits of its one-row product; more rows: each weight
// dequantized to float32, then the dense product (cuBLASLt or the tiled kernels, as matmul's).
// Other forms (x @ W, floating-point-mode weights, int8 activations) run the CPU kernel. A batch of
// weights and gather_qmm's items run item by item in one launch (the kernel's z axis).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/cuda/copy.h"
#include "backend/cuda/cublaslt.h"
#include "backend/cuda/quantized.cuh"
#include "backend/cuda/runtime.h"
#include "core/primitives/matmul.h"
#include "core/primitives/quantized.h"

namespace nuvec::cuda {
namespace {

// `a` row-contiguous on the device, its first element 16-byte aligned (a copy when it is not).
Array packed_rows(const Array& a) {
  return a.row_contiguous() && reinterpret_cast<uintptr_t>(device_address(a)) % 16 == 0 ? a : row_major_copy(a);
}

bool on_gpu(const QuantizedProduct& p, const Array& x) {
  const QuantSpec& q = p.spec();
  return q.mode == QuantMode::affine && p.transpose() && p.activation_bits() == 0 && x.dtype() == Dtype::float32 &&
         quantized_rows_supported(q.bits, q.group_size);
}

// The operands of a product: x, w, scales, biases (packed) and y (allocated); one item of one
// shared weight until the caller says more.
QuantizedRows rows_of(const QuantizedProduct& p, const Array& x, const Array& w, const Array& s, const Array& b,
                      Array& y) {
  QuantizedRows q{};
  q.x = static_cast<const float*>(device_address(x)), q.w = static_cast<const uint32_t*>(device_address(w));
  q.scales = device_address(s), q.biases = device_address(b), q.y = y.buffer()->device_data();
  q.k = x.shape(-1), q.n = y.shape(-1), q.bits = p.spec().bits, q.group = p.spec().group_size;
  q.s_type = s.dtype(), q.b_type = b.dtype(), q.y_type = y.dtype();
  return q;
}

// q's item z alone: x item xz, weight item wz, y item z.
QuantizedRows item(const QuantizedRows& q, int64_t xz, int64_t wz, int64_t z) {
  QuantizedRows one = q;
  one.x += xz * q.x_item, one.w += wz * q.w_item;
  one.scales = static_cast<const char*>(q.scales) + wz * q.p_item * int64_t(size_of(q.s_type));
  one.biases = static_cast<const char*>(q.biases) + wz * q.p_item * int64_t(size_of(q.b_type));
  one.y = static_cast<char*>(q.y) + z * q.m * q.n * int64_t(size_of(q.y_type));
  one.items = 1, one.x_item = one.w_item = one.p_item = 0, one.lhs = one.rhs = nullptr;
  return one;
}

// One item past the row-independence promise (prompt prefill): the CPU's dense sequence.
void dense(const QuantizedRows& q) {
  auto wd = Buffer::allocate_device(size_t(q.n * q.k) * sizeof(float));
  dequantize_rows(q, static_cast<float*>(wd->device_data()), stream());
  std::shared_ptr<Buffer> yf = q.y_type == Dtype::float32 ? nullptr : Buffer::allocate_device(size_t(q.m * q.n) * 4);
  Gemm g{};
  g.a = q.x, g.b = wd->device_data(), g.c = yf ? yf->device_data() : q.y;
  g.m = q.m, g.n = q.n, g.k = q.k, g.sam = q.k, g.sak = 1, g.sbk = 1, g.sbn = q.k, g.batch = 1;
  if (!cublaslt::gemm(g, Dtype::float32)) gemm_tiled(g, Dtype::float32, stream());
  if (yf) store_floats(static_cast<const float*>(yf->device_data()), q.y, q.y_type, q.m * q.n, stream());
}

// q's items (k > 0): the one-row kernel, or the dense path item by item (gathered items through
// their indices, read on the host).
void run(const QuantizedRows& q, const uint32_t* lhs, const uint32_t* rhs) {
  if (q.m <= kRowIndependentRows)
    quantized_rows(q, stream());
  else
    for (int64_t z = 0; z < q.items; ++z) dense(item(q, lhs ? lhs[z] : z, rhs ? rhs[z] : z, z));
  check_launch("in a quantized product");
}

void zeros(Array& y) {
  check(cudaMemsetAsync(y.buffer()->device_data(), 0, y.nbytes(), stream()), "zeroing a product");
}

void eval_qmm(const QuantizedMatmul& p, const std::vector<Array>& in, std::vector<Array>& out) {
  if (!on_gpu(p, in[0])) return backend_for(DeviceType::cpu)->kernel(p.kernel_slot())(p, in, out);
  Array& y = out[0];
  allocate(y);
  if (y.size() == 0) return;
  if (in[0].shape(-1) == 0) return zeros(y);
  // A batch of weights comes as views of the output's batch shape: packed, item z of each is
  // the z-th matrix.
  Array x = packed_rows(in[0]), w = packed_rows(in[1]), s = packed_rows(in[2]), b = packed_rows(in[3]);
  QuantizedRows q = rows_of(p, x, w, s, b, y);
  if (w.ndim() == 2) {
    q.m = x.size() / q.k;
  } else {
    q.m = x.shape(-2), q.items = y.size() / (q.m * q.n), q.x_item = q.m * q.k;
    q.w_item = w.shape(-2) * w.shape(-1), q.p_item = s.shape(-2) * s.shape(-1);
  }
  run(q, nullptr, nullptr);
}

void eval_gather_qmm(const GatherQmm& p, const std::vector<Array>& in, std::vector<Array>& out) {
  if (!on_gpu(p, in[0])) return backend_for(DeviceType::cpu)->kernel(p.kernel_slot())(p, in, out);
  Array x = packed_rows(in[0]), w = packed_rows(in[1]), s = packed_rows(in[2]), b = packed_rows(in[3]);
  Array lhs = packed_rows(in[4]), rhs = packed_rows(in[5]);
  Array& y = out[0];
  const int64_t k = x.shape(-1), m = x.shape(-2), items = lhs.size();
  const int64_t x_items = x.size() / std::max<int64_t>(1, m * k), w_items = w.size() / (w.shape(-2) * w.shape(-1));
  const uint32_t *li = lhs.data<uint32_t>(), *ri = rhs.data<uint32_t>();  // host copies (waits for the GPU)
  check_gather_qmm_indices(li, ri, items, x_items, w_items);
  allocate(y);
  if (y.size() == 0) return;
  if (m * k == 0) return zeros(y);
  QuantizedRows q = rows_of(p, x, w, s, b, y);
  q.m = m, q.items = items, q.x_item = m * k;
  q.w_item = w.shape(-2) * w.shape(-1), q.p_item = s.shape(-2) * s.shape(-1);
  q.lhs = static_cast<const uint32_t*>(device_address(lhs)), q.rhs = static_cast<const uint32_t*>(device_address(rhs));
  run(q, li, ri);
}

}  // namespace

void register_quantized_kernels(Backend& b) {
  b.add<QuantizedMatmul, eval_qmm>();
  b.add<GatherQmm, eval_gather_qmm>();
}

}  // namespace nuvec::cuda
