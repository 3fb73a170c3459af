// The C API's error handler, devices, streams, evaluation and memory counters.
#include <cstdio>
#include <mutex>
#include <string>

#include "backend/backends.h"
#include "c_api/capi.h"
#include "core/allocator.h"
#include "core/eval.h"

using namespace nuvec;
using namespace nuvec::capi;

namespace {

struct Handler {
  nuvec_error_handler_func fun = nullptr;
  void* data = nullptr;
  void (*dtor)(void*) = nullptr;
};
std::mutex handler_mutex;
Handler handler;

}  // namespace

namespace nuvec::capi {

void report(const std::string& msg) {
  Handler h;
  {
    std::lock_guard<std::mutex> lock(handler_mutex);
    h = handler;
  }
  if (h.fun)
    h.fun(msg.c_str(), h.data);
  else
    std::fprintf(stderr, "nuvec error: %s\n", msg.c_str());
}

// A C program's first stream registers the backends (the Python module does at import); later
// calls cost the registration's static guard.
Stream ready(Stream s) {
  register_backends();
  return s;
}

int fail(const char* fn) {
  try {
    throw;
  } catch (const std::exception& e) { report(std::string(fn) + ": " + e.what()); } catch (...) {
    report(std::string(fn) + ": an unknown exception");
  }
  return 1;
}

}  // namespace nuvec::capi

extern "C" {

void nuvec_set_error_handler(nuvec_error_handler_func fun, void* data, void (*dtor)(void*)) {
  Handler old;
  {
    std::lock_guard<std::mutex> lock(handler_mutex);
    old = handler;
    handler = Handler{fun, data, dtor};
  }
  if (old.dtor) old.dtor(old.data);
}

nuvec_device nuvec_device_new(void) { return nuvec_device{new Device(default_device())}; }
nuvec_device nuvec_device_new_type(nuvec_device_type type, int index) {
  return nuvec_device{new Device{type == NUVEC_GPU ? DeviceType::gpu : DeviceType::cpu, index}};
}
int nuvec_device_free(nuvec_device dev) { return release(dev); }
int nuvec_device_get_type(nuvec_device_type* type, nuvec_device dev) {
  try {
    *type = get(dev, "nuvec_device_get_type").type == DeviceType::gpu ? NUVEC_GPU : NUVEC_CPU;
    return 0;
  } catch (...) { return fail("nuvec_device_get_type"); }
}
int nuvec_device_get_index(int* index, nuvec_device dev) {
  try {
    *index = get(dev, "nuvec_device_get_index").index;
    return 0;
  } catch (...) { return fail("nuvec_device_get_index"); }
}
int nuvec_get_default_device(nuvec_device* dev) {
  try {
    return set(dev, default_device());
  } catch (...) { return fail("nuvec_get_default_device"); }
}
int nuvec_set_default_device(nuvec_device dev) {
  try {
    set_default_device(get(dev, "nuvec_set_default_device"));
    return 0;
  } catch (...) { return fail("nuvec_set_default_device"); }
}

nuvec_stream nuvec_stream_new(void) { return nuvec_stream{nullptr}; }
nuvec_stream nuvec_stream_new_device(nuvec_device dev) {
  try {
    return nuvec_stream{new Stream(ready(new_stream(get(dev, "nuvec_stream_new_device"))))};
  } catch (...) {
    fail("nuvec_stream_new_device");
    return nuvec_stream{nullptr};
  }
}
nuvec_stream nuvec_default_cpu_stream_new(void) {
  try {
    return nuvec_stream{new Stream(ready(default_stream(Device{DeviceType::cpu, 0})))};
  } catch (...) {
    fail("nuvec_default_cpu_stream_new");
    return nuvec_stream{nullptr};
  }
}
int nuvec_get_default_stream(nuvec_stream* stream, nuvec_device dev) {
  try {
    return set(stream, ready(default_stream(get(dev, "nuvec_get_default_stream"))));
  } catch (...) { return fail("nuvec_get_default_stream"); }
}
int nuvec_stream_free(nuvec_stream stream) { return release(stream); }
int nuvec_synchronize(nuvec_stream stream) {
  try {
    synchronize(get(stream, "nuvec_synchronize"));
    return 0;
  } catch (...) { return fail("nuvec_synchronize"); }
}

int nuvec_eval(const nuvec_vector_array outputs) {
  try {
    ready({});
    eval(get(outputs, "nuvec_eval"));
    return 0;
  } catch (...) { return fail("nuvec_eval"); }
}
int nuvec_async_eval(const nuvec_vector_array outputs) {
  try {
    ready({});
    async_eval(get(outputs, "nuvec_async_eval"));
    return 0;
  } catch (...) { return fail("nuvec_async_eval"); }
}

int nuvec_get_active_memory(size_t* res) {
  *res = memory::active();
  return 0;
}
int nuvec_get_peak_memory(size_t* res) {
  *res = memory::peak();
  return 0;
}
int nuvec_clear_cache(void) {
  memory::clear_cache();
  return 0;
}

}  // extern "C"
