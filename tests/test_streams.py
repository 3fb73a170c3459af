"""Streams and threads as MLX's (issue 11): a stream belongs to the thread that made it, each
thread has its own default stream, ThreadLocalStream / new_thread_unsafe_stream, StreamContext,
clear_streams, and the exception types of invalid stream use. Runs on nuvec and on MLX."""

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from _impl import mx

# Streams of the CPU, with the CPU as the default device (a GPU would be the default).
pytestmark = pytest.mark.cpu_backend


def in_thread(fn):
    """fn() run on a new thread: its result, or the exception it raised."""
    box = []

    def run():
        try:
            box.append(fn())
        except Exception as e:  # noqa: BLE001 - handed back to the test
            box.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return box[0]


def test_each_thread_has_its_own_default_stream():
    main = mx.default_stream(mx.cpu)
    a, b = in_thread(lambda: (mx.default_stream(mx.cpu), mx.default_stream(mx.cpu)))
    assert a == b and a != main
    assert mx.default_stream(mx.cpu) == main


def run_fresh(code):
    """`code` run by a fresh interpreter on the framework under test; its stdout."""
    tests = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]))
    # The CPU as the default device, as the tests assume (a GPU would be the default).
    prelude = "import threading\nfrom _impl import mx\nmx.set_default_device(mx.cpu)\n"
    out = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


# MLX documents both (a stream "can only be used on the thread where it was created"), but its
# check misses in threads started after other threads have used streams: these run on nuvec only.
_MLX_THREAD_CHECK = "MLX's per-thread stream check misses after other threads have run"


@pytest.mark.nuvec_only  # _MLX_THREAD_CHECK
def test_new_stream_serves_only_its_thread():
    s = mx.new_stream(mx.cpu)
    assert mx.add(1, 2, stream=s).item() == 3
    e = in_thread(lambda: mx.add(1, 2, stream=s))
    assert type(e) is RuntimeError and "no Stream(cpu" in str(e)
    assert in_thread(lambda: mx.synchronize(s)) is None  # waiting for it is allowed


def test_clear_streams_in_the_main_thread():
    code = """
    print(mx.add(1, 2).item())
    d0 = mx.default_stream(mx.cpu)
    mx.clear_streams()
    try:
        mx.add(1, 2).item()
    except RuntimeError:
        print("RuntimeError")
    print(mx.default_stream(mx.cpu) == d0)
    s = mx.new_stream(mx.cpu)
    mx.set_default_stream(s)
    print(mx.add(1, 2).item())
    """
    assert run_fresh(code) == ["3", "RuntimeError", "True", "3"]


def test_set_default_stream_keeps_the_device_and_is_per_thread():
    s = mx.new_stream(mx.cpu)
    old = mx.default_stream(mx.cpu)
    mx.set_default_stream(s)
    try:
        assert mx.default_stream(mx.cpu) == s
        assert mx.default_device() == mx.cpu
        assert in_thread(lambda: mx.default_stream(mx.cpu)) != s
    finally:
        mx.set_default_stream(old)


def test_thread_unsafe_stream_serves_every_thread():
    u = mx.new_thread_unsafe_stream(mx.cpu)
    assert isinstance(u, mx.Stream) and u.device == mx.cpu
    assert in_thread(lambda: mx.add(1, 2, stream=u).item()) == 3
    assert mx.add(1, 2, stream=u).item() == 3


def test_thread_local_stream_is_one_stream_per_thread():
    tl = mx.new_thread_local_stream(mx.cpu)
    assert type(tl).__name__ == "ThreadLocalStream" and isinstance(tl, mx.ThreadLocalStream)
    assert tl.device == mx.cpu
    assert repr(tl).startswith("ThreadLocalStream(Device(cpu, 0), ")
    assert tl == tl and tl != mx.new_thread_local_stream(mx.cpu)
    assert hash(tl) == hash(tl)
    with mx.stream(tl):
        here = mx.default_stream(mx.cpu)
        with mx.stream(tl):
            assert mx.default_stream(mx.cpu) == here
        assert mx.add(1, 2).item() == 3
    assert mx.add(1, 2, stream=tl).item() == 3

    def other():
        with mx.stream(tl):
            return mx.default_stream(mx.cpu), mx.add(2, 3, stream=tl).item()

    there, value = in_thread(other)
    assert there != here and value == 5


