"""Status codes and the Status a plugin returns (``None`` stands for success, as Go's nil)."""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Code(enum.IntEnum):
    """Upstream framework.Code; ``str(code)`` is the upstream name ("UnschedulableAndUnresolvable")."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self) -> str:
        return _CODE_NAMES[self]

    @classmethod
    def from_name(cls, name: str) -> Code:
        return _CODE_BY_NAME[name]


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}
_CODE_BY_NAME = {v: k for k, v in _CODE_NAMES.items()}


class Status:
    """The result of running a plugin: a code, reasons, the plugin that set it and an optional error.

    Plugins return ``None`` for success. The framework fills in ``plugin`` for the plugin that failed.
    """

    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(self, code: Code = Code.SUCCESS, *reasons: str, plugin: str = "",
                 error: BaseException | None = None) -> None:
        self.code = code
        self.reasons: list[str] = list(reasons)
        self.plugin = plugin
        self.error = error
        if error is not None and not self.reasons:
            self.reasons.append(str(error))

    # constructors ------------------------------------------------------------------------
    @classmethod
    def from_error(cls, err: BaseException, plugin: str = "") -> Status:
        """upstream AsStatus: an ERROR status carrying the exception."""
        return cls(Code.ERROR, plugin=plugin, error=err)

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    # queries -----------------------------------------------------------------------------
    def message(self) -> str:
        try:
            return ", ".join(self.reasons)
        except TypeError:  # a plugin gave reasons that are not str: still one readable line
            return ", ".join(str(r) for r in self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"code": str(self.code)}
        if self.plugin:
            d["plugin"] = self.plugin
        if self.reasons:
            # str() for reasons a plugin gave as other objects: the dict goes into JSON output
            d["reasons"] = [r if type(r) is str else str(r) for r in self.reasons]
        return d

    def __eq__(self, other: object) -> bool:
        if other is None:
            return self.code == Code.SUCCESS
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, tuple(self.reasons)))

    def __repr__(self) -> str:
        extra = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code}, {self.reasons!r}{extra})"

    def __str__(self) -> str:
        return f"{self.code}: {self.message()}" if self.reasons else str(self.code)


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


def merge_reasons(statuses: Iterable[Status]) -> list[str]:
    out: list[str] = []
    for s in statuses:
        out.extend(s.reasons)
    return out
