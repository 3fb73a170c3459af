"""mx.cuda as MLX has it without CUDA: is_available() is False."""


def is_available():
    """Whether CUDA is available: never, nuvec runs on the CPU."""
    return False
