"""Sweeps: a matrix of what-ifs over one scenario, run in parallel, one result row per scenario.

Schema (``kind: Sweep``)::

    name: str                    # optional
    scenario: PATH | {Scenario}  # the base scenario
    matrix:                      # field path in the scenario -> values; the product of all entries is taken
      templates.nodes.worker.status.allocatable.cpu: ["4", "8"]
      steps[1].count: [10, 20, 40]
      config: [null, binpack.yaml]
    seeds: [1, 2, 3]             # or N for seeds 1..N (default [the scenario's seed])

Field paths use ``.`` between keys, ``[N]`` for list items and ``["key.with.dots"]`` for keys holding dots.

A sweep is kept as its base scenario, its axes and its seeds, never as the list of every scenario: the
scenario at index ``i`` is built when it is needed (by the worker that runs it), so a million-scenario matrix
starts running at once. Reading the sweep parses every field path, reads the files it names (the base's
``cluster`` and ``config``, and matrix values for ``cluster`` / ``config``) once and inlines them (a cluster file
as a :class:`~scheduling_framework.scenario.model.ClusterFile` reference, parsed once per worker process, unless
a matrix path goes into its manifests), and validates the first scenario; a later combination that turns out
invalid becomes that scenario's row with its ``error``.

Every row carries an ``id``: a hash of the base scenario's content (a cluster file's: its bytes), the parameter
values and the seed, so the same scenario gets the same id in any run of any sweep (adding values to a matrix
keeps the ids of the scenarios already there). Rows are streamed to JSON Lines / CSV files as they finish
(:mod:`~scheduling_framework.scenario.rowfiles`), and ``resume`` skips the ids those files already hold.
Backends: a local pool of worker processes (:mod:`~scheduling_framework.scenario.pool`), or Ray.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

import attrs

from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.scenario.io import ClusterFile
from scheduling_framework.scenario.model import Scenario, ScenarioError, scenario_from_dict
from scheduling_framework.scenario.rowfiles import CSV_FIELDS, RowFile, csv_header_line, csv_line, json_line

MAX_SCENARIOS = 1_000_000
_SEGMENT = re.compile(r'\s*(?:\[\s*(\d+)\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*\'([^\']*)\'\s*\]|\.?([^.\[\]]+))')

__all__ = ["CSV_FIELDS", "MAX_SCENARIOS", "TIMING_FIELDS", "Axis", "Estimate", "Sweep", "SweepCase", "estimate",
           "first_warnings", "load_sweep", "parse_path", "run_case", "run_cases", "run_index", "run_sweep", "set_path",
           "summary", "sweep_from_dict", "to_csv", "to_jsonl", "with_cluster_data"]


@attrs.frozen
class SweepCase:
    """One expanded scenario: its index, the parameter values that made it, and the scenario by content."""

    index: int
    params: Mapping[str, Any]
    seed: int
    scenario: Scenario
    id: str = ""
    #: replay under ``strict`` (the sweep's): a step naming a node or pod that does not exist is the row's error
    strict: bool = False


@attrs.frozen
class Axis:
    """One matrix entry: the field path and its values (``applied``: file references read and inlined)."""

    key: str
    path: tuple[str | int, ...]
    values: tuple[Any, ...]
    applied: tuple[Any, ...]
    digests: tuple[str, ...]


def _canonical(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen(eq=False)
class Sweep:
    """A matrix of scenarios, expanded on demand: ``len(sweep)`` scenarios, ``sweep.cases[i]`` the i-th."""

    name: str
    base: Mapping[str, Any]
    axes: tuple[Axis, ...] = ()
    seeds: tuple[int, ...] = (0,)
    base_dir: str = "."
    source: str = "<sweep>"
    #: hash of the base scenario's content (part of every scenario id)
    fingerprint: str = ""
    #: fields the Kubernetes API does not define make a scenario invalid (its row's error), not a warning
    strict: bool = False
    # The last combination built (consecutive indexes differ by seed only): [combination, Scenario or error].
    _last: list[Any] = attrs.field(factory=lambda: [None, None], init=False, repr=False)

    def __len__(self) -> int:
        n = len(self.seeds)
        for a in self.axes:
            n *= len(a.values)
        return n

    @property
    def cases(self) -> _Cases:
        return _Cases(self)

    def _digits(self, index: int) -> tuple[int, list[int]]:
        if not 0 <= index < len(self):
            raise IndexError(f"sweep {self.name} has {len(self)} scenarios, no index {index}")
        combo, seed_i = divmod(index, len(self.seeds))
        digits = []
        rest = combo
        for a in reversed(self.axes):  # the last axis varies fastest, as in itertools.product
            rest, d = divmod(rest, len(a.values))
            digits.append(d)
        digits.reverse()
        return seed_i, digits

    def params(self, index: int) -> dict[str, Any]:
        _, digits = self._digits(index)
        return {a.key: a.values[d] for a, d in zip(self.axes, digits, strict=True)}

    def seed(self, index: int) -> int:
        return self.seeds[index % len(self.seeds)]

    def case_id(self, index: int) -> str:
        """The scenario's stable id: base content, parameter values (by content) and seed, hashed."""
        seed_i, digits = self._digits(index)
        parts = sorted(f"{_canonical(a.key)}={a.digests[d]}" for a, d in zip(self.axes, digits, strict=True))
        return _digest(f"{self.fingerprint}|{'|'.join(parts)}|seed={self.seeds[seed_i]}")[:16]

    def scenario(self, index: int) -> Scenario:
        """The scenario at ``index``, built and validated; raises ScenarioError naming its parameters."""
        seed_i, digits = self._digits(index)
        combo = index // len(self.seeds)
        if self._last[0] != combo:
            self._last[:] = [combo, self._build(digits)]
        built: Scenario | ScenarioError = self._last[1]
        if isinstance(built, ScenarioError):
            raise built
        return attrs.evolve(built, seed=self.seeds[seed_i])

    def _build(self, digits: Sequence[int]) -> Scenario | ScenarioError:
        raw: Any = self.base
        params = {a.key: a.values[d] for a, d in zip(self.axes, digits, strict=True)}
        label = f"{self.source} {json.dumps(params, default=str)}"
        try:
            for a, d in zip(self.axes, digits, strict=True):
                try:
                    raw = _replaced(raw, a.path, 0, copy.deepcopy(a.applied[d]))
                except ValueError as e:
                    raise ScenarioError(self.source, [f"matrix[{a.key!r}]: {e}"]) from None
            return scenario_from_dict(raw, base_dir=self.base_dir, source=label, default_name=self.name,
                                      strict=self.strict)
        except ScenarioError as e:  # named by the file, and by the parameter values once they apply
            return e

    def case(self, index: int) -> SweepCase:
        return SweepCase(index, self.params(index), self.seed(index), self.scenario(index), self.case_id(index),
                         self.strict)


