#include "core/dtype.h"

#include <optional>

namespace nuvec {
namespace {
// Every name a dtype goes by: nuvec's (MLX's), safetensors' and NumPy's .npy type code (the
// descr without its byte-order character; bfloat16 has none).
struct Info {
  const char* name;
  size_t size;
  Kind kind;
  const char* safetensors;
  const char* npy;
};
constexpr Info kInfo[kNumDtypes] = {
    {"bool", 1, Kind::boolean, "BOOL", "b1"},         {"uint8", 1, Kind::unsigned_int, "U8", "u1"},
    {"uint16", 2, Kind::unsigned_int, "U16", "u2"},   {"uint32", 4, Kind::unsigned_int, "U32", "u4"},
    {"uint64", 8, Kind::unsigned_int, "U64", "u8"},   {"int8", 1, Kind::signed_int, "I8", "i1"},
    {"int16", 2, Kind::signed_int, "I16", "i2"},      {"int32", 4, Kind::signed_int, "I32", "i4"},
    {"int64", 8, Kind::signed_int, "I64", "i8"},      {"float16", 2, Kind::floating, "F16", "f2"},
    {"float32", 4, Kind::floating, "F32", "f4"},      {"float64", 8, Kind::floating, "F64", "f8"},
    {"bfloat16", 2, Kind::floating, "BF16", nullptr}, {"complex64", 8, Kind::complex, "C64", "c8"},
};

std::optional<Dtype> find(const std::string& name, const char* Info::* column) {
  for (int i = 0; i < kNumDtypes; ++i)
    if (kInfo[i].*column && name == kInfo[i].*column) return Dtype(i);
  return std::nullopt;
}

using D = Dtype;
constexpr D b = D::bool_, u8 = D::uint8, u16 = D::uint16, u32 = D::uint32, u64 = D::uint64, i8 = D::int8,
            i16 = D::int16, i32 = D::int32, i64 = D::int64, f16 = D::float16, f32 = D::float32, f64 = D::float64,
            bf = D::bfloat16, c = D::complex64;
// Rows and columns in enum order (COMPAT.md).
constexpr D kPromote[kNumDtypes][kNumDtypes] = {
    {b, u8, u16, u32, u64, i8, i16, i32, i64, f16, f32, f64, bf, c},
    {u8, u8, u16, u32, u64, i16, i16, i32, i64, f16, f32, f64, bf, c},
    {u16, u16, u16, u32, u64, i32, i32, i32, i64, f16, f32, f64, bf, c},
    {u32, u32, u32, u32, u64, i64, i64, i64, i64, f16, f32, f64, bf, c},
    {u64, u64, u64, u64, u64, f32, f32, f32, f32, f16, f32, f64, bf, c},
    {i8, i16, i32, i64, f32, i8, i16, i32, i64, f16, f32, f64, bf, c},
    {i16, i16, i32, i64, f32, i16, i16, i32, i64, f16, f32, f64, bf, c},
    {i32, i32, i32, i64, f32, i32, i32, i32, i64, f16, f32, f64, bf, c},
    {i64, i64, i64, i64, f32, i64, i64, i64, i64, f16, f32, f64, bf, c},
    {f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f32, f64, f32, c},
    {f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f64, f32, c},
    {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, c},
    {bf, bf, bf, bf, bf, bf, bf, bf, bf, f32, f32, f64, bf, c},
    {c, c, c, c, c, c, c, c, c, c, c, c, c, c},
};
}  // namespace

size_t size_of(Dtype d) { return kInfo[int(d)].size; }
const char* name_of(Dtype d) { return kInfo[int(d)].name; }
Kind kind_of(Dtype d) { return kInfo[int(d)].kind; }
const char* safetensors_name(Dtype d) { return kInfo[int(d)].safetensors; }
const char* npy_code(Dtype d) { return kInfo[int(d)].npy; }
std::optional<Dtype> from_safetensors_name(const std::string& name) { return find(name, &Info::safetensors); }
std::optional<Dtype> from_npy_code(const std::string& code) { return find(code, &Info::npy); }
Dtype promote(Dtype a, Dtype b) { return kPromote[int(a)][int(b)]; }
Dtype at_least_float(Dtype d) { return is_inexact(d) ? d : Dtype::float32; }

}  // namespace nuvec
