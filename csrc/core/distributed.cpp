#include "core/distributed.h"

#include <dlfcn.h>
#include <sched.h>

#include <chrono>
#include <climits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace nuvec::dist {

namespace {

// MPI's handles as both ABIs pass them in registers: OpenMPI's are pointers, MPICH's 32-bit ints
// (read from a zeroed 64-bit slot where MPI writes one: little-endian, as every target of nuvec).
using H = intptr_t;

struct Api {
  int (*Initialized)(int*);
  int (*Finalized)(int*);
  int (*Init_thread)(int*, char***, int, int*);
  int (*Finalize)();
  int (*Abort)(H, int);
  int (*Comm_rank)(H, int*);
  int (*Comm_size)(H, int*);
  int (*Comm_split)(H, int, int, H*);
  int (*Comm_set_errhandler)(H, H);
  int (*Iallreduce)(const void*, void*, int, H, H, H, H*);
  int (*Ireduce_scatter_block)(const void*, void*, int, H, H, H, H*);
  int (*Iallgather)(const void*, int, H, void*, int, H, H, H*);
  int (*Isend)(const void*, int, H, int, int, H, H*);
  int (*Irecv)(void*, int, H, int, int, H, H*);
  int (*Test)(H*, int*, void*);
  int (*Error_string)(int, char*, int*);
  int (*Get_library_version)(char*, int*);
  // Predefined handles.
  H comm_world, errors_return, byte, op[3], types[kNumDtypes];
};

struct State {
  std::mutex mutex;  // MPI runs at MPI_THREAD_SERIALIZED: one call at a time
  void* lib = nullptr;
  Api api{};
  std::shared_ptr<Group> world;
  double timeout = 300;
  bool check = true;
  bool broken = false;  // a transfer failed: MPI's state is undefined from here on
};
State& state() {
  static State* s = new State;  // never destroyed: atexit's finalize may run after statics die
  return *s;
}

template <class F> bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

bool bind_api(void* lib, Api& a) {
  bool ok =
      bind(lib, "MPI_Initialized", a.Initialized) && bind(lib, "MPI_Finalized", a.Finalized) &&
      bind(lib, "MPI_Init_thread", a.Init_thread) && bind(lib, "MPI_Finalize", a.Finalize) &&
      bind(lib, "MPI_Abort", a.Abort) && bind(lib, "MPI_Comm_rank", a.Comm_rank) &&
      bind(lib, "MPI_Comm_size", a.Comm_size) && bind(lib, "MPI_Comm_split", a.Comm_split) &&
      bind(lib, "MPI_Comm_set_errhandler", a.Comm_set_errhandler) && bind(lib, "MPI_Iallreduce", a.Iallreduce) &&
      bind(lib, "MPI_Ireduce_scatter_block", a.Ireduce_scatter_block) && bind(lib, "MPI_Iallgather", a.Iallgather) &&
      bind(lib, "MPI_Isend", a.Isend) && bind(lib, "MPI_Irecv", a.Irecv) && bind(lib, "MPI_Test", a.Test) &&
      bind(lib, "MPI_Error_string", a.Error_string) && bind(lib, "MPI_Get_library_version", a.Get_library_version);
  if (!ok) return false;
  auto t = [&](Dtype d) -> H& { return a.types[int(d)]; };
  auto r = [&](ReduceOp o) -> H& { return a.op[int(o)]; };
  if (void* world = dlsym(lib, "ompi_mpi_comm_world")) {  // OpenMPI: the globals' addresses
    auto g = [&](const char* name) { return H(dlsym(lib, name)); };
    a.comm_world = H(world);
    a.errors_return = g("ompi_mpi_errors_return");
    a.byte = g("ompi_mpi_byte");
    r(ReduceOp::sum) = g("ompi_mpi_op_sum"), r(ReduceOp::max) = g("ompi_mpi_op_max");
    r(ReduceOp::min) = g("ompi_mpi_op_min");
    t(Dtype::int8) = g("ompi_mpi_int8_t"), t(Dtype::int16) = g("ompi_mpi_int16_t");
    t(Dtype::int32) = g("ompi_mpi_int32_t"), t(Dtype::int64) = g("ompi_mpi_int64_t");
    t(Dtype::uint8) = g("ompi_mpi_uint8_t"), t(Dtype::uint16) = g("ompi_mpi_uint16_t");
    t(Dtype::uint32) = g("ompi_mpi_uint32_t"), t(Dtype::uint64) = g("ompi_mpi_uint64_t");
    t(Dtype::float32) = g("ompi_mpi_float"), t(Dtype::float64) = g("ompi_mpi_double");
  } else {  // MPICH's ABI (MPICH, Intel MPI, MVAPICH): the constants of its mpi.h
    a.comm_world = 0x44000000, a.errors_return = 0x54000001, a.byte = 0x4c00010d;
    r(ReduceOp::max) = 0x58000001, r(ReduceOp::min) = 0x58000002, r(ReduceOp::sum) = 0x58000003;
    t(Dtype::int8) = 0x4c000137, t(Dtype::int16) = 0x4c000238, t(Dtype::int32) = 0x4c000439;
    t(Dtype::int64) = 0x4c00083a, t(Dtype::uint8) = 0x4c00013b, t(Dtype::uint16) = 0x4c00023c;
    t(Dtype::uint32) = 0x4c00043d, t(Dtype::uint64) = 0x4c00083e;
    t(Dtype::float32) = 0x4c00040a, t(Dtype::float64) = 0x4c00080b;
  }
  // bool reduces as bytes: its sum and max are "any", its min "all".
  t(Dtype::bool_) = t(Dtype::uint8);
  return a.comm_world && a.errors_return && a.byte;
}

std::string error_string(int code) {
  char buf[512];
  int n = 0;
  if (state().api.Error_string(code, buf, &n) != 0) return "MPI error " + std::to_string(code);
  return std::string(buf, size_t(n));
}

[[noreturn]] void fail(const std::string& what) {
  state().broken = true;
  throw std::runtime_error("nuvec.distributed: " + what);
}

void check(int code, const std::string& what) {
  if (code != 0) fail(what + " failed: " + error_string(code));
}

int int_count(int64_t n, const std::string& what) {
  if (n > INT_MAX) fail(what + ": more than 2^31 - 1 elements in one transfer");
  return int(n);
}

// Polls `request` until it completes: spinning first (a transfer progresses inside MPI_Test),
// then yielding the core (ranks may share cores), then napping while a peer is late. Past the
// timeout it fails, naming the operation.
void wait(H& request, const std::string& what, const Group& g) {
  State& s = state();
  auto start = std::chrono::steady_clock::now();
  int done = 0;
  char status[64];  // larger than either ABI's MPI_Status
  for (long polls = 0;; ++polls) {
    check(s.api.Test(&request, &done, status), what);
    if (done) return;
    if (polls < 256) continue;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s.timeout > 0 && waited > s.timeout)
      fail(what + " waited " + std::to_string(int(s.timeout)) + " s for the other ranks (this is rank " +
           std::to_string(g.rank()) + " of " + std::to_string(g.size()) +
           "): a rank has died, is stuck, or called another operation. NUVEC_DISTRIBUTED_TIMEOUT sets the limit "
           "in seconds");
    if (waited < 1.0)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

const char* kOpName[] = {"all_sum", "all_max", "all_min"};

std::string describe(const char* op, int64_t count, Dtype dt) {
  return std::string(op) + " of " + std::to_string(count) + " " + name_of(dt) + " elements";
}

// Every rank must call the same collective on the same number of elements of the same dtype;
// else the data transfer would fail in MPI's own way, or hang. One all-reduce(max) of
// (sig, -sig): both come back unchanged on every rank exactly when all signatures agree.
void agree(H comm, int kind, int64_t count, Dtype dt, const std::string& what, const Group& g) {
  State& s = state();
  if (!s.check || g.size() == 1) return;
  int64_t sig = (count << 8) | (int64_t(dt) << 3) | kind;
  int64_t mine[2] = {sig, -sig}, all[2];
  H req = 0;
  check(s.api.Iallreduce(mine, all, 2, s.api.types[int(Dtype::int64)], s.api.op[int(ReduceOp::max)], comm, &req), what);
  wait(req, what, g);
  if (all[0] != mine[0] || all[1] != mine[1])  // every rank knows: MPI stays usable
    throw std::runtime_error(
        "nuvec.distributed: " + what + " (rank " + std::to_string(g.rank()) +
        "): the ranks of the group called different collectives, or the same one on arrays of different sizes or "
        "dtypes. Every rank must run the same collectives in the same order");
}

std::unique_lock<std::mutex> usable(const std::string& what) {
  std::unique_lock<std::mutex> lock(state().mutex);
  if (state().broken) throw std::runtime_error("nuvec.distributed: " + what + ": an earlier transfer failed");
  return lock;
}

H mpi_type(Dtype dt, const std::string& what) {
  H t = state().api.types[int(dt)];
  if (!t) throw std::runtime_error("nuvec.distributed: " + what + ": MPI has no reduction of this dtype");
  return t;
}

}  // namespace

bool load(const std::vector<std::string>& libraries) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.lib) return true;
  for (const std::string& name : libraries) {
    // RTLD_GLOBAL: MPI's plugins resolve their symbols against the library itself.
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) continue;
    Api api{};
    if (bind_api(lib, api)) {
      s.lib = lib;
      s.api = api;
      return true;
    }
    dlclose(lib);
  }
  return false;
}