class _Cases(Sequence[SweepCase]):
    """The sweep's scenarios as a read-only sequence; each one is built when it is read."""

    def __init__(self, sweep: Sweep) -> None:
        self._sweep = sweep

    def __len__(self) -> int:
        return len(self._sweep)

    @overload
    def __getitem__(self, i: int) -> SweepCase: ...

    @overload
    def __getitem__(self, i: slice) -> list[SweepCase]: ...

    def __getitem__(self, i: int | slice) -> SweepCase | list[SweepCase]:
        if isinstance(i, slice):
            return [self._sweep.case(j) for j in range(*i.indices(len(self)))]
        return self._sweep.case(i + len(self) if i < 0 else i)


def parse_path(path: str) -> list[str | int]:
    """``a.b[2]["c.d"]`` -> ``["a", "b", 2, "c.d"]``; raises ValueError on a malformed path."""
    out: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _SEGMENT.match(path, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"malformed field path {path!r} at character {pos + 1}")
        idx, dq, sq, key = m.groups()
        out.append(int(idx) if idx is not None else (dq if dq is not None else sq if sq is not None else key))
        pos = m.end()
    if not out:
        raise ValueError("empty field path")
    return out


def set_path(doc: Any, path: Sequence[str | int], value: Any) -> None:
    """Set ``value`` at ``path`` in a nested structure; missing mapping keys are created."""
    cur = doc
    for i, seg in enumerate(path):
        last = i == len(path) - 1
        if isinstance(seg, int):
            if not isinstance(cur, list) or not -len(cur) <= seg < len(cur):
                raise ValueError(f"[{seg}]: no such list item")
            if last:
                cur[seg] = value
            else:
                cur = cur[seg]
        else:
            if not isinstance(cur, dict):
                raise ValueError(f"{seg}: parent is not a mapping")
            if last:
                cur[seg] = value
            else:
                nxt = cur.get(seg)
                if nxt is None:
                    nxt = cur[seg] = {}
                cur = nxt


