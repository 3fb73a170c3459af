// The map handles of the C API (nuvec_map_string_to_array, nuvec_map_string_to_string), as
// mlx-c's. An iterator holds a position in its map (map_ctx), so it walks the map as it is then.
#include "c_api/capi.h"

using namespace nuvec;
using namespace nuvec::capi;

namespace {

std::string key_of(const char* key) {
  if (!key) throw std::invalid_argument("a NULL key or value");
  return key;
}
template <class H> using Position = typename Held<H>::type::const_iterator;
// An iterator over the map `h`: its position (ctx) and the map (map_ctx).
template <class H, class It> It iterator_new(H h) {
  auto* m = static_cast<typename Held<H>::type*>(h.ctx);
  return {m ? new Position<H>(m->cbegin()) : nullptr, m};
}
// The iterator's next entry, or nullptr after the last one.
template <class H, class It> const typename Held<H>::type::value_type* next(It it, const char* fn) {
  if (!it.ctx) throw std::invalid_argument(std::string(fn) + ": an iterator over an empty map handle");
  auto& pos = *static_cast<Position<H>*>(it.ctx);
  if (pos == get(H{it.map_ctx}, fn).cend()) return nullptr;
  return &*pos++;
}

}  // namespace

extern "C" {

nuvec_map_string_to_array nuvec_map_string_to_array_new(void) { return {new Held<nuvec_map_string_to_array>::type()}; }
int nuvec_map_string_to_array_set(nuvec_map_string_to_array* map, const nuvec_map_string_to_array src) {
  try {
    return set(map, get(src, "nuvec_map_string_to_array_set"));
  } catch (...) { return fail("nuvec_map_string_to_array_set"); }
}
int nuvec_map_string_to_array_free(nuvec_map_string_to_array map) { return release(map); }
int nuvec_map_string_to_array_insert(nuvec_map_string_to_array map, const char* key, const nuvec_array value) {
  try {
    get(map, "nuvec_map_string_to_array_insert")
        .insert_or_assign(key_of(key), get(value, "nuvec_map_string_to_array_insert").array);
    return 0;
  } catch (...) { return fail("nuvec_map_string_to_array_insert"); }
}
int nuvec_map_string_to_array_get(nuvec_array* value, const nuvec_map_string_to_array map, const char* key) {
  try {
    const auto& m = get(map, "nuvec_map_string_to_array_get");
    auto it = m.find(key_of(key));
    return it == m.end() ? 2 : set(value, it->second);
  } catch (...) { return fail("nuvec_map_string_to_array_get"); }
}
nuvec_map_string_to_array_iterator nuvec_map_string_to_array_iterator_new(nuvec_map_string_to_array map) {
  return iterator_new<nuvec_map_string_to_array, nuvec_map_string_to_array_iterator>(map);
}
int nuvec_map_string_to_array_iterator_free(nuvec_map_string_to_array_iterator it) {
  delete static_cast<Position<nuvec_map_string_to_array>*>(it.ctx);
  return 0;
}
int nuvec_map_string_to_array_iterator_next(const char** key, nuvec_array* value,
                                            nuvec_map_string_to_array_iterator it) {
  try {
    const auto* entry = next<nuvec_map_string_to_array>(it, "nuvec_map_string_to_array_iterator_next");
    if (!entry) return 2;
    *key = entry->first.c_str();
    return set(value, entry->second);
  } catch (...) { return fail("nuvec_map_string_to_array_iterator_next"); }
}

nuvec_map_string_to_string nuvec_map_string_to_string_new(void) {
  return {new Held<nuvec_map_string_to_string>::type()};
}
int nuvec_map_string_to_string_set(nuvec_map_string_to_string* map, const nuvec_map_string_to_string src) {
  try {
    return set(map, get(src, "nuvec_map_string_to_string_set"));
  } catch (...) { return fail("nuvec_map_string_to_string_set"); }
}
int nuvec_map_string_to_string_free(nuvec_map_string_to_string map) { return release(map); }
int nuvec_map_string_to_string_insert(nuvec_map_string_to_string map, const char* key, const char* value) {
  try {
    get(map, "nuvec_map_string_to_string_insert").insert_or_assign(key_of(key), key_of(value));
    return 0;
  } catch (...) { return fail("nuvec_map_string_to_string_insert"); }
}
int nuvec_map_string_to_string_get(const char** value, const nuvec_map_string_to_string map, const char* key) {
  try {
    const auto& m = get(map, "nuvec_map_string_to_string_get");
    auto it = m.find(key_of(key));
    if (it == m.end()) return 2;
    *value = it->second.c_str();
    return 0;
  } catch (...) { return fail("nuvec_map_string_to_string_get"); }
}
nuvec_map_string_to_string_iterator nuvec_map_string_to_string_iterator_new(nuvec_map_string_to_string map) {
  return iterator_new<nuvec_map_string_to_string, nuvec_map_string_to_string_iterator>(map);
}
int nuvec_map_string_to_string_iterator_free(nuvec_map_string_to_string_iterator it) {
  delete static_cast<Position<nuvec_map_string_to_string>*>(it.ctx);
  return 0;
}
int nuvec_map_string_to_string_iterator_next(const char** key, const char** value,
                                             nuvec_map_string_to_string_iterator it) {
  try {
    const auto* entry = next<nuvec_map_string_to_string>(it, "nuvec_map_string_to_string_iterator_next");
    if (!entry) return 2;
    *key = entry->first.c_str();
    *value = entry->second.c_str();
    return 0;
  } catch (...) { return fail("nuvec_map_string_to_string_iterator_next"); }
}

}  // extern "C"
