#include "core/dtype.h"

namespace nuvec {
namespace {
struct Info {
  const char* name;
  size_t size;
  Kind kind;
};
constexpr Info kInfo[kNumDtypes] = {
    {"bool", 1, Kind::boolean},        {"uint8", 1, Kind::unsigned_int},
    {"uint16", 2, Kind::unsigned_int}, {"uint32", 4, Kind::unsigned_int},
    {"uint64", 8, Kind::unsigned_int}, {"int8", 1, Kind::signed_int},
    {"int16", 2, Kind::signed_int},    {"int32", 4, Kind::signed_int},
    {"int64", 8, Kind::signed_int},    {"float16", 2, Kind::floating},
    {"float32", 4, Kind::floating},    {"float64", 8, Kind::floating},
    {"bfloat16", 2, Kind::floating},   {"complex64", 8, Kind::complex},
};

using D = Dtype;
constexpr D b = D::bool_, u8 = D::uint8, u16 = D::uint16, u32 = D::uint32, u64 = D::uint64,
            i8 = D::int8, i16 = D::int16, i32 = D::int32, i64 = D::int64, f16 = D::float16,
            f32 = D::float32, f64 = D::float64, bf = D::bfloat16, c = D::complex64;
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
Dtype promote(Dtype a, Dtype b) { return kPromote[int(a)][int(b)]; }
Dtype at_least_float(Dtype d) { return is_inexact(d) ? d : Dtype::float32; }

}  // namespace nuvec
