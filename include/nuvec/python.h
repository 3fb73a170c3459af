/* The bridge between nuvec's C API and its Python arrays, for Python extensions (C99), imported
 * as NumPy's C API is: call nuvec_python_import() once in the module's init function (in each
 * translation unit that uses the functions below; it imports nuvec). With the GIL held:
 *   nuvec_array_from_pyobject: a handle to the same array a nuvec.array object holds (no copy);
 *   nuvec_array_to_pyobject:   a new reference to a nuvec.array over the handle's array (no copy).
 * Errors go to the error handler (nuvec_set_error_handler) and set a Python exception. */
#ifndef NUVEC_PYTHON_H
#define NUVEC_PYTHON_H

#include <Python.h>

#include "nuvec/nuvec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NUVEC_PYTHON_API_VERSION 1
#define NUVEC_PYTHON_CAPSULE "nuvec._core._C_API"

/* What nuvec._core._C_API points to. */
typedef struct nuvec_python_api_ {
  int version;
  int (*from_pyobject)(nuvec_array* res, PyObject* obj);
  PyObject* (*to_pyobject)(const nuvec_array a);
} nuvec_python_api;

static const nuvec_python_api* nuvec_python_api_table = NULL;

/* 0 on success; -1 with a Python exception set. */
static inline int nuvec_python_import(void) {
  PyObject* module = PyImport_ImportModule("nuvec._core");
  if (!module) return -1;
  PyObject* capsule = PyObject_GetAttrString(module, "_C_API");
  Py_DECREF(module);
  if (!capsule) return -1;
  nuvec_python_api_table = (const nuvec_python_api*)PyCapsule_GetPointer(capsule, NUVEC_PYTHON_CAPSULE);
  Py_DECREF(capsule);
  if (!nuvec_python_api_table) return -1;
  if (nuvec_python_api_table->version != NUVEC_PYTHON_API_VERSION) {
    PyErr_Format(PyExc_ImportError, "nuvec's Python C API is version %d, this module was built for %d",
                 nuvec_python_api_table->version, NUVEC_PYTHON_API_VERSION);
    nuvec_python_api_table = NULL;
    return -1;
  }
  return 0;
}

static inline int nuvec_array_from_pyobject(nuvec_array* res, PyObject* obj) {
  return nuvec_python_api_table->from_pyobject(res, obj);
}

static inline PyObject* nuvec_array_to_pyobject(const nuvec_array a) { return nuvec_python_api_table->to_pyobject(a); }

#ifdef __cplusplus
}
#endif

#endif /* NUVEC_PYTHON_H */