def _replaced(cur: Any, path: Sequence[str | int], i: int, value: Any) -> Any:
    """``cur`` with ``value`` at ``path[i:]``: the containers on the path are copied, the rest is shared."""
    seg = path[i]
    last = i == len(path) - 1
    if isinstance(seg, int):
        if not isinstance(cur, list) or not -len(cur) <= seg < len(cur):
            raise ValueError(f"[{seg}]: no such list item")
        new_list = list(cur)
        new_list[seg] = value if last else _replaced(cur[seg], path, i + 1, value)
        return new_list
    if not isinstance(cur, Mapping):
        raise ValueError(f"{seg}: parent is not a mapping")
    new = dict(cur)
    if last:
        new[seg] = value
    else:
        nxt = cur.get(seg)
        new[seg] = _replaced({} if nxt is None else nxt, path, i + 1, value)
    return new


def load_sweep(path: str | os.PathLike[str], *, strict: bool = False) -> Sweep:
    """Read a sweep file (see :func:`sweep_from_dict`)."""
    from scheduling_framework.scenario.io import read_yaml_mapping

    p = os.fspath(path)
    return sweep_from_dict(read_yaml_mapping(p, "sweep"), base_dir=os.path.dirname(os.path.abspath(p)), source=p,
                           strict=strict)


def _inline(field: str, value: Any, base_dir: str, cluster_manifests: bool = False) -> Any:
    """A ``config`` file reference replaced by the file's content, a ``cluster`` one by a :class:`ClusterFile`
    (read once per worker process; its manifests inlined only when ``cluster_manifests``: a matrix path that
    goes into them). Left as is when unreadable: validation then reports it in the scenario's own words."""
    from scheduling_framework.config.loader import read_config_file
    from scheduling_framework.scenario.io import cluster_file, read_yaml_documents

    if not isinstance(value, str):
        return value
    try:
        full = os.path.join(base_dir, value)
        if field != "cluster":
            return dict(read_config_file(full))  # (a mapping: anything else is no configuration)
        return read_yaml_documents(full, "cluster") if cluster_manifests else cluster_file(full)
    except SchedulingFrameworkError:
        return value


def _identity(value: Any) -> Any:
    """What a scenario id hashes for a field's value: a cluster file by its content (SHA-256 of its bytes)."""
    if isinstance(value, ClusterFile):
        from scheduling_framework.scenario.io import cluster_file_digest

        return {"clusterFileSha256": cluster_file_digest(value)}
    return value


def with_cluster_data(sweep: Sweep) -> Sweep:
    """``sweep`` with the bytes of its cluster files inside (for workers on machines that may lack the files:
    Ray); each worker process parses them once."""
    from scheduling_framework.scenario.io import with_data

    def shipped(v: Any) -> Any:
        return with_data(v) if isinstance(v, ClusterFile) else v

    if not isinstance(sweep, Sweep):  # (a test's stand-in)
        return sweep
    values = [sweep.base.get("cluster"), *(v for a in sweep.axes for v in a.applied)]
    if not any(isinstance(v, ClusterFile) for v in values):
        return sweep
    base = {k: shipped(v) if k == "cluster" else v for k, v in sweep.base.items()}
    axes = tuple(attrs.evolve(a, applied=tuple(shipped(v) for v in a.applied)) for a in sweep.axes)
    return attrs.evolve(sweep, base=base, axes=axes)


