// What the codec tables (export_codecs*.cpp) share: reading and writing parameters, matching a
// primitive's class, and the common shape rules of a shapeless replay.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "core/ops/common.h"
#include "io/export.h"

namespace nuvec::io::codec {

inline constexpr const char* kOp = "import_function";

[[noreturn]] inline void bad(const std::string& what) { throw OpError(kOp, "invalid function file: " + what); }

template <class T> Json ints(const std::vector<T>& v) {
  std::vector<Json> items;
  for (T x : v) items.push_back(json_int(int64_t(x)));
  return json_list(std::move(items));
}
inline std::vector<int64_t> int_list(const Json& j) {
  if (j.type != Json::array) bad("expected a list of integers");
  std::vector<int64_t> v;
  for (const Json& x : j.items) {
    if (x.type != Json::integer) bad("expected an integer");
    v.push_back(x.i);
  }
  return v;
}
inline std::vector<int> int32_list(const Json& j) {
  std::vector<int> v;
  for (int64_t x : int_list(j)) v.push_back(int(x));
  return v;
}
inline int64_t integer(const Json& j) {
  if (j.type != Json::integer) bad("expected an integer");
  return j.i;
}
inline int64_t int_at(const Json& j, const char* key) { return integer(member(j, key)); }
// An object of named flags (written as 0 or 1).
inline Json flags(std::initializer_list<std::pair<const char*, bool>> named) {
  std::vector<std::pair<std::string, Json>> m;
  for (auto [name, value] : named) m.emplace_back(name, json_int(value));
  return json_obj(std::move(m));
}
inline bool flag_at(const Json& j, const char* key) { return integer(member(j, key)) != 0; }
// Doubles travel as text: JSON has no inf or nan, and 17 digits round-trip exactly.
inline Json real(double d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return json_str(buf);
}
inline double real_of(const Json& j) {
  if (j.type != Json::string) bad("expected a number as text");
  return std::strtod(j.s.c_str(), nullptr);
}
inline double real_at(const Json& j, const char* key) { return real_of(member(j, key)); }
inline const std::string& text(const Json& j) {
  if (j.type != Json::string) bad("expected a string");
  return j.s;
}

// An enum value by its name among `n` values named by `name`.
template <class E> E by_name(const Json& j, int n, const char* (*name)(E)) {
  for (int i = 0; i < n; ++i)
    if (text(j) == name(E(i))) return E(i);
  bad("unknown operation '" + text(j) + "'");
}

template <class P> bool is(const Primitive& p) { return dynamic_cast<const P*>(&p) != nullptr; }
template <class P> const P& as(const Primitive& p) { return static_cast<const P&>(p); }

// The shape rule of a primitive whose output has its first input's shape.
inline Shape same(const Primitive&, const std::vector<Array>& in, const Shape&) { return in[0].shape(); }

// A shapeless replay's check of its new shapes (the kernels trust them).
inline void need(bool ok, const char* op, const char* what) {
  if (!ok) throw OpError(kOp, std::string(op) + " of the new shapes: " + what);
}

// An output count for Codec::outputs.
template <size_t N> size_t outputs(const Primitive&) { return N; }

// A row for a class whose parameters are none.
#define NUVEC_PLAIN(P, tag, shape_fn, ...)                                               \
  Codec {                                                                                \
    tag, is<P>, [](const Primitive&) { return json_obj({}); },                           \
        [](const Json&) -> std::shared_ptr<Primitive> { return std::make_shared<P>(); }, \
        shape_fn __VA_OPT__(, ) __VA_ARGS__                                              \
  }

// The rows of each family's file; codec_for and codec_named search them all in this order.
std::span<const Codec> core_codecs();
std::span<const Codec> linalg_codecs();
std::span<const Codec> fast_codecs();
std::span<const Codec> product_codecs();

}  // namespace nuvec::io::codec
