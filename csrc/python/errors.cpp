#include "python/errors.h"

#include <nanobind/stl/string.h>

#include <atomic>
#include <mutex>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "core/errors.h"

namespace nuvec::python {
namespace {

PyObject* g_op_error = nullptr;           // OpError(ValueError)
PyObject* g_axis_error = nullptr;         // AxisError(OpError, IndexError)
PyObject* g_eval_error = nullptr;         // EvalError(RuntimeError)
PyObject* g_eval_index_error = nullptr;   // EvalIndexError(EvalError, IndexError)
PyObject* g_eval_memory_error = nullptr;  // EvalMemoryError(EvalError, MemoryError)
std::vector<std::string> g_package_dirs;  // frames from files under these are nuvec's own

// Whether a code object belongs to nuvec's Python package (cached by code object).
bool internal_code(PyCodeObject* code) {
  static std::unordered_map<PyCodeObject*, bool> cache;
  auto it = cache.find(code);
  if (it != cache.end()) return it->second;
  PyObject* fname = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
  bool internal = false;
  if (fname) {
    const char* s = PyUnicode_AsUTF8(fname);
    for (const std::string& dir : g_package_dirs) internal |= s && std::string(s).rfind(dir, 0) == 0;
    Py_DECREF(fname);
  } else {
    PyErr_Clear();
  }
  if (cache.size() > 4096) {
    for (auto& [c, _] : cache) Py_DECREF(c);
    cache.clear();
  }
  Py_INCREF(code);  // keeps the key's address from being reused while cached
  cache.emplace(code, internal);
  return internal;
}

// The innermost frame of the user's code (a new reference), or null.
PyFrameObject* user_frame() {
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    bool internal = internal_code(code);
    Py_DECREF(code);
    if (!internal) return f;
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  return nullptr;
}

// Call-site handles released without the GIL wait here until the next capture.
std::mutex g_release_mu;
std::vector<PyObject*> g_pending_release;
std::atomic<bool> g_release_pending{false};

CallSite capture() {
  if (g_release_pending.load(std::memory_order_relaxed)) {
    g_release_pending = false;
    std::vector<PyObject*> drop;
    {
      std::lock_guard<std::mutex> l(g_release_mu);
      drop.swap(g_pending_release);
    }
    for (PyObject* o : drop) Py_DECREF(o);
  }
  PyFrameObject* f = user_frame();
  if (!f) return {};
  CallSite site{PyFrame_GetCode(f), PyFrame_GetLasti(f)};
  Py_DECREF(f);
  return site;
}

CallSite retain(CallSite site) {
  Py_INCREF(static_cast<PyObject*>(site.handle));
  return site;
}

void release(CallSite site) {
  if (!Py_IsInitialized()) return;
  auto* code = static_cast<PyObject*>(site.handle);
  if (PyGILState_Check()) {
    Py_DECREF(code);
  } else {
    std::lock_guard<std::mutex> l(g_release_mu);
    g_pending_release.push_back(code);
    g_release_pending = true;
  }
}

std::string describe(CallSite site) {
  if (!Py_IsInitialized()) return {};
  PyGILState_STATE st = PyGILState_Ensure();
  auto* code = static_cast<PyCodeObject*>(site.handle);
  std::string out;
  PyObject* fname = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
  if (fname) {
    const char* s = PyUnicode_AsUTF8(fname);
    out = std::string(s ? s : "?") + ":" + std::to_string(PyCode_Addr2Line(code, site.offset));
    Py_DECREF(fname);
  }
  PyErr_Clear();
  PyGILState_Release(st);
  return out;
}

// Sets `exc` with attributes op_name, reason, filename and lineno.
void raise(PyObject* type, const std::string& op, const std::string& message, const std::string& reason,
           const std::string& filename, int lineno) {
  PyObject* exc = PyObject_CallFunction(type, "s", message.c_str());
  if (!exc) return;
  PyObject* o = PyUnicode_FromString(op.c_str());
  PyObject_SetAttrString(exc, "op_name", o);
  Py_DECREF(o);
  o = PyUnicode_FromString(reason.c_str());
  PyObject_SetAttrString(exc, "reason", o);
  Py_DECREF(o);
  if (filename.empty()) {
    PyObject_SetAttrString(exc, "filename", Py_None);
    PyObject_SetAttrString(exc, "lineno", Py_None);
  } else {
    o = PyUnicode_FromString(filename.c_str());
    PyObject_SetAttrString(exc, "filename", o);
    Py_DECREF(o);
    o = PyLong_FromLong(lineno);
    PyObject_SetAttrString(exc, "lineno", o);
    Py_DECREF(o);
  }
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const OpError& e) {
    std::string file;
    int line = 0;
    if (PyFrameObject* f = user_frame()) {
      PyCodeObject* code = PyFrame_GetCode(f);
      PyObject* fname = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
      if (fname) {
        const char* s = PyUnicode_AsUTF8(fname);
        file = s ? s : "";
        Py_DECREF(fname);
      }
      line = PyFrame_GetLineNumber(f);
      Py_DECREF(code);
      Py_DECREF(f);
    }
    std::string message = e.what();
    raise(e.is_index ? g_axis_error : g_op_error, e.op_name, message, message.substr(e.op_name.size() + 2), file, line);
  } catch (const EvalError& e) {
    PyObject* type = e.kind == EvalErrorKind::index    ? g_eval_index_error
                     : e.kind == EvalErrorKind::memory ? g_eval_memory_error
                                                       : g_eval_error;
    std::string file;
    int line = 0;
    auto colon = e.where.rfind(':');
    if (colon != std::string::npos) {
      file = e.where.substr(0, colon);
      line = std::atoi(e.where.c_str() + colon + 1);
    }
    raise(type, e.op_name, e.what(), e.reason, file, line);
  } catch (const std::bad_cast&) {
    // A conversion nanobind could not make (nb::cast): never RuntimeError('std::bad_cast').
    PyErr_SetString(PyExc_TypeError, "an argument has an unsupported type, or is an integer out of range");
  }
}

PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  std::string qual = std::string("nuvec.") + name;
  PyObject* t = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  m.attr(name) = nb::borrow(t);
  return t;
}

}  // namespace

