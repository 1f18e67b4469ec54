"""JSON and YAML parsers for cluster dumps compared: CPU time, peak memory, YAML 1.1 semantics, wheels, streaming.

The candidates are third-party packages the project does not depend on, so run this with the interpreter of a
separate virtual environment that has them (whatever does not install or import is reported as such)::

    python3 -m venv /tmp/parsers-venv
    /tmp/parsers-venv/bin/pip install -e . rapidyaml fastyaml-rs libfyaml ryaml "ruamel.yaml[oldlibyaml]" \\
        msgspec orjson pysimdjson ujson
    /tmp/parsers-venv/bin/python -m benchmarks.parsers                        # the 500-node JSON and YAML dumps
    /tmp/parsers-venv/bin/python -m benchmarks.parsers --dump n50.yaml        # one dump (pure loaders too)
    /tmp/parsers-venv/bin/python -m benchmarks.parsers --only orjson,json     # some candidates only
    /tmp/parsers-venv/bin/python -m benchmarks.parsers --semantics --wheels   # no timing: checks and wheels only
    /tmp/parsers-venv/bin/python -m benchmarks.parsers --output json          # one record per measurement
    /tmp/parsers-venv/bin/python -m benchmarks.parsers --verify --dump n50.yaml   # items equal to PyYAML's?

Dumps come from :mod:`benchmarks.dump` (``python -m benchmarks.dump --nodes 50 --format yaml > n50.yaml``); the
default ones are the 500-node dumps that :mod:`benchmarks.ingest` caches. The format is the file's suffix.

Each parse runs in a fresh child interpreter: **CPU s** is ``time.process_time()`` around reading and parsing
the file into Python objects (every item built; the streamed readers and the ``items`` variants drop each item
once built), with the cyclic garbage collector off as the project's loader runs (``--gc`` leaves it on);
**MB/s** is the file's size over that; **peak MiB** is the child's ``ru_maxrss`` after the parse less that of a
child that only imports the same modules. ``--repeat N`` keeps the lowest of N runs. Pure-Python loaders run
only on dumps up to ``--slow-max-mb`` (20 MB).

``--semantics`` checks each candidate against what PyYAML's ``SafeLoader`` gives for plain scalars that YAML 1.1
and 1.2 read differently (and a ``<<`` merge key); JSON candidates are checked against the standard library
on numbers, strings and duplicate keys. ``--wheels`` makes one ``pip download -vvv`` look-up per package and
reads off its file list which platforms have a wheel for CPython 3.11 and 3.13.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib
import importlib.metadata
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("SF_DUMP_CACHE", "/tmp/scheduling-framework-dumps"))
DEFAULT_DUMPS = (CACHE / "n500.json", CACHE / "n500.yaml")
MB = 1_000_000
MIB = 1 << 20


# ---------------------------------------------------------------------------------------------------- parsers
# Each takes the dump's path and returns its items: the whole-tree loaders a list (the tree is held), the streamed
# ones an iterator that builds each item as it is asked for. Imports are local (the candidates are optional).


def _items(doc: Any) -> list[Any]:
    return doc["items"] if isinstance(doc, dict) and isinstance(doc.get("items"), list) else [doc]


def items_ours(path: str) -> Iterator[Any]:
    from scheduling_framework.ingest import Counter, open_source, stream_items

    return (item for _, item in stream_items(open_source(path, max_bytes=1 << 40), Counter()))


def items_pyyaml_c(path: str) -> list[Any]:
    import yaml

    with open(path, "rb") as f:  # libyaml reads the file in chunks: the text is never held whole
        return _items(yaml.load(f, Loader=yaml.CSafeLoader))


def items_pyyaml_pure(path: str) -> list[Any]:
    import yaml

    with open(path, "rb") as f:
        return _items(yaml.load(f, Loader=yaml.SafeLoader))


def items_ruamel_c(path: str) -> list[Any]:
    with open(path, "rb") as f:
        return _items(_ruamel().load(f))


def _ruamel() -> Any:
    from ruamel.yaml import YAML

    warnings.simplefilter("ignore")  # YAML 1.1 mode warns about floats without a dot ("1e3")
    y = YAML(typ="safe", pure=False)
    if "CParser" not in y.Parser.__name__:
        raise ImportError("ruamel.yaml has no C parser here (install ruamel.yaml.clib or ruamel.yaml.clibz)")
    y.version = (1, 1)  # PyYAML's YAML version; ruamel.yaml's default is 1.2
    return y


def items_fast_yaml(path: str) -> list[Any]:
    import fast_yaml

    with open(path, "rb") as f:
        return _items(fast_yaml.safe_load(f))


def items_libfyaml(path: str) -> list[Any]:
    import libfyaml

    # dedup=False: with the default (True) equal subtrees become one shared Python dict or list
    return _items(libfyaml.load(path, mode="yaml1.1", dedup=False).to_python())


def items_libfyaml_lazy(path: str) -> Iterator[Any]:
    """The document stays in libfyaml's C arena; each item becomes Python objects on its own."""
    import libfyaml

    doc = libfyaml.load(path, mode="yaml1.1", dedup=False)
    for item in doc["items"]:
        yield item.to_python()


