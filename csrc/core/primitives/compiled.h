// A fused group of a compiled graph: element-wise steps, and reductions over the last axis that
// read them, run as one program over tiles of rows (backend kernels interpret it). Every value of
// the program has a form relative to the group's domain shape S (rank k, last axis D):
//   full: S;  col: S[:-1] + [1];  col_flat: S[:-1];  row: [1, ...] + [D];  scalar: one element.
// A col value holds one element per row, a row value one per column; so a tile of rows needs only
// its rows of full values, and a row of 4096 floats stays in cache between the steps.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "core/array.h"
#include "core/primitive.h"

namespace nuvec {

enum class Form : int { full, col, col_flat, row, scalar };

// The form of `shape` against domain `domain`, or -1 when it has none (another broadcast).
int form_of(const Shape& shape, const Shape& domain);
// The shape a value of form `f` and rank `rank` has in domain `domain`.
Shape shape_of(Form f, int rank, const Shape& domain);

struct Instruction {
  std::shared_ptr<Primitive> primitive;  // Unary, Binary, Select, or a last-axis Reduce
  std::vector<int> args;                 // slots: the program's inputs first, then results
  Form form;                             // of the result
  int rank;                              // of the result
  Dtype dtype;
};

struct Program {
  std::vector<Form> input_forms;
  std::vector<int> input_ranks;
  std::vector<Instruction> code;  // result of code[i] is slot input_forms.size() + i
  std::vector<int> outputs;       // slots stored as the node's outputs, in order
  bool reduces = false;           // some instruction reduces rows
  // What a backend works out once per program (its kernels), kept here for later evaluations.
  mutable std::mutex backend_mutex;
  mutable std::shared_ptr<const void> backend_data;
};

class Compiled : public Primitive {
 public:
  // `traced`: the domain is the trace's, whose input shapes have the program's forms (a shapeless
  // replay's new domain does not promise it: the kernel checks).
  Compiled(std::shared_ptr<const Program> program, Shape domain, bool traced = true)
      : program_(std::move(program)), domain_(std::move(domain)), traced_(traced) {}
  const char* name() const override { return "compiled"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* c = dynamic_cast<const Compiled*>(&o);
    return c && c->program_ == program_ && c->domain_ == domain_;
  }
  const Program& program() const { return *program_; }
  const std::shared_ptr<const Program>& shared_program() const { return program_; }
  const Shape& domain() const { return domain_; }
  bool traced_domain() const { return traced_; }
  // The program's steps as ordinary nodes over `inputs`: every slot, inputs first (what the
  // transforms see).
  std::vector<Array> expand(const std::vector<Array>& inputs) const;

 private:
  std::shared_ptr<const Program> program_;
  Shape domain_;
  bool traced_;
};

// Each instruction of c's program as its own kernel on `device`, over whole arrays: the CPU's
// fallback (inputs whose shapes do not have the traced forms, or an instruction its build has no
// fused kernel for), and a GPU's way to run a compiled group, with the bits of the ops evaluated
// one at a time.
void run_unfused(const Compiled& c, const std::vector<Array>& in, std::vector<Array>& out, DeviceType device);

}  // namespace nuvec
