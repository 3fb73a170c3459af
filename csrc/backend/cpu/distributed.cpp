// The collectives' CPU kernels: MPI reads the input's buffer and writes the output's (no staging
// copy unless the input is a strided view), through the engine of core/distributed.h.
#include <stdexcept>

#include "backend/cpu/backend.h"
#include "backend/cpu/sort.h"
#include "core/primitives/distributed.h"

namespace nuvec::cpu {

namespace {

// complex64 travels as pairs of float32 (its sum is theirs).
std::pair<int64_t, Dtype> elements(const Array& a) {
  if (a.dtype() == Dtype::complex64) return {2 * a.size(), Dtype::float32};
  return {a.size(), a.dtype()};
}

// MPI's failures (a timeout, a peer's error) surface as evaluation errors naming the node.
template <class F> void guarded(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) { throw KernelError(EvalErrorKind::other, e.what()); }
}

void eval_all_reduce(const AllReduce& p, const std::vector<Array>& in, std::vector<Array>& out) {
  Array x = row_contiguous(in[0]);
  out[0].allocate_contiguous();
  auto [n, dt] = elements(x);
  guarded([&] { p.group().all_reduce(x.data_bytes(), out[0].data_bytes(), n, dt, p.op()); });
}

void eval_all_gather(const AllGather& p, const std::vector<Array>& in, std::vector<Array>& out) {
  Array x = row_contiguous(in[0]);
  out[0].allocate_contiguous();
  guarded([&] { p.group().all_gather(x.data_bytes(), out[0].data_bytes(), int64_t(x.nbytes())); });
}

void eval_sum_scatter(const SumScatter& p, const std::vector<Array>& in, std::vector<Array>& out) {
  Array x = row_contiguous(in[0]);
  out[0].allocate_contiguous();
  auto [n, dt] = elements(out[0]);
  guarded([&] { p.group().reduce_scatter(x.data_bytes(), out[0].data_bytes(), n, dt, dist::ReduceOp::sum); });
}

void eval_send(const Send& p, const std::vector<Array>& in, std::vector<Array>& out) {
  Array x = row_contiguous(in[0]);
  guarded([&] { p.group().send(x.data_bytes(), int64_t(x.nbytes()), p.peer()); });
  out[0].set_data(in[0].buffer(), in[0].strides(), in[0].offset());
}

void eval_recv(const Recv& p, const std::vector<Array>&, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  guarded([&] { p.group().recv(out[0].data_bytes(), int64_t(out[0].nbytes()), p.peer()); });
}

}  // namespace

void register_distributed_kernels(Backend& b) {
  b.add<AllReduce, eval_all_reduce>();
  b.add<AllGather, eval_all_gather>();
  b.add<SumScatter, eval_sum_scatter>();
  b.add<Send, eval_send>();
  b.add<Recv, eval_recv>();
}

}  // namespace nuvec::cpu
