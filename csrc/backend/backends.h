// Registers the backends built into this library, once: the CPU's, then the GPU's where one is
// built and a device is present, which then becomes the default device (as MLX's).
#pragma once

namespace nuvec {

void register_backends();

}  // namespace nuvec
