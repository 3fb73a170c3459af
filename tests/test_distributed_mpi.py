"""nuvec.distributed over MPI: a few mpirun jobs (1, 2 and 4 processes, oversubscribed on a small
machine), each running many checks (tests/_distributed_worker.py): every collective and dtype
against NumPy, send/recv, split, the transforms' rules, averaged gradients equal to the whole
batch's, mismatched collectives; the data-parallel training example ending with the same weights
on every rank; a stuck or dead rank giving an error (or the job's end) instead of a hang. They skip
only where no MPI is installed (CI installs the `mpi` extra)."""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("nuvec's MPI engine", allow_module_level=True)

import nuvec as nx  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
WORKER = str(HERE / "_distributed_worker.py")
# The mpirun nuvec.launch picks (run through `python -m`: importing nuvec.launch here would add a
# public name to the nuvec package for the tests that list them).
LOCAL_MPIRUN = os.path.join(os.path.dirname(sys.executable), "mpirun")
MPIRUN = LOCAL_MPIRUN if os.access(LOCAL_MPIRUN, os.X_OK) else shutil.which("mpirun")
HAVE_MPI = MPIRUN is not None and nx.distributed.is_available("mpi")
pytestmark = pytest.mark.skipif(not HAVE_MPI, reason="no MPI (pip install '.[mpi]')")


def mpirun(n, args, timeout=180, launcher=None, **env):
    """Runs ``python args`` on n processes through ``python -m nuvec.launch`` (with
    ``launcher``: that mpirun); (return code, output, seconds)."""
    cmd = [sys.executable, "-m", "nuvec.launch", "-n", str(n)]
    cmd += ["--mpirun", launcher] if launcher else []
    # The ranks share the cores; a failed check ends the job rather than waiting 300 s.
    environ = {**os.environ, "NUVEC_NUM_THREADS": "1", "NUVEC_DISTRIBUTED_TIMEOUT": "60", **env}
    t = time.monotonic()
    p = subprocess.run([*cmd, *args], env=environ, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr, time.monotonic() - t


@pytest.mark.parametrize("n", [1, 2, 4])
def test_collectives_transforms_and_gradients(n, launcher=None, **env):
    code, out, _ = mpirun(n, [WORKER, "collectives"], launcher=launcher, **env)
    assert code == 0, out
    passed = re.findall(r"rank (\d+)/(\d+): (\d+) checks passed", out)
    assert sorted(int(r) for r, _, _ in passed) == list(range(n)), out
    assert all(int(size) == n and int(k) > 50 for _, size, k in passed), out


SYSTEM_MPI = ("/usr/bin/mpirun", "/usr/lib/x86_64-linux-gnu/libmpi.so.40")  # Debian's OpenMPI


@pytest.mark.skipif(
    not all(map(os.path.exists, SYSTEM_MPI)) or MPIRUN == SYSTEM_MPI[0],
    reason="no system OpenMPI beside this environment's",
)
def test_the_system_openmpi_too():
    test_collectives_transforms_and_gradients(
        2, launcher=SYSTEM_MPI[0], NUVEC_MPI_LIBRARY=SYSTEM_MPI[1]
    )


def test_data_parallel_training_ends_with_the_same_weights(tmp_path):
    args = ["-m", "nuvec.examples.train", "--distributed", "--epochs", "1", "--out", str(tmp_path)]
    code, out, _ = mpirun(2, [*args, "--min-accuracy", "0.5"])
    assert code == 0, out
    digests = dict(re.findall(r"rank (\d)/2: weights sha256 (\w+)", out))
    assert set(digests) == {"0", "1"} and len(set(digests.values())) == 1, out
    # Rank 0 alone wrote the checkpoint, through a temporary file renamed into place.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model.safetensors",
        "optimizer.safetensors",
    ]


@pytest.mark.parametrize("how", ["stuck", "killed"])
def test_a_late_rank_ends_the_job_instead_of_hanging(how):
    code, out, seconds = mpirun(2, [WORKER, how], timeout=60, NUVEC_DISTRIBUTED_TIMEOUT="2")
    assert code != 0 and seconds < 45, out
    if how == "stuck":  # rank 0 says what happened (a killed rank makes mpirun end the job)
        assert re.search(r"rank 0 raised after [2-9]\.\d s: .*all_sum.*waited 2 s", out), out
    assert "the all_sum returned" not in out, out