def items_ryaml(path: str) -> list[Any]:
    import ryaml

    with open(path, "rb") as f:
        return _items(ryaml.load(f))


def items_ryml(path: str) -> Iterator[Any]:
    """rapidyaml builds a C++ tree of the whole document; each item is made into Python objects on its own."""
    import ryml

    assert ryml.NONE == _RYML_NONE
    buf = bytearray(Path(path).read_bytes())  # parsed in place: the tree's scalars point into this buffer
    tree = ryml.parse_in_place(buf)
    for child in ryml.children(tree, tree.find_child(tree.root_id(), b"items")):
        yield _ryml_value(tree, child)


_RYML_NONE = (1 << 64) - 1  # ryml.NONE, the "no node" index (size_t -1)


def _ryml_value(tree: Any, node: int) -> Any:
    """The Python value of a rapidyaml node: it resolves no types, so every non-null scalar is a string."""
    if tree.is_map(node):
        out: dict[Any, Any] = {}
        child = tree.first_child(node)
        while child != _RYML_NONE:
            key = tree.key(child)
            out[bytes(key).decode() if key is not None else None] = _ryml_value(tree, child)
            child = tree.next_sibling(child)
        return out
    if tree.is_seq(node):
        seq: list[Any] = []
        child = tree.first_child(node)
        while child != _RYML_NONE:
            seq.append(_ryml_value(tree, child))
            child = tree.next_sibling(child)
        return seq
    if tree.val_is_null(node):
        return None
    val = tree.val(node)
    return "" if val is None else bytes(val).decode()


def items_msgspec_yaml(path: str) -> list[Any]:
    import msgspec

    return _items(msgspec.yaml.decode(Path(path).read_bytes()))


def items_json(path: str) -> list[Any]:
    return _items(json.loads(Path(path).read_bytes()))


def items_orjson(path: str) -> list[Any]:
    import orjson

    return _items(orjson.loads(Path(path).read_bytes()))


def items_msgspec_json(path: str) -> list[Any]:
    import msgspec

    return _items(msgspec.json.decode(Path(path).read_bytes()))


def items_msgspec_raw(path: str) -> Iterator[Any]:
    """The bytes stay in memory; ``items`` is decoded as raw slices, each then decoded on its own."""
    import msgspec

    raw_list = msgspec.defstruct("RawList", [("items", list[msgspec.Raw])])  # other members are skipped
    dump = msgspec.json.decode(Path(path).read_bytes(), type=raw_list)
    for raw in dump.items:
        yield msgspec.json.decode(raw)


def items_simdjson(path: str) -> list[Any]:
    import simdjson

    return _items(simdjson.loads(Path(path).read_bytes()))


def items_simdjson_lazy(path: str) -> Iterator[Any]:
    """simdjson's tape of the whole document stays in C; each item becomes Python objects on its own."""
    import simdjson

    parser = simdjson.Parser()  # the document is valid while its parser lives and parses nothing else
    doc = parser.parse(Path(path).read_bytes())
    for item in doc["items"]:
        yield item.as_dict()


