/* A Python extension over nuvec's C API (docs/c-api.md): it takes nuvec arrays from Python and
 * returns nuvec arrays, with no copies (the handles share the arrays Python holds).
 *
 *   nuvec_ext.scale(x, factor) -> x * factor, recorded through the C API
 *   nuvec_ext.roundtrip(x)     -> a Python array over the very array x holds
 *   nuvec_ext.smooth_abs(x)    -> sqrt(x * x + 1), a custom op with a C kernel and C rules: it
 *                                 works under nuvec.grad, nuvec.jvp and nuvec.vmap */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#include "nuvec/python.h"

static PyObject* scale(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* obj;
  double factor;
  if (!PyArg_ParseTuple(args, "Od", &obj, &factor)) return NULL;
  nuvec_array x = nuvec_array_new(), f = nuvec_array_new_float((float)factor), y = nuvec_array_new();
  nuvec_stream s = nuvec_default_cpu_stream_new();
  PyObject* result = NULL;
  if (nuvec_array_from_pyobject(&x, obj) == 0) {
    if (nuvec_multiply(&y, x, f, s) == 0)
      result = nuvec_array_to_pyobject(y);
    else
      PyErr_SetString(PyExc_ValueError, "nuvec_multiply failed");
  }
  nuvec_array_free(x);
  nuvec_array_free(f);
  nuvec_array_free(y);
  nuvec_stream_free(s);
  return result;
}

static PyObject* roundtrip(PyObject* self, PyObject* obj) {
  (void)self;
  nuvec_array x = nuvec_array_new();
  PyObject* result = nuvec_array_from_pyobject(&x, obj) == 0 ? nuvec_array_to_pyobject(x) : NULL;
  nuvec_array_free(x);
  return result;
}

/* The custom op smooth_abs(x) = sqrt(x^2 + 1) on float32: kernel, shape and rules. */
static int smooth_shape(int* shape, int* ndim, nuvec_dtype* dtype, const nuvec_vector_array in, void* payload) {
  (void)payload;
  nuvec_array x = nuvec_array_new();
  nuvec_vector_array_get(&x, in, 0);
  *ndim = (int)nuvec_array_ndim(x);
  for (int i = 0; i < *ndim; ++i) shape[i] = nuvec_array_dim(x, i);
  *dtype = nuvec_array_dtype(x);
  nuvec_array_free(x);
  return *dtype == NUVEC_FLOAT32 ? 0 : 1;
}

static int smooth_kernel(void* out, const nuvec_vector_array in, void* payload) {
  (void)payload;
  nuvec_array x = nuvec_array_new();
  nuvec_vector_array_get(&x, in, 0);
  const float* v = nuvec_array_data_float32(x);
  float* o = (float*)out;
  for (size_t i = 0; i < nuvec_array_size(x); ++i) o[i] = sqrtf(v[i] * v[i] + 1.0f);
  nuvec_array_free(x);
  return 0;
}

/* d/dx sqrt(x^2 + 1) = x / sqrt(x^2 + 1) = x / out, written with nuvec ops (so it differentiates). */
static int smooth_slope(nuvec_array* res, const nuvec_array x, const nuvec_array out, const nuvec_array seed) {
  nuvec_stream s = nuvec_default_cpu_stream_new();
  int rc = nuvec_divide(res, x, out, s) || nuvec_multiply(res, *res, seed, s);
  nuvec_stream_free(s);
  return rc;
}

static int smooth_vjp(nuvec_vector_array* res, const nuvec_vector_array primals, const nuvec_array cot,
                      const nuvec_array out, void* payload) {
  (void)payload;
  nuvec_array x = nuvec_array_new(), g = nuvec_array_new();
  int rc = nuvec_vector_array_get(&x, primals, 0) || smooth_slope(&g, x, out, cot) ||
           nuvec_vector_array_append_value(*res, g);
  nuvec_array_free(x);
  nuvec_array_free(g);
  return rc;
}

static nuvec_custom_op smooth_abs_op;

static int smooth_jvp(nuvec_array* res, const nuvec_vector_array primals, const nuvec_vector_array tangents,
                      void* payload) {
  (void)payload;
  nuvec_array x = nuvec_array_new(), t = nuvec_array_new(), out = nuvec_array_new();
  nuvec_stream s = nuvec_default_cpu_stream_new();
  int rc = nuvec_vector_array_get(&x, primals, 0) || nuvec_vector_array_get(&t, tangents, 0) ||
           nuvec_custom_op_apply(&out, smooth_abs_op, primals, s) || smooth_slope(res, x, out, t);
  nuvec_array_free(x);
  nuvec_array_free(t);
  nuvec_array_free(out);
  nuvec_stream_free(s);
  return rc;
}

static PyObject* smooth_abs(PyObject* self, PyObject* obj) {
  (void)self;
  nuvec_array x = nuvec_array_new(), y = nuvec_array_new();
  nuvec_stream s = nuvec_default_cpu_stream_new();
  PyObject* result = NULL;
  if (nuvec_array_from_pyobject(&x, obj) == 0) {
    nuvec_vector_array in = nuvec_vector_array_new_value(x);
    if (nuvec_custom_op_apply(&y, smooth_abs_op, in, s) == 0)
      result = nuvec_array_to_pyobject(y);
    else
      PyErr_SetString(PyExc_ValueError, "smooth_abs takes a float32 array");
    nuvec_vector_array_free(in);
  }
  nuvec_array_free(x);
  nuvec_array_free(y);
  nuvec_stream_free(s);
  return result;
}

static PyMethodDef methods[] = {
    {"scale", scale, METH_VARARGS, "x * factor through nuvec's C API."},
    {"roundtrip", roundtrip, METH_O, "A nuvec.array over the same array (no copy)."},
    {"smooth_abs", smooth_abs, METH_O, "sqrt(x * x + 1): a custom op with C callbacks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "nuvec_ext", NULL, -1, methods};

PyMODINIT_FUNC PyInit_nuvec_ext(void) {
  if (nuvec_python_import() < 0) return NULL;
  nuvec_custom_op_callbacks cb = {smooth_shape, smooth_kernel, smooth_vjp, smooth_jvp, NULL};
  smooth_abs_op = nuvec_custom_op_new("smooth_abs", cb, NULL, NULL);
  return PyModule_Create(&module);
}
