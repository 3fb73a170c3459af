// The base of every primitive: one class per operation, carrying its rules. Backends define
// the eval_* members in their own files (backend/cpu/<family>.cpp), so the core never sees them.
#pragma once
#include <vector>

#include "core/array.h"

namespace nuvec {

class Primitive {
 public:
  virtual ~Primitive() = default;
  virtual const char* name() const = 0;
  // Fill `outputs` (unevaluated, shapes and dtypes set) from evaluated `inputs`.
  virtual void eval_cpu(const std::vector<Array>& inputs, std::vector<Array>& outputs) = 0;
  // For common-subexpression elimination: same operation with the same parameters.
  virtual bool is_equivalent(const Primitive& other) const { return false; }
};

}  // namespace nuvec
