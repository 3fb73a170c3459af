// RoPE on the GPU: one block per row; each pair's angle in float64, its cos and sin rounded to
// float32 and the rotation in float32, as the CPU's table and rows (docs/cuda.md). Each row is
// computed alone.
#include "backend/cuda/dtypes.cuh"
#include "backend/cuda/rope.cuh"

namespace nuvec::cuda {
namespace {

constexpr int kThreads = 128;

__global__ void __launch_bounds__(kThreads) rope_kernel(RopeRows r) {
  for (int64_t row = blockIdx.x; row < r.rows; row += gridDim.x) {
    int64_t batch = row / r.rows_per_batch;
    int64_t offset = r.offsets ? r.offsets[r.per_batch_offsets ? batch : 0] : r.offset;
    double pos = double(offset + row % r.t) * double(r.scale);
    int64_t base = row * r.d;
    for (int64_t i = threadIdx.x; i < r.half; i += kThreads) {
      double inv = r.freqs ? 1.0 / double(r.freqs[i]) : pow(double(r.base), -double(i) / double(r.half));
      double angle = pos * inv;
      float c = float(cos(angle)), s = float(r.inverse ? -sin(angle) : sin(angle));
      int64_t j0 = r.traditional ? 2 * i : i, j1 = r.traditional ? 2 * i + 1 : r.half + i;
      float a = load_float(r.x, r.type, base + j0), b = load_float(r.x, r.type, base + j1);
      store_float(r.y, r.type, base + j0, a * c - b * s);
      store_float(r.y, r.type, base + j1, a * s + b * c);
    }
    for (int64_t j = 2 * r.half + threadIdx.x; j < r.d; j += kThreads)  // past dims: unchanged
      store_float(r.y, r.type, base + j, load_float(r.x, r.type, base + j));
  }
}

}  // namespace

void rope_rows(const RopeRows& r, cudaStream_t stream) {
  unsigned blocks = unsigned(r.rows < (int64_t(1) << 20) ? r.rows : (int64_t(1) << 20));
  rope_kernel<<<blocks, kThreads, 0, stream>>>(r);
}

}  // namespace nuvec::cuda