def items_ujson(path: str) -> list[Any]:
    import ujson

    return _items(ujson.loads(Path(path).read_bytes()))


# ---------------------------------------------------------------------------------------------------- loaders
# One small document (text) to its Python value, for the semantics checks.


def load_ours(text: str) -> Any:
    from scheduling_framework.cluster import load_yaml_documents
    from scheduling_framework.ingest import Counter, RereadWhole, stream_items, text_source

    with text_source(text, "<check>", "input", 1 << 20) as src:
        try:
            return next(item for _, item in stream_items(src, Counter()))
        except RereadWhole:  # merge keys: the project reads such input again with the whole-document loader
            return load_yaml_documents(text, "<check>")[0]


def load_pyyaml_c(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=yaml.CSafeLoader)


def load_pyyaml_pure(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=yaml.SafeLoader)


def load_ruamel_c(text: str) -> Any:
    return _ruamel().load(text)


def load_fast_yaml(text: str) -> Any:
    import fast_yaml

    return fast_yaml.safe_load(text)


def load_libfyaml(text: str) -> Any:
    import libfyaml

    return libfyaml.loads(text, mode="yaml1.1").to_python()


def load_ryaml(text: str) -> Any:
    import ryaml

    return ryaml.loads(text)


def load_ryml(text: str) -> Any:
    import ryml

    buf = bytearray(text.encode())
    tree = ryml.parse_in_place(buf)
    return _ryml_value(tree, tree.root_id())


def load_msgspec_yaml(text: str) -> Any:
    import msgspec

    return msgspec.yaml.decode(text.encode())


def load_json(text: str) -> Any:
    return json.loads(text)


def load_ours_json(text: str) -> Any:
    return load_ours(text)


def load_orjson(text: str) -> Any:
    import orjson

    return orjson.loads(text)


def load_msgspec_json(text: str) -> Any:
    import msgspec

    return msgspec.json.decode(text.encode("utf-8", "surrogatepass"))


def load_simdjson(text: str) -> Any:
    import simdjson

    return simdjson.loads(text)


def load_ujson(text: str) -> Any:
    import ujson

    return ujson.loads(text)


# ---------------------------------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class Candidate:
    name: str
    fmt: str  # "yaml" or "json"
    dist: str  # the PyPI distribution ("" for the standard library and this project)
    modules: tuple[str, ...]  # what the baseline child imports
    items: Callable[[str], Iterable[Any]]
    load: Callable[[str], Any]
    streams: str  # can its Python API hand out one List item at a time?
    slow: bool = False  # pure Python: small dumps only
    extra_dists: tuple[str, ...] = ()
    note: str = ""


