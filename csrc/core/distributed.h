// nuvec's communication engine: MPI's C library, loaded at run time (dlopen, dlsym), so nuvec builds
// and imports without it, as MLX does. OpenMPI (handles are addresses of its globals) and MPICH
// (handles are integers) both work. Every transfer is a nonblocking MPI call polled against a
// deadline, so a dead or stuck peer gives an error instead of a hang; collectives also check that
// every rank called the same one (a signature all-reduce before the data).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace nuvec::dist {

enum class ReduceOp { sum, max, min };

class Group {
 public:
  Group(intptr_t comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  int rank() const { return rank_; }
  int size() const { return size_; }
  // MPI_Comm_split: the processes of one color, ordered by key (a negative key: by rank).
  std::shared_ptr<Group> split(int color, int key) const;

  // `count` elements of `dt` (no float16, bfloat16 or complex64) from every rank, reduced.
  void all_reduce(const void* in, void* out, int64_t count, Dtype dt, ReduceOp op) const;
  // `count` reduced elements per rank; this rank gets block `rank` of the size() * count.
  void reduce_scatter(const void* in, void* out, int64_t count, Dtype dt, ReduceOp op) const;
  // `bytes` from every rank, concatenated in rank order into `out`.
  void all_gather(const void* in, void* out, int64_t bytes) const;
  void send(const void* in, int64_t bytes, int dst) const;
  void recv(void* out, int64_t bytes, int src) const;

 private:
  intptr_t comm_;
  int rank_, size_;
};

// Opens the first of `libraries` (paths or sonames) that is an MPI library; false when none is.
// Later calls return whether one is loaded.
bool load(const std::vector<std::string>& libraries);
// MPI's own name of the loaded library (MPI_Get_library_version's first line).
std::string library_version();
// The group of every process (MPI_Init on the first call); std::runtime_error when MPI fails.
std::shared_ptr<Group> world();
// Seconds a transfer may wait for its peers before it fails (<= 0: forever).
void set_timeout(double seconds);
// Whether collectives first check that every rank called the same one.
void set_check(bool on);
// At exit: MPI_Finalize, or MPI_Abort after a failed transfer (peers may still wait in one, and
// the launcher ends them). Nothing when MPI was never started.
void finalize();

}  // namespace nuvec::dist
