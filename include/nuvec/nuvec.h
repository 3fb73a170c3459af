/* nuvec's C API (C99): the conventions of mlx-c with the prefix nuvec_ / NUVEC_.
 *
 * Handles (nuvec_array, nuvec_stream, ...) are small structs passed by value; each made by a
 * *_new* function is released by its *_free. Functions return 0 on success and write results
 * through their first pointer argument, which must hold a live handle (nuvec_array_new() gives an
 * empty one): the result replaces its contents. A failure returns nonzero and passes a message
 * naming the function and the op to the error handler (nuvec_set_error_handler); nothing aborts.
 * docs/c-api.md describes it all. */
#ifndef NUVEC_NUVEC_H
#define NUVEC_NUVEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NUVEC_API __attribute__((visibility("default")))

/* The dtypes, in mlx-c's order. */
typedef enum nuvec_dtype_ {
  NUVEC_BOOL,
  NUVEC_UINT8,
  NUVEC_UINT16,
  NUVEC_UINT32,
  NUVEC_UINT64,
  NUVEC_INT8,
  NUVEC_INT16,
  NUVEC_INT32,
  NUVEC_INT64,
  NUVEC_FLOAT16,
  NUVEC_FLOAT32,
  NUVEC_FLOAT64,
  NUVEC_BFLOAT16,
  NUVEC_COMPLEX64,
} nuvec_dtype;
NUVEC_API size_t nuvec_dtype_size(nuvec_dtype dtype);

typedef enum nuvec_device_type_ { NUVEC_CPU, NUVEC_GPU } nuvec_device_type;

typedef struct nuvec_array_ { void* ctx; } nuvec_array;
typedef struct nuvec_stream_ { void* ctx; } nuvec_stream;
typedef struct nuvec_device_ { void* ctx; } nuvec_device;
typedef struct nuvec_string_ { void* ctx; } nuvec_string;
typedef struct nuvec_vector_array_ { void* ctx; } nuvec_vector_array;
typedef struct nuvec_vector_int_ { void* ctx; } nuvec_vector_int;
typedef struct nuvec_closure_ { void* ctx; } nuvec_closure;
typedef struct nuvec_closure_value_and_grad_ { void* ctx; } nuvec_closure_value_and_grad;
/* Optional scalars, as mlx-c's mlx_optional_int/_dtype/_float: has_value false is None
 * (the op's default). An optional array is a nuvec_array whose ctx is NULL. */
typedef struct nuvec_optional_int_ {
  int value;
  bool has_value;
} nuvec_optional_int;
typedef struct nuvec_optional_dtype_ {
  nuvec_dtype value;
  bool has_value;
} nuvec_optional_dtype;
typedef struct nuvec_optional_float_ {
  float value;
  bool has_value;
} nuvec_optional_float;
/* The scaling of the Fourier transforms (nuvec/fft.h), as mlx-c's mlx_fft_norm. */
typedef enum nuvec_fft_norm_ { NUVEC_FFT_NORM_BACKWARD, NUVEC_FFT_NORM_ORTHO, NUVEC_FFT_NORM_FORWARD } nuvec_fft_norm;

/* Errors: the handler gets each failure's message; `dtor` (may be NULL) releases `data` when the
 * handler is replaced. NULL restores the default, which prints the message to stderr. */
typedef void (*nuvec_error_handler_func)(const char* msg, void* data);
NUVEC_API void nuvec_set_error_handler(nuvec_error_handler_func handler, void* data, void (*dtor)(void*));

/* Strings. */
NUVEC_API nuvec_string nuvec_string_new(void);
NUVEC_API nuvec_string nuvec_string_new_data(const char* str);
NUVEC_API const char* nuvec_string_data(nuvec_string str);
NUVEC_API int nuvec_string_free(nuvec_string str);

/* Devices and streams. */
NUVEC_API nuvec_device nuvec_device_new(void);
NUVEC_API nuvec_device nuvec_device_new_type(nuvec_device_type type, int index);
NUVEC_API int nuvec_device_free(nuvec_device dev);
NUVEC_API int nuvec_device_get_type(nuvec_device_type* type, nuvec_device dev);
NUVEC_API int nuvec_device_get_index(int* index, nuvec_device dev);
NUVEC_API int nuvec_get_default_device(nuvec_device* dev);
NUVEC_API int nuvec_set_default_device(nuvec_device dev);
NUVEC_API nuvec_stream nuvec_stream_new(void);
NUVEC_API nuvec_stream nuvec_stream_new_device(nuvec_device dev);
NUVEC_API nuvec_stream nuvec_default_cpu_stream_new(void);
NUVEC_API int nuvec_get_default_stream(nuvec_stream* stream, nuvec_device dev);
NUVEC_API int nuvec_stream_free(nuvec_stream stream);
NUVEC_API int nuvec_synchronize(nuvec_stream stream);