def sweep_from_dict(doc: Mapping[str, Any], base_dir: str = ".", source: str = "<sweep>", *,
                    strict: bool = False) -> Sweep:
    """Read and check a sweep; raises ScenarioError listing every problem with its field path.

    The matrix is not expanded: the first scenario is built and validated now, every other one when it runs.
    ``strict=True`` makes a field the Kubernetes API does not define, in any manifest a scenario holds (its
    cluster, its templates, whether from the base or from the matrix), an error of that scenario: its row's
    ``error`` names the field and the other scenarios run (the check at reading is not strict, so that one
    scenario's manifest cannot stop the sweep). Without it such fields are warnings of the replay. Under
    ``strict`` a step naming a node or pod that does not exist (``names: [ghost]``) is its row's error too.
    """
    from scheduling_framework.scenario.io import read_yaml_mapping

    problems: list[str] = []
    if not isinstance(doc, Mapping):
        raise ScenarioError(source, [f"expected a mapping, got {type(doc).__name__}"])
    for k in doc:
        if k not in ("apiVersion", "kind", "name", "scenario", "matrix", "seeds"):
            problems.append(f"{k}: Unsupported field (expected name, scenario, matrix, seeds)")
    if doc.get("kind", "Sweep") != "Sweep":
        problems.append(f'kind: Unsupported value: {doc.get("kind")!r} (expected "Sweep")')
    base = doc.get("scenario")
    scenario_dir = base_dir
    if isinstance(base, str):
        scen_path = os.path.join(base_dir, base)
        try:
            base = read_yaml_mapping(scen_path, "scenario")
            scenario_dir = os.path.dirname(os.path.abspath(scen_path))
        except SchedulingFrameworkError as e:
            raise ScenarioError(source, [f"scenario: {e}"]) from None
    if not isinstance(base, Mapping):
        raise ScenarioError(source, [*problems, "scenario: Required value: a scenario file path or mapping"])
    matrix = doc.get("matrix", {}) or {}
    raw_axes: list[tuple[str, list[str | int], list[Any]]] = []
    if not isinstance(matrix, Mapping):
        problems.append("matrix: Invalid value: expected a mapping of field path to a list of values")
    else:
        for key, values in matrix.items():
            try:
                parsed = parse_path(str(key))
            except ValueError as e:
                problems.append(f"matrix[{key!r}]: {e}")
                continue
            if not isinstance(values, list) or not values:
                problems.append(f"matrix[{key!r}]: Invalid value: expected a non-empty list of values")
                continue
            dup = _first_duplicate(values)
            if dup is not None:
                # the same value twice is the same scenario (same id): one row would silently vanish
                problems.append(f"matrix[{key!r}][{dup}]: Duplicate value: {_brief(values[dup])}")
                continue
            raw_axes.append((str(key), parsed, values))
    seeds_v = doc.get("seeds")
    if seeds_v is None:
        seeds = [base.get("seed", 0)]
    elif isinstance(seeds_v, int) and not isinstance(seeds_v, bool) and 1 <= seeds_v <= MAX_SCENARIOS:
        seeds = list(range(1, seeds_v + 1))
    elif isinstance(seeds_v, list) and seeds_v and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                          for s in seeds_v):
        seeds = list(seeds_v)
        dup = _first_duplicate(seeds)
        if dup is not None:
            problems.append(f"seeds[{dup}]: Duplicate value: {seeds[dup]}")
    else:
        problems.append("seeds: Invalid value: expected N (seeds 1..N) or a list of non-negative integers")
        seeds = [0]
    total = len(seeds)
    for _, _, values in raw_axes:
        total *= len(values)
    if total > MAX_SCENARIOS:
        problems.append(f"matrix: Too many: {total} scenarios (at most {MAX_SCENARIOS})")
    if problems:
        raise ScenarioError(source, problems)
    name = str(doc.get("name") or os.path.splitext(os.path.basename(source))[0])
    # Files named by the scenario are read here, once, so that scenarios travel by content; a cluster file stays
    # a reference (read once per worker process), its ids hashing its bytes.
    into_cluster = any(len(parsed) > 1 and parsed[0] == "cluster" for _, parsed, _ in raw_axes)
    inlined = dict(base)
    for field in ("cluster", "config"):
        if field in inlined:
            inlined[field] = _inline(field, inlined[field], scenario_dir, into_cluster)
    axes = []
    for key, parsed, values in raw_axes:
        ref = str(parsed[0]) if len(parsed) == 1 and parsed[0] in ("cluster", "config") else ""
        applied = tuple(_inline(ref, v, scenario_dir) if ref else v for v in values)
        axes.append(Axis(key, tuple(parsed), tuple(values), applied,
                         tuple(_digest(_canonical(_identity(v)))[:16] for v in applied)))
    fingerprint = _digest(_canonical({k: _identity(v) for k, v in inlined.items()}))
    sweep = Sweep(name, inlined, tuple(axes), tuple(seeds), scenario_dir, source, fingerprint)
    sweep.scenario(0)  # every field path applies, and the first scenario is valid
    # The id does not depend on strictness: a row is the same scenario's with or without it.
    return attrs.evolve(sweep, strict=True) if strict else sweep


# --- running ------------------------------------------------------------------------------------


def first_warnings(sweep: Sweep) -> list[str]:
    """The warnings of loading the first scenario's cluster and templates (fields the Kubernetes API does not
    define, among others): the CLI prints these once, before the sweep runs. Each row then carries the warnings
    of its own run (``warnings``, when there are any), those included."""
    from scheduling_framework.scenario.replay import starting_cluster

    return list(starting_cluster(sweep.scenario(0)).warnings)



