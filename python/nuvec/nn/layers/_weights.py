"""Reading, checking and writing a module's weights (``load_weights`` / ``save_weights``)."""

from __future__ import annotations

import os
from typing import Any

from ... import _core
from ...io import load, save_safetensors, savez


def read_weights(source: Any) -> list[tuple[str, Any]]:
    """``(path, array)`` pairs from a ``.npz``/``.safetensors`` path or a list of pairs."""
    if isinstance(source, (str, os.PathLike)):
        return list(load(os.fspath(source)).items())
    return list(source)


def weight_problems(new: dict[str, Any], current: dict[str, Any]) -> str:
    """Every way ``new`` fails to match ``current`` exactly, one per line ("" when it matches)."""
    lines = []
    extra = sorted(new.keys() - current.keys())
    if extra:
        lines.append(f"Received {len(extra)} parameters not in model: \n" + ",\n".join(extra) + ".")
    missing = sorted(current.keys() - new.keys())
    if missing:
        lines.append(f"Missing {len(missing)} parameters: \n" + ",\n".join(missing) + ".")
    for k in sorted(current.keys() & new.keys()):
        v = new[k]
        if not isinstance(v, _core.array):
            lines.append(f"Expected mx.array but received {type(v)} for parameter {k}")
        elif v.shape != current[k].shape:
            lines.append(
                f"Expected shape {current[k].shape} but received shape {v.shape} for parameter {k}"
            )
    return "\n".join(lines)


def write_weights(file: str, flat: dict[str, Any]) -> None:
    name = os.fspath(file)
    if name.endswith(".npz"):
        savez(name, **flat)
    elif name.endswith(".safetensors"):
        save_safetensors(name, flat)
    else:
        raise ValueError(f"Unsupported file extension for {name}. Use '.npz' or '.safetensors'.")
