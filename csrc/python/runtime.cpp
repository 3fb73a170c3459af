// Dtypes, devices, streams, evaluation, memory and threads.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <string>
#include <unordered_set>

#include "core/eval.h"
#include "core/primitives/depends.h"
#include "core/profile.h"
#include "core/streams.h"
#include "core/threads.h"
#include "python/convert.h"
#include "python/dlpack.h"

namespace nuvec::python {
namespace {

// Arrays in a tree of lists, tuples and dicts (other leaves are ignored, as MLX).
void collect(nb::handle h, std::vector<Array>& out) {
  if (nb::isinstance<Array>(h)) {
    out.push_back(*nb::inst_ptr<Array>(h));
  } else if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    for (nb::handle x : nb::borrow<nb::sequence>(h)) collect(x, out);
  } else if (PyDict_Check(h.ptr())) {
    for (auto [k, v] : nb::borrow<nb::dict>(h)) collect(v, out);
  }
}

// An array, or a list or tuple of arrays (TypeError otherwise), for depends.
std::vector<Array> array_or_arrays(nb::handle h, const char* what) {
  if (nb::isinstance<Array>(h)) return {*nb::inst_ptr<Array>(h)};
  bool ok = PyList_Check(h.ptr()) || PyTuple_Check(h.ptr());
  std::vector<Array> out;
  if (ok)
    for (nb::handle x : nb::borrow<nb::sequence>(h)) {
      ok = ok && nb::isinstance<Array>(x);
      if (ok) out.push_back(*nb::inst_ptr<Array>(x));
    }
  if (!ok)
    throw nb::type_error((std::string("depends: ") + what + " must be an array or a sequence of arrays").c_str());
  return out;
}

std::string device_repr(const Device& d) {
  return std::string("Device(") + (d.type == DeviceType::cpu ? "cpu" : "gpu") + ", " + std::to_string(d.index) + ")";
}

}  // namespace

