#!/usr/bin/env bash
# Builds nuvec with the CUDA backend in build/gpu on a machine with a GPU, and links it into
# python/nuvec (docs/cuda.md). Wheels carried in .whl/ (scipy-openblas32) install to /tmp/site.
set -euo pipefail
cd "$(dirname "$0")/.."
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD/python${PYTHONPATH:+:$PYTHONPATH}
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v python3)" \
  -Dnanobind_DIR="$(python3 -m nanobind --cmake_dir)" -DNUVEC_CUDA=ON \
  -DNUVEC_CUDA_ARCHITECTURES="${NUVEC_CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build build/gpu -j"$(nproc)" | tail -2
ln -sf "$PWD"/build/gpu/_core*.so "$PWD"/build/gpu/_core.pyi python/nuvec/
