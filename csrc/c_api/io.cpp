// The C API's file functions (include/nuvec/io.h): the readers and writers of csrc/io, with the
// arrays and metadata of safetensors in map handles (c_api/map.cpp).
#include "io/io.h"
#include "c_api/capi_ops.h"

using namespace nuvec;
using namespace nuvec::capi;

namespace {

io::NamedArrays named(nuvec_map_string_to_array map, const char* fn) {
  const auto& m = get(map, fn);
  return io::NamedArrays(m.begin(), m.end());
}

}  // namespace

extern "C" {

int nuvec_load(nuvec_array* res, const char* file, const nuvec_stream s) {
  try {
    S(s);
    io::Bytes b = io::map_file(STR(file));
    return put(res, io::load_npy(b, 0, b.size));
  } catch (...) { return fail("nuvec_load"); }
}

int nuvec_save(const char* file, const nuvec_array a) {
  try {
    io::save_npy(STR(file), A(a));
    return 0;
  } catch (...) { return fail("nuvec_save"); }
}

int nuvec_load_safetensors(nuvec_map_string_to_array* res_0, nuvec_map_string_to_string* res_1, const char* file,
                           const nuvec_stream s) {
  try {
    S(s);
    io::Tensors t = io::load_safetensors(io::map_file(STR(file)));
    set(res_0, {t.arrays.begin(), t.arrays.end()});
    return set(res_1, {t.metadata.begin(), t.metadata.end()});
  } catch (...) { return fail("nuvec_load_safetensors"); }
}

int nuvec_save_safetensors(const char* file, const nuvec_map_string_to_array param,
                           const nuvec_map_string_to_string metadata) {
  try {
    const auto& meta = get(metadata, "nuvec_save_safetensors");
    io::save_safetensors(STR(file), named(param, "nuvec_save_safetensors"), {meta.begin(), meta.end()});
    return 0;
  } catch (...) { return fail("nuvec_save_safetensors"); }
}

int nuvec_savez(const char* file, const nuvec_map_string_to_array arrays) {
  try {
    io::save_npz(STR(file), named(arrays, "nuvec_savez"), nullptr);
    return 0;
  } catch (...) { return fail("nuvec_savez"); }
}

}  // extern "C"
