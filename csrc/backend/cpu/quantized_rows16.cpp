// The interleaved copies of 4-bit weights (quantized_rows16.h) and their cache. An entry holds the
// weight's three buffers: while it does, no kernel writes them in place (a donated input must be
// its buffer's only holder), so the copy stays equal to the weight. Entries whose buffers nobody
// else holds any more are dropped when a new copy is made, and by clear_cache(). A weight gets its
// copy at its second such product.
#include "backend/cpu/quantized_rows16.h"

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/cpu/ctypes.h"
#include "backend/cpu/kernels.h"
#include "core/allocator.h"
#include "core/threads.h"

#if defined(__x86_64__)
namespace nuvec::cpu {

namespace {

constexpr int64_t kMaxCachedBytes = int64_t(1) << 30;  // the copies' total, past which none is made

// Copies are carved in turn out of arenas of kArenaBytes, which take huge pages as every block of
// 2 MiB or more does (a decode step reads every copy: SmolLM2's 120 layer products ran 1.84-1.92
// ms from 4 KiB pages, 1.78-1.82 from 2 MiB ones); a copy of more than a quarter arena takes a
// block of its own. An arena goes with its last copy. Under the cache's lock.
constexpr size_t kArenaBytes = size_t(8) << 20;

struct Arenas {
  std::shared_ptr<Buffer> current;
  size_t used = 0;