void set_python_error(const std::exception_ptr& p, PyObject* fallback) {
  try {
    translate(p, nullptr);
  } catch (nb::python_error& e) { e.restore(); } catch (const std::exception& e) {
    PyErr_SetString(fallback, e.what());
  }
}

void init_errors(nb::module_& m) {
  g_op_error = new_exception(m, "OpError", Py_BuildValue("(O)", PyExc_ValueError),
                             "An invalid call: names the op (op_name), the reason, and the caller's filename "
                             "and lineno.");
  g_axis_error = new_exception(m, "AxisError", Py_BuildValue("(OO)", g_op_error, PyExc_IndexError),
                               "An axis or index out of range (an OpError that is also an IndexError).");
  g_eval_error = new_exception(m, "EvalError", Py_BuildValue("(O)", PyExc_RuntimeError),
                               "A failure while evaluating: names the op and where its node was recorded.");
  g_eval_index_error = new_exception(m, "EvalIndexError", Py_BuildValue("(OO)", g_eval_error, PyExc_IndexError),
                                     "An index value out of range found while evaluating.");
  g_eval_memory_error =
      new_exception(m, "EvalMemoryError", Py_BuildValue("(OO)", g_eval_error, PyExc_MemoryError),
                    "Evaluation would exceed the memory limit (set_memory_limit) or the machine's memory.");
  m.def(
      "_add_internal_dir", [](const std::string& dir) { g_package_dirs.push_back(dir); },
      "Frames from files under `dir` are nuvec's own: errors name the caller outside them.");
  nb::register_exception_translator(&translate);
  set_call_site_hooks({&capture, &release, &describe, &retain});
}

}  // namespace nuvec::python
