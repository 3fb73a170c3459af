"""nuvec_vmap from C (docs/c-api.md, "Transforms"): a closure mapped over chosen input axes (one
input shared), each output's mapped axis placed at out_axes, an output independent of the mapped
input broadcast along it, the composition with nuvec_vjp, and a wrong axis count reaching the
error handler."""

import subprocess

import numpy as np
import pytest

from capi_build import compile_c, needs_cc, printed_flags

pytestmark = [needs_cc, pytest.mark.nuvec_only]

B = 4
X = np.arange(2 * B * 3, dtype=np.float32).reshape(2, B, 3) / 7 - 1  # mapped along axis 1
W = np.arange(15, dtype=np.float32).reshape(3, 5) / 5 - 1  # shared

SOURCE = r"""
#include <stdio.h>
#include "nuvec/nuvec.h"

static void on_error(const char* msg, void* data) { (void)data; printf("error: %s\n", msg); }

static void print(const char* name, nuvec_array a) {
  nuvec_array f = nuvec_array_new();
  nuvec_stream s = nuvec_default_cpu_stream_new();
  nuvec_astype(&f, a, NUVEC_FLOAT64, s);
  nuvec_array_eval(f);
  const double* v = nuvec_array_data_float64(f);
  printf("%s:", name);
  for (size_t i = 0; i < nuvec_array_ndim(a); ++i) printf(" %d", nuvec_array_shape(a)[i]);
  printf(" |");
  for (size_t i = 0; i < nuvec_array_size(f); ++i) printf(" %.17g", v[i]);
  printf("\n");
  nuvec_array_free(f);
  nuvec_stream_free(s);
}

/* (x @ w, sum(w)) for one example x (2, 3) and the shared w (3, 5). */
static int f(nuvec_vector_array* res, const nuvec_vector_array in) {
  nuvec_stream s = nuvec_default_cpu_stream_new();
  nuvec_array x = nuvec_array_new(), w = nuvec_array_new(), y = nuvec_array_new(), t = nuvec_array_new();
  nuvec_vector_array_get(&x, in, 0);
  nuvec_vector_array_get(&w, in, 1);
  int rc = nuvec_matmul(&y, x, w, s) || nuvec_sum(&t, w, NULL, 0, false, s);
  if (!rc) {
    nuvec_vector_array out = nuvec_vector_array_new_value(y);
    nuvec_vector_array_append_value(out, t);
    nuvec_vector_array_set(res, out);
    nuvec_vector_array_free(out);
  }
  nuvec_array_free(x);
  nuvec_array_free(w);
  nuvec_array_free(y);
  nuvec_array_free(t);
  nuvec_stream_free(s);
  return rc;
}

/* sum of the first output of the vmapped closure, for nuvec_vjp. */
static int g(nuvec_vector_array* res, const nuvec_vector_array in, void* payload) {
  nuvec_closure mapped = *(nuvec_closure*)payload;
  nuvec_stream s = nuvec_default_cpu_stream_new();
  nuvec_vector_array out = nuvec_vector_array_new();
  nuvec_array y = nuvec_array_new(), t = nuvec_array_new();
  int rc = nuvec_closure_apply(&out, mapped, in) || nuvec_vector_array_get(&y, out, 0) ||
           nuvec_sum(&t, y, NULL, 0, false, s);
  if (!rc) {
    nuvec_vector_array r = nuvec_vector_array_new_value(t);
    nuvec_vector_array_set(res, r);
    nuvec_vector_array_free(r);
  }
  nuvec_vector_array_free(out);
  nuvec_array_free(y);
  nuvec_array_free(t);
  nuvec_stream_free(s);
  return rc;
}

@DATA@

int main(void) {
  nuvec_set_error_handler(on_error, NULL, NULL);
  const int xshape[3] = {2, @B@, 3}, wshape[2] = {3, 5};
  nuvec_array x = nuvec_array_new_data(x_data, xshape, 3, NUVEC_FLOAT32);
  nuvec_array w = nuvec_array_new_data(w_data, wshape, 2, NUVEC_FLOAT32);
  nuvec_vector_array in = nuvec_vector_array_new_value(x);
  nuvec_vector_array_append_value(in, w);
  nuvec_closure fun = nuvec_closure_new_func(f), mapped = nuvec_closure_new();
  nuvec_vector_array out = nuvec_vector_array_new(), grads = nuvec_vector_array_new();
  nuvec_array r = nuvec_array_new();

  const int in_axes[2] = {1, -1}, out_axes[2] = {2, 0};
  if (!nuvec_vmap(&mapped, fun, in_axes, 2, out_axes, 2) && !nuvec_closure_apply(&out, mapped, in)) {
    nuvec_vector_array_get(&r, out, 0);
    print("mapped", r);
    nuvec_vector_array_get(&r, out, 1);
    print("broadcast", r);
  }
  nuvec_closure summed = nuvec_closure_new_func_payload(g, &mapped, NULL);
  nuvec_vector_array none = nuvec_vector_array_new();
  if (!nuvec_vjp(&out, &grads, summed, in, none)) {
    nuvec_vector_array_get(&r, grads, 0);
    print("grad_x", r);
    nuvec_vector_array_get(&r, grads, 1);
    print("grad_w", r);
  }
  /* One in_axes entry for two inputs: the error reaches the handler, the program goes on. */
  nuvec_closure wrong = nuvec_closure_new();
  if (!nuvec_vmap(&wrong, fun, in_axes, 1, NULL, 0) && nuvec_closure_apply(&out, wrong, in)) printf("failed: 1\n");
  printf("survived: 1\n");

  nuvec_closure closures[] = {fun, mapped, summed, wrong};
  for (size_t i = 0; i < 4; ++i) nuvec_closure_free(closures[i]);
  nuvec_vector_array vectors[] = {in, out, grads, none};
  for (size_t i = 0; i < 4; ++i) nuvec_vector_array_free(vectors[i]);
  nuvec_array_free(x);
  nuvec_array_free(w);
  nuvec_array_free(r);
  return 0;
}
"""