void init_runtime(nb::module_& m) {
  // The dtypes' names (core/dtype.cpp), but `bool_`, as MLX's (`bool` is Python's).
  std::string names[kNumDtypes];
  for (int i = 0; i < kNumDtypes; ++i) names[i] = Dtype(i) == Dtype::bool_ ? "bool_" : name_of(Dtype(i));
  nb::enum_<Dtype> dtype(m, "Dtype", "An element type.");
  for (int i = 0; i < kNumDtypes; ++i) dtype.value(names[i].c_str(), Dtype(i));
  dtype.def_prop_ro(
           "size", [](Dtype d) { return size_of(d); }, "Bytes per element.")
      .def("__repr__", [](Dtype d) { return std::string("nuvec.") + name_of(d); })
      .def("__str__", [](Dtype d) { return std::string("nuvec.") + name_of(d); });
  for (int i = 0; i < kNumDtypes; ++i) m.attr(names[i].c_str()) = nb::cast(Dtype(i));

  nb::enum_<DeviceType>(m, "DeviceType").value("cpu", DeviceType::cpu).value("gpu", DeviceType::gpu);
  m.attr("cpu") = DeviceType::cpu;
  m.attr("gpu") = DeviceType::gpu;
  nb::class_<Device>(m, "Device", "A device: the CPU (and a GPU where a backend is built).")
      .def(nb::init<DeviceType, int>(), nb::arg("type"), nb::arg("index") = 0)
      .def_ro("type", &Device::type)
      .def_ro("index", &Device::index)
      .def("__repr__", &device_repr)
      .def("__eq__", [](const Device& a, nb::handle b) {
        if (nb::isinstance<DeviceType>(b)) return a.type == nb::cast<DeviceType>(b);
        return nb::isinstance<Device>(b) && nb::cast<Device>(b) == a;
      });
  nb::implicitly_convertible<DeviceType, Device>();
  nb::class_<Stream>(m, "Stream", "A queue of work on a device.")
      .def_ro("device", &Stream::device)
      .def_ro("index", &Stream::index)
      .def("__repr__",
           [](const Stream& s) { return "Stream(" + device_repr(s.device) + ", " + std::to_string(s.index) + ")"; })
      .def("__eq__",
           [](const Stream& a, nb::handle b) { return nb::isinstance<Stream>(b) && nb::cast<Stream>(b) == a; })
      .def("__hash__", [](const Stream& s) { return std::hash<int>()(s.index); });
  nb::class_<ThreadLocalStream>(m, "ThreadLocalStream",
                                "A stream that is a different stream in each thread that uses it (made on first use).")
      .def_ro("device", &ThreadLocalStream::device)
      .def("__repr__",
           [](const ThreadLocalStream& s) {
             return "ThreadLocalStream(" + device_repr(s.device) + ", " + std::to_string(s.id) + ")";
           })
      .def("__eq__",
           [](const ThreadLocalStream& a, nb::handle b) {
             return nb::isinstance<ThreadLocalStream>(b) && nb::cast<ThreadLocalStream>(b) == a;
           })
      .def("__hash__", [](const ThreadLocalStream& s) { return std::hash<int>()(s.id); })
      .def("_stream", &resolve, "The calling thread's stream of this handle.");

  m.def("_profile_start", &profile::start, "Starts timing each evaluated node by primitive (bench/profile_lm.py).");
  m.def(
      "_profile_stop",
      [] {
        nb::list out;
        for (auto& e : profile::stop()) out.append(nb::make_tuple(e.name, e.count, e.seconds));
        return out;
      },
      "Stops timing: [(primitive, nodes, seconds)], longest first.");
  m.def("is_available", &is_available, nb::arg("device"), "Whether the device can run work in this build.");
  m.def("default_device", &default_device, "The device ops run on by default.");
  m.def("set_default_device", &set_default_device, nb::arg("device"), "Sets the default device.");
  m.def(
      "default_stream",
      [](const Device& d) {
        if (!is_available(d)) throw OpError("default_stream", "the device is not available in this build");
        return peek_default_stream(d);
      },
      nb::arg("device"), "This thread's default stream on the device.");
  m.def("set_default_stream", &set_default_stream, nb::arg("stream"),
        "Sets this thread's default stream on the stream's device (the default device is unchanged).");
  m.def("new_stream", &new_stream, nb::arg("device"), "A new stream on the device, for the calling thread only.");
  m.def("new_thread_unsafe_stream", &new_thread_unsafe_stream, nb::arg("device"),
        "A new stream on the device that any thread may use.");
  m.def("new_thread_local_stream", &new_thread_local_stream, nb::arg("device"),
        "A stream handle that is a separate stream in each thread that uses it.");
  m.def("clear_streams", &clear_streams,
        "Destroys every stream the calling thread made, its default streams included.");
  m.def(
      "synchronize",
      [](nb::handle s) {
        // Converted while the GIL is held: a bad argument raises, not crashes. Any thread may
        // wait for a stream, as MLX.
        std::optional<Stream> stream;
        if (nb::isinstance<Stream>(s))
          stream = nb::cast<Stream>(s);
        else if (!s.is_none())
          stream = to_stream(s);
        nb::gil_scoped_release release;
        if (stream)
          synchronize(*stream);
        else
          synchronize_all();
      },
      nb::arg("stream").none() = nb::none(), "Waits for the work queued on the stream (all streams by default).");

  m.def(
      "eval",
      [](nb::args args) {
        std::vector<Array> arrays;
        collect(args, arrays);
        eval_now(arrays);
      },
      "Evaluates the arrays in the arguments (arrays or trees of arrays).");
  m.def(
      "async_eval",
      [](nb::args args) {
        std::vector<Array> arrays;
        collect(args, arrays);
        if (!arrays.empty()) async_eval(arrays);
      },
      "Starts evaluating the arrays on their stream's worker and returns at once.");

  nb::class_<Schedule>(m, "Schedule",
                       "The work of evaluating some arrays, ordered by nuvec.schedule and run later by `eval` "
                       "or `async_eval` (docs/design.md, \"Scheduled evaluation\").")
      .def(
          "eval",
          [](Schedule& s) {
            nb::gil_scoped_release release;
            s.eval();
          },
          "Runs the ordered work now (walking again if the graph was partly evaluated meanwhile).")
      .def(
          "async_eval", [](Schedule& s) { s.async_eval(); },
          "Queues the ordered work on the outputs' stream worker and returns at once.")
      .def_prop_ro(
          "nodes", [](const Schedule& s) { return s.nodes(); }, "How many unevaluated nodes the ordering found.")
      .def("__repr__", [](const Schedule& s) {
        return "Schedule(" + std::to_string(s.outputs()) + " outputs, " + std::to_string(s.nodes()) + " nodes)";
      });
  m.def(
      "schedule",
      [](nb::args args) {
        std::vector<Array> arrays;
        collect(args, arrays);
        nb::gil_scoped_release release;
        return Schedule(std::move(arrays));
      },
      "Orders the work the arrays in the arguments (arrays or trees of arrays) need now, for `.eval()` "
      "or `.async_eval()` on the returned Schedule later (a nuvec extension).");

  m.def(
      "depends",
      [](nb::handle inputs, nb::handle dependencies) -> nb::object {
        std::vector<Array> in = array_or_arrays(inputs, "inputs");
        std::vector<Array> out = depends(in, array_or_arrays(dependencies, "dependencies"));
        if (nb::isinstance<Array>(inputs)) return nb::cast(out[0]);
        return nb::cast(out);
      },
      "Arrays equal to `inputs` whose evaluation first evaluates `dependencies` (an array or a sequence "
      "of arrays each); returns an array for an array, a list for a sequence.");

  m.def(
      "get_array_buffer_size",
      [](nb::args args) {
        // Each buffer counts once (views and aliases share one), at its size, as MLX on the CPU.
        std::unordered_set<const Buffer*> seen;
        size_t total = 0;
        auto visit = [&](auto& self, nb::handle h) -> void {
          if (nb::isinstance<Array>(h)) {
            const Array& a = *nb::inst_ptr<Array>(h);
            if (!a.evaluated())
              throw nb::value_error("[get_array_buffer_size] Arrays must be evaluated before querying buffer size.");
            const Buffer* b = a.buffer().get();
            if (b && seen.insert(b).second) total += b->size();
          } else if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
            for (nb::handle x : nb::borrow<nb::sequence>(h)) self(self, x);
          } else if (PyDict_Check(h.ptr())) {
            for (auto [k, v] : nb::borrow<nb::dict>(h)) self(self, v);
          }
        };
        for (nb::handle h : args) visit(visit, h);
        return total;
      },
      "The bytes of the unique buffers behind the (evaluated) arrays in `args` (arrays or trees of "
      "arrays; other leaves are ignored), each counted once.");

  m.def("get_active_memory", &memory::active, "Bytes held by live arrays (excluding the cache).");
  m.def("get_peak_memory", &memory::peak, "The largest active memory since the start or reset_peak_memory.");
  m.def("reset_peak_memory", &memory::reset_peak, "Resets the peak to the current active memory.");
  m.def("get_cache_memory", &memory::cache, "Bytes of freed buffers kept for reuse.");
  m.def("set_memory_limit", &memory::set_memory_limit, nb::arg("limit"),
        "Evaluation raises rather than exceed `limit` bytes of active memory; returns the previous limit.");
  m.def("get_memory_limit", &memory::memory_limit, "The active-memory limit evaluation keeps to, in bytes.");
  m.def("set_cache_limit", &memory::set_cache_limit, nb::arg("limit"),
        "The most bytes the cache keeps; returns the previous limit.");
  m.def("clear_cache", &memory::clear_cache, "Frees the cached buffers.");

  m.def("get_num_threads", &get_num_threads, "Threads CPU kernels use.");
  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 1) throw OpError("set_num_threads", "the number of threads must be at least 1");
        nb::gil_scoped_release release;
        set_num_threads(n);
      },
      nb::arg("n"), "Sets the number of threads CPU kernels use (results do not depend on it).");
  m.def(
      "_pool_piece_runs",
      [](int64_t jobs) {
        // Back-to-back tiny jobs whose piece counts alternate, the pool's most racy use: each
        // piece must run exactly once (tests/test_threads.py).
        nb::gil_scoped_release release;
        int64_t wrong = 0;
        for (int64_t j = 0; j < jobs; ++j) {
          int64_t n = j % 2 ? 64 : 2 + j % 3;
          std::vector<std::atomic<int>> runs(n);
          parallel_for(n, 1, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) runs[i].fetch_add(1);
          });
          for (auto& r : runs) wrong += r.load() != 1;
        }
        return wrong;
      },
      nb::arg("jobs"), "How many pieces of `jobs` tiny pool jobs ran other than once (a test of the pool).");

  m.def(
      "from_dlpack",
      [](nb::handle obj, std::optional<bool> copy) {
        if (nb::isinstance<Array>(obj) && copy != true) return *nb::inst_ptr<Array>(obj);
        if (auto a = import_dlpack(obj, copy)) return *a;
        // Other buffer-protocol objects (NumPy scalars, memoryviews) through NumPy, as MLX takes them.
        if (PyObject_CheckBuffer(obj.ptr())) {
          nb::object view = nb::steal(PyMemoryView_FromObject(obj.ptr()));
          if (!view.is_valid()) throw nb::python_error();
          return *import_dlpack(nb::module_::import_("numpy").attr("asarray")(view), copy);
        }
        throw nb::type_error(("from_dlpack(): expected an object with __dlpack__, not " +
                              nb::cast<std::string>(nb::str(obj.type().attr("__name__"))))
                                 .c_str());
      },
      nb::arg("x"), nb::kw_only(), nb::arg("copy").none() = nb::none(),
      "An array over the memory of a DLPack producer, dtype kept (no copy unless `copy` is True, or the "
      "memory is read-only, or complex128 is narrowed to complex64; copy=False then raises).");
}

}  // namespace nuvec::python
