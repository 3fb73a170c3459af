// Matmul on the GPU (docs/cuda.md, "Matrix products"). Up to kRowIndependentRows rows: the
// row-wise kernel (matmul.cu), whose sequence of operations for an element depends on K alone, so
// a row gets the bits of its one-row product. More rows: cuBLASLt with a fixed algorithm when the
// library loads (cublaslt.cpp), else the tiled kernels (matmul_tiled.cu). complex64 runs the CPU
// kernel.
#include "backend/cuda/matmul.cuh"
#include "backend/cuda/cublaslt.h"
#include "backend/cuda/runtime.h"
#include "core/primitives/matmul.h"

namespace nuvec::cuda {
namespace {

// Batch axes of `x` (all but the last two) that merge with its rows into one strided axis (as the
// CPU's axes_merge): then a B shared by every batch makes one product of all the rows.
bool rows_merge(const Array& x, int64_t& row_stride) {
  int64_t expect = -1;
  row_stride = 0;
  for (int d = x.ndim() - 2; d >= 0; --d) {
    if (x.shape(d) == 1) continue;
    if (expect >= 0 && x.strides()[d] != expect) return false;
    if (expect < 0) row_stride = x.strides()[d];
    expect = x.strides()[d] * x.shape(d);
  }
  return true;
}

// The product of a (..., m, k) and b (..., k, n) into c, but for the addresses; false when it
// needs more batch axes (of size above 1) than a kernel takes or more column tiles than a grid.
bool describe(const Array& a, const Array& b, const Array& c, Gemm& g) {
  int nd = c.ndim();
  g = Gemm{};
  g.m = c.shape(nd - 2), g.n = c.shape(nd - 1), g.k = a.shape(nd - 1);
  g.sam = a.strides()[nd - 2], g.sak = a.strides()[nd - 1];
  g.sbk = b.strides()[nd - 2], g.sbn = b.strides()[nd - 1];
  g.batch = c.size() / (g.m * g.n);
  bool b_shared = true;
  for (int i = 0; i < nd - 2; ++i) b_shared &= b.strides()[i] == 0 || b.shape(i) == 1;
  int64_t row_stride;
  if (b_shared && rows_merge(a, row_stride)) {
    if (g.batch > 1) g.sam = row_stride;
    g.m *= g.batch, g.batch = 1;
  }
  for (int i = 0; i < nd - 2 && g.batch > 1; ++i) {
    if (c.shape(i) == 1) continue;
    if (g.batch_dims == kMaxBatchDims) return false;
    g.batch_shape[g.batch_dims] = c.shape(i);
    g.batch_a[g.batch_dims] = a.strides()[i], g.batch_b[g.batch_dims] = b.strides()[i];
    ++g.batch_dims;
  }
  return g.m <= kRowIndependentRows || (g.n + 63) / 64 <= 65535;  // the tiled kernels' grid
}

void run_on_cpu(const Matmul& p, const std::vector<Array>& in, std::vector<Array>& out) {
  backend_for(DeviceType::cpu)->kernel(p.kernel_slot())(p, in, out);
}

void eval_matmul(const Matmul& p, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array &a = in[0], &b = in[1];
  Array& c = out[0];
  Dtype d = c.dtype();
  if (d == Dtype::complex64) return run_on_cpu(p, in, out);  // no complex kernel yet
  Gemm g;
  if (c.size() != 0 && !describe(a, b, c, g)) return run_on_cpu(p, in, out);
  allocate(c);
  if (c.size() == 0) return;
  if (g.k == 0) {  // an empty sum: zeros (all-zero bits in every float type)
    check(cudaMemsetAsync(c.buffer()->device_data(), 0, c.nbytes(), stream()), "zeroing an empty product");
    return;
  }
  g.a = device_address(a), g.b = device_address(b), g.c = c.buffer()->device_data();
  if (g.m <= kRowIndependentRows)
    gemm_rowwise(g, d, stream());
  else if (!cublaslt::gemm(g, d))
    gemm_tiled(g, d, stream());
  check_launch("in matmul");
}

}  // namespace

void register_matmul_kernels(Backend& b) { b.add<Matmul, eval_matmul>(); }

}  // namespace nuvec::cuda
