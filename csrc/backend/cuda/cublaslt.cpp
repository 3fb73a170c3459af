#include "backend/cuda/cublaslt.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/cuda/runtime.h"

namespace nuvec::cuda::cublaslt {
namespace {

// The few declarations nuvec needs from cublasLt.h (its ABI: the toolkit here has no header).
struct Algo { uint64_t data[8]; };
struct HeuristicResult {
  Algo algo;
  size_t workspace_size;
  int state;
  float waves;
  int reserved[4];
};
enum : int { kCompute32F = 68, kCompute64F = 70 };
enum : int { kDescTransA = 3, kDescTransB = 4 };
enum : int { kOpN = 0, kOpT = 1 };
enum : int {
  kPrefMaxWorkspace = 1,
  kPrefReductionMask = 3,
  kPrefAlignA = 5,
  kPrefAlignB = 6,
  kPrefAlignC = 7,
  kPrefAlignD = 8
};
constexpr uint32_t kReductionNone = 0;
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

struct Lib {
  int (*create)(void**);
  int (*desc_create)(void**, int, int);
  int (*desc_destroy)(void*);
  int (*desc_set)(void*, int, const void*, size_t);
  int (*layout_create)(void**, int, uint64_t, uint64_t, int64_t);
  int (*layout_destroy)(void*);
  int (*pref_create)(void**);
  int (*pref_destroy)(void*);
  int (*pref_set)(void*, int, const void*, size_t);
  int (*heuristic)(void*, void*, void*, void*, void*, void*, void*, int, HeuristicResult*, int*);
  int (*matmul)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*, void*,
                void*, void*, const Algo*, void*, size_t, cudaStream_t);
  void* handle = nullptr;
  // Each queue's workspace (products on two queues may overlap), made on its first product.
  std::mutex workspaces_mutex;
  std::unordered_map<int, void*> workspaces;
  size_t workspace_bytes = 0;
};

// Where the pip packages put the library (nvidia-cublas: nvidia/cublas/lib; the CUDA 13 bundle:
// nvidia/cu13/lib), under each Python package folder we can find: those of the libraries this
// process has loaded (NumPy's, torch's) and of the Python running it.
std::vector<std::string> package_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    for (const std::string& have : dirs)
      if (have == d) return;
    dirs.push_back(d);
  };
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    for (const char* key : {"/site-packages/", "/dist-packages/"})
      if (size_t at = line.find(key); at != std::string::npos) {
        size_t start = line.find('/');
        add(line.substr(start, at + std::strlen(key) - 1 - start));
      }
  std::vector<std::string> patterns;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var)) patterns.push_back(std::string(v) + "/lib/python3*/site-packages");
  if (const char* pp = std::getenv("PYTHONPATH")) {
    std::string s = pp;
    for (size_t b = 0, e; b <= s.size(); b = e + 1) {
      e = s.find(':', b);
      if (e == std::string::npos) e = s.size();
      if (e > b) add(s.substr(b, e - b));
    }
  }
  patterns.push_back("/usr/local/lib/python3*/*-packages");
  patterns.push_back("/usr/lib/python3*/*-packages");
  for (const std::string& p : patterns) {
    glob_t g{};
    if (glob(p.c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) add(g.gl_pathv[i]);
    globfree(&g);
  }
  return dirs;
}

