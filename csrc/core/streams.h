// Streams' thread ownership, as MLX's: a stream belongs to the thread that made it. Each thread
// has its own default stream per device (core/device.h's default_stream), `new_stream`'s streams
// serve only their thread (`new_thread_unsafe_stream`'s serve any), and a ThreadLocalStream
// names one stream per thread, made on first use. Evaluation is not tied to threads: an array
// recorded on any stream can be evaluated on any thread.
#pragma once
#include <stdexcept>

#include "core/device.h"

namespace nuvec {

// A thread-local stream handle: each thread that uses it gets its own stream.
struct ThreadLocalStream {
  int id = 0;
  Device device;
  bool operator==(const ThreadLocalStream& o) const { return id == o.id; }
};

// Use of a stream this thread does not have (another thread's, or one clear_streams destroyed).
class StreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// This thread's default stream on d, even one clear_streams destroyed (default_stream raises then):
// the label of evaluated arrays, which need no stream.
Stream peek_default_stream(Device d);
Stream new_thread_unsafe_stream(Device d);  // serves every thread
ThreadLocalStream new_thread_local_stream(Device d);
Stream resolve(ThreadLocalStream s);  // the calling thread's stream of s
void check_usable(Stream s);          // StreamError when the calling thread does not have s
// Destroys every stream the calling thread made (its defaults, new_stream's, its ThreadLocalStream
// streams), as MLX's: ops on them raise until the thread sets a live default (set_default_stream).
void clear_streams();

}  // namespace nuvec