/* Arrays. nuvec_array_new_data copies `data` (row-major, `dim` axes of `shape`). */
NUVEC_API nuvec_array nuvec_array_new(void);
NUVEC_API nuvec_array nuvec_array_new_bool(bool val);
NUVEC_API nuvec_array nuvec_array_new_int(int val);
NUVEC_API nuvec_array nuvec_array_new_float(float val);
NUVEC_API nuvec_array nuvec_array_new_float64(double val);
NUVEC_API nuvec_array nuvec_array_new_data(const void* data, const int* shape, int dim, nuvec_dtype dtype);
NUVEC_API int nuvec_array_set(nuvec_array* arr, const nuvec_array src);
NUVEC_API int nuvec_array_free(nuvec_array arr);
NUVEC_API int nuvec_array_tostring(nuvec_string* str, const nuvec_array arr);
NUVEC_API size_t nuvec_array_ndim(const nuvec_array arr);
NUVEC_API const int* nuvec_array_shape(const nuvec_array arr);
NUVEC_API int nuvec_array_dim(const nuvec_array arr, int axis);
NUVEC_API size_t nuvec_array_size(const nuvec_array arr);
NUVEC_API size_t nuvec_array_itemsize(const nuvec_array arr);
NUVEC_API size_t nuvec_array_nbytes(const nuvec_array arr);
NUVEC_API nuvec_dtype nuvec_array_dtype(const nuvec_array arr);
NUVEC_API int nuvec_array_eval(nuvec_array arr);
/* The first element of an array of one element (evaluating it), converted to the C type. */
NUVEC_API int nuvec_array_item_bool(bool* res, const nuvec_array arr);
NUVEC_API int nuvec_array_item_int32(int32_t* res, const nuvec_array arr);
NUVEC_API int nuvec_array_item_int64(int64_t* res, const nuvec_array arr);
NUVEC_API int nuvec_array_item_float32(float* res, const nuvec_array arr);
NUVEC_API int nuvec_array_item_float64(double* res, const nuvec_array arr);
/* The row-major data of an evaluated array of that dtype (NULL, through the handler, when it is
 * not evaluated or has another dtype). A strided view is made row-major in place first. */
NUVEC_API const bool* nuvec_array_data_bool(const nuvec_array arr);
NUVEC_API const uint8_t* nuvec_array_data_uint8(const nuvec_array arr);
NUVEC_API const uint16_t* nuvec_array_data_uint16(const nuvec_array arr);
NUVEC_API const uint32_t* nuvec_array_data_uint32(const nuvec_array arr);
NUVEC_API const uint64_t* nuvec_array_data_uint64(const nuvec_array arr);
NUVEC_API const int8_t* nuvec_array_data_int8(const nuvec_array arr);
NUVEC_API const int16_t* nuvec_array_data_int16(const nuvec_array arr);
NUVEC_API const int32_t* nuvec_array_data_int32(const nuvec_array arr);
NUVEC_API const int64_t* nuvec_array_data_int64(const nuvec_array arr);
NUVEC_API const float* nuvec_array_data_float32(const nuvec_array arr);
NUVEC_API const double* nuvec_array_data_float64(const nuvec_array arr);
/* float16 and bfloat16 as their bits; complex64 as (real, imaginary) float pairs. */
NUVEC_API const uint16_t* nuvec_array_data_float16(const nuvec_array arr);
NUVEC_API const uint16_t* nuvec_array_data_bfloat16(const nuvec_array arr);
NUVEC_API const float* nuvec_array_data_complex64(const nuvec_array arr);

/* Vectors of arrays and of ints. */
NUVEC_API nuvec_vector_array nuvec_vector_array_new(void);
NUVEC_API nuvec_vector_array nuvec_vector_array_new_data(const nuvec_array* data, size_t size);
NUVEC_API nuvec_vector_array nuvec_vector_array_new_value(const nuvec_array val);
NUVEC_API int nuvec_vector_array_set(nuvec_vector_array* vec, const nuvec_vector_array src);
NUVEC_API int nuvec_vector_array_append_value(nuvec_vector_array vec, const nuvec_array val);
NUVEC_API size_t nuvec_vector_array_size(nuvec_vector_array vec);
NUVEC_API int nuvec_vector_array_get(nuvec_array* res, const nuvec_vector_array vec, size_t idx);
NUVEC_API int nuvec_vector_array_free(nuvec_vector_array vec);

