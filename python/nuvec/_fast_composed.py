"""nuvec.fast.gated_delta_update (MLX 0.32's), composed from ops: its gradients and vmap rule are
the ops'. docs/fast.md describes it."""

from . import _core
from ._composed import asarray
from ._core import array
from ._errors import op_error

__all__ = ["gated_delta_update"]


def gated_delta_update(
    q: array,
    k: array,
    v: array,
    gamma: array,
    beta: array,
    initial_state: array | None = None,
    mask: array | None = None,
    stream=None,
) -> list[array]:
    """The gated delta network's recurrence over T steps (MLX's gated_delta_update).

    q, k ``(B, T, Hk, Dk)``; v ``(B, T, Hv, Dv)``; gamma (the decay, linear) and beta ``(B, T,
    Hv)``; the state ``(B, Hv, Dv, Dk)`` (zeros unless ``initial_state``), kept in float32. Each
    value head h reads key head ``h // (Hv // Hk)``. Per step:
    ``S = gamma * S; S += outer(beta * (v - S k), k); y = S q``; where ``mask`` ``(B, T)`` is
    false the step leaves S unchanged and y is 0. Returns ``[y (B, T, Hv, Dv) in q's dtype,
    the final state]``.
    """
    q, k, v, gamma, beta = (asarray(a) for a in (q, k, v, gamma, beta))
    if q.ndim != 4 or k.shape != q.shape or v.ndim != 4 or v.shape[:2] != q.shape[:2]:
        raise op_error(
            "gated_delta_update",
            f"q and k must be (B, T, Hk, Dk) and v (B, T, Hv, Dv), got {q.shape}, {k.shape}, "
            f"{v.shape}",
        )
    b, t, hk, dk = q.shape
    hv, dv = v.shape[2:]
    if hv % hk:
        raise op_error("gated_delta_update", f"Hv ({hv}) must be a multiple of Hk ({hk})")
    if gamma.shape != (b, t, hv) or beta.shape != (b, t, hv):
        raise op_error("gated_delta_update", f"gamma and beta must be {(b, t, hv)}")
    state_shape = (b, hv, dv, dk)
    if initial_state is not None and tuple(initial_state.shape) != state_shape:
        raise op_error("gated_delta_update", f"initial_state must be {state_shape}")
    if mask is not None and tuple(mask.shape) != (b, t):
        raise op_error("gated_delta_update", f"mask must be {(b, t)}")

    def f32(a):
        return a.astype(_core.float32, stream=stream)

    qf, kf = f32(q), f32(k)
    if hv != hk:
        qf, kf = (_core.repeat(a, hv // hk, 2, stream=stream) for a in (qf, kf))
    vf, gf, bf = f32(v), f32(gamma), f32(beta)
    s = _core.zeros(state_shape, _core.float32) if initial_state is None else f32(initial_state)
    ys = []
    for i in range(t):
        kt = _core.expand_dims(kf[:, i], 2)  # (B, Hv, 1, Dk)
        st = s * gf[:, i, :, None, None]
        delta = (vf[:, i] - (st * kt).sum(-1)) * bf[:, i, :, None]
        st = st + kt * _core.expand_dims(delta, -1)
        y = (st * _core.expand_dims(qf[:, i], 2)).sum(-1)
        if mask is not None:
            m = mask[:, i].astype(_core.bool_).reshape(b, 1, 1)
            y = _core.where(m, y, 0.0)
            st = _core.where(_core.expand_dims(m, -1), st, s)
        s = st
        ys.append(y)
    y = _core.stack(ys, 1) if ys else _core.zeros((b, 0, hv, dv), _core.float32)
    return [y.astype(q.dtype, stream=stream), s]