def _row(index: int, case_id: str, name: str, seed: int, params: Mapping[str, Any],
         scenario: Scenario | None, error: str | None, strict: bool = False) -> dict[str, Any]:
    from scheduling_framework.scenario.replay import _percentile, run_scenario

    row: dict[str, Any] = {"index": index, "id": case_id, "scenario": scenario.name if scenario else name,
                           "seed": seed, "params": dict(params)}
    if scenario is None:
        row["error"] = error
        return row
    try:
        r = run_scenario(scenario, strict=strict)
    except Exception as e:  # a scenario's failure is its own row, never the sweep's
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    f = r.final
    cycles = list(r.cycle_ms)
    row.update({"scheduled": f.scheduled, "unschedulable": f.unschedulable, "pending": f.pending,
                "errors": f.errors, "evicted": sum(s.evicted for s in r.steps), "nodes": f.nodes,
                "nodesUsed": f.nodes_used, "cpuUtilization": f.cpu_utilization,
                "memoryUtilization": f.memory_utilization, "cycles": len(cycles),
                "p50Ms": round(_percentile(cycles, 0.5), 3), "p99Ms": round(_percentile(cycles, 0.99), 3),
                "seconds": round(r.seconds, 4), "error": None})
    if r.warnings:  # as replay prints them (a step naming a node that does not exist); absent when none
        row["warnings"] = list(r.warnings)
    return row


def run_case(case: SweepCase) -> dict[str, Any]:
    """Run one case and return its result row; never raises (an error becomes the row's ``error``)."""
    return _row(case.index, case.id, case.scenario.name, case.seed, case.params, case.scenario, None, case.strict)


def run_cases(cases: Sequence[SweepCase]) -> list[dict[str, Any]]:
    """Run several cases in one task (see :func:`run_case`)."""
    return [run_case(c) for c in cases]


def run_index(sweep: Sweep, index: int) -> dict[str, Any]:
    """Build and run the scenario at ``index``; never raises (an invalid combination is the row's ``error``)."""
    try:
        sc: Scenario | None = sweep.scenario(index)
        error = None
    except ScenarioError as e:
        sc, error = None, f"invalid scenario: {e}"
    return _row(index, sweep.case_id(index), sweep.name, sweep.seed(index), sweep.params(index), sc, error,
                sweep.strict)


def run_indexes(sweep: Sweep, indexes: Sequence[int]) -> list[dict[str, Any]]:
    return [run_index(sweep, i) for i in indexes]


def failed_row(sweep: Sweep, index: int, error: str) -> dict[str, Any]:
    """The row of a scenario that could not be run at all (its worker died)."""
    return {"index": index, "id": sweep.case_id(index), "scenario": sweep.name, "seed": sweep.seed(index),
            "params": sweep.params(index), "error": error}


# Fields that depend on the machine, not on the scenario: left out when comparing backends.
TIMING_FIELDS = ("p50Ms", "p99Ms", "seconds")

# Modules a pool worker needs: imported once by the fork server, not once per worker.
_PRELOAD = ("scheduling_framework.scenario.sweep", "scheduling_framework.scenario.replay")


def _run_local(sweep: Sweep, todo: Iterator[int], workers: int,
               notify: Callable[[str], None] | None) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(sweep) <= 1:
        for i in todo:
            yield run_index(sweep, i)
        return
    from scheduling_framework.scenario.pool import run_pool

    def failed(index: int, cause: str) -> dict[str, Any]:
        return failed_row(sweep, index, cause)

    yield from run_pool(run_index, sweep, todo, min(workers, len(sweep)), failed, preload=_PRELOAD,
                        notify=notify)