void* open_library() {
  if (const char* path = std::getenv("NUVEC_CUBLASLT")) {
    if (!*path || !std::strcmp(path, "0") || !std::strcmp(path, "off")) return nullptr;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  // The loader's own search first: LD_LIBRARY_PATH, or a copy already loaded (by torch, say).
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
  for (const std::string& dir : package_dirs())
    for (const char* rel : {"/nvidia/cu13/lib/libcublasLt.so.13", "/nvidia/cublas/lib/libcublasLt.so.13",
                            "/nvidia/cublas/lib/libcublasLt.so.12"})
      if (void* h = dlopen((dir + rel).c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

template <class F> bool bind(void* so, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(so, name));
  return f != nullptr;
}

Lib* load() {
  void* so = open_library();
  if (!so) return nullptr;
  auto* l = new Lib{};
  bool ok = bind(so, l->create, "cublasLtCreate") && bind(so, l->desc_create, "cublasLtMatmulDescCreate") &&
            bind(so, l->desc_destroy, "cublasLtMatmulDescDestroy") &&
            bind(so, l->desc_set, "cublasLtMatmulDescSetAttribute") &&
            bind(so, l->layout_create, "cublasLtMatrixLayoutCreate") &&
            bind(so, l->layout_destroy, "cublasLtMatrixLayoutDestroy") &&
            bind(so, l->pref_create, "cublasLtMatmulPreferenceCreate") &&
            bind(so, l->pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
            bind(so, l->pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
            bind(so, l->heuristic, "cublasLtMatmulAlgoGetHeuristic") && bind(so, l->matmul, "cublasLtMatmul") &&
            l->create(&l->handle) == 0;
  if (!ok) {
    delete l;
    dlclose(so);
    return nullptr;
  }
  // The workspace size is fixed for the process (it steers the heuristic's choice, so the bits):
  // the calling queue's first workspace decides it.
  void* w = nullptr;
  if (cudaMalloc(&w, kWorkspaceBytes) == cudaSuccess)
    l->workspace_bytes = kWorkspaceBytes, l->workspaces[queue()] = w;
  else
    cudaGetLastError();
  return l;  // kept for the process's life, as the library stays loaded
}

Lib* lib() {
  static Lib* l = load();  // thread-safe, once
  return l;
}

// The calling thread's queue's workspace.
void* workspace(Lib& l) {
  std::lock_guard<std::mutex> lock(l.workspaces_mutex);
  void*& w = l.workspaces[queue()];
  if (!w && l.workspace_bytes) check(cudaMalloc(&w, l.workspace_bytes), "making a cuBLASLt workspace");
  return w;
}

// A logical rows x cols matrix (element (r, c) at r * s_r + c * s_c) as cuBLASLt's column-major
// layout of (op, rows, cols, ld); false when it is neither column- nor row-major.
struct Layout {
  int op;
  uint64_t rows, cols;
  int64_t ld;
};
bool layout(int64_t rows, int64_t cols, int64_t s_r, int64_t s_c, Layout& out) {
  if ((s_r == 1 || rows == 1) && (cols == 1 || s_c >= rows)) {
    out = {kOpN, uint64_t(rows), uint64_t(cols), cols == 1 ? rows : s_c};
    return true;
  }
  if ((s_c == 1 || cols == 1) && (rows == 1 || s_r >= cols)) {
    out = {kOpT, uint64_t(cols), uint64_t(rows), rows == 1 ? cols : s_r};
    return true;
  }
  return false;
}

// The largest power of two (up to 256) dividing every address a matrix of the batch starts at.
uint32_t alignment(const void* base, const int64_t* batch_strides, int dims, size_t item) {
  uint64_t bits = reinterpret_cast<uintptr_t>(base) | 256;
  for (int d = 0; d < dims; ++d) bits |= uint64_t(batch_strides[d]) * item;
  return uint32_t(bits & (~bits + 1));
}

struct Descriptors {
  Lib& l;
  void *desc = nullptr, *a = nullptr, *b = nullptr, *c = nullptr, *pref = nullptr;
  ~Descriptors() {
    if (desc) l.desc_destroy(desc);
    for (void* m : {a, b, c})
      if (m) l.layout_destroy(m);
    if (pref) l.pref_destroy(pref);
  }
};

}  // namespace

bool available() { return lib() != nullptr; }

bool gemm(const Gemm& g, Dtype d) {
  Lib* l = lib();
  if (!l) return false;
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLASLt's A is our B (n x k), its B our A^T.
  Layout la, lb;
  if (!layout(g.n, g.k, g.sbn, g.sbk, la) || !layout(g.k, g.m, g.sak, g.sam, lb)) return false;
  int type = d == Dtype::float32    ? CUDA_R_32F
             : d == Dtype::float16  ? CUDA_R_16F
             : d == Dtype::bfloat16 ? CUDA_R_16BF
                                    : CUDA_R_64F;
  bool f64 = d == Dtype::float64;
  size_t item = size_of(d);
  Descriptors s{*l};
  if (l->desc_create(&s.desc, f64 ? kCompute64F : kCompute32F, f64 ? CUDA_R_64F : CUDA_R_32F) ||
      l->desc_set(s.desc, kDescTransA, &la.op, sizeof(int)) || l->desc_set(s.desc, kDescTransB, &lb.op, sizeof(int)) ||
      l->layout_create(&s.a, type, la.rows, la.cols, la.ld) || l->layout_create(&s.b, type, lb.rows, lb.cols, lb.ld) ||
      l->layout_create(&s.c, type, uint64_t(g.n), uint64_t(g.m), g.n) || l->pref_create(&s.pref))
    return false;
  uint64_t ws = l->workspace_bytes;
  uint32_t none = kReductionNone;
  uint32_t align_a = alignment(g.b, g.batch_b, g.batch_dims, item),
           align_b = alignment(g.a, g.batch_a, g.batch_dims, item);
  int64_t c_batch = g.m * g.n;
  uint32_t align_c = alignment(g.c, &c_batch, g.batch > 1 ? 1 : 0, item);
  if (l->pref_set(s.pref, kPrefMaxWorkspace, &ws, sizeof ws) ||
      l->pref_set(s.pref, kPrefReductionMask, &none, sizeof none) ||
      l->pref_set(s.pref, kPrefAlignA, &align_a, sizeof align_a) ||
      l->pref_set(s.pref, kPrefAlignB, &align_b, sizeof align_b) ||
      l->pref_set(s.pref, kPrefAlignC, &align_c, sizeof align_c) ||
      l->pref_set(s.pref, kPrefAlignD, &align_c, sizeof align_c))
    return false;
  HeuristicResult best{};
  int found = 0;
  if (l->heuristic(l->handle, s.desc, s.a, s.b, s.c, s.c, s.pref, 1, &best, &found) || found < 1 || best.state)
    return false;
  float one32 = 1, zero32 = 0;
  double one64 = 1, zero64 = 0;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = f64 ? static_cast<const void*>(&zero64) : &zero32;
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    int64_t oa, ob;
    batch_offsets(g, bi, oa, ob);
    const char* A = static_cast<const char*>(g.a) + oa * int64_t(item);
    const char* B = static_cast<const char*>(g.b) + ob * int64_t(item);
    char* C = static_cast<char*>(g.c) + bi * c_batch * int64_t(item);
    int e = l->matmul(l->handle, s.desc, alpha, B, s.a, A, s.b, beta, C, s.c, C, s.c, &best.algo, workspace(*l),
                      l->workspace_bytes, stream());
    // A failure after some batches ran cannot fall back: those are queued.
    if (e) {
      if (bi == 0) return false;
      check(cudaErrorUnknown, ("in cuBLASLt's matmul (status " + std::to_string(e) + ")").c_str());
    }
  }
  return true;
}

}  // namespace nuvec::cuda::cublaslt
