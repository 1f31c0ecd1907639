"""The GIL is released while compiled code and the interpreter run, and threads sharing an executable get correct
results."""

import threading
import time

import numpy as np

import xlac

# `n` iterations of x = tanh(x @ w): the trip count is a parameter, so the test sizes the run to the machine.
LOOP = """HloModule loop
body {
  s = (s32[], s32[], f32[96,96], f32[96,96]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[96,96] get-tuple-element(s), index=2
  w = f32[96,96] get-tuple-element(s), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  d = f32[96,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[96,96] tanh(d)
  ROOT r = (s32[], s32[], f32[96,96], f32[96,96]) tuple(i1, n, t, w)
}
cond {
  s = (s32[], s32[], f32[96,96], f32[96,96]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[96,96] parameter(0)
  w = f32[96,96] parameter(1)
  n = s32[] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], s32[], f32[96,96], f32[96,96]) tuple(zero, n, x, w)
  loop = (s32[], s32[], f32[96,96], f32[96,96]) while(init), condition=cond, body=body
  ROOT out = f32[96,96] get-tuple-element(loop), index=2
}
"""


def inputs(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (96, 96)).astype(np.float32)
    w = (rng.uniform(-1, 1, (96, 96)) / 8).astype(np.float32)
    return x, w


def largest_main_thread_gap(run):
    """Runs `run` on another thread and returns (its duration, the longest the main thread went without running
    Python meanwhile). Holding the GIL for the whole run would make the gap as long as the run."""
    done = threading.Event()
    duration = []

    def worker():
        t0 = time.perf_counter()
        run()
        duration.append(time.perf_counter() - t0)
        done.set()

    # The clock starts before the thread does: waiting on anything here would take the GIL back only after the run.
    gap = 0.0
    last = time.perf_counter()
    thread = threading.Thread(target=worker)
    thread.start()
    while not done.is_set():
        now = time.perf_counter()
        gap = max(gap, now - last)
        last = now
    thread.join()
    return duration[0], gap


def iterations_for(seconds, run_n):
    """Trip count that makes run_n(n) take about `seconds` here."""
    n = 4
    while True:
        t0 = time.perf_counter()
        run_n(n)
        elapsed = time.perf_counter() - t0
        if elapsed > 0.05 or n > 1 << 22:
            return max(1, int(n * seconds / max(elapsed, 1e-6)))
        n *= 4


def check_gil_released(run_n):
    n = iterations_for(0.4, run_n)
    # The machine's load may change between calibration and the run: lengthen a run that came out too short.
    for _ in range(4):
        duration, gap = largest_main_thread_gap(lambda: run_n(n))
        if duration > 0.15:
            break
        n *= 3
    assert duration > 0.15, f"the run took only {duration:.3f} s: too short to tell"
    assert gap < duration / 2, f"the main thread stalled {gap:.3f} s during a {duration:.3f} s run"


def test_compiled_run_releases_the_gil():
    exe = xlac.compile(LOOP, threads=1)
    x, w = inputs(0)
    check_gil_released(lambda k: exe(x, w, k))


def test_interpreter_releases_the_gil():
    x, w = inputs(1)
    check_gil_released(lambda k: xlac.interpret(LOOP, x, w, k))


def test_threads_share_one_executable():
    exe = xlac.compile(LOOP, threads=1, exact=True)
    cases = [inputs(seed) for seed in range(4)]
    want = [xlac.interpret(LOOP, x, w, 20) for x, w in cases]
    got = [None] * len(cases)
    errors = []

    def worker(k):
        try:
            for _ in range(3):
                got[k] = exe(*cases[k], 20)
        except Exception as e:  # reported below, with the thread's case
            errors.append((k, e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(len(cases)):
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"thread {k}")