std::string library_version() {
  State& s = state();
  if (!s.lib) return "";
  char buf[8192];
  int n = 0;
  if (s.api.Get_library_version(buf, &n) != 0) return "MPI";
  std::string v(buf, size_t(n));
  return v.substr(0, v.find_first_of("\r\n,"));
}

std::shared_ptr<Group> world() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.world) return s.world;
  if (!s.lib) throw std::runtime_error("nuvec.distributed: no MPI library is loaded");
  int on = 0, provided = 0;
  s.api.Initialized(&on);
  if (!on && s.api.Init_thread(nullptr, nullptr, 2 /* MPI_THREAD_SERIALIZED */, &provided) != 0)
    throw std::runtime_error("nuvec.distributed: MPI_Init_thread failed");
  // Errors come back as codes (nuvec raises them) instead of aborting every process.
  s.api.Comm_set_errhandler(s.api.comm_world, s.api.errors_return);
  int rank = 0, size = 1;
  s.api.Comm_rank(s.api.comm_world, &rank);
  s.api.Comm_size(s.api.comm_world, &size);
  s.world = std::make_shared<Group>(s.api.comm_world, rank, size);
  return s.world;
}

void set_timeout(double seconds) { state().timeout = seconds; }
void set_check(bool on) { state().check = on; }

