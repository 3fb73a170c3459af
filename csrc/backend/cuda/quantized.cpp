// quantized_matmul on the GPU (docs/cuda.md, "Quantized products"): MLX's affine weights, x @ W.T
// with one 2-D weight. Up to kRowIndependentRows rows of x: the one-row kernel (quantized.cu), so
// each row has the bits of its one-row product; more rows: W dequantized to float32, then the
// dense product (cuBLASLt or the tiled kernels, as matmul's). Other forms (x @ W, batched or
// floating-point-mode weights, int8 activations) and gather_qmm run the CPU kernel.
#include <cstdint>

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
  if (a.row_contiguous() && reinterpret_cast<uintptr_t>(device_address(a)) % 16 == 0) return a;
  Array flat =
      Array::from_buffer(a.shape(), a.dtype(), Buffer::allocate_device(a.nbytes()), Array::row_strides(a.shape()));
  copy_into(a, flat);
  return flat;
}

bool on_gpu(const QuantizedMatmul& p, const std::vector<Array>& in) {
  const QuantSpec& q = p.spec();
  return q.mode == QuantMode::affine && p.transpose() && p.activation_bits() == 0 && in[1].ndim() == 2 &&
         in[0].dtype() == Dtype::float32 && quantized_rows_supported(q.bits, q.group_size);
}

void eval_qmm(const QuantizedMatmul& p, const std::vector<Array>& in, std::vector<Array>& out) {
  if (!on_gpu(p, in)) return backend_for(DeviceType::cpu)->kernel(p.kernel_slot())(p, in, out);
  Array x = packed_rows(in[0]), w = packed_rows(in[1]), s = packed_rows(in[2]), b = packed_rows(in[3]);
  Array& y = out[0];
  allocate(y);
  const int64_t k = x.shape(-1), n = y.shape(-1), m = k ? x.size() / k : 0;
  if (y.size() == 0) return;
  if (k == 0) {
    check(cudaMemsetAsync(y.buffer()->device_data(), 0, y.nbytes(), stream()), "zeroing an empty product");
    return;
  }
  QuantizedRows q{};
  q.x = static_cast<const float*>(device_address(x)), q.w = static_cast<const uint32_t*>(device_address(w));
  q.scales = device_address(s), q.biases = device_address(b), q.y = y.buffer()->device_data();
  q.m = m, q.n = n, q.k = k, q.bits = p.spec().bits, q.group = p.spec().group_size;
  q.s_type = s.dtype(), q.b_type = b.dtype(), q.y_type = y.dtype();
  if (m <= kRowIndependentRows) {
    quantized_rows(q, stream());
    check_launch("in quantized_matmul");
    return;
  }
  // Past the row-independence promise (prompt prefill): the CPU's dense sequence, on the GPU.
  auto wd = Buffer::allocate_device(size_t(n * k) * sizeof(float));
  dequantize_rows(q, static_cast<float*>(wd->device_data()), stream());
  std::shared_ptr<Buffer> yf = y.dtype() == Dtype::float32 ? nullptr : Buffer::allocate_device(size_t(m * n) * 4);
  Gemm g{};
  g.a = q.x, g.b = wd->device_data(), g.c = yf ? yf->device_data() : q.y;
  g.m = m, g.n = n, g.k = k, g.sam = k, g.sak = 1, g.sbk = 1, g.sbn = k, g.batch = 1;
  if (!cublaslt::gemm(g, Dtype::float32)) gemm_tiled(g, Dtype::float32, stream());
  if (yf) store_floats(static_cast<const float*>(yf->device_data()), q.y, y.dtype(), m * n, stream());
  check_launch("in quantized_matmul");
}

}  // namespace

void register_quantized_kernels(Backend& b) { b.add<QuantizedMatmul, eval_qmm>(); }

}  // namespace nuvec::cuda
