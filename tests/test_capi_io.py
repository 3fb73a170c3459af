"""The file functions (include/nuvec/io.h), the map handles, and the C functions of ops composed in
C++ for Python and C alike (to_fp8, from_fp8, the windows, unique), from a C program: .npy,
.safetensors (with metadata) and .npz written in C read back in Python and files written in Python
read in C; fp8, windows and unique give nuvec's Python bits and NumPy's values; a missing file, a
bad file and a bad argument of each family reach the error handler with the function's name."""

import numpy as np
import pytest

import nuvec as nv
from capi_build import C_PRELUDE, build_and_run, c_array, needs_cc

pytestmark = [needs_cc, pytest.mark.nuvec_only]

rng = np.random.default_rng(1818)
X = rng.standard_normal((2, 3)).astype(np.float32)
Y = np.arange(4, dtype=np.int32)
PY_NPY = rng.standard_normal((3, 2)).astype(np.float32)
PY_A = rng.standard_normal(5).astype(np.float32)
PY_B = np.array([[1, -2], [3, 4]], np.int32)
PY_META = {"format": "mlx", "note": "written by Python"}
# values round to even, saturate, go subnormal, and NaN
FP = np.array(
    [0.0, -0.0, 1.0, 1.0625, 1.1875, -3.3, 447.0, 500.0, -1e9, 0.001, 0.0138, np.nan], np.float32
)
CODES = np.arange(256, dtype=np.uint8)
U = np.array([[3, 1, 3], [7, 1, 5]], np.float32)
WINDOWS = ("bartlett", "blackman", "hamming", "hanning")

