"""docs/extenders.md: the Python example runs as written and prints what the page says; its YAML parses, and
the KubeSchedulerConfigurations in it load."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

import yaml

from scheduling_framework.config import load_config
from scheduling_framework.extender import build_extenders

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "extenders.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_serving_example_runs_and_prints_the_documented_output() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("This example serves a plugin", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    out = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S)
    assert code is not None and out is not None
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code.group(1), str(DOC), "exec"), {"__name__": "extenders_example"})
    assert buf.getvalue() == out.group(1)


def test_yaml_blocks_parse_and_configurations_load() -> None:
    configs = 0
    for block in _blocks("yaml"):
        for doc in yaml.safe_load_all(block):
            assert isinstance(doc, dict)
            if doc.get("kind") == "KubeSchedulerConfiguration":
                cfg = load_config(doc)
                if doc.get("extenders"):
                    assert cfg.raw["extenders"]
                configs += 1
            if doc.get("kind") == "ConfigMap":
                load_config(yaml.safe_load(doc["data"]["ksc.yaml"]))
    assert configs >= 2


def test_client_example_configuration_builds_extenders(tmp_path: pathlib.Path) -> None:
    first = next(b for b in _blocks("yaml") if "extenders:" in b)
    doc = yaml.safe_load(first)
    for key in ("caFile", "certFile", "keyFile"):  # the example's file names, made real
        path = tmp_path / key
        doc["extenders"][0]["tlsConfig"][key] = str(path)
    from tests.extender.tls_util import self_signed

    cert, key = self_signed(tmp_path)
    doc["extenders"][0]["tlsConfig"].update(caFile=str(cert), certFile=str(cert), keyFile=str(key))
    doc["extenders"][0]["urlPrefix"] = "https://127.0.0.1:8888/scheduler"
    [ext] = build_extenders(load_config(doc))
    assert ext.is_filter() and ext.is_prioritizer() and ext.is_binder() and ext.supports_preemption()
    assert ext.timeout == 5.0