/* Maps from strings to arrays and to strings, as mlx-c's (the arrays and metadata of a
 * safetensors file), in key order. _get returns 2 when the key is absent; an iterator's _next
 * returns 2 after the last entry. A key or value an iterator or _get gives stays valid while the
 * map holds that entry unchanged. */
typedef struct nuvec_map_string_to_array_ { void* ctx; } nuvec_map_string_to_array;
typedef struct nuvec_map_string_to_array_iterator_ {
  void* ctx;
  void* map_ctx;
} nuvec_map_string_to_array_iterator;
NUVEC_API nuvec_map_string_to_array nuvec_map_string_to_array_new(void);
NUVEC_API int nuvec_map_string_to_array_set(nuvec_map_string_to_array* map, const nuvec_map_string_to_array src);
NUVEC_API int nuvec_map_string_to_array_free(nuvec_map_string_to_array map);
NUVEC_API int nuvec_map_string_to_array_insert(nuvec_map_string_to_array map, const char* key, const nuvec_array value);
NUVEC_API int nuvec_map_string_to_array_get(nuvec_array* value, const nuvec_map_string_to_array map, const char* key);
NUVEC_API nuvec_map_string_to_array_iterator nuvec_map_string_to_array_iterator_new(nuvec_map_string_to_array map);
NUVEC_API int nuvec_map_string_to_array_iterator_free(nuvec_map_string_to_array_iterator it);
NUVEC_API int nuvec_map_string_to_array_iterator_next(const char** key, nuvec_array* value,
                                                      nuvec_map_string_to_array_iterator it);
typedef struct nuvec_map_string_to_string_ { void* ctx; } nuvec_map_string_to_string;
typedef struct nuvec_map_string_to_string_iterator_ {
  void* ctx;
  void* map_ctx;
} nuvec_map_string_to_string_iterator;
NUVEC_API nuvec_map_string_to_string nuvec_map_string_to_string_new(void);
NUVEC_API int nuvec_map_string_to_string_set(nuvec_map_string_to_string* map, const nuvec_map_string_to_string src);
NUVEC_API int nuvec_map_string_to_string_free(nuvec_map_string_to_string map);
NUVEC_API int nuvec_map_string_to_string_insert(nuvec_map_string_to_string map, const char* key, const char* value);
NUVEC_API int nuvec_map_string_to_string_get(const char** value, const nuvec_map_string_to_string map, const char* key);
NUVEC_API nuvec_map_string_to_string_iterator nuvec_map_string_to_string_iterator_new(nuvec_map_string_to_string map);
NUVEC_API int nuvec_map_string_to_string_iterator_free(nuvec_map_string_to_string_iterator it);
NUVEC_API int nuvec_map_string_to_string_iterator_next(const char** key, const char** value,
                                                       nuvec_map_string_to_string_iterator it);

/* Evaluation. */
NUVEC_API int nuvec_eval(const nuvec_vector_array outputs);
NUVEC_API int nuvec_async_eval(const nuvec_vector_array outputs);

/* Memory counters (bytes), as nuvec.get_active_memory and friends. */
NUVEC_API int nuvec_get_active_memory(size_t* res);
NUVEC_API int nuvec_get_peak_memory(size_t* res);
NUVEC_API int nuvec_clear_cache(void);

/* Closures: a C function of a vector of arrays. `payload` is passed to each call; `dtor` (may be
 * NULL) releases it when the last handle goes. The function returns 0 on success. */
NUVEC_API nuvec_closure nuvec_closure_new(void);
NUVEC_API nuvec_closure nuvec_closure_new_func(int (*fun)(nuvec_vector_array* res, const nuvec_vector_array input));
NUVEC_API nuvec_closure nuvec_closure_new_func_payload(
    int (*fun)(nuvec_vector_array* res, const nuvec_vector_array input, void* payload), void* payload,
    void (*dtor)(void*));
NUVEC_API int nuvec_closure_set(nuvec_closure* cls, const nuvec_closure src);
NUVEC_API int nuvec_closure_free(nuvec_closure cls);
NUVEC_API int nuvec_closure_apply(nuvec_vector_array* res, nuvec_closure cls, const nuvec_vector_array input);

