"""Kubernetes name rules (qualified names, label values, DNS subdomains) with apimachinery's messages.

Selectors, the config validators and plugins need them for ``ignoredResources``, topology keys, node
selector requirements and extender resource names.  Each function returns the list of problems (empty when valid).
"""

from __future__ import annotations

import re

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = f"({_QNAME_CHAR}{_QNAME_EXT_CHAR}*)?{_QNAME_CHAR}"
_QUALIFIED_NAME_RE = re.compile(f"^{QUALIFIED_NAME_FMT}$")
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_QUALIFIED_NAME_MAX = 63

_LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MAX = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MAX = 253


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


EMPTY_ERROR = "must be non-empty"


def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(_DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """Problems with a label key / resource name such as ``example.com/MyName``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_ERROR)
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + EMPTY_ERROR)
    elif len(name) > _QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(_QUALIFIED_NAME_MAX))
    if not _QUALIFIED_NAME_RE.match(name):
        errs.append("name part " + regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > _LABEL_VALUE_MAX:
        errs.append(max_len_error(_LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
