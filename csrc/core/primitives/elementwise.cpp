#include "core/primitives/elementwise.h"

namespace nuvec {

#define NUVEC_NAME_ENTRY(name, ...) #name,
#define NUVEC_PARAMS_ENTRY(name, rule, accepts, Params, ...) OpParams(std::in_place_type<Params>).index(),
namespace {
constexpr const char* kUnaryNames[] = {NUVEC_UNARY_OPS(NUVEC_NAME_ENTRY)};
constexpr const char* kBinaryNames[] = {NUVEC_BINARY_OPS(NUVEC_NAME_ENTRY)};
constexpr size_t kUnaryParams[] = {NUVEC_UNARY_OPS(NUVEC_PARAMS_ENTRY)};
constexpr size_t kBinaryParams[] = {NUVEC_BINARY_OPS(NUVEC_PARAMS_ENTRY)};
}  // namespace
#undef NUVEC_NAME_ENTRY
#undef NUVEC_PARAMS_ENTRY

const char* op_name(UnaryOp op) { return kUnaryNames[int(op)]; }
const char* op_name(BinaryOp op) { return kBinaryNames[int(op)]; }
bool params_fit(UnaryOp op, const OpParams& p) { return p.index() == kUnaryParams[int(op)]; }
bool params_fit(BinaryOp op, const OpParams& p) { return p.index() == kBinaryParams[int(op)]; }

namespace {
bool same_rules(const Elementwise& a, const Elementwise& b) {
  return a.compute() == b.compute() && a.out_compute() == b.out_compute() && a.params() == b.params();
}
}  // namespace

bool Unary::is_equivalent(const Primitive& o) const {
  auto* u = dynamic_cast<const Unary*>(&o);
  return u && u->op_ == op_ && same_rules(*this, *u);
}
bool Binary::is_equivalent(const Primitive& o) const {
  auto* b = dynamic_cast<const Binary*>(&o);
  return b && b->op_ == op_ && same_rules(*this, *b);
}
bool Select::is_equivalent(const Primitive& o) const {
  auto* s = dynamic_cast<const Select*>(&o);
  return s && same_rules(*this, *s);
}

}  // namespace nuvec
