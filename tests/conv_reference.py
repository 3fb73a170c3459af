"""Float64 NumPy references for the convolution tests, written from the definitions: the input
dilated and padded (negative padding crops), then a sum over kernel taps of strided slices
(conv_general); and the transposed convolution as a scatter of each input value times the
kernel (MLX's weight layout, (C_out, *kernel, C_in / groups))."""

import itertools

import numpy as np


def per_axis(v, dims):
    return [int(v)] * dims if np.isscalar(v) else [int(a) for a in v] * (dims if len(v) == 1 else 1)


def dilate_pad(x, idil, lo, hi):
    """x (N, *S, C) with idil - 1 zeros between values, lo / hi zeros at each end (or cropped)."""
    dims = x.ndim - 2
    shape = (
        [x.shape[0]]
        + [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[1:-1], idil)]
        + [x.shape[-1]]
    )
    xd = np.zeros(shape, np.float64)
    xd[(slice(None),) + tuple(slice(None, None, d) for d in idil)] = x
    xd = np.pad(xd, [(0, 0)] + [(max(a, 0), max(b, 0)) for a, b in zip(lo, hi)] + [(0, 0)])
    crop = tuple(
        slice(max(-a, 0), xd.shape[i + 1] - max(-b, 0)) for i, (a, b) in enumerate(zip(lo, hi))
    )
    assert len(crop) == dims
    return xd[(slice(None),) + crop]


def conv_general(
    x, w, stride=1, padding=0, kernel_dilation=1, input_dilation=1, groups=1, flip=False
):
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    dims = x.ndim - 2
    s, kd, idil = (
        per_axis(stride, dims),
        per_axis(kernel_dilation, dims),
        per_axis(input_dilation, dims),
    )
    if isinstance(padding, tuple) and len(padding) == 2 and not np.isscalar(padding[0]):
        lo, hi = per_axis(padding[0], dims), per_axis(padding[1], dims)
    else:
        lo = hi = per_axis(padding, dims)
    if flip:
        w = w[(slice(None),) + (slice(None, None, -1),) * dims]
    xp = dilate_pad(x, idil, lo, hi)
    k = w.shape[1:-1]
    out = [(xp.shape[i + 1] - (k[i] - 1) * kd[i] - 1) // s[i] + 1 for i in range(dims)]
    n, cin, cout = x.shape[0], x.shape[-1], w.shape[0]
    cig, cog = cin // groups, cout // groups
    y = np.zeros([n] + out + [groups, cog])
    for taps in itertools.product(*[range(a) for a in k]):
        sl = tuple(
            slice(t * d, t * d + (o - 1) * st + 1, st) for t, d, o, st in zip(taps, kd, out, s)
        )
        patch = xp[(slice(None),) + sl].reshape([n] + out + [groups, cig])
        wt = w[(slice(None),) + taps].reshape(groups, cog, cig)
        y += np.einsum("...gc,goc->...go", patch, wt)
    return y.reshape([n] + out + [cout])


def conv_transpose(x, w, stride=1, padding=0, dilation=1, output_padding=0, groups=1):
    """y[n, i * s - p + t * d, g * Cog + o] += x[n, i, g * Cig + c] * w[g * Cog + o, t, c]."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    dims = x.ndim - 2
    s, p, d, op = (per_axis(v, dims) for v in (stride, padding, dilation, output_padding))
    k = w.shape[1:-1]
    out = [
        (x.shape[i + 1] - 1) * s[i] - 2 * p[i] + (k[i] - 1) * d[i] + 1 + op[i] for i in range(dims)
    ]
    n, cin, cout = x.shape[0], x.shape[-1], w.shape[0]
    cig, cog = cin // groups, cout // groups
    # Scatter into a buffer wide enough for every tap, then crop the padding.
    full = [
        (x.shape[i + 1] - 1) * s[i] + (k[i] - 1) * d[i] + 1 + max(op[i], 0) for i in range(dims)
    ]
    y = np.zeros([n] + full + [groups, cog])
    xg = x.reshape(x.shape[:-1] + (groups, cig))
    for taps in itertools.product(*[range(a) for a in k]):
        sl = tuple(
            slice(t * dd, t * dd + (xs - 1) * st + 1, st)
            for t, dd, xs, st in zip(taps, d, x.shape[1:-1], s)
        )
        wt = w[(slice(None),) + taps].reshape(groups, cog, cig)
        y[(slice(None),) + sl] += np.einsum("...gc,goc->...go", xg, wt)
    y = y.reshape([n] + full + [cout])
    y = np.pad(y, [(0, 0)] + [(max(-a, 0), max(-a, 0)) for a in p] + [(0, 0)])
    crop = tuple(slice(max(a, 0), max(a, 0) + o) for a, o in zip(p, out))
    return y[(slice(None),) + crop]