CANDIDATES: tuple[Candidate, ...] = (
    Candidate("ours-yaml", "yaml", "", ("scheduling_framework.ingest", "yaml"), items_ours, load_ours,
              "yes: items built from libyaml events and dropped one by one",
              note="merge keys and collection tags are read again by PyYAML's whole-document loader"),
    Candidate("pyyaml-c", "yaml", "PyYAML", ("yaml",), items_pyyaml_c, load_pyyaml_c,
              "no (load() builds the whole tree; its event API streams: that is what ours uses)"),
    Candidate("pyyaml-pure", "yaml", "PyYAML", ("yaml",), items_pyyaml_pure, load_pyyaml_pure,
              "no (load() builds the whole tree)", slow=True),
    Candidate("ruamel-c", "yaml", "ruamel.yaml", ("ruamel.yaml",), items_ruamel_c, load_ruamel_c,
              "no (load() builds the whole tree; its C parser's events could stream, as PyYAML's)",
              extra_dists=("ruamel.yaml.clib", "ruamel.yaml.clibz"),
              note="YAML(typ='safe', pure=False) with version (1, 1); the default is YAML 1.2"),
    Candidate("fastyaml-rs", "yaml", "fastyaml-rs", ("fast_yaml",), items_fast_yaml, load_fast_yaml,
              "no (safe_load builds the whole tree; documents of a stream are separate only with load_all)"),
    Candidate("libfyaml", "yaml", "libfyaml", ("libfyaml",), items_libfyaml, load_libfyaml,
              "no (load() parses the whole document)", note="mode='yaml1.1', dedup=False"),
    Candidate("libfyaml-items", "yaml", "libfyaml", ("libfyaml",), items_libfyaml_lazy, load_libfyaml,
              "partly: the whole document stays in C, items become Python objects one at a time",
              note="mode='yaml1.1', dedup=False"),
    Candidate("ryaml", "yaml", "ryaml", ("ryaml",), items_ryaml, load_ryaml,
              "no (loads() takes the whole text and builds the whole tree)"),
    Candidate("rapidyaml", "yaml", "rapidyaml", ("ryml",), items_ryml, load_ryml,
              "partly: the whole tree stays in C++, items become Python objects one at a time",
              note="no Python objects of its own: a Python walk over its tree, every scalar a string"),
    Candidate("msgspec-yaml", "yaml", "msgspec", ("msgspec", "yaml"), items_msgspec_yaml, load_msgspec_yaml,
              "no (decode() takes the whole text)", note="msgspec.yaml parses with PyYAML underneath"),
    Candidate("ours-json", "json", "", ("scheduling_framework.ingest", "yaml"), items_ours, load_ours_json,
              "yes: json.JSONDecoder.raw_decode per item, items dropped one by one"),
    Candidate("json", "json", "", ("json",), items_json, load_json, "no (loads() takes the whole text)"),
    Candidate("orjson", "json", "orjson", ("orjson",), items_orjson, load_orjson,
              "no (loads() takes the whole text; no prefix decoding)"),
    Candidate("msgspec-json", "json", "msgspec", ("msgspec",), items_msgspec_json, load_msgspec_json,
              "no (decode() takes the whole text)"),
    Candidate("msgspec-raw-items", "json", "msgspec", ("msgspec",), items_msgspec_raw, load_msgspec_json,
              "partly: the whole text stays in memory, items are decoded one at a time from msgspec.Raw slices"),
    Candidate("simdjson", "json", "pysimdjson", ("simdjson",), items_simdjson, load_simdjson,
              "no (loads() takes the whole text)"),
    Candidate("simdjson-items", "json", "pysimdjson", ("simdjson",), items_simdjson_lazy, load_simdjson,
              "partly: the whole text and its tape stay in C (4 GB at most), items become Python objects one "
              "at a time"),
    Candidate("ujson", "json", "ujson", ("ujson",), items_ujson, load_ujson, "no (loads() takes the whole text)"),
)
BY_NAME = {c.name: c for c in CANDIDATES}


def version_of(c: Candidate) -> str:
    if not c.dist:
        return f"Python {platform.python_version()}" if c.name == "json" else "this project"
    found = []
    for dist in (c.dist, *c.extra_dists):
        try:
            found.append(f"{dist} {importlib.metadata.version(dist)}" if dist != c.dist
                         else importlib.metadata.version(dist))
        except importlib.metadata.PackageNotFoundError:
            if dist == c.dist:
                return "not installed"
    return " + ".join(found)


# ---------------------------------------------------------------------------------------------------- semantics


@dataclass(frozen=True)
class Check:
    label: str
    text: str
    key: str = "v"


YAML_CHECKS = (
    Check("yes", "v: yes\n"), Check("on", "v: on\n"), Check("off", "v: off\n"), Check("NO", "v: NO\n"),
    Check("y", "v: y\n"),  # a string for PyYAML, although the YAML 1.1 type list has y/n as booleans
    Check("0777", "v: 0777\n"), Check("1e3", "v: 1e3\n"), Check("1.5e3", "v: 1.5e3\n"),
    Check("1.5e+3", "v: 1.5e+3\n"), Check("2001-12-14", "v: 2001-12-14\n"), Check("12:30", "v: 12:30\n"),
    Check("~", "v: ~\n"), Check("<<", "base: &b {x: 1}\nv:\n  <<: *b\n  z: 2\n"),
)
JSON_CHECKS = (
    Check("1e3", '{"v": 1e3}'), Check("0.1", '{"v": 0.1}'), Check("2**64", '{"v": 18446744073709551616}'),
    Check("-0.0", '{"v": -0.0}'), Check("surrogate pair", r'{"v": "\ud83d\ude00"}'),
    Check("lone surrogate", r'{"v": "\ud800"}'), Check("duplicate key", '{"v": 1, "v": 2}'),
)


