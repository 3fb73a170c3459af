// Dtypes, their properties and MLX's promotion table.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nuvec {

enum class Dtype : uint8_t {
  bool_,
  uint8,
  uint16,
  uint32,
  uint64,
  int8,
  int16,
  int32,
  int64,
  float16,
  float32,
  float64,
  bfloat16,
  complex64,
};
constexpr int kNumDtypes = 14;

enum class Kind : uint8_t { boolean, unsigned_int, signed_int, floating, complex };

size_t size_of(Dtype d);
const char* name_of(Dtype d);
Kind kind_of(Dtype d);
// The names in array files: safetensors' ("F32") and the .npy type code ("f4"; null for bfloat16).
const char* safetensors_name(Dtype d);
const char* npy_code(Dtype d);
std::optional<Dtype> from_safetensors_name(const std::string& name);
std::optional<Dtype> from_npy_code(const std::string& code);
inline bool is_integer(Dtype d) {
  Kind k = kind_of(d);
  return k == Kind::unsigned_int || k == Kind::signed_int;
}
inline bool is_floating(Dtype d) { return kind_of(d) == Kind::floating; }
inline bool is_complex(Dtype d) { return d == Dtype::complex64; }
inline bool is_inexact(Dtype d) { return is_floating(d) || is_complex(d); }
inline bool is_half(Dtype d) { return d == Dtype::float16 || d == Dtype::bfloat16; }

// MLX's symmetric promotion table.
Dtype promote(Dtype a, Dtype b);
// Integers and bool become float32; inexact types stay.
Dtype at_least_float(Dtype d);
// The type a kernel computes in: half types compute in float32.
inline Dtype compute_type(Dtype d) { return is_half(d) ? Dtype::float32 : d; }

}  // namespace nuvec
