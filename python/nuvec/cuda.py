"""mx.cuda as MLX has it without CUDA: is_available() is False."""

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether CUDA is available: never, nuvec runs on the CPU."""
    return False
