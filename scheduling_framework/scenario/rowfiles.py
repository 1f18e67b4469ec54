"""Sweep result files (JSON Lines, CSV) written one whole row at a time, and read back to resume.

Each row is encoded to one line and written with a single append, straight to the operating system (no
buffer in this process), as soon as its scenario finishes: a sweep stopped by anything short of a power cut
keeps every row it finished. A write that fails midway (a full disk, the file size limit of ``ulimit -f``) is
cut back to the last whole line before the error is raised; a file cut short by other means (a power cut, a
``kill -9`` during the write) is repaired when the sweep resumes: a last line without its newline is dropped.
Every row carries the scenario's ``id``; resuming reads the ids already written and skips those scenarios.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import stat
from collections.abc import Mapping, Sequence
from typing import Any

from scheduling_framework.errors import SchedulingFrameworkError
from scheduling_framework.ingest.untrusted import MAX_NESTING_DEPTH

CSV_FIELDS = ("index", "id", "scenario", "seed", "scheduled", "unschedulable", "pending", "errors", "evicted",
              "nodes", "nodesUsed", "cpuUtilization", "memoryUtilization", "cycles", "p50Ms", "p99Ms", "seconds",
              "error")
_CSV_INTS = frozenset(("index", "seed", "scheduled", "unschedulable", "pending", "errors", "evicted", "nodes",
                       "nodesUsed", "cycles"))
_CSV_FLOATS = frozenset(("cpuUtilization", "memoryUtilization", "p50Ms", "p99Ms", "seconds"))


class RowFileError(SchedulingFrameworkError):
    """A result file cannot be written or resumed; the message names the file and what to do."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


def _why(e: OSError) -> str:
    if e.errno == errno.EFBIG:
        return "File too large (the file size limit, ulimit -f, was reached)"
    if e.errno == errno.ENOSPC:
        return "No space left on device"
    return e.strerror or str(e)


def json_line(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str) + "\n"


def csv_header(param_keys: Sequence[str]) -> list[str]:
    return [*CSV_FIELDS, *(f"param:{p}" for p in param_keys)]


def csv_header_line(param_keys: Sequence[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(csv_header(param_keys))
    return buf.getvalue()


def csv_line(row: Mapping[str, Any], param_keys: Sequence[str]) -> str:
    buf = io.StringIO()
    params = row.get("params") or {}
    csv.writer(buf, lineterminator="\n").writerow([_cell(row.get(f)) for f in CSV_FIELDS]
                                                  + [_cell(params.get(p)) for p in param_keys])
    return buf.getvalue()


def _cell(v: Any) -> str:
    if v is None:
        return ""
    s = json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)
    # One row is one line: the resume reader (and anyone reading line by line) can trust newlines.
    return s.replace("\r", " ").replace("\n", " ") if ("\n" in s or "\r" in s) else s


class RowFile:
    """One result file opened for appending whole lines. ``rows`` holds what it held (on resume)."""

    def __init__(self, path: str, kind: str, param_keys: Sequence[str], resume: bool) -> None:
        self.path = path
        self.kind = kind  # "jsonl" or "csv"
        self.param_keys = tuple(param_keys)
        self.rows: list[dict[str, Any]] = []
        self.ids: set[str] = set()
        #: bytes of a cut-short last line dropped on opening (0 when the file ended with a whole line)
        self.repaired = 0
        self._regular = True
        text = self._read_existing() if resume else None
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if resume else os.O_TRUNC)
        try:
            self._fd = os.open(path, flags, 0o644)
            st = os.fstat(self._fd)
        except OSError as e:
            raise RowFileError(path, f"cannot open for writing: {_why(e)}") from None
        self._regular = stat.S_ISREG(st.st_mode)
        self._size = st.st_size if self._regular else 0
        if text is not None and self.repaired:
            self._size = len(text.encode("utf-8"))
            self._truncate(self._size)
        if kind == "csv" and not (text or "").strip():
            self.write(csv_header_line(self.param_keys))

    def _read_existing(self) -> str | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise RowFileError(self.path, f"cannot read to resume: {_why(e)}") from None
        if not stat.S_ISREG(st.st_mode):  # a pipe or a device (/dev/full): nothing to resume from
            self._regular = False
            return None
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            raise RowFileError(self.path, f"cannot read to resume: {_why(e)}") from None
        cut = data.rfind(b"\n") + 1
        self.repaired = len(data) - cut
        try:
            text = data[:cut].decode("utf-8")
        except UnicodeDecodeError as e:
            raise RowFileError(self.path, f"cannot resume: not UTF-8 text at byte {e.start}") from None
        self._parse(text)
        return text

    def _parse(self, text: str) -> None:
        lines = text.splitlines()
        if self.kind == "jsonl":
            for n, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                row = _json_object(line)
                if row is None:
                    raise RowFileError(self.path, f"cannot resume: line {n} is not a JSON object; remove it or "
                                                  "start afresh without --resume")
                self._add(row, n)
            return
        if not lines:
            return
        header = next(csv.reader([lines[0]]))
        if header != csv_header(self.param_keys):
            raise RowFileError(self.path, "cannot resume: its columns are not this sweep's (a different matrix?); "
                                          "write to a new file or start afresh without --resume")
        for n, cells in enumerate(csv.reader(lines[1:]), 2):
            if cells:
                self._add(_csv_row(header, cells), n)

    def _add(self, row: Any, n: int) -> None:
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise RowFileError(self.path, f"cannot resume: line {n} has no scenario id (written by an older "
                                          "version?); start afresh without --resume")
        if row["id"] not in self.ids:
            self.ids.add(row["id"])
            self.rows.append(row)

    @classmethod
    def reader(cls, path: str, kind: str, param_keys: Sequence[str]) -> RowFile:
        """The rows and ids a result file holds (none when it does not exist), without opening it for writing."""
        f = cls.__new__(cls)
        f.path, f.kind, f.param_keys = path, kind, tuple(param_keys)
        f.rows, f.ids, f.repaired, f._regular, f._fd = [], set(), 0, True, -1
        f._read_existing()
        return f

    @classmethod
    def read_ids(cls, path: str, kind: str, param_keys: Sequence[str]) -> set[str]:
        return cls.reader(path, kind, param_keys).ids

    def write_row(self, row: Mapping[str, Any]) -> None:
        self.write(json_line(row) if self.kind == "jsonl" else csv_line(row, self.param_keys))

    def write(self, line: str) -> None:
        """Append one whole line; on failure the file is cut back to where it was and RowFileError raised."""
        data = line.encode("utf-8")
        start = self._size
        done = 0
        try:
            while done < len(data):
                done += os.write(self._fd, data[done:])
        except BaseException as e:  # an interrupt between two partial writes must not leave half a line either
            if done:
                self._truncate(start)
            if isinstance(e, OSError):
                raise RowFileError(self.path, f"cannot write: {_why(e)}") from None
            raise
        self._size = start + done

    def _truncate(self, size: int) -> None:
        if self._regular:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


