/* nuvec's C API from C: ops, transforms and errors (docs/c-api.md).
 *
 *   cc -std=c99 ops_and_grad.c $(python -m nuvec --cflags --ldflags) -o ops_and_grad
 *
 * Prints one line per result, "name: v0 v1 ...", for tests/test_capi.py to check with NumPy. */
#include <stdio.h>
#include <string.h>

#include "nuvec/nuvec.h"

static char last_error[1024];
static void on_error(const char* msg, void* data) {
  (void)data;
  snprintf(last_error, sizeof last_error, "%s", msg);
}

static void print(const char* name, nuvec_array a) {
  nuvec_array f = nuvec_array_new();
  nuvec_stream s = nuvec_default_cpu_stream_new();
  nuvec_astype(&f, a, NUVEC_FLOAT64, s);
  nuvec_array_eval(f);
  const double* v = nuvec_array_data_float64(f);
  printf("%s:", name);
  for (size_t i = 0; i < nuvec_array_size(f); ++i) printf(" %.17g", v[i]);
  printf("\n");
  nuvec_array_free(f);
  nuvec_stream_free(s);
}

/* f(x) = sum(sin(x) * x): its gradient is cos(x) * x + sin(x). */
static int f(nuvec_vector_array* res, const nuvec_vector_array in) {
  nuvec_stream s = nuvec_default_cpu_stream_new();
  nuvec_array x = nuvec_array_new(), y = nuvec_array_new(), z = nuvec_array_new();
  nuvec_vector_array_get(&x, in, 0);
  int rc = nuvec_sin(&y, x, s) || nuvec_multiply(&y, y, x, s) || nuvec_sum(&z, y, NULL, 0, false, s);
  if (!rc) {
    nuvec_vector_array out = nuvec_vector_array_new_value(z);
    nuvec_vector_array_set(res, out);
    nuvec_vector_array_free(out);
  }
  nuvec_array_free(x);
  nuvec_array_free(y);
  nuvec_array_free(z);
  nuvec_stream_free(s);
  return rc;
}

int main(void) {
  nuvec_set_error_handler(on_error, NULL, NULL);
  nuvec_stream s = nuvec_default_cpu_stream_new();
  const float data[6] = {0.5f, -1.0f, 2.0f, 3.0f, -0.25f, 1.5f};
  const int shape[2] = {2, 3};
  nuvec_array a = nuvec_array_new_data(data, shape, 2, NUVEC_FLOAT32);
  nuvec_array r = nuvec_array_new(), t = nuvec_array_new();

  /* Ops. */
  nuvec_exp(&r, a, s);
  print("exp", r);
  int axis = 1;
  nuvec_sum(&r, a, &axis, 1, false, s);
  print("sum1", r);
  nuvec_transpose(&t, a, (const int[]){1, 0}, 2, s);
  nuvec_matmul(&r, a, t, s);
  print("matmul", r);
  nuvec_array two = nuvec_array_new_float(2.0f);
  nuvec_power(&r, a, two, s);
  nuvec_maximum(&r, r, a, s);
  print("maxpow", r);
  nuvec_softmax(&r, a, &axis, 1, false, s);
  print("softmax", r);
  nuvec_vector_array ab = nuvec_vector_array_new_data((nuvec_array[]){a, a}, 2);
  nuvec_einsum(&r, "ij,kj->ik", ab, s);
  print("einsum", r);
  nuvec_array zero = nuvec_array_new_float(0.0f);
  nuvec_pad(&r, a, (const int[]){1, 0, 0, 2}, 4, "constant", zero, s);
  print("pad", r);
  nuvec_vector_array qr = nuvec_vector_array_new();
  nuvec_divmod(&qr, a, two, s);
  nuvec_vector_array_get(&r, qr, 1);
  print("mod", r);
  /* conv1d over (batch 1, length 6, 1 channel) with the kernel (1, 3, 1) of ones: sums of 3. */
  nuvec_array w = nuvec_array_new(), x = nuvec_array_new();
  nuvec_ones(&w, (const int[]){1, 3, 1}, 3, NUVEC_FLOAT32, s);
  nuvec_reshape(&x, a, (const int[]){1, 6, 1}, 3, s);
  nuvec_conv1d(&r, x, w, (const int[]){1}, 1, (const int[]){0}, 1, (const int[]){1}, 1, 1, s);
  print("conv1d", r);

  /* Transforms. */
  nuvec_closure cls = nuvec_closure_new_func(f);
  nuvec_vector_array primals = nuvec_vector_array_new_value(a);
  nuvec_vector_array outs = nuvec_vector_array_new(), grads = nuvec_vector_array_new();
  nuvec_vector_array none = nuvec_vector_array_new();
  nuvec_vjp(&outs, &grads, cls, primals, none);
  nuvec_vector_array_get(&r, grads, 0);
  print("vjp", r);
  nuvec_array ones = nuvec_array_new();
  nuvec_ones_like(&ones, a, s);
  nuvec_vector_array tangents = nuvec_vector_array_new_value(ones);
  nuvec_jvp(&outs, &grads, cls, primals, tangents);
  nuvec_vector_array_get(&r, grads, 0);
  print("jvp", r);
  nuvec_closure_value_and_grad vg = nuvec_closure_value_and_grad_new();
  nuvec_value_and_grad(&vg, cls, (const int[]){0}, 1);
  nuvec_closure_value_and_grad_apply(&outs, &grads, vg, primals);
  nuvec_vector_array_get(&r, outs, 0);
  print("value", r);
  nuvec_vector_array_get(&r, grads, 0);
  print("grad", r);
  nuvec_closure compiled = nuvec_closure_new();
  nuvec_compile(&compiled, cls, false);
  nuvec_closure_apply(&outs, compiled, primals);
  nuvec_closure_apply(&outs, compiled, primals); /* the second call replays the trace */
  nuvec_vector_array_get(&r, outs, 0);
  print("compiled", r);

  /* An error reaches the handler with the op's name; the program goes on. */
  nuvec_array b = nuvec_array_new_data(data, (const int[]){4}, 1, NUVEC_FLOAT32);
  int rc = nuvec_add(&r, a, b, s);
  printf("error: %d %s\n", rc, last_error);
  rc = nuvec_reshape(&r, a, (const int[]){4, 2}, 2, s);
  printf("error: %d %s\n", rc, last_error);
  printf("survived: 1\n");

  nuvec_array_free(a);
  nuvec_array_free(b);
  nuvec_array_free(r);
  nuvec_array_free(t);
  nuvec_array_free(two);
  nuvec_array_free(zero);
  nuvec_array_free(w);
  nuvec_array_free(x);
  nuvec_vector_array_free(ab);
  nuvec_vector_array_free(qr);
  nuvec_array_free(ones);
  nuvec_vector_array_free(primals);
  nuvec_vector_array_free(outs);
  nuvec_vector_array_free(grads);
  nuvec_vector_array_free(none);
  nuvec_vector_array_free(tangents);
  nuvec_closure_free(cls);
  nuvec_closure_free(compiled);
  nuvec_closure_value_and_grad_free(vg);
  nuvec_stream_free(s);
  return 0;
}