void finalize() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.world) return;
  int done = 0;
  s.api.Finalized(&done);
  if (done) return;
  if (s.broken)
    s.api.Abort(s.api.comm_world, 1);
  else
    s.api.Finalize();
}

std::shared_ptr<Group> Group::split(int color, int key) const {
  auto lock = usable("split");
  H comm = 0;
  check(state().api.Comm_split(comm_, color, key < 0 ? rank_ : key, &comm), "split");
  int rank = 0, size = 1;
  state().api.Comm_rank(comm, &rank);
  state().api.Comm_size(comm, &size);
  return std::make_shared<Group>(comm, rank, size);
}

void Group::all_reduce(const void* in, void* out, int64_t count, Dtype dt, ReduceOp op) const {
  std::string what = describe(kOpName[int(op)], count, dt);
  auto lock = usable(what);
  agree(comm_, int(op), count, dt, what, *this);
  // bool's sum is "any": the max of its bytes.
  H mop = state().api.op[int(dt == Dtype::bool_ && op == ReduceOp::sum ? ReduceOp::max : op)];
  H req = 0;
  check(state().api.Iallreduce(in, out, int_count(count, what), mpi_type(dt, what), mop, comm_, &req), what);
  wait(req, what, *this);
}

void Group::reduce_scatter(const void* in, void* out, int64_t count, Dtype dt, ReduceOp op) const {
  std::string what = describe("sum_scatter", count * size_, dt);
  auto lock = usable(what);
  agree(comm_, 3, count, dt, what, *this);
  H mop = state().api.op[int(dt == Dtype::bool_ && op == ReduceOp::sum ? ReduceOp::max : op)];
  H req = 0;
  check(state().api.Ireduce_scatter_block(in, out, int_count(count, what), mpi_type(dt, what), mop, comm_, &req), what);
  wait(req, what, *this);
}

void Group::all_gather(const void* in, void* out, int64_t bytes) const {
  std::string what = describe("all_gather", bytes, Dtype::uint8);
  auto lock = usable(what);
  agree(comm_, 4, bytes, Dtype::uint8, what, *this);
  H b = state().api.byte, req = 0;
  int n = int_count(bytes, what);
  check(state().api.Iallgather(in, n, b, out, n, b, comm_, &req), what);
  wait(req, what, *this);
}

void Group::send(const void* in, int64_t bytes, int dst) const {
  std::string what = "send of " + std::to_string(bytes) + " bytes to rank " + std::to_string(dst);
  auto lock = usable(what);
  H req = 0;
  check(state().api.Isend(in, int_count(bytes, what), state().api.byte, dst, 0, comm_, &req), what);
  wait(req, what, *this);
}

void Group::recv(void* out, int64_t bytes, int src) const {
  std::string what = "recv of " + std::to_string(bytes) + " bytes from rank " + std::to_string(src);
  auto lock = usable(what);
  H req = 0;
  check(state().api.Irecv(out, int_count(bytes, what), state().api.byte, src, 0, comm_, &req), what);
  wait(req, what, *this);
}

}  // namespace nuvec::dist