SOURCE = r"""
@DATA@

static void print_arrays(const char* prefix, nuvec_map_string_to_array map) {
  char label[64];
  const char* key;
  nuvec_array v = nuvec_array_new();
  nuvec_map_string_to_array_iterator it = nuvec_map_string_to_array_iterator_new(map);
  while (nuvec_map_string_to_array_iterator_next(&key, &v, it) == 0) {
    snprintf(label, sizeof label, "%s_%s", prefix, key);
    print(label, v);
  }
  nuvec_map_string_to_array_iterator_free(it);
  nuvec_array_free(v);
}

int main(void) {
  nuvec_set_error_handler(on_error, NULL, NULL);
  nuvec_stream s = nuvec_default_cpu_stream_new(), no_stream = {NULL};
  nuvec_array r = nuvec_array_new(), none = nuvec_array_new();
  nuvec_vector_array vec = nuvec_vector_array_new();
  const int n4[1] = {4}, n12[1] = {12}, n256[1] = {256}, s23[2] = {2, 3};
  nuvec_array x = nuvec_array_new_data(x_data, s23, 2, NUVEC_FLOAT32);
  nuvec_array y = nuvec_array_new_data(y_data, n4, 1, NUVEC_INT32);

  /* Written in C (the suffixes added), read in Python. */
  nuvec_map_string_to_array arrays = nuvec_map_string_to_array_new();
  nuvec_map_string_to_string meta = nuvec_map_string_to_string_new();
  nuvec_map_string_to_array_insert(arrays, "x", x);
  nuvec_map_string_to_array_insert(arrays, "y", y);
  nuvec_map_string_to_string_insert(meta, "format", "mlx");
  nuvec_map_string_to_string_insert(meta, "note", "written by C");
  if (!nuvec_save("@DIR@/c", x)) printf("saved_npy: 1\n");
  if (!nuvec_save_safetensors("@DIR@/c", arrays, meta)) printf("saved_safetensors: 1\n");
  if (!nuvec_savez("@DIR@/c", arrays)) printf("saved_npz: 1\n");

  /* Written in Python, read in C. */
  if (!nuvec_load(&r, "@DIR@/py.npy", s)) print("npy", r);
  nuvec_map_string_to_array loaded = nuvec_map_string_to_array_new();
  nuvec_map_string_to_string loaded_meta = nuvec_map_string_to_string_new();
  if (!nuvec_load_safetensors(&loaded, &loaded_meta, "@DIR@/py.safetensors", s)) {
    const char *key, *value;
    print_arrays("st", loaded);
    nuvec_map_string_to_string_iterator it = nuvec_map_string_to_string_iterator_new(loaded_meta);
    while (nuvec_map_string_to_string_iterator_next(&key, &value, it) == 0) printf("meta_%s: %s\n", key, value);
    nuvec_map_string_to_string_iterator_free(it);
    if (!nuvec_map_string_to_string_get(&value, loaded_meta, "note")) printf("get_note: %s\n", value);
    if (!nuvec_map_string_to_array_get(&r, loaded, "b")) print("get_b", r);
    printf("absent: %d %d\n", nuvec_map_string_to_array_get(&r, loaded, "zz"),
           nuvec_map_string_to_string_get(&value, loaded_meta, "zz"));
  }
  /* A copy made by _set is the map as it was. */
  nuvec_map_string_to_array copy = nuvec_map_string_to_array_new();
  nuvec_map_string_to_array_set(&copy, arrays);
  nuvec_map_string_to_array_insert(arrays, "w", y);
  print_arrays("copy", copy);

  /* Ops composed in C++ for Python and C alike. */
  nuvec_array fp = nuvec_array_new_data(fp_data, n12, 1, NUVEC_FLOAT32);
  nuvec_array codes = nuvec_array_new_data(codes_data, n256, 1, NUVEC_UINT8);
  if (!nuvec_to_fp8(&r, fp, s)) print("to_fp8", r);
  if (!nuvec_from_fp8(&r, codes, NUVEC_FLOAT32, s)) print("from_fp8", r);
  if (!nuvec_bartlett(&r, 7, s)) print("bartlett", r);
  if (!nuvec_blackman(&r, 7, s)) print("blackman", r);
  if (!nuvec_hamming(&r, 7, s)) print("hamming", r);
  if (!nuvec_hanning(&r, 7, s)) print("hanning", r);
  nuvec_array u = nuvec_array_new_data(u_data, s23, 2, NUVEC_FLOAT32);
  nuvec_array fill = nuvec_array_new_float(-1.0f);
  if (!nuvec_unique(&vec, u, 4, none, s)) print_vec("unique", vec);
  if (!nuvec_unique(&vec, u, 6, fill, s)) print_vec("unique_fill", vec);

  /* One failure per family, each reaching the handler. */
  nuvec_load(&r, "@DIR@/missing.npy", s);
  nuvec_load_safetensors(&loaded, &loaded_meta, "@DIR@/bad.safetensors", s);
  nuvec_save("@DIR@/nodir/c.npy", x);
  nuvec_map_string_to_array_insert(arrays, NULL, x);
  nuvec_to_fp8(&r, y, s);
  nuvec_hanning(&r, 7, no_stream);
  nuvec_unique(&vec, u, -1, none, s);

  nuvec_map_string_to_array_free(arrays);
  nuvec_map_string_to_array_free(copy);
  nuvec_map_string_to_array_free(loaded);
  nuvec_map_string_to_string_free(meta);
  nuvec_map_string_to_string_free(loaded_meta);
  nuvec_array_free(r);
  nuvec_array_free(x);
  nuvec_array_free(y);
  nuvec_array_free(fp);
  nuvec_array_free(codes);
  nuvec_array_free(u);
  nuvec_array_free(fill);
  nuvec_vector_array_free(vec);
  nuvec_stream_free(s);
  return 0;
}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("capi_io")
    np.save(d / "py.npy", PY_NPY)
    nv.save_safetensors(
        str(d / "py.safetensors"), {"a": nv.array(PY_A), "b": nv.array(PY_B)}, PY_META
    )
    (d / "bad.safetensors").write_bytes(b"\xff" * 40)
    data = "\n".join(
        c_array(t, n, v)
        for t, n, v in (
            ("float", "x_data", X),
            ("int", "y_data", Y),
            ("float", "fp_data", FP),
            ("unsigned char", "codes_data", CODES),
            ("float", "u_data", U),
        )
    ).replace("nan", "NAN")
    source = (
        C_PRELUDE + "#include <math.h>\n" + SOURCE.replace("@DATA@", data).replace("@DIR@", str(d))
    )
    return d, build_and_run(d, "io", source)


def values(out, name):
    return np.array([float(v) for v in out[name][1:]])


def test_files_written_in_c_read_in_python(run):
    d, out = run
    assert out["saved_npy"] == out["saved_safetensors"] == out["saved_npz"] == ["1"]
    np.testing.assert_array_equal(np.load(d / "c.npy"), X)
    arrays, meta = nv.load(str(d / "c.safetensors"), return_metadata=True)
    np.testing.assert_array_equal(np.array(arrays["x"]), X)
    np.testing.assert_array_equal(np.array(arrays["y"]), Y)
    assert arrays["y"].dtype == nv.int32
    assert meta == {"format": "mlx", "note": "written by C"}
    with np.load(d / "c.npz") as z:
        np.testing.assert_array_equal(z["x"], X)
        np.testing.assert_array_equal(z["y"], Y)


def test_files_written_in_python_read_in_c(run):
    _, out = run
    np.testing.assert_array_equal(values(out, "npy").reshape(3, 2), PY_NPY)
    np.testing.assert_array_equal(values(out, "st_a"), PY_A)
    np.testing.assert_array_equal(values(out, "st_b"), PY_B.ravel())
    assert out["st_b"][0] == "7"  # NUVEC_INT32
    assert out["meta_format"] == ["mlx"]
    assert out["meta_note"] == ["written", "by", "Python"]
    assert out["get_note"] == ["written", "by", "Python"]
    np.testing.assert_array_equal(values(out, "get_b"), PY_B.ravel())
    assert out["absent"] == ["2", "2"]


def test_a_set_map_is_a_copy(run):
    _, out = run
    assert sorted(k for k in out if k.startswith("copy_")) == ["copy_x", "copy_y"]
    np.testing.assert_array_equal(values(out, "copy_x"), X.ravel())


def test_fp8_gives_nuvec_python_bits(run):
    _, out = run
    np.testing.assert_array_equal(values(out, "to_fp8"), np.array(nv.to_fp8(nv.array(FP))))
    assert out["to_fp8"][0] == "1"  # NUVEC_UINT8
    want = np.array(nv.from_fp8(nv.array(CODES), nv.float32)).astype(np.float64)
    np.testing.assert_array_equal(values(out, "from_fp8"), want)


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_give_nuvec_bits_and_numpy_values(run, name):
    _, out = run
    got = values(out, name)
    np.testing.assert_array_equal(got, np.array(getattr(nv, name)(7)).astype(np.float64))
    np.testing.assert_allclose(got, getattr(np, name)(7), atol=1e-6)


def test_unique_matches_numpy(run):
    _, out = run
    vals, index, inverse, counts = np.unique(
        U, return_index=True, return_inverse=True, return_counts=True
    )
    np.testing.assert_array_equal(values(out, "unique0"), vals)
    np.testing.assert_array_equal(values(out, "unique1"), index)
    np.testing.assert_array_equal(values(out, "unique2"), inverse.ravel())
    np.testing.assert_array_equal(values(out, "unique3"), counts)
    np.testing.assert_array_equal(values(out, "unique_fill0"), [*vals, -1, -1])
    np.testing.assert_array_equal(values(out, "unique_fill3"), [*counts, 0, 0])


def test_each_family_reports_a_failure_with_the_function_name(run):
    _, out = run
    names = ["nuvec_load", "nuvec_load_safetensors", "nuvec_save", "nuvec_map_string_to_array_insert",
             "nuvec_to_fp8", "nuvec_hanning", "nuvec_unique"]  # fmt: skip
    assert len(out["errors"]) == len(names), out["errors"]
    for line, name in zip(out["errors"], names):
        assert line.startswith(f"error: {name}"), line
    assert "missing.npy" in out["errors"][0]
    assert "bad.safetensors" in out["errors"][1]