#: The deepest nesting of a row: its params hold matrix values, which the YAML reader caps at MAX_NESTING_DEPTH.
MAX_ROW_DEPTH = MAX_NESTING_DEPTH + 4


def _json_object(line: str) -> dict[str, Any] | None:
    """The JSON object on ``line``, or None when it holds anything else: not JSON, another JSON value, or
    nesting no row has (which would make the parser, or later the table and ``--output json``, recurse past
    Python's limit: a RecursionError instead of the refusal)."""
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(row, dict):
        return None
    if line.count("[") + line.count("{") > MAX_ROW_DEPTH and _too_deep(row):
        return None
    return row


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_ROW_DEPTH:
            return True
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return False


def _csv_row(header: Sequence[str], cells: Sequence[str]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for name, cell in zip(header, cells, strict=False):
        value: Any = cell if cell != "" else None
        if value is not None and name in _CSV_INTS:
            value = _number(value, int)
        elif value is not None and name in _CSV_FLOATS:
            value = _number(value, float)
        if name.startswith("param:"):
            params[name.removeprefix("param:")] = value
        else:
            row[name] = value
    row["params"] = params
    return row


def _number(s: str, kind: type[int] | type[float]) -> Any:
    try:
        return kind(s)
    except ValueError:
        return s


def read_rows(path: str, kind: str | None = None) -> list[dict[str, Any]]:
    """The rows of a result file (JSON Lines, or CSV when ``kind`` is "csv" or the name ends in .csv), without
    a cut-short last line, sorted by index. CSV cells come back as numbers where the column holds numbers."""
    k = kind or ("csv" if path.endswith(".csv") else "jsonl")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a device (/dev/full) or a pipe holds no rows to read
            return []
    except FileNotFoundError:
        return []
    except OSError as e:
        raise RowFileError(path, f"cannot read: {_why(e)}") from None
    keys: tuple[str, ...] = ()
    if k == "csv":  # the parameter columns are the file's own
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                first = fh.readline()
        except OSError as e:
            raise RowFileError(path, f"cannot read: {_why(e)}") from None
        keys = tuple(h.removeprefix("param:") for h in next(csv.reader([first]), []) if h.startswith("param:"))
    return sorted(RowFile.reader(path, k, keys).rows, key=_index)


def _index(row: Mapping[str, Any]) -> int:
    i = row.get("index")
    return i if isinstance(i, int) else -1