def run_sweep(sweep: Sweep, backend: str = "local", workers: int | None = None, address: str | None = None,
              on_row: Callable[[dict[str, Any]], None] | None = None, *, jsonl: str | None = None,
              csv: str | None = None, resume: bool = False,
              notify: Callable[[str], None] | None = None, strict: bool | None = None) -> list[dict[str, Any]]:
    """Run every scenario; rows go to ``on_row`` and are appended to ``jsonl`` / ``csv`` as they finish.

    ``strict`` (default: as the sweep was loaded) makes a field the Kubernetes API does not define, in any
    manifest of a scenario, or a step naming a node or pod that does not exist, that scenario's error row
    naming the field or the step (see :func:`sweep_from_dict`).

    With ``resume`` the files are kept and the scenarios whose ids they hold are skipped; otherwise they are
    started afresh. Returns every row (those found on resuming included), sorted by index. An exception
    (KeyboardInterrupt, a write error) stops the workers before it propagates; the rows written stay.
    ``notify`` hears of retries after a worker died and of repaired files.
    """
    if backend not in ("local", "ray"):
        raise SchedulingFrameworkError(f'unknown sweep backend "{backend}" (expected "local" or "ray")')
    if strict is not None and strict != sweep.strict:
        sweep = attrs.evolve(sweep, strict=strict)
    n = workers if workers is not None else (os.cpu_count() or 1)
    keys = [a.key for a in sweep.axes]
    files: list[RowFile] = []
    try:
        for path, kind in ((jsonl, "jsonl"), (csv, "csv")):
            if path is not None:
                files.append(RowFile(path, kind, keys, resume))
                if files[-1].repaired and notify is not None:
                    notify(f"{path}: dropped a cut-short last line ({files[-1].repaired} bytes)")
        done = set.intersection(*(f.ids for f in files)) if files else set()
        previous = {r["id"]: r for f in reversed(files) for r in f.rows}
        matched = [0]

        def pending() -> Iterator[int]:
            for i in range(len(sweep)):
                if done and sweep.case_id(i) in done:
                    matched[0] += 1
                else:
                    yield i
            if len(done) > matched[0] and notify is not None:
                notify(f"{len(done) - matched[0]} row(s) already written are not scenarios of this sweep "
                       "(another base scenario or matrix?); kept")

        todo = pending()
        if backend == "local":
            it = _run_local(sweep, todo, n, notify)
        else:
            from scheduling_framework.scenario.ray_backend import run_ray

            def failed(index: int, cause: str) -> dict[str, Any]:
                return failed_row(sweep, index, cause)

            it = run_ray(sweep, todo, address, n if workers is not None else 0, run_indexes, failed, notify,
                         with_cluster_data)
        rows = [r for r in previous.values() if r["id"] in done]
        try:
            for row in it:
                for f in files:
                    if row["id"] not in f.ids:  # a row one file lacks (its write failed last time) goes there only
                        f.write_row(row)
                if on_row is not None:
                    on_row(row)
                rows.append(row)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
    finally:
        for f in files:
            f.close()
    rows.sort(key=lambda r: r["index"] if isinstance(r.get("index"), int) else -1)
    return rows


# --- estimates -----------------------------------------------------------------------------------


@attrs.frozen
class Estimate:
    """``--dry-run``: how many scenarios, and the CPU time of a small sample of them."""

    scenarios: int
    sample: int
    cpu_seconds_per_scenario: float

    @property
    def cpu_seconds(self) -> float:
        return self.scenarios * self.cpu_seconds_per_scenario


def estimate(sweep: Sweep, sample: int = 5, skip: frozenset[str] = frozenset()) -> Estimate:
    """Count the scenarios to run (ids in ``skip`` left out) and time ``sample`` of them, spread over the matrix,
    on this process."""
    total = len(sweep)
    todo = total if not skip else sum(1 for i in range(total) if sweep.case_id(i) not in skip)
    k = min(sample, total)
    picks = sorted({i * total // k for i in range(k)}) if k else []
    t0 = time.process_time()
    for i in picks:
        run_index(sweep, i)
    per = (time.process_time() - t0) / len(picks) if picks else 0.0
    return Estimate(todo, len(picks), per)


# --- output --------------------------------------------------------------------------------------


def to_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json_line(r) for r in rows)


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    params: list[str] = []
    for r in rows:
        for k in r.get("params", {}):
            if k not in params:
                params.append(k)
    return csv_header_line(params) + "".join(csv_line(r, params) for r in rows)


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts over the rows: scenarios, failed, pods scheduled and unschedulable, scenarios with every pod
    scheduled, and ``withWarnings``: scenarios whose row carries warnings."""
    ok = [r for r in rows if not r.get("error")]
    return {"scenarios": len(rows), "failed": len(rows) - len(ok),
            "scheduled": sum(r["scheduled"] for r in ok), "unschedulable": sum(r["unschedulable"] for r in ok),
            "allScheduled": sum(1 for r in ok if r["pending"] == 0),
            "withWarnings": sum(1 for r in rows if r.get("warnings"))}


def _first_duplicate(values: list[Any]) -> int | None:
    """The index of the first value equal (by content) to an earlier one, or None."""
    seen: set[str] = set()
    for i, v in enumerate(values):
        key = json.dumps(v, sort_keys=True, default=str)
        if key in seen:
            return i
        seen.add(key)
    return None


def _brief(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
