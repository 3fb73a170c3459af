// The C API's internals: what a handle holds and the boundary that turns C++ exceptions into
// error-handler calls. Each handle's ctx points to a heap-held C++ value (nuvec_array: an Array,
// sharing its node with every other holder, Python's included).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nuvec/nuvec.h>
#include "core/array.h"
#include "core/device.h"

namespace nuvec::capi {

// An array handle's value: the Array and its shape as C ints (nuvec_array_shape's, made on demand).
struct ArrayBox {
  ArrayBox(Array a) : array(std::move(a)) {}  // NOLINT: handles are set from arrays
  Array array;
  std::vector<int> shape;
};

// The C++ value behind each handle type.
template <class H> struct Held;
template <> struct Held<nuvec_array> { using type = ArrayBox; };
template <> struct Held<nuvec_stream> { using type = Stream; };
template <> struct Held<nuvec_device> { using type = Device; };
template <> struct Held<nuvec_vector_array> { using type = std::vector<Array>; };
template <> struct Held<nuvec_map_string_to_array> { using type = std::map<std::string, Array>; };
template <> struct Held<nuvec_map_string_to_string> { using type = std::map<std::string, std::string>; };

template <class H> typename Held<H>::type& get(H h, const char* fn) {
  if (!h.ctx) throw std::invalid_argument(std::string(fn) + ": an empty handle (made by *_new() and never set)");
  return *static_cast<typename Held<H>::type*>(h.ctx);
}
// Replaces the handle's value (making it when the handle is empty); returns 0.
template <class H> int set(H* h, typename Held<H>::type v) {
  if (h->ctx)
    *static_cast<typename Held<H>::type*>(h->ctx) = std::move(v);
  else
    h->ctx = new typename Held<H>::type(std::move(v));
  return 0;
}
template <class H> int release(H h) {
  delete static_cast<typename Held<H>::type*>(h.ctx);
  return 0;
}

// For the Python bridge (csrc/python/capi_bridge.cpp): a handle over `a` (sharing its node) and
// the array a handle holds.
nuvec_array wrap_array(Array a);
const Array& unwrap_array(nuvec_array h, const char* fn);

// Called from a catch block: passes the current exception's message, prefixed with the C
// function's name, to the error handler; returns 1.
int fail(const char* fn);
void report(const std::string& msg);
// Registers the CPU backend on first use (a C program has no Python module to do it); returns s.
Stream ready(Stream s);

Dtype to_dtype(nuvec_dtype d);
nuvec_dtype from_dtype(Dtype d);

}  // namespace nuvec::capi
