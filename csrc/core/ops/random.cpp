// Random ops: the bit stream of a key. The samplers are compositions of ops
// (python/nuvec/random.py), as MLX's are.
#include <string>

#include "core/ops.h"
#include "core/primitives/random.h"

namespace nuvec {
namespace {
void check_key(const Array& key, const char* op) {
  if (key.dtype() != Dtype::uint32)
    throw OpError(op, std::string("a key must be uint32, got ") + name_of(key.dtype()));
  if (key.shape() != Shape{2}) throw OpError(op, "a key must have shape (2,)");
}
}  // namespace

Array random_bits(const Array& key, const Shape& shape, int width, Stream s) {
  check_key(key, "bits");
  check_shape(shape, "bits");
  Dtype d;
  switch (width) {
    case 1: d = Dtype::uint8; break;
    case 2: d = Dtype::uint16; break;
    case 4: d = Dtype::uint32; break;
    default: throw OpError("bits", "width must be 1, 2 or 4 bytes, got " + std::to_string(width));
  }
  return Array::lazy(shape, d, std::make_shared<RandomBits>(RandomKind::bits, width), {key}, s);
}

Array random_float(const Array& key, const Shape& shape, RandomKind kind, Stream s) {
  const char* op = kind == RandomKind::uniform ? "uniform" : "normal";
  check_key(key, op);
  check_shape(shape, op);
  if (kind == RandomKind::bits) throw OpError(op, "bits are not a float kind");
  return Array::lazy(shape, Dtype::float32, std::make_shared<RandomBits>(kind, 4), {key}, s);
}

}  // namespace nuvec
