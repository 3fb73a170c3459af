"""Device queries as MLX's: device_info, device_count, and the wired limit (Metal's: no effect here)."""

import platform
from typing import Any

from . import _core

_wired_limit = 0


def _cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_info(d: _core.Device | _core.DeviceType | None = None) -> dict[str, Any]:
    """A dict describing device `d` (the default device when None); empty for an absent device."""
    d = _core.default_device() if d is None else d
    if isinstance(d, _core.DeviceType):
        d = _core.Device(d)
    if not _core.is_available(d):
        return {}
    if d.type == _core.DeviceType.gpu:
        return dict(_core._gpu_info())
    return {"architecture": platform.machine(), "device_name": _cpu_name()}


def device_count(device_type: _core.DeviceType) -> int:
    """How many devices of `device_type` there are: 1 CPU; 1 GPU where the CUDA backend runs."""
    if not isinstance(device_type, _core.DeviceType):
        raise TypeError(f"device_count: expected a DeviceType, not {type(device_type).__name__}")
    return int(_core.is_available(_core.Device(device_type)))


def set_wired_limit(limit: int) -> int:
    """MLX's wired-memory limit (Metal only): kept, without effect here; returns the previous one."""
    global _wired_limit
    if limit < 0:
        raise ValueError("set_wired_limit: the limit must be non-negative")
    previous, _wired_limit = _wired_limit, int(limit)
    return previous
