// Devices and streams. CPU work of async_eval runs on the stream's own worker thread.
#pragma once
#include <functional>
#include <string>

namespace nuvec {

enum class DeviceType { cpu, gpu };
const char* device_name(DeviceType t);  // "cpu", "gpu"

struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
};

struct Stream {
  int index = 0;
  Device device;
  bool operator==(const Stream& o) const { return index == o.index && device == o.device; }
};

bool is_available(Device d);  // a backend is registered for it (core/backend.h)
Device default_device();
void set_default_device(Device d);  // OpError when the device is not available
Stream default_stream(Device d);    // this thread's default stream on d
void set_default_stream(Stream s);
Stream new_stream(Device d);
// Runs `task` on the stream's worker thread, after what was queued before it.
void enqueue(Stream s, std::function<void()> task);
void synchronize(Stream s);  // waits for everything queued on s
void synchronize_all();

}  // namespace nuvec
