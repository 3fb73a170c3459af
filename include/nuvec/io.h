/* Reading and writing array files from C, as mlx-c's mlx/c/io.h (docs/c-api.md): .npy (one
 * array), .safetensors (arrays by name with string metadata) and .npz (arrays by name, stored).
 * Loads map the file: the arrays share its pages. Saves evaluate the arrays and add the format's
 * suffix to `file` when it is missing. A missing or malformed file reaches the error handler. */
#ifndef NUVEC_IO_H
#define NUVEC_IO_H
#include "nuvec/nuvec.h"
#ifdef __cplusplus
extern "C" {
#endif
NUVEC_API int nuvec_load(nuvec_array* res, const char* file, const nuvec_stream s);
NUVEC_API int nuvec_save(const char* file, const nuvec_array a);
NUVEC_API int nuvec_load_safetensors(nuvec_map_string_to_array* res_0, nuvec_map_string_to_string* res_1,
                                     const char* file, const nuvec_stream s);
NUVEC_API int nuvec_save_safetensors(const char* file, const nuvec_map_string_to_array param,
                                     const nuvec_map_string_to_string metadata);
NUVEC_API int nuvec_savez(const char* file, const nuvec_map_string_to_array arrays);
#ifdef __cplusplus
}
#endif
#endif /* NUVEC_IO_H */
