// Sorting on the GPU. Every real dtype maps to unsigned integer keys ordered as the CPU orders
// values (NaNs last, -0.0 equal to 0.0); CUB's (segmented) radix sort, which is stable, sorts the
// keys of each row with the elements' positions beside them, and the outputs are the positions
// (argsort) or the input's elements at them. So the result is the CPU's, bit for bit, with a
// fixed order of work. A partition is the full sort (a valid partition, NumPy's contract).
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "backend/cuda/dtypes.cuh"
#include "backend/cuda/layout.cuh"
#include "core/primitives/sort.h"

namespace nuvec::cuda {
namespace {

constexpr int kBlock = 256;

// An unsigned key ordered as v is (the CPU's, backend/cpu/simd/sort.cpp); 8 * sizeof(T) bits.
template <class T> __device__ __forceinline__ uint64_t sort_key(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    constexpr U flip = std::is_signed_v<T> ? U(U(1) << (8 * sizeof(T) - 1)) : U(0);
    return U(U(v) ^ flip);
  } else {
    using U = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    constexpr U sign = U(U(1) << (8 * sizeof(T) - 1));
    constexpr U inf = sizeof(T) == 8              ? U(0x7FF0000000000000ull)
                      : sizeof(T) == 4            ? U(0x7F800000u)
                      : std::is_same_v<T, __half> ? U(0x7C00)
                                                  : U(0x7F80);
    U u;
    memcpy(&u, &v, sizeof(U));
    if (U(u & ~sign) > inf) return U(~U(0));  // every NaN
    if (u == sign) u = 0;                     // -0.0 as 0.0
    return (u & sign) ? U(~u) : U(u | sign);
  }
}

// keys[r * n + i], pos[r * n + i] = key and position of element i of row r; offsets[r] = r * n.
template <class T> __global__ void keys_kernel(const T* x, Strided kept, int64_t stride, int64_t rows, int64_t n,
                                               uint64_t* keys, uint32_t* pos, int* offsets) {
  int64_t k = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (k <= rows) offsets[k] = int(k * n);
  if (k >= rows * n) return;
  int64_t r = k / n, i = k % n;
  keys[k] = sort_key(x[kept.offset(r) + i * stride]);
  pos[k] = uint32_t(i);
}

// Element i of output row r: the sorted position, or the input's element there.
template <class T> __global__ void write_kernel(const T* x, Strided kept, int64_t stride, Strided out_kept,
                                                int64_t out_stride, int64_t rows, int64_t n, const uint32_t* pos,
                                                bool indices, T* vals, uint32_t* idx) {
  int64_t k = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (k >= rows * n) return;
  int64_t r = k / n, i = k % n, at = out_kept.offset(r) + i * out_stride;
  if (indices)
    idx[at] = pos[k];
  else
    vals[at] = x[kept.offset(r) + int64_t(pos[k]) * stride];
}

void sort_rows(const Primitive& p, int axis, bool indices, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  Strided kept, out_kept;
  auto others = [&](int i) { return i != axis; };
  // Complex numbers' NaN order does not fit one key (they sort on the CPU); CUB counts in int.
  if (is_complex(x.dtype()) || x.ndim() == 0 || x.size() >= (int64_t(1) << 31) || !walk(x, others, kept))
    return on_host(p, in, out);
  allocate(out[0]);
  int64_t total = out[0].size(), n = x.shape(axis), rows = total / std::max<int64_t>(n, 1);
  if (total == 0) return;
  walk(out[0], others, out_kept);
  auto keys = scratch(size_t(total) * 2 * sizeof(uint64_t)), pos = scratch(size_t(total) * 2 * sizeof(uint32_t));
  auto offsets = scratch(size_t(rows + 1) * sizeof(int));
  uint64_t* k = scratch_data<uint64_t>(keys);
  uint32_t* v = scratch_data<uint32_t>(pos);
  int* off = scratch_data<int>(offsets);
  unsigned blocks = unsigned(ceil_div(total + 1, kBlock));
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = ctype_t<tag.value>;
    if constexpr (!is_complex_v<T>) {
      keys_kernel<T><<<blocks, kBlock, 0, stream()>>>(device_in<T>(x), kept, x.strides()[axis], rows, n, k, v, off);
      check_launch("sorting");
      size_t bytes = 0;
      int bits = 8 * int(sizeof(T));
      // The segmented sort gives each row one block: a single row is sorted by the whole GPU.
      auto sort = [&](void* temp) {
        if (rows == 1)
          return cub::DeviceRadixSort::SortPairs(temp, bytes, k, k + total, v, v + total, int(total), 0, bits,
                                                 stream());
        return cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, k, k + total, v, v + total, int(total), int(rows),
                                                        off, off + 1, 0, bits, stream());
      };
      check(sort(nullptr), "sorting");
      auto temp = scratch(bytes);
      check(sort(temp->device_data()), "sorting");
      write_kernel<T><<<blocks, kBlock, 0, stream()>>>(
          device_in<T>(x), kept, x.strides()[axis], out_kept, out[0].strides()[axis], rows, n, v + total, indices,
          indices ? nullptr : device_out<T>(out[0]), indices ? device_out<uint32_t>(out[0]) : nullptr);
      check_launch("sorting");
    }
  });
}

void eval_sort(const Sort& p, const std::vector<Array>& in, std::vector<Array>& out) {
  sort_rows(p, p.axis(), p.indices(), in, out);
}
void eval_partition(const Partition& p, const std::vector<Array>& in, std::vector<Array>& out) {
  sort_rows(p, p.axis(), p.indices(), in, out);
}

}  // namespace

void register_sort_kernels(Backend& b) {
  b.add<Sort, eval_sort>();
  b.add<Partition, eval_partition>();
}

}  // namespace nuvec::cuda