def c_array(name, values):
    return (
        f"static const float {name}[] = {{{', '.join(repr(v) for v in values.ravel().tolist())}}};"
    )


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    d = tmp_path_factory.mktemp("capi_vmap")
    data = c_array("x_data", X) + "\n" + c_array("w_data", W)
    (d / "vmap.c").write_text(SOURCE.replace("@DATA@", data).replace("@B@", str(B)))
    exe = str(d / "vmap")
    flags = printed_flags("--cflags", "--ldflags")
    compile_c(["-std=c99", "-Wall", "-Werror", str(d / "vmap.c"), *flags, "-o", exe])
    done = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    parsed = {"errors": []}
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(": ")
        if name == "error":
            parsed["errors"].append(rest)
        else:
            parsed[name] = rest
    return parsed


def array(text):
    shape, _, vals = text.partition("|")
    return np.array([float(v) for v in vals.split()]).reshape([int(n) for n in shape.split()])


def test_vmap_maps_the_chosen_axes_and_places_the_outputs(out):
    x, w = X.astype(np.float64), W.astype(np.float64)
    per_example = np.stack([x[:, b, :] @ w for b in range(B)])  # (B, 2, 5)
    np.testing.assert_allclose(array(out["mapped"]), per_example.transpose(1, 2, 0), rtol=1e-6)
    np.testing.assert_allclose(array(out["broadcast"]), np.full(B, w.sum()), rtol=1e-6)


def test_vjp_of_the_mapped_closure(out):
    # d/dx sum_b x_b @ w = ones @ w.T per example; d/dw = sum_b x_b.T @ ones.
    x, w = X.astype(np.float64), W.astype(np.float64)
    np.testing.assert_allclose(array(out["grad_x"]), np.broadcast_to(w.sum(1), X.shape), rtol=1e-6)
    np.testing.assert_allclose(
        array(out["grad_w"]), np.broadcast_to(x.sum((0, 1))[:, None], W.shape), rtol=1e-6
    )


def test_wrong_axis_count_reaches_the_handler(out):
    assert out["failed"] == "1"
    assert len(out["errors"]) == 1, out["errors"]
    assert "nuvec_vmap's in_axes has 1 axes for 2 arrays" in out["errors"][0]
    assert out["survived"] == "1"
