// The CPU kernel of a compiled fused group: an interpreter whose instructions are the element-wise
// and row-reduction kernels themselves, each run over a tile (a chunk of elements, or whole rows
// when the program reduces rows or reads row and column vectors). A tile's intermediates live in
// a small per-thread scratch that stays in cache, so the group reads its inputs and writes its
// outputs once from memory. Row and scalar values do not depend on the tile: they are computed
// once, before the tiles. Each instruction computes exactly what its own kernel computes alone
// (rows of up to 2^16 elements reduce in one piece there too), so the bits are the uncompiled ones.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/reduce.h"
#include "core/ops/common.h"
#include "core/primitives/compiled.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/reduce.h"
#include "core/threads.h"

namespace nuvec::cpu {
namespace {

constexpr int64_t kTileElements = 4096;  // elements of a row tile's full values (whole rows)
// Elements per tile of a flat program: its few live values stay in the L1. With the next tile's
// inputs prefetched, 1024 ran exp(sin(x)) * 2 + 1 at 6.7 ms on 16M float32 against 7.3 ms for 2048
// on the AVX-512 Xeon (2048 had been 5-10% faster than 1024 on a Zen 3 without the prefetch).
constexpr int64_t kFlatTile = 1024;
constexpr int kMaxArgs = 3;
bool tile_free(Form f) { return f == Form::row || f == Form::scalar; }
bool per_row(Form f) { return f == Form::col || f == Form::col_flat; }

// Where a slot's values are: memory that every tile indexes (an input, an output, a prologue
// result), or a place in the tile's scratch.
struct Place {
  char* base = nullptr;  // memory indexed by the tile's first row / element
  size_t scratch = 0;    // else: offset in the scratch
  bool in_scratch = false;
  Form form = Form::full;
  size_t item = 0;
  char* streamed = nullptr;  // a large full output computed in scratch, then streamed here
};

// A program's kernels, found once (Program::backend_data keeps them).
struct ProgramKernels {
  std::vector<EwKernel> ew;  // per instruction (null for reductions and conversions)
  std::vector<ConvertKernel> convert;
  std::vector<const ReduceKernel*> reduce;
  std::vector<int> last_read;  // per slot (inputs, then results): the last instruction that reads it, or -1
  std::vector<bool> ew_read;   // per input: read by element-wise kernels only (which take scalars)
  // Per instruction: a float32 square that only its row sum reads, never computed on its own
  // (`folded`), and that sum, which reads the square's operand (`of_squares`).
  std::vector<bool> folded, of_squares;
  bool complete = true;  // every instruction has a kernel in this build
  bool flat = true;      // nothing reduces rows, nothing is a row or col vector
};

// The operand an instruction's kernel reads as its first: a sum of squares reads the square's.
int first_operand(const Program& prog, const ProgramKernels& k, size_t i) {
  int a = prog.code[i].args[0];
  return k.of_squares[i] ? prog.code[size_t(a) - prog.input_forms.size()].args[0] : a;
}

// Marks each float32 square read by nothing but a float32 row sum (a variance's, an RMS norm's):
// the sum then squares as it reads (the same bits), and the square takes no pass or scratch.
void fold_squares(const Program& prog, ProgramKernels& k) {
  const size_t ni = prog.input_forms.size(), n = prog.code.size();
  std::vector<int> readers(ni + n, 0);
  for (const Instruction& ins : prog.code)
    for (int a : ins.args) ++readers[size_t(a)];
  for (int o : prog.outputs) ++readers[size_t(o)];
  for (size_t i = 0; i < n; ++i) {
    const Instruction& ins = prog.code[i];
    if (!k.reduce[i] || !k.reduce[i]->row_of_squares || ins.dtype != Dtype::float32) continue;
    const size_t a = size_t(ins.args[0]);
    if (a < ni || readers[a] != 1) continue;
    const Instruction& sq = prog.code[a - ni];
    auto* u = dynamic_cast<const Unary*>(sq.primitive.get());
    if (!u || u->op() != UnaryOp::square || sq.dtype != Dtype::float32 || sq.form != Form::full) continue;
    k.folded[a - ni] = true, k.of_squares[i] = true;
    const size_t operand = size_t(sq.args[0]);
    k.last_read[operand] = std::max(k.last_read[operand], int(i));
    if (operand < ni) k.ew_read[operand] = false;  // the sum reads every element
  }
}

const ProgramKernels& kernels_of(const Program& prog) {
  std::lock_guard<std::mutex> lock(prog.backend_mutex);
  if (!prog.backend_data) {
    auto k = std::make_shared<ProgramKernels>();
    size_t n = prog.code.size();
    k->ew.assign(n, nullptr), k->convert.assign(n, nullptr), k->reduce.assign(n, nullptr);
    k->last_read.assign(prog.input_forms.size() + n, -1);
    k->ew_read.assign(prog.input_forms.size(), true);
    k->folded.assign(n, false), k->of_squares.assign(n, false);
    for (size_t i = 0; i < n; ++i) {
      const Instruction& ins = prog.code[i];
      for (int a : ins.args) k->last_read[size_t(a)] = int(i);
      k->flat &= ins.form == Form::full || ins.form == Form::scalar;
      auto* u = dynamic_cast<const Unary*>(ins.primitive.get());
      if (dynamic_cast<const Reduce*>(ins.primitive.get()) || (u && u->op() == UnaryOp::copy))
        for (int a : ins.args)
          if (size_t(a) < prog.input_forms.size()) k->ew_read[size_t(a)] = false;
      if (auto* r = dynamic_cast<const Reduce*>(ins.primitive.get())) {
        k->reduce[i] = &reduce_kernels().reduce[int(r->op())][int(ins.dtype)];
        k->complete &= k->reduce[i]->row != nullptr;
        k->flat = false;
        continue;
      }
      auto& e = static_cast<const Elementwise&>(*ins.primitive);
      if (u && u->op() == UnaryOp::copy) {
        k->convert[i] = kernels().convert[int(e.compute()[0])][int(e.out_compute())];
        k->complete &= k->convert[i] != nullptr;
      } else {
        k->ew[i] = elementwise_kernel(e);
        k->complete &= k->ew[i] != nullptr;
      }
    }
    for (Form f : prog.input_forms) k->flat &= f == Form::full || f == Form::scalar;
    fold_squares(prog, *k);
    prog.backend_data = k;
  }
  return *static_cast<const ProgramKernels*>(prog.backend_data.get());
}

struct Plan {
  int64_t rows = 1, width = 1;  // the domain as rows x width (flat: one row of every element)
  int64_t tile = 1;             // rows (row mode) or elements (flat mode) per tile
  bool flat = false;
  std::vector<Place> places;  // per slot
  const ProgramKernels& k;
  size_t scratch_bytes = 0;
};

// The slot's values for rows [r0, r0 + n) (or elements, flat), at `scratch`.
char* at(const Place& pl, const Plan& plan, char* scratch, int64_t r0) {
  if (pl.in_scratch) return scratch + pl.scratch;
  switch (pl.form) {
    case Form::full: return pl.base + r0 * (plan.flat ? 1 : plan.width) * int64_t(pl.item);
    case Form::col:
    case Form::col_flat: return pl.base + r0 * int64_t(pl.item);
    default: return pl.base;
  }
}

// The elements of a value of form f that one call covers for n rows of a tile (flat: elements).
int64_t tile_length(Form f, const Plan& plan, int64_t n) {
  if (f == Form::row) return plan.width;
  if (f == Form::scalar) return 1;
  return f == Form::full && !plan.flat ? n * plan.width : n;
}

// Runs instruction i of `prog` over rows [r0, r0 + n) (flat: elements).
void step(const Program& prog, const Plan& plan, size_t i, char* scratch, int64_t r0, int64_t n) {
  const Instruction& ins = prog.code[i];
  size_t ni = prog.input_forms.size();
  const Place& res = plan.places[ni + i];
  char* out = at(res, plan, scratch, r0);
  if (const ReduceKernel* k = plan.k.reduce[i]) {
    const Place& src = plan.places[size_t(first_operand(prog, plan.k, i))];
    const char* x = at(src, plan, scratch, r0);
    auto row = plan.k.of_squares[i] ? k->row_of_squares : k->row;
    for (int64_t r = 0; r < n; ++r)
      row(x + r * plan.width * int64_t(src.item), plan.width, out + r * int64_t(res.item));
    return;
  }
  if (ConvertKernel k = plan.k.convert[i]) {  // unary: the operand has the result's form
    const Place& src = plan.places[size_t(ins.args[0])];
    k(at(src, plan, scratch, r0), 1, out, tile_length(res.form, plan, n));
    return;
  }
  auto* e = static_cast<const Elementwise*>(ins.primitive.get());
  const void* ptrs[kMaxArgs];
  bool scalar[kMaxArgs];
  size_t nargs = ins.args.size();
  bool whole = true;  // every operand spans the tile as the result does: one call
  for (size_t k = 0; k < nargs; ++k) {
    const Place& a = plan.places[size_t(ins.args[k])];
    ptrs[k] = at(a, plan, scratch, r0);
    scalar[k] = a.form == Form::scalar && res.form != Form::scalar;
    whole &= a.form == res.form || a.form == Form::scalar || (per_row(a.form) && per_row(res.form));
  }
  if (res.form != Form::full || plan.flat || whole) {
    plan.k.ew[i](ptrs, scalar, out, tile_length(res.form, plan, n), e->params());
    return;
  }
  // A full result from row or col operands: one call per row (a col operand is that row's scalar).
  for (int64_t r = 0; r < n; ++r) {
    const void* row_ptrs[kMaxArgs];
    bool row_scalar[kMaxArgs];
    for (size_t k = 0; k < nargs; ++k) {
      const Place& a = plan.places[size_t(ins.args[k])];
      const char* p = static_cast<const char*>(ptrs[k]);
      row_scalar[k] = scalar[k] || per_row(a.form);
      row_ptrs[k] = a.form == Form::full ? p + r * plan.width * int64_t(a.item)
                    : per_row(a.form)    ? p + r * int64_t(a.item)
                                         : p;
    }
    plan.k.ew[i](row_ptrs, row_scalar, out + r * plan.width * int64_t(res.item), plan.width, e->params());
  }
}

// Gives each result without memory of its own (no base yet) a place in the tile's scratch and
// returns the scratch's size. A place is taken again once no later instruction reads its value, so
// the tile's values stay few and in the L1 (a layer norm written with plain ops keeps two rows of
// values instead of three); an element-wise step writes over an operand of its own form and item
// size that it reads for the last time (its kernels read each element before they write it).
size_t place_in_scratch(const Program& prog, const std::vector<int>& last_read, Plan& plan) {
  const size_t ni = prog.input_forms.size(), n = prog.code.size();
  std::vector<std::pair<size_t, size_t>> free;  // (bytes, offset) of places no value holds
  size_t end = 0;
  std::vector<size_t> bytes(ni + n, 0), dying;  // dying: scratch values read for the last time here
  for (size_t i = 0; i < n; ++i) {
    Place& pl = plan.places[ni + i];
    const Instruction& ins = prog.code[i];
    if (plan.k.folded[i]) continue;  // never computed: no place
    dying.clear();
    for (size_t j = 0; j < ins.args.size(); ++j)
      if (size_t a = j ? size_t(ins.args[j]) : size_t(first_operand(prog, plan.k, i));
          plan.places[a].in_scratch && last_read[a] == int(i) &&
          std::find(dying.begin(), dying.end(), a) == dying.end())
        dying.push_back(a);
    if (!pl.base) {
      const int64_t count = ins.form == Form::full ? plan.tile * (plan.flat ? 1 : plan.width) : plan.tile;
      bytes[ni + i] = (size_t(count) * pl.item + 63) / 64 * 64;
      pl.in_scratch = true;
      auto over = std::find_if(dying.begin(), dying.end(), [&](size_t a) {
        return plan.k.ew[i] && plan.places[a].form == ins.form && plan.places[a].item == pl.item;
      });
      auto reuse = std::find_if(free.begin(), free.end(), [&](auto f) { return f.first == bytes[ni + i]; });
      if (over != dying.end()) {
        pl.scratch = plan.places[*over].scratch;
        dying.erase(over);
      } else if (reuse != free.end()) {
        pl.scratch = reuse->second;
        free.erase(reuse);
      } else {
        pl.scratch = end;
        end += bytes[ni + i];
      }
      if (last_read[ni + i] < 0) dying.push_back(ni + i);  // a streamed output nothing reads later
    }
    for (size_t a : dying) free.emplace_back(bytes[a], plan.places[a].scratch);
  }
  return end;
}

void eval_compiled(const Compiled& c, const std::vector<Array>& in, std::vector<Array>& out) {
  const Program& prog = c.program();
  const Shape& domain = c.domain();
  size_t ni = prog.input_forms.size();
  const ProgramKernels& pk = kernels_of(prog);
  Plan plan{1, 1, 1, pk.flat, {}, pk, 0};
  bool fits = pk.complete;
  for (size_t k = 0; k < ni && fits && !c.traced_domain(); ++k)
    fits &= form_of(in[k].shape(), domain) == int(prog.input_forms[k]);
  if (!fits || shape_size(domain) == 0) {
    run_unfused(c, in, out, DeviceType::cpu);
    return;
  }
  plan.width = domain.empty() ? 1 : domain.back();
  plan.rows = shape_size(domain) / plan.width;
  if (plan.flat) plan.rows = shape_size(domain), plan.width = 1;
  plan.tile = std::min(plan.rows, plan.flat ? kFlatTile : std::max<int64_t>(1, kTileElements / plan.width));
  // Inputs: row-major data (a contiguous copy of any other layout), or one value broadcast
  // everywhere (all strides 0: a gradient's seed, a fill), read as a scalar.
  std::vector<Array> held;
  plan.places.resize(ni + prog.code.size());
  for (size_t k = 0; k < ni; ++k) {
    const Array* a = &in[k];
    bool one = std::all_of(a->strides().begin(), a->strides().end(), [](int64_t st) { return st == 0; });
    if (one && a->size() > 1 && pk.ew_read[k]) {
      plan.places[k] = {a->data_bytes(), 0, false, Form::scalar, a->itemsize()};
      continue;
    }
    if (!a->row_contiguous() && a->size() > 1) {
      Array copy = Array::allocate(a->shape(), a->dtype());
      copy_into(*a, copy);
      held.push_back(copy);
      a = &held.back();
    }
    plan.places[k] = {a->data_bytes(), 0, false, prog.input_forms[k], a->itemsize()};
  }
  // Outputs: each takes a full input's buffer when nothing reads that input after it is written.
  const std::vector<int>& last_read = pk.last_read;
  long holders = out.size() > 1 ? long(out.size()) : 1;
  for (size_t k = 0; k < out.size(); ++k) {
    size_t slot = size_t(prog.outputs[k]);
    size_t i = slot - ni;
    bool donated = false;
    for (size_t j = 0; j < ni && !donated && prog.code[i].form == Form::full; ++j)
      if (prog.input_forms[j] == Form::full && last_read[j] <= int(i) && last_read[j] >= 0 &&
          in[j].dtype() == out[k].dtype())
        donated = donate(in[j], out[k], holders);
    if (!donated) out[k].allocate_contiguous();
    plan.places[slot] = {out[k].data_bytes(), 0, false, prog.code[i].form, out[k].itemsize()};
    if (prog.code[i].form == Form::full && stream_output(out[k].nbytes())) {
      plan.places[slot].streamed = plan.places[slot].base;  // given a scratch slot below
      plan.places[slot].base = nullptr;
    }
  }
  // Row and scalar results not stored get memory of their own (computed once below); the others
  // a place in the tile's scratch.
  std::vector<std::unique_ptr<char[]>> prologue_memory;
  for (size_t i = 0; i < prog.code.size(); ++i) {
    const Instruction& ins = prog.code[i];
    Place& pl = plan.places[ni + i];
    if (pl.base) continue;
    pl.form = ins.form;
    pl.item = size_of(ins.dtype);
    // (a streamed output is full, never tile-free: it takes the scratch branch)
    if (tile_free(ins.form)) {
      size_t n = ins.form == Form::row ? size_t(plan.width) : 1;
      prologue_memory.emplace_back(new char[n * pl.item + 64]);
      pl.base = prologue_memory.back().get();
    }
  }
  plan.scratch_bytes = place_in_scratch(prog, pk.last_read, plan);
  for (size_t i = 0; i < prog.code.size(); ++i)
    if (tile_free(prog.code[i].form)) step(prog, plan, i, nullptr, 0, 1);
  int64_t tiles = (plan.rows + plan.tile - 1) / plan.tile;
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / (plan.tile * (plan.flat ? 1 : plan.width)));
  // The full inputs read element by element: the next tile's share of them is prefetched before
  // each instruction (the hardware prefetchers restart at every 4 KiB page). Row programs ask into
  // L2: their next row's 16 KiB asked into L1 in bursts waited on the line-fill buffers (plain-ops
  // layer and RMS norms 5-7% faster); flat programs' smaller bursts measured better into L1.
  std::vector<std::pair<const char*, int64_t>> streams;  // base, bytes per row (flat: per element)
  for (size_t k = 0; k < ni; ++k)
    if (const Place& pl = plan.places[k]; pl.form == Form::full)
      streams.emplace_back(pl.base, (plan.flat ? 1 : plan.width) * int64_t(pl.item));
  const int64_t steps = std::max<int64_t>(1, int64_t(prog.code.size()));
  parallel_for(tiles, grain, [&](int64_t b, int64_t e) {
    thread_local std::vector<char> buffer;
    if (buffer.size() < plan.scratch_bytes + 64) buffer.resize(plan.scratch_bytes + 64);
    char* scratch = buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64;
    bool streamed = false;
    for (int64_t t = b; t < e; ++t) {
      int64_t r0 = t * plan.tile, n = std::min(plan.tile, plan.rows - r0);
      int64_t next = std::min(plan.tile, plan.rows - r0 - n);  // rows of the next tile
      for (size_t i = 0; i < prog.code.size(); ++i) {
        // (A last tile asks for nothing: two divisions a stream and instruction spared per call.)
        if (next)
          for (auto [base, span] : streams) {  // in bytes
            const int64_t lo = next * span * int64_t(i) / steps, hi = next * span * int64_t(i + 1) / steps;
            prefetch_elements(base, 1, (r0 + n) * span + lo, hi - lo, !plan.flat);
          }
        if (tile_free(prog.code[i].form) || pk.folded[i]) continue;
        step(prog, plan, i, scratch, r0, n);
        if (const Place& pl = plan.places[ni + i]; pl.streamed) {
          int64_t len = tile_length(pl.form, plan, n);
          stream_copy(pl.streamed + r0 * (plan.flat ? 1 : plan.width) * int64_t(pl.item), scratch + pl.scratch,
                      size_t(len) * pl.item);
          streamed = true;
        }
      }
    }
    if (streamed) stream_fence();  // the lines reach memory before another thread reads them
  });
}

}  // namespace

void register_compiled_kernels(Backend& b) { b.add<Compiled, eval_compiled>(); }

}  // namespace nuvec::cpu
