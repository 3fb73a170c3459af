// Working space a kernel takes on every call, kept per thread between calls.
#pragma once
#include <cstddef>
#include <vector>

namespace nuvec::cpu {

// n elements of T owned by the calling thread, grown as needed and never given back: one buffer
// per Tag (a type naming its user), so a kernel's buffers and the ones its pieces use stay apart.
// A decode step's products and attention took ~150 such blocks of 1-32 KiB from malloc a step,
// and glibc consolidated its free lists at each allocation of that size.
template <class Tag, class T> T* thread_buffer(size_t n) {
  thread_local std::vector<T> v;
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace nuvec::cpu
