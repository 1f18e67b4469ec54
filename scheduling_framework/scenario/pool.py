"""A local pool of worker processes for sweeps: one task in flight per worker, dead workers replaced.

Why not ``concurrent.futures.ProcessPoolExecutor``: when one of its workers dies (killed by the OOM killer, say),
every pending future fails with ``BrokenProcessPool`` and nothing tells which task the dead worker was running.
Here each worker has its own pipe and carries exactly one task, so a death is charged to that task alone: it is
run again (``retries`` times) on a fresh worker, then reported as failed naming the signal; the other workers
never notice.

Workers start from a ``forkserver`` (``spawn`` where the platform has none): forking the driver itself, which may
run threads (a progress bar, Ray's), is unsafe and deprecated on Python 3.12+. The server preloads the modules
given, so a worker costs one fork, not a fresh interpreter. Workers ignore SIGINT (a terminal's Ctrl-C reaches
the whole process group; the driver decides) and exit when the driver's end of their pipe closes, so a driver
that dies, even by SIGKILL, leaves none behind once their current task ends.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import multiprocessing.connection
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from scheduling_framework.errors import SchedulingFrameworkError

P = TypeVar("P")
R = TypeVar("R")

#: seconds a worker gets to exit after SIGTERM before it is sent SIGKILL
STOP_GRACE = 3.0


class PoolError(SchedulingFrameworkError):
    """The worker pool cannot go on (its workers keep dying before finishing anything)."""


def exit_cause(exitcode: int | None) -> str:
    """``killed by SIGKILL`` / ``exited with code 3`` for a worker process's exit code."""
    if exitcode is None:
        return "stopped responding"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


def _worker(conn: Any, fn: Callable[[Any, int], Any], payload: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the driver went away
            return
        if task is None:
            return
        try:
            result: tuple[str, Any] = ("ok", fn(payload, task))
        except Exception as e:  # fn should not raise; if it does, the task fails, not the worker
            result = ("err", f"{type(e).__name__}: {e}")
        try:
            conn.send(result)
        except (EOFError, OSError):
            return


class _Worker:
    __slots__ = ("conn", "process", "task")

    def __init__(self, ctx: Any, fn: Callable[[Any, int], Any], payload: Any) -> None:
        ours, theirs = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_worker, args=(theirs, fn, payload), daemon=True,
                                   name="scheduling-framework-sweep-worker")
        self.process.start()
        theirs.close()
        self.conn = ours
        self.task: int | None = None


def _context(preload: Sequence[str]) -> Any:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(preload))
        return ctx
    return multiprocessing.get_context("spawn")


def run_pool(fn: Callable[[P, int], R], payload: P, tasks: Iterator[int], workers: int,
             failed: Callable[[int, str], R], *, retries: int = 1, preload: Sequence[str] = (),
             notify: Callable[[str], None] | None = None) -> Iterator[R]:
    """Yield ``fn(payload, task)`` for every task, computed on ``workers`` processes, in completion order.

    A task whose worker dies is run again on a new worker up to ``retries`` times; after that ``failed(task,
    cause)`` is yielded in its place (cause: ``"worker process killed by SIGKILL (2 attempts)"``). ``notify``
    hears of each retry. Closing the generator early (an exception in the consumer, an interrupt) terminates
    every worker before returning: nothing is left running.
    """
    ctx = _context(preload)
    pool: list[_Worker] = []
    retry: collections.deque[int] = collections.deque()
    attempts: dict[int, int] = {}
    exhausted = False
    clean = False
    # Workers dying one after another with nothing finished between (a worker that cannot even start, say):
    # past a few, the sweep stops instead of failing every scenario twice.
    deaths_in_a_row = 0
    max_deaths = 2 * workers + 2
    try:
        while True:
            # Hand a task to every idle worker; start workers lazily, up to the limit.
            while not exhausted or retry:
                idle = next((w for w in pool if w.task is None), None)
                if idle is None and len(pool) < workers:
                    idle = _Worker(ctx, fn, payload)
                    pool.append(idle)
                if idle is None:
                    break
                if retry:
                    task = retry.popleft()
                else:
                    nxt = next(tasks, None)
                    if nxt is None:
                        exhausted = True
                        break
                    task = nxt
                try:
                    idle.conn.send(task)
                    idle.task = task
                except (BrokenPipeError, OSError):  # died while idle: the task never started
                    retry.appendleft(task)
                    _drop(pool, idle)
            busy = [w for w in pool if w.task is not None]
            if not busy:
                break
            ready = set(multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in pool]))
            for w in list(pool):
                if w.conn in ready:
                    try:
                        status, value = w.conn.recv()
                    except (EOFError, OSError):
                        status, value = "dead", None
                    if status != "dead":
                        ran = w.task
                        w.task = None
                        deaths_in_a_row = 0
                        assert ran is not None
                        yield value if status == "ok" else failed(ran, f"worker error: {value}")
                        continue
                if w.process.sentinel in ready or w.conn in ready:
                    w.process.join(STOP_GRACE)
                    cause = exit_cause(w.process.exitcode)
                    _drop(pool, w)
                    deaths_in_a_row += 1
                    if deaths_in_a_row >= max_deaths:
                        raise PoolError(f"{deaths_in_a_row} worker processes died in a row with no task finished "
                                        f"between (the last {cause}); a worker that cannot start — a script "
                                        "without an `if __name__ == \"__main__\":` guard? — prints why on stderr")
                    if w.task is None:
                        continue
                    n = attempts[w.task] = attempts.get(w.task, 0) + 1
                    if n <= retries:
                        if notify is not None:
                            notify(f"worker process {w.process.pid} {cause} while running task {w.task}; retrying")
                        retry.append(w.task)
                    else:
                        yield failed(w.task, f"worker process {cause} ({n} attempts)")
        clean = True
    finally:
        _stop(pool, clean)


def _drop(pool: list[_Worker], w: _Worker) -> None:
    pool.remove(w)
    w.conn.close()
    if w.process.is_alive():
        w.process.kill()
    w.process.join(STOP_GRACE)


def _stop(pool: list[_Worker], clean: bool) -> None:
    """Stop every worker: politely when all went well, otherwise SIGTERM then SIGKILL; always reaped."""
    for w in pool:
        if clean:
            with contextlib.suppress(OSError):
                w.conn.send(None)
        else:
            w.process.terminate()
    for w in pool:
        w.process.join(STOP_GRACE)
        if w.process.is_alive():
            w.process.kill()
            w.process.join()
        w.conn.close()