def test_stream_context():
    s = mx.new_stream(mx.cpu)
    old = mx.default_stream(mx.cpu)
    ctx = mx.StreamContext(s)
    assert isinstance(mx.stream(s), mx.StreamContext)
    assert ctx.__enter__() is None
    assert mx.default_stream(mx.cpu) == s
    ctx.__exit__(None, None, None)
    assert mx.default_stream(mx.cpu) == old
    with mx.stream(mx.cpu) as r:
        assert r is None
        assert mx.default_stream(mx.cpu) == old
    with mx.StreamContext(s):
        assert mx.default_stream(mx.cpu) == s
        with mx.stream(mx.Device(mx.cpu)):  # the device's current default: s
            assert mx.default_stream(mx.cpu) == s
        assert mx.default_stream(mx.cpu) == s
    assert mx.default_stream(mx.cpu) == old


@pytest.mark.nuvec_only  # _MLX_THREAD_CHECK
def test_clear_streams_destroys_every_stream_of_the_thread():
    u = mx.new_thread_unsafe_stream(mx.cpu)

    def run():
        d0 = mx.default_stream(mx.cpu)
        s = mx.new_stream(mx.cpu)
        tl = mx.new_thread_local_stream(mx.cpu)
        assert mx.add(1, 2, stream=s).item() == 3 and mx.add(1, 2, stream=tl).item() == 3
        assert mx.clear_streams() is None
        out = []
        for stream in (s, None, mx.cpu):
            try:
                mx.add(1, 2, stream=stream)
            except RuntimeError as e:
                out.append(type(e))
        out.append(mx.default_stream(mx.cpu) == d0)  # still the default, destroyed
        out.append(mx.add(1, 2, stream=u).item())  # unsafe streams are not the thread's
        s2 = mx.new_stream(mx.cpu)
        mx.set_default_stream(s2)
        out.append(mx.add(1, 2).item())
        out.append(mx.default_stream(mx.cpu) == s2 and s2 != s)
        return out

    assert in_thread(run) == [RuntimeError] * 3 + [True, 3, 3, True]
    assert mx.add(1, 2).item() == 3  # other threads keep theirs


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.stream(3),
        lambda: mx.stream("cpu"),
        lambda: mx.new_stream(3),
        lambda: mx.new_thread_local_stream("cpu"),
        lambda: mx.new_thread_unsafe_stream(3.0),
        lambda: mx.set_default_stream(3),
        lambda: mx.set_default_stream(mx.new_thread_local_stream(mx.cpu)),
        lambda: mx.set_default_stream(mx.cpu),
        lambda: mx.add(1, 2, stream=3),
        lambda: mx.add(1, 2, stream="cpu"),
        lambda: mx.synchronize(3),
        lambda: mx.clear_streams(1),
        lambda: mx.Stream(),
        lambda: mx.Stream(mx.cpu),
        lambda: mx.ThreadLocalStream(mx.cpu),
        lambda: mx.StreamContext(),
        lambda: mx.set_default_device(3),
    ],
)
def test_wrong_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.new_stream(mx.gpu),
        lambda: mx.new_thread_unsafe_stream(mx.gpu),
        lambda: mx.default_stream(mx.gpu),
        lambda: mx.set_default_device(mx.gpu),
        lambda: mx.add(1, 2, stream=mx.gpu),
        lambda: mx.StreamContext(mx.gpu).__enter__(),
        lambda: mx.synchronize(mx.gpu),
    ],
)
def test_unavailable_device_raises_value_error(call):
    if mx.is_available(mx.gpu):
        pytest.skip("a GPU is available")
    with pytest.raises(ValueError):
        call()
    assert mx.default_device() == mx.cpu
