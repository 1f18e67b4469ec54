"""The Ray backend of sweeps: the same guarantees as the local pool, on a Ray cluster or a local Ray runtime.

The sweep (base scenario, axes, seeds) is put in Ray's object store once; tasks carry a few indexes each (a Ray
task costs the driver about a millisecond, which would dominate a sweep of millions of small scenarios), and a
bounded number of tasks is in flight, so a million-scenario sweep starts at once and its memory stays flat.
Results stream back through ``ray.wait`` as tasks finish. A task whose worker dies is retried once by Ray; if it
dies again, its scenarios are run again one per task (each retried once more by Ray), so that only the
scenario that kills its worker fails. Stopping early (an interrupt, an error) shuts down the runtime this sweep
started, which stops its tasks (see ``stop_tasks``); tasks on a runtime the caller started are cancelled.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Sized
from typing import Any, TypeVar

from scheduling_framework.errors import SchedulingFrameworkError

#: The sweep (scenario.sweep.Sweep, which imports this module when asked for Ray): only its size is read here.
S = TypeVar("S", bound=Sized)

#: tasks in flight per CPU of the cluster (enough to keep every CPU busy between two ray.wait calls)
IN_FLIGHT_PER_CPU = 4
MAX_CHUNK = 64


def _ray() -> Any:
    try:
        # Typed as Any: Ray is an optional extra, and the core type-checks without it.
        return importlib.import_module("ray")
    except ImportError:
        raise SchedulingFrameworkError("the ray backend needs Ray: pip install 'scheduling-framework[ray]'") from None


def _signal_handlers() -> dict[int, Any]:
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore(handlers: dict[int, Any]) -> None:
    """``ray.init`` replaces the driver's SIGTERM handler (with one that exits at once, and a C++ one beneath it);
    put back the handlers in place before (the CLI's stop the sweep cleanly and stop the runtime)."""
    import signal

    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


def run_ray(sweep: S, todo: Iterator[int], address: str | None, workers: int,
            run: Callable[[S, list[int]], list[dict[str, Any]]], failed: Callable[[int, str], dict[str, Any]],
            notify: Callable[[str], None] | None = None,
            ship: Callable[[S], S] | None = None) -> Iterator[dict[str, Any]]:
    """Yield ``run(sweep, chunk)``'s rows for every index of ``todo``, run as Ray tasks, in completion order;
    ``failed(index, cause)`` stands for a scenario whose worker died on every try. ``ship(sweep)`` gives the
    sweep as it travels to a runtime this process did not start (with its cluster files' bytes)."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kw["address"] = address
        else:
            # A local runtime stays on the loopback interface.
            kw["_node_ip_address"] = "127.0.0.1"
            if workers > 0:
                kw["num_cpus"] = workers
        handlers = _signal_handlers()
        ray.init(**kw)
        started = True
        _restore(handlers)
    pending: dict[Any, list[int]] = {}
    clean = False
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        size = max(1, min(MAX_CHUNK, len(sweep) // (cpus * IN_FLIGHT_PER_CPU)))
        limit = cpus * IN_FLIGHT_PER_CPU
        remote = ray.remote(max_retries=1)(run)
        # Cluster files travel inside the sweep unless the runtime is this machine's own (workers elsewhere may
        # not have them): once in the object store, parsed once per worker process.
        ref = ray.put(sweep if (started and not address) or ship is None else ship(sweep))
        singles: list[int] = []  # scenarios of a chunk that died twice, to run one per task
        exhausted = False
        while True:
            while len(pending) < limit and (singles or not exhausted):
                if singles:
                    chunk = [singles.pop(0)]
                else:
                    chunk = [i for _, i in zip(range(size), todo, strict=False)]
                    if len(chunk) < size:
                        exhausted = True
                    if not chunk:
                        break
                pending[remote.remote(ref, chunk)] = chunk
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for r in done:
                chunk = pending.pop(r)
                try:
                    rows = ray.get(r)
                except Exception as e:  # the worker died twice (or the task could not run at all)
                    cause = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    if len(chunk) > 1:
                        if notify is not None:
                            notify(f"Ray task of scenarios {chunk[0]}..{chunk[-1]} failed ({cause}); "
                                   "running them one per task")
                        singles.extend(chunk)
                        continue
                    yield failed(chunk[0], f"Ray worker failed twice running this scenario: {cause}")
                    continue
                yield from rows
        clean = True
    finally:
        if not clean:
            stop_tasks(ray, list(pending), started)
        if started:
            ray.shutdown()


def stop_tasks(ray: Any, pending: list[Any], started: bool) -> None:
    """Stop the tasks still in flight when the sweep stops early (an interrupt, an error).

    When this sweep started the driver (a local runtime, or a connection to ``--address``), nothing is
    cancelled: ``ray.shutdown`` ends the job, Ray then kills every worker of a finished job, and the local
    runtime's processes are stopped. ``ray.cancel`` would only add a race inside Ray's driver: a task whose
    reply is already on its way (it finished while the interrupt arrived) is completed twice, once by the
    cancellation and once by the reply, and Ray's core worker aborts the whole process on that
    (``task_manager.cc: Check failed: it != submissible_tasks_.end() Tried to complete task that was not
    pending``, ray-project/ray#54798; seen on a loaded machine), exiting 1 instead of 143/130. The rows already
    written are unaffected, but the exit status and the clean-up are lost. Only when the caller owns the
    runtime (it called ``ray.init`` itself and goes on using it) are the tasks cancelled, since nothing else
    would stop them.
    """
    if started:
        return
    for r in pending:
        with contextlib.suppress(Exception):  # already finished or gone: nothing to cancel
            ray.cancel(r, force=True)