def normalize(value: Any) -> Any:
    """A comparable form that tells types apart (True is not 1, '511' is not 511) and ignores key order."""
    if isinstance(value, dict):
        return ("map", sorted((repr(normalize(k)), normalize(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("seq", [normalize(v) for v in value])
    if isinstance(value, float) and value == 0.0:
        return ("float", repr(value))
    return (type(value).__name__, value)


def reference(fmt: str) -> dict[str, Any]:
    """The expected value of each check: PyYAML's pure SafeLoader for YAML, the standard library for JSON."""
    load = load_pyyaml_pure if fmt == "yaml" else load_json
    return {chk.label: _outcome(load, chk) for chk in (YAML_CHECKS if fmt == "yaml" else JSON_CHECKS)}


def _outcome(load: Callable[[str], Any], chk: Check) -> Any:
    try:
        return load(chk.text)[chk.key]
    except Exception as e:  # a refusal is an outcome too
        return f"error: {type(e).__name__}"


def semantics(c: Candidate) -> dict[str, Any]:
    """Each check's value from ``c`` and whether it is PyYAML's (YAML) / the standard library's (JSON)."""
    ref = reference(c.fmt)
    out: dict[str, Any] = {}
    for chk in YAML_CHECKS if c.fmt == "yaml" else JSON_CHECKS:
        got = _outcome(c.load, chk)
        same = normalize(got) == normalize(ref[chk.label])
        out[chk.label] = {"match": same, "got": repr(got), "expected": repr(ref[chk.label])}
    return out


def _first_difference(got: Any, want: Any, where: str = "") -> str:
    """Where ``got`` first differs from ``want`` (types told apart), or ''."""
    if type(got) is not type(want):
        return f"{where or '/'}: {got!r:.60} instead of {want!r:.60}"
    if isinstance(want, dict):
        for key in want.keys() | got.keys():
            if key not in got or key not in want:
                return f"{where}/{key}: {'missing' if key not in got else 'extra'}"
            diff = _first_difference(got[key], want[key], f"{where}/{key}")
            if diff:
                return diff
        return ""
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{where}: {len(got)} elements instead of {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            diff = _first_difference(g, w, f"{where}[{i}]")
            if diff:
                return diff
        return ""
    return "" if got == want else f"{where}: {got!r:.60} instead of {want!r:.60}"


def _shared_containers(value: Any) -> int:
    """How many dicts and lists are reached more than once (one object in two places: a change shows in both)."""
    seen: set[int] = set()
    shared = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict | list):
            if id(v) in seen:
                shared += 1
                continue
            seen.add(id(v))
            stack.extend(v.values() if isinstance(v, dict) else v)
    return shared


def verify(c: Candidate, path: str) -> dict[str, Any]:
    """The candidate's items against PyYAML's CSafeLoader (YAML) / json.loads (JSON) on the same dump."""
    want = (items_pyyaml_c if c.fmt == "yaml" else items_json)(path)
    got = list(c.items(path))
    diffs = [f"items[{i}]{d}" for i, (g, w) in enumerate(zip(got, want, strict=False))
             if (d := _first_difference(g, w))]
    if len(got) != len(want):
        diffs.insert(0, f"{len(got)} items instead of {len(want)}")
    return {"items": len(got), "differing": len(diffs), "first": diffs[0] if diffs else "",
            "shared": _shared_containers(got)}


# ---------------------------------------------------------------------------------------------------- children


def child_main(name: str, path: str, keep_gc: bool) -> dict[str, Any]:
    """Run in the child: import the candidate's modules, then (unless ``path`` is empty) parse the dump."""
    c = BY_NAME[name]
    for module in c.modules:
        importlib.import_module(module)
    if name == "ruamel-c":
        _ruamel()  # the C parser must be there
    out: dict[str, Any] = {}
    if path:
        if not keep_gc:
            gc.disable()
        t0 = time.process_time()
        out["items"] = sum(1 for _ in c.items(path))
        out["cpu_s"] = time.process_time() - t0
    out["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return out


def run_child(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.parsers", *args], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        err = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return {"error": err[:200]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


@dataclass
class Measurement:
    candidate: str
    dump: str
    size_mb: float
    version: str
    items: int = 0
    cpu_s: float = 0.0
    mb_per_s: float = 0.0
    peak_mib: float = 0.0
    error: str = ""
    runs: list[float] = field(default_factory=list)


def measure(c: Candidate, dump: Path, repeat: int, keep_gc: bool) -> Measurement:
    size = dump.stat().st_size
    m = Measurement(c.name, dump.name, size / MB, version_of(c))
    flags = ["--gc"] if keep_gc else []
    base = run_child(["--child", c.name, "", *flags])
    if "error" in base:
        m.error = f"import failed: {base['error']}"
        return m
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        r = run_child(["--child", c.name, str(dump), *flags])
        if "error" in r:
            m.error = r["error"]
            return m
        m.runs.append(round(r["cpu_s"], 3))
        if best is None or r["cpu_s"] < best["cpu_s"]:
            best = r
    assert best is not None
    m.items, m.cpu_s = best["items"], best["cpu_s"]
    m.mb_per_s = size / MB / best["cpu_s"] if best["cpu_s"] else 0.0
    m.peak_mib = max(0.0, (best["maxrss_kib"] - base["maxrss_kib"]) / 1024)
    return m


# ---------------------------------------------------------------------------------------------------- wheels

#: Platform label -> a test on a wheel's platform tag.
PLATFORMS: dict[str, Callable[[str], bool]] = {
    "linux-x86_64": lambda p: p.startswith("manylinux") and p.endswith("x86_64"),
    "linux-aarch64": lambda p: p.startswith("manylinux") and p.endswith("aarch64"),
    "macos-arm64": lambda p: p.startswith("macosx") and p.endswith(("arm64", "universal2")),
    "macos-x86_64": lambda p: p.startswith("macosx") and p.endswith(("x86_64", "universal2", "intel")),
    "windows-x86_64": lambda p: p == "win_amd64",
}
PYTHONS = (11, 13)  # the oldest and newest CPython the project lists
_FILE = re.compile(r"https://files\.pythonhosted\.org/\S+/([^/\s#]+\.(?:whl|tar\.gz|zip))")


def _wheel_fits(filename: str, minor: int, plat_test: Callable[[str], bool]) -> bool:
    parts = filename[:-4].split("-")
    pythons, abis, plats = parts[-3].split("."), parts[-2].split("."), parts[-1].split(".")
    if not any(p == "any" or plat_test(p) for p in plats):
        return False
    for py in pythons:
        if py in ("py3", "py2.py3") or (py == f"cp3{minor}" and f"cp3{minor}" in abis):
            return True
        if py.startswith("cp3") and "abi3" in abis and py[3:].isdigit() and int(py[3:]) <= minor:
            return True
    return False


def _version_key(v: str) -> tuple[Any, ...]:
    try:
        from packaging.version import Version

        return (0, Version(v))
    except Exception:
        return (1, tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.+-]", v)))


def wheels(dist: str) -> dict[str, Any]:
    """One ``pip download -vvv`` of the installed version: every file pip saw, hence the platforms covered."""
    try:
        installed = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        installed = ""
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"{dist}=={installed}" if installed else dist
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                               "-d", tmp, "-vvv", spec], capture_output=True, text=True)
        built = ""
        for whl in Path(tmp).glob("*.whl"):
            with zipfile.ZipFile(whl) as z:
                newest = max(i.date_time for i in z.infolist())
            if newest[0] > 1980:  # reproducible builds stamp 1980-01-01: no date then
                built = datetime.date(*newest[:3]).isoformat()
    files = sorted(set(_FILE.findall(proc.stdout + proc.stderr)))
    norm = re.sub(r"[-_.]+", "_", dist).lower()
    versions: set[str] = set()
    for f in files:
        stem = f[:-4] if f.endswith(".whl") else re.sub(r"\.(tar\.gz|zip)$", "", f)
        name, _, rest = stem.partition("-")
        if re.sub(r"[-_.]+", "_", name).lower() == norm:
            versions.add(rest.split("-")[0])
    stable = [v for v in versions if not re.search(r"(a|b|rc|dev)\d*$", v)] or list(versions)
    latest = max(stable, key=_version_key) if stable else ""
    examined = installed or latest  # not installed: the latest release's files
    mine = [f for f in files if examined and f.endswith(".whl") and f"-{examined}-" in f]
    cover = {label: [minor for minor in PYTHONS if any(_wheel_fits(f, minor, test) for f in mine)]
             for label, test in PLATFORMS.items()}
    return {"dist": dist, "installed": installed, "latest": latest, "wheel_built": built,
            "sdist": bool(examined) and any(f.endswith((f"-{examined}.tar.gz", f"-{examined}.zip")) for f in files),
            "platforms": {label: ("yes" if len(m) == len(PYTHONS) else
                                  f"3.{m[0]} only" if m else "no") for label, m in cover.items()},
            "error": "" if files else (proc.stderr.strip().splitlines() or ["no files seen"])[-1][:200]}


# ---------------------------------------------------------------------------------------------------- output


def _table(rows: Iterable[list[str]], head: list[str]) -> str:
    rows = [head, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def _format_for(path: Path) -> str:
    return "json" if path.suffix == ".json" else "yaml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.parsers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", action="append", type=Path, help="a cluster dump (.json or .yaml); repeatable")
    ap.add_argument("--only", help="comma-separated candidate names (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement; the lowest CPU time is kept")
    ap.add_argument("--slow-max-mb", type=float, default=20.0, help="largest dump given to pure-Python loaders")
    ap.add_argument("--gc", action="store_true", help="leave the cyclic garbage collector on while parsing")
    ap.add_argument("--semantics", action="store_true", help="only the semantics checks (with --wheels: and those)")
    ap.add_argument("--wheels", action="store_true", help="also look up each package's wheels with pip")
    ap.add_argument("--verify", action="store_true",
                    help="compare every item with PyYAML's / json's on the dumps up to --slow-max-mb")
    ap.add_argument("--output", choices=("text", "json"), default="text")
    ap.add_argument("--save", type=Path, help="also write the JSON report to this file")
    ap.add_argument("--child", nargs=2, metavar=("NAME", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        print(json.dumps(child_main(args.child[0], args.child[1], args.gc)))
        return 0

    names = args.only.split(",") if args.only else list(BY_NAME)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        ap.error(f"unknown candidate(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    chosen = [BY_NAME[n] for n in names]
    dumps: list[Path] = args.dump or [p for p in DEFAULT_DUMPS if p.exists()]
    if not args.semantics and not dumps:
        ap.error(f"no dump: pass --dump PATH (the defaults under {CACHE} do not exist)")
    report: dict[str, Any] = {"machine": machine(), "gc": "on" if args.gc else "off", "measurements": [],
                              "semantics": {}, "verify": [], "streams": {c.name: c.streams for c in chosen},
                              "wheels": []}

    if not args.semantics:
        for dump in dumps:
            for c in chosen:
                if c.fmt != _format_for(dump) or (c.slow and dump.stat().st_size > args.slow_max_mb * MB):
                    continue
                m = measure(c, dump, args.repeat, args.gc)
                report["measurements"].append(asdict(m))
                if args.output == "text":
                    print(f"{dump.name}: {c.name}: " + (m.error or f"{m.cpu_s:.2f} CPU s, {m.mb_per_s:.1f} MB/s, "
                          f"peak {m.peak_mib:.0f} MiB, {m.items} items"), file=sys.stderr, flush=True)
    for c in chosen:
        report["semantics"][c.name] = run_child_call("semantics", c.name)
    if args.verify:
        for dump in dumps:
            if dump.stat().st_size > args.slow_max_mb * MB:
                print(f"{dump.name}: too large for --verify (--slow-max-mb {args.slow_max_mb})", file=sys.stderr)
                continue
            for c in chosen:
                if c.fmt == _format_for(dump):
                    report["verify"].append({"candidate": c.name, "dump": dump.name,
                                             **run_child_call("verify", c.name, str(dump))})
    if args.wheels:
        for dist in dict.fromkeys(d for c in chosen for d in (c.dist, *c.extra_dists) if d):
            report["wheels"].append(wheels(dist))

    if args.save:
        args.save.write_text(json.dumps(report, indent=1) + "\n")
    if args.output == "json":
        print(json.dumps(report, indent=1))
    else:
        print_text(report, chosen)
    return 0


def run_child_call(function: str, *args: str) -> dict[str, Any]:
    """``function(candidate, *args)`` of this module in a child of its own (a failed import fails there alone)."""
    code = (f"import json, benchmarks.parsers as p; c = p.BY_NAME[{args[0]!r}]; "
            f"print(json.dumps(p.{function}(c, *{args[1:]!r})))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def machine() -> dict[str, str]:
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu": model, "cores": str(os.cpu_count()), "python": platform.python_version(),
            "date": datetime.date.today().isoformat(), "system": f"{platform.system()} {platform.machine()}"}


def print_text(report: dict[str, Any], chosen: list[Candidate]) -> None:
    mach = report["machine"]
    print(f"{mach['cpu']}, {mach['cores']} cores, {mach['system']}, Python {mach['python']}, {mach['date']}, "
          f"garbage collector {report['gc']} while parsing")
    if report["measurements"]:
        rows = [[m["dump"], m["candidate"], m["version"], f"{m['size_mb']:.0f}",
                 *(["", "", "", "", m["error"]] if m["error"] else
                   [f"{m['cpu_s']:.2f}", f"{m['mb_per_s']:.1f}", f"{m['peak_mib']:.0f}", str(m["items"]), ""])]
                for m in report["measurements"]]
        print()
        print(_table(rows, ["dump", "candidate", "version", "MB", "CPU s", "MB/s", "peak MiB", "items", "error"]))
    print()
    for fmt, checks in (("yaml", YAML_CHECKS), ("json", JSON_CHECKS)):
        names = [c.name for c in chosen if c.fmt == fmt]
        if not names:
            continue
        print(f"{fmt.upper()} semantics (expected: {'PyYAML SafeLoader' if fmt == 'yaml' else 'json.loads'}); "
              "the differences show what the candidate gave")
        rows = []
        for name in names:
            sem = report["semantics"][name]
            if "error" in sem:
                rows.append([name, "-", f"failed: {sem['error']}"])
                continue
            ok = sum(1 for chk in checks if sem[chk.label]["match"])
            diffs = "; ".join(f"{chk.label} -> {sem[chk.label]['got']}" for chk in checks
                              if not sem[chk.label]["match"])
            rows.append([name, f"{ok}/{len(checks)}", diffs])
        print(_table(rows, ["candidate", "match", "differences"]))
        print()
    if report["verify"]:
        rows = [[v["candidate"], v["dump"], *(["", "", v["error"]] if "error" in v else
                 [f"{v['items'] - v['differing']}/{v['items']}", str(v["shared"]), v["first"]])]
                for v in report["verify"]]
        print(_table(rows, ["candidate", "dump", "items equal", "shared containers", "first difference"]))
        print()
    print(_table([[c.name, c.streams] for c in chosen], ["candidate", "streams items"]))
    if report["wheels"]:
        print()
        rows = [[w["dist"], w["installed"], w["latest"], w["wheel_built"] or "-",
                 *(w["platforms"][p] for p in PLATFORMS), "yes" if w["sdist"] else "no", w["error"]]
                for w in report["wheels"]]
        print(_table(rows, ["package", "installed", "latest", "wheel built", *PLATFORMS, "sdist", "error"]))


if __name__ == "__main__":
    sys.exit(main())