  // `bytes` of zeroed memory, whole 64-byte lines, and the buffer that holds it.
  std::pair<std::shared_ptr<Buffer>, char*> take(size_t bytes) {
    bytes = (bytes + 63) / 64 * 64;
    std::shared_ptr<Buffer> block;
    char* at;
    if (bytes > kArenaBytes / 4) {
      block = Buffer::allocate(bytes);
      at = static_cast<char*>(block->data());
    } else {
      if (!current || used + bytes > kArenaBytes) current = Buffer::allocate(kArenaBytes), used = 0;
      block = current;
      at = static_cast<char*>(current->data()) + used;
      used += bytes;
    }
    std::memset(at, 0, bytes);
    return {block, at};
  }
  // Lets the current arena go when no copy is in it.
  void drop_unheld() {
    if (current && current.use_count() == 1) current.reset(), used = 0;
  }
};

// The copy's layout for weight w (n rows of `words` 32-bit words) with scales s and biases b.
QmmRows16 layout(const Array& w, const Array& s, const Array& b, int group) {
  QmmRows16 r;
  r.n = w.shape(0), r.k = w.shape(1) * 8, r.blocks = (r.n + kRows16 - 1) / kRows16, r.group = group;
  r.half = s.dtype() == Dtype::float16 && b.dtype() == Dtype::float16;
  const int64_t params = r.blocks * (r.k / group) * kRows16;
  r.bytes = size_t(r.blocks * w.shape(1) * kRows16) * 4 + size_t(2 * params) * (r.half ? 2 : 4);
  return r;
}

std::shared_ptr<QmmRows16> interleave(const Array& w, const Array& s, const Array& b, int group, Arenas& arenas) {
  auto r = std::make_shared<QmmRows16>(layout(w, s, b, group));
  const int64_t n = r->n, words = w.shape(1), groups = r->k / group, blocks = r->blocks;
  const int64_t params = blocks * groups * kRows16;
  const size_t code_bytes = size_t(blocks * words * kRows16) * 4;  // whole lines: 16 rows of words
  char* base;
  std::tie(r->memory, base) = arenas.take(r->bytes);
  const uint32_t* src = w.data<uint32_t>();
  auto* codes = reinterpret_cast<uint32_t*>(base);
  auto* half = reinterpret_cast<uint16_t*>(base + code_bytes);
  auto* full = reinterpret_cast<float*>(base + code_bytes);
  r->codes = codes, r->params = base + code_bytes;
  const ConvertKernel to_float_s = kernels().convert[int(s.dtype())][int(Dtype::float32)];
  const ConvertKernel to_float_b = kernels().convert[int(b.dtype())][int(Dtype::float32)];
  const int64_t ssize = int64_t(size_of(s.dtype())), bsize = int64_t(size_of(b.dtype()));
  parallel_for(blocks, 16, [&](int64_t b0, int64_t b1) {
    std::vector<float> row_params(size_t(r->half ? 0 : 2 * groups));  // a row's scales, then biases
    for (int64_t blk = b0; blk < b1; ++blk)
      for (int64_t i = 0; i < kRows16 && blk * kRows16 + i < n; ++i) {
        const int64_t row = blk * kRows16 + i, at = blk * groups * kRows16 + i;
        for (int64_t c = 0; c < words; ++c) codes[(blk * words + c) * kRows16 + i] = src[row * words + c];
        if (!r->half) {
          to_float_s(s.data_bytes() + row * groups * ssize, 1, row_params.data(), groups);
          to_float_b(b.data_bytes() + row * groups * bsize, 1, row_params.data() + groups, groups);
        }
        for (int64_t g = 0; g < groups; ++g) {
          if (r->half) {
            std::memcpy(half + at + g * kRows16, s.data<f16>() + row * groups + g, 2);
            std::memcpy(half + params + at + g * kRows16, b.data<f16>() + row * groups + g, 2);
          } else {
            full[at + g * kRows16] = row_params[size_t(g)];
            full[params + at + g * kRows16] = row_params[size_t(groups + g)];
          }
        }
      }
  });
  return r;
}

struct Entry {
  std::shared_ptr<Buffer> w, s, b;  // held: see above
  std::shared_ptr<const QmmRows16> copy;
};
using Key = std::tuple<const void*, const void*, const void*, int64_t, int64_t, int>;

constexpr size_t kMaxSeen = 4096;  // weights remembered as seen once, past which all are forgotten

struct Cache {
  std::mutex mu;
  std::map<Key, Entry> entries;
  // Weights seen once, by their codes' buffer: a copy is made at a weight's second product, so a
  // weight made anew for each product (quantized in a training step, say) never pays for one.
  std::map<Key, std::weak_ptr<Buffer>> seen;
  int64_t bytes = 0;
  Arenas arenas;
};
// Drops the entries whose weights nobody else holds (under the cache's lock).
void drop_unheld(Cache& c) {
  for (auto it = c.entries.begin(); it != c.entries.end();) {
    const Entry& e = it->second;
    if (e.w.use_count() == 1 && e.s.use_count() == 1 && e.b.use_count() == 1) {
      c.bytes -= int64_t(e.copy->bytes);
      it = c.entries.erase(it);
    } else {
      ++it;
    }
  }
  c.arenas.drop_unheld();
}

Cache& cache() {
  static Cache* c = [] {
    memory::on_clear_cache([] {
      Cache& c = cache();
      std::lock_guard<std::mutex> l(c.mu);
      drop_unheld(c);
    });
    return new Cache();  // never destroyed: products may run during exit
  }();
  return *c;
}

}  // namespace

std::shared_ptr<const QmmRows16> rows16_for(const Array& w, const Array& s, const Array& b, int group) {
  if (isa() != Isa::avx512 || !cpu_has_vnni()) return nullptr;
  // Buffers written from outside (borrowed memory) could change under the copy.
  for (const Array* a : {&w, &s, &b})
    if (!a->buffer() || !a->buffer()->owned()) return nullptr;
  if (w.ndim() != 2 || w.dtype() != Dtype::uint32) return nullptr;
  Key key{w.data<uint32_t>(), s.data_bytes(), b.data_bytes(), w.shape(0), w.shape(1), group};
  Cache& c = cache();
  std::lock_guard<std::mutex> l(c.mu);
  if (auto it = c.entries.find(key); it != c.entries.end()) return it->second.copy;
  auto [at, first] = c.seen.try_emplace(key, w.buffer());
  if (first || at->second.lock() != w.buffer()) {  // a first product (or another buffer at that address)
    if (c.seen.size() > kMaxSeen)
      c.seen.clear();
    else
      at->second = w.buffer();
    return nullptr;
  }
  c.seen.erase(at);
  drop_unheld(c);  // weights dropped since
  if (c.bytes + int64_t(layout(w, s, b, group).bytes) > kMaxCachedBytes) return nullptr;
  std::shared_ptr<const QmmRows16> copy = interleave(w, s, b, group, c.arenas);
  c.entries.emplace(key, Entry{w.buffer(), s.buffer(), b.buffer(), copy});
  c.bytes += int64_t(copy->bytes);
  return copy;
}

}  // namespace nuvec::cpu
#endif
