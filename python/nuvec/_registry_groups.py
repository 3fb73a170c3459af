"""The docs groups of the op registry (python/nuvec/_registry.py): the sections of
docs/operations.md in page order, each with its title and introduction. Stdlib-only data, loaded
by _registry.py from beside it."""

# Docs groups in page order: key -> (title, intro). "unary", "binary" and "ternary" are the
# element-wise tables; the others are sections of their own.
GROUPS = {
    "unary": ("Unary", ""),
    "binary": ("Binary", ""),
    "ternary": ("Ternary", ""),
    "creation": (
        "Creation",
        "Arrays from values and parameters. `shape` is an int or a sequence of ints. "
        "Without `dtype`: zeros, ones, eye, identity, tri and linspace make float32; arange makes "
        "int32 from int arguments, else float32; full and the `_like` functions keep their input's "
        "dtype.",
    ),
    "shape": ("Shapes and layout", "Views share the input's memory wherever strides allow."),
    "indexing": (
        "Indexing",
        "Besides `x[...]` and `x[...] = v` (see the `array` class): integer indices "
        "out of range raise `EvalIndexError` when evaluated. Float or bool index arrays raise "
        "`OpError` at the call (MLX's `take_along_axis` / `put_along_axis` accept them and then "
        "fail at evaluation or leave the array unchanged).",
    ),
    "reduce": (
        "Reductions",
        "Over any set of axes (`axis=None` is all of them) with `keepdims`; sums "
        "are blocked/pairwise and bit-identical whatever the thread count; half types accumulate "
        "in float32. `softmax` and `logsumexp` over the last axis are fused kernels.",
    ),
    "matmul": (
        "Matrix products",
        "nuvec's own kernels (not a wrapped BLAS): float32, float64, float16, "
        "bfloat16 (computed in float32) and complex64; rows are independent up to "
        "`ROW_INDEPENDENT_ROWS` rows (docs/matmul.md).",
    ),
    "quantized": (
        "Quantization",
        "MLX's quantized weights: `quantize` packs groups of `group_size` values of a row into "
        "`bits`-bit codes in uint32 words with a scale and bias per group, bit for bit as MLX "
        "(docs/quantization.md).",
    ),
    "conv": (
        "Convolutions",
        "MLX's channels-last layout: input (N, *spatial, C_in), weight (C_out, *kernel, "
        "C_in / groups), output (N, *spatial_out, C_out), 1 to 3 spatial axes; float32, float64, "
        "float16 and bfloat16 (accumulated in float32). nuvec's own implicit-GEMM kernel; results "
        "are bitwise the same whatever the thread count.",
    ),
    "sort": (
        "Sorting",
        "Along `axis` (default -1; None sorts the flattened array). sort and argsort "
        "are stable with NumPy's order (NaNs last, complex numbers lexicographic); indices are "
        "uint32. topk gives the k largest in no promised order.",
    ),
    "scan": (
        "Scans",
        "Along `axis` (default None: the flattened array), with `reverse` and "
        "`inclusive`; also array methods. Results combine strictly in order, so they never depend "
        "on the threads. cumsum of bool counts in int32; logcumsumexp of integers gives float32; "
        "half types accumulate in float32.",
    ),
    "files": (
        "Files",
        "Loading maps the file: arrays from uncompressed files share its pages (see "
        "docs/io.md). `save_tree` and `load_into` also live in `nuvec.utils`.",
    ),
    "modules": (
        "Modules",
        "`nuvec.random` (random numbers bit for bit MLX's, docs/random.md), "
        "`nuvec.utils` (trees: tree_flatten, tree_unflatten, tree_map, ...), `nuvec.io` (the file "
        "functions above), `nuvec.optimizers` (MLX's optimizers and schedules, "
        "docs/optimizers.md), and MLX's `metal` and `cuda` (neither is available; `metal` keeps "
        "MLX's deprecated memory aliases).",
    ),
    "constants": ("Constants", "MLX's constants: Python floats, and `newaxis` (None)."),
    "transforms": (
        "Transforms",
        "Over trees of arrays (tuples, lists, dicts, namedtuples, dataclasses); "
        "gradients are lazy arrays, so transforms nest (grad of grad, jvp of vjp).",
    ),
    "evaluation": (
        "Evaluation",
        "Arrays are lazy: these (and `item`, `tolist`, printing, NumPy and DLPack "
        "export) compute them.",
    ),
    "printing": ("Printing", "`precision` of floats in repr and str, as MLX's (-1: %g)."),
    "export": (
        "Function export",
        "A traced function saved to a file and loaded back as a callable (docs/export.md).",
    ),
    "devices": (
        "Devices and streams",
        "Only the CPU is available today: `is_available(gpu)` is False. Streams belong to "
        "threads as MLX's (docs/getting-started.md).",
    ),
    "memory": (
        "Memory",
        "Counters and limits of nuvec's caching allocator (see getting-started.md).",
    ),
    "threads": (
        "Threads",
        "The CPU thread pool (its starting size is `NUVEC_NUM_THREADS`, else the cores available).",
    ),
    "interoperability": (
        "Interoperability",
        "NumPy and DLPack (see also the `array` class below).",
    ),
    "native": (
        "Native code",
        "nuvec's C API for C programs and native extensions (nuvec extensions beyond MLX; "
        "docs/c-api.md): the paths to build against it, also printed by `python -m nuvec --cflags` "
        "and `--ldflags`.",
    ),
    "dtypes": ("Dtypes", "The fourteen dtypes, their type and MLX's categories."),
    "errors": (
        "Errors",
        "Every error names the op (`op_name`), the `reason`, and a `filename` and "
        "`lineno`: the caller's for an invalid call, the line where the node was recorded for an "
        "evaluation failure.",
    ),
    "random": ("Random", "nuvec.random's samplers (documented in docs/random.md)."),
    "linalg": ("Linear algebra", "nuvec.linalg, MLX's mx.linalg (documented in docs/linalg.md)."),
    "fft": ("Fourier transforms", "nuvec.fft, MLX's mx.fft (documented in docs/fft.md)."),
}

ELEMENTWISE_GROUPS = ("unary", "binary", "ternary")