/* Transforms, as mlx-c's. vjp: (outputs, cotangents of the primals); jvp: (outputs, tangents of
 * the outputs); value_and_grad: a closure giving (outputs, gradients of the first output with
 * respect to the inputs `argnums`); compile: a closure that traces `fun` once per input
 * shapes and dtypes (any shapes when `shapeless`) and replays the simplified, fused graph. */
NUVEC_API int nuvec_vjp(nuvec_vector_array* res_0, nuvec_vector_array* res_1, const nuvec_closure fun,
                        const nuvec_vector_array primals, const nuvec_vector_array cotangents);
NUVEC_API int nuvec_jvp(nuvec_vector_array* res_0, nuvec_vector_array* res_1, const nuvec_closure fun,
                        const nuvec_vector_array primals, const nuvec_vector_array tangents);
NUVEC_API int nuvec_value_and_grad(nuvec_closure_value_and_grad* res, const nuvec_closure fun, const int* argnums,
                                   size_t argnums_num);
NUVEC_API nuvec_closure_value_and_grad nuvec_closure_value_and_grad_new(void);
NUVEC_API int nuvec_closure_value_and_grad_free(nuvec_closure_value_and_grad cls);
NUVEC_API int nuvec_closure_value_and_grad_apply(nuvec_vector_array* res_0, nuvec_vector_array* res_1,
                                                 nuvec_closure_value_and_grad cls, const nuvec_vector_array input);
NUVEC_API int nuvec_compile(nuvec_closure* res, const nuvec_closure fun, bool shapeless);
/* vmap: a closure mapping `fun` over axis in_axes[i] of input i (-1: not mapped, the input is shared;
 * NULL: axis 0 of every input) that puts each output's mapped axis at out_axes[i] (NULL: axis 0 of
 * every output); an output that does not depend on the mapped inputs is broadcast along it. */
NUVEC_API int nuvec_vmap(nuvec_closure* res, const nuvec_closure fun, const int* in_axes, size_t in_axes_num,
                         const int* out_axes, size_t out_axes_num);

/* Custom operations from C: a primitive with a name, the shape and dtype of its one output, a CPU
 * kernel and optional rules. It records nodes, evaluates, differentiates (vjp, jvp) and
 * vectorises (vmap: the rule given, else one call per example, stacked) like a built-in.
 *   shape:  writes the output's dtype, rank (at most NUVEC_MAX_NDIM) and shape for the inputs.
 *   kernel: fills `out` (row-major, of the output's dtype) from the inputs, which are evaluated and
 *           row-major (read them with nuvec_array_data_*); runs on nuvec's evaluation threads.
 *   vjp:    the cotangent of every input, given the output's cotangent, written with nuvec ops.
 *   jvp:    the output's tangent given every input's tangent (zeros for those not differentiated).
 *   vmap:   the batched output and its batch axis, given inputs batched along `axes` (-1: not).
 * Each callback returns 0 on success. `payload` is passed to each; `dtor` (may be NULL) releases
 * it when the op and every node that uses it are gone. */
#define NUVEC_MAX_NDIM 32
typedef struct nuvec_custom_op_ { void* ctx; } nuvec_custom_op;
typedef struct nuvec_custom_op_callbacks_ {
  int (*shape)(int* shape, int* ndim, nuvec_dtype* dtype, const nuvec_vector_array inputs, void* payload);
  int (*kernel)(void* out, const nuvec_vector_array inputs, void* payload);
  int (*vjp)(nuvec_vector_array* res, const nuvec_vector_array primals, const nuvec_array cotangent,
             const nuvec_array output, void* payload);
  int (*jvp)(nuvec_array* res, const nuvec_vector_array primals, const nuvec_vector_array tangents, void* payload);
  int (*vmap)(nuvec_array* res, int* out_axis, const nuvec_vector_array inputs, const int* axes, void* payload);
} nuvec_custom_op_callbacks;
NUVEC_API nuvec_custom_op nuvec_custom_op_new(const char* name, nuvec_custom_op_callbacks callbacks, void* payload,
                                              void (*dtor)(void*));
NUVEC_API int nuvec_custom_op_free(nuvec_custom_op op);
NUVEC_API int nuvec_custom_op_apply(nuvec_array* res, const nuvec_custom_op op, const nuvec_vector_array inputs,
                                    const nuvec_stream s);

#ifdef __cplusplus
}
#endif

#include "nuvec/ops.h"
#include "nuvec/random.h"
#include "nuvec/linalg.h"
#include "nuvec/fft.h"
#include "nuvec/fast.h"
#include "nuvec/io.h"

#endif /* NUVEC_NUVEC_H */
