"""Hostile and unusual input files (issue #14 items 2, 3, 5, 8, 9; issue #15 item 8).

Each case is a regression test for a way input used to crash, hang, exhaust memory or be silently
misread. The CLI cases run ``main()`` in-process (fast); one subprocess case proves a deep file no longer
kills the interpreter.
"""

from __future__ import annotations

import codecs
import io
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scheduling_framework import cli
from scheduling_framework.config import load_config
from scheduling_framework.errors import (
    ConfigError,
    InputError,
    ManifestValidationError,
    SchedulingFrameworkError,
    brief,
)
from scheduling_framework.ingest.cluster import cluster_from_text, load_cluster
from scheduling_framework.ingest.untrusted import (
    ALIAS_EXPANSION_BUDGET,
    DEFAULT_MAX_INPUT_BYTES,
    MAX_NESTING_DEPTH,
    decode_bytes,
    parse_byte_size,
    read_input,
)

ROOT = Path(__file__).resolve().parents[2]

NODE = "kind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: '2', memory: 4Gi, pods: '10'}}\n"
POD = "kind: Pod\nmetadata: {name: %s, uid: %s}\nspec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"
CLUSTER = NODE + "---\n" + POD % ("a", "u1")


def run(*args: str, stdin: bytes | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = cli.main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def bomb(levels: int, leaf: str) -> str:
    """The classic alias bomb: each level is a list of ten aliases of the previous one."""
    lines = [f"a0: &a0 [{leaf}]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


# --- reading: regular files and stdin only (#14.8) ------------------------------------------------------


def test_fifo_without_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    code, _, err = run("schedule", "--cluster", str(fifo))
    assert code == 2 and time.monotonic() - t0 < 5
    assert f"cannot read cluster file {fifo}: not a regular file (a FIFO)" in err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_devices_are_refused(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    code, _, err = run("schedule", "--cluster", device)
    assert code == 2
    assert f"cannot read cluster file {device}: not a regular file (a character device)" in err


def test_directory_is_refused(tmp_path: Path) -> None:
    code, _, err = run("config", "view", "--config", str(tmp_path))
    assert code == 2 and f"cannot read configuration file {tmp_path}: not a regular file (a directory)" in err


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    code, _, err = run("schedule", "--cluster", str(tmp_path / "nope.yaml"))
    assert code == 2 and f"cannot read cluster file {tmp_path / 'nope.yaml'}: No such file or directory" in err


def test_cluster_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run("schedule", "--cluster", "-", "--output", "json", stdin=CLUSTER.encode(),
                         monkeypatch=monkeypatch)
    assert code == 0, err
    assert '"outcome":"Scheduled"' in out


def test_config_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = b"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    code, out, err = run("config", "view", "--config", "-", "--output", "json", stdin=cfg, monkeypatch=monkeypatch)
    assert code == 0, err and '"default-scheduler"' in out


def test_stdin_for_both_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run("schedule", "--cluster", "-", "--config", "-", stdin=b"", monkeypatch=monkeypatch)
    assert code == 2 and "only one of --cluster and --config can read standard input" in err


def test_stdin_size_cap() -> None:
    with pytest.raises(InputError, match="standard input is more than the limit of 10 bytes"):
        read_input("-", what="cluster file", max_bytes=10, stdin=io.BytesIO(b"x" * 11))


def test_size_cap_file_api_and_cli(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    size = path.stat().st_size
    with pytest.raises(InputError, match=f"is {size} bytes, more than the limit of 100 bytes"):
        load_cluster(path, max_input_bytes=100)
    assert len(load_cluster(path, max_input_bytes=size).pods) == 1
    code, _, err = run("schedule", "--cluster", str(path), "--max-input-bytes", "100")
    assert code == 2 and "more than the limit of 100 bytes" in err and "--max-input-bytes" in err
    code, _, _ = run("schedule", "--cluster", str(path), "--max-input-bytes", "1Ki")
    assert code == 0
    with pytest.raises(InputError, match="cluster input <input> is more than the limit of 10 bytes"):
        cluster_from_text(CLUSTER, max_input_bytes=10)
    with pytest.raises(ConfigError, match="more than the limit of 10 bytes"):
        load_config(path, max_input_bytes=10)


@pytest.mark.parametrize(("text", "want"), [
    ("1048576", 1 << 20), ("512Mi", 512 << 20), ("2G", 2 * 10**9), ("1Ki", 1024), ("3k", 3000)])
def test_parse_byte_size(text: str, want: int) -> None:
    assert parse_byte_size(text) == want


@pytest.mark.parametrize("text", ["", "0", "-1", "1.5Mi", "lots", "Mi"])
def test_parse_byte_size_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_byte_size(text)


def test_bad_max_input_bytes_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run("schedule", "--cluster", "x", "--max-input-bytes", "lots")
    assert code == 2 and "invalid size 'lots'" in capsys.readouterr().err


def test_default_cap_is_generous() -> None:
    assert DEFAULT_MAX_INPUT_BYTES >= 128 * 1024 * 1024


# --- encodings (#15.8) ------------------------------------------------------------------------------


@pytest.mark.parametrize(("bom", "encoding"), [
    pytest.param(b"", "utf-8", id="utf-8"),
    pytest.param(codecs.BOM_UTF8, "utf-8", id="utf-8-bom"),
    pytest.param(codecs.BOM_UTF16_LE, "utf-16-le", id="utf-16-le-bom (PowerShell 5 redirect)"),
    pytest.param(codecs.BOM_UTF16_BE, "utf-16-be", id="utf-16-be-bom"),
    pytest.param(codecs.BOM_UTF32_LE, "utf-32-le", id="utf-32-le-bom"),
    pytest.param(codecs.BOM_UTF32_BE, "utf-32-be", id="utf-32-be-bom"),
])
def test_encodings_with_bom(tmp_path: Path, bom: bytes, encoding: str) -> None:
    path = tmp_path / "c.yaml"
    text = CLUSTER.replace("name: a", "name: caf\u00e9-\u00fc")  # non-ASCII survives the round trip
    path.write_bytes(bom + text.encode(encoding))
    c = load_cluster(path)
    assert [p.name for p in c.pods] == ["caf\u00e9-\u00fc"]
    cfg = tmp_path / "k.yaml"
    cfg.write_bytes(bom + b"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    .decode().encode(encoding))
    assert load_config(cfg).profiles[0].scheduler_name == "default-scheduler"


@pytest.mark.parametrize(("data", "match"), [
    pytest.param("kind: Node\nmetadata: {name: caf\u00e9}\n".encode("latin-1"), "cannot decode cluster file .* as "
                 "UTF-8: invalid byte at offset 31", id="latin-1"),
    pytest.param(b"k\x00i\x00\x00\xdc", "as UTF-16-LE", id="broken-utf-16-without-bom"),
    pytest.param(codecs.BOM_UTF16_LE + b"k\x00\x00\xdc", "as UTF-16-LE", id="broken-utf-16"),
])
def test_undecodable_bytes_exit_2_naming_the_file(tmp_path: Path, data: bytes, match: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(data)
    with pytest.raises(InputError, match=match):
        load_cluster(path)
    code, _, err = run("schedule", "--cluster", str(path))
    assert code == 2 and str(path) in err and "internal error" not in err


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_bom_less_utf16_and_utf32_are_detected_as_the_yaml_spec_says(encoding: str) -> None:
    assert decode_bytes(CLUSTER.encode(encoding)) == CLUSTER


def test_decode_bytes_direct() -> None:
    assert decode_bytes(codecs.BOM_UTF8 + b"a: 1") == "a: 1"
    assert decode_bytes(b"") == ""


# --- empty input (#14.9): a clear error -------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    pytest.param("", id="empty"),
    pytest.param("# nothing here\n   \n# at all\n", id="comments-only"),
    pytest.param("---\n---\n", id="empty-documents"),
    pytest.param("apiVersion: v1\nkind: List\nitems: []\n", id="empty-list"),
])
def test_empty_cluster_is_an_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match="no objects found"):
        load_cluster(path)
    code, _, err = run("schedule", "--cluster", str(path))
    assert code == 2 and f"{path}: no objects found" in err


def test_empty_config_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text("# just a comment\n")
    code, _, err = run("config", "view", "--config", str(path))
    assert code == 2 and "the file is empty" in err


# --- alias bombs (#14.2) ------------------------------------------------------------------------------


def test_alias_bomb_in_a_quantity_is_refused_fast(tmp_path: Path) -> None:
    text = bomb(9, "1") + NODE.replace("cpu: '2'", "cpu: *a9")
    assert len(text) < 1000
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    t0 = time.monotonic()
    code, _, err = run("schedule", "--cluster", str(path))
    assert code == 2 and time.monotonic() - t0 < 5
    assert "aliases expand to more than" in err and len(err) < 500


def test_alias_bomb_in_a_config_value_is_refused_fast(tmp_path: Path) -> None:
    text = bomb(9, "x") + ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                           "parallelism: *a9\n")
    path = tmp_path / "k.yaml"
    path.write_text(text)
    t0 = time.monotonic()
    code, _, err = run("config", "view", "--config", str(path))
    assert code == 2 and time.monotonic() - t0 < 5 and "aliases expand" in err and len(err) < 500


def test_small_alias_use_below_the_budget_still_loads() -> None:
    # shared labels through an anchor, the way people write hand-made cluster files
    text = ("kind: List\nitems:\n- kind: Node\n  metadata: {name: n1, labels: &l {zone: a, tier: web}}\n"
            "- kind: Node\n  metadata: {name: n2, labels: *l}\n")
    c = cluster_from_text(text)
    assert c.nodes[1].labels == {"zone": "a", "tier": "web"}


def test_an_expansion_just_under_the_budget_loads_and_its_errors_stay_short() -> None:
    # 10**4 leaves through aliases (< budget): loads; the bad quantity's message is cut, not 10,000 items long
    assert ALIAS_EXPANSION_BUDGET > 10**4
    text = bomb(4, "1") + NODE.replace("cpu: '2'", "cpu: *a4")
    with pytest.raises(ManifestValidationError) as ei:
        cluster_from_text(text)
    assert "status.capacity.cpu: invalid quantity" in str(ei.value) and len(str(ei.value)) < 400


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(InputError, match=r"alias \*a refers to a node that contains it"):
        cluster_from_text("kind: Node\nmetadata: &a {name: n1, labels: {x: *a}}\n")


def test_brief_never_renders_more_than_its_limit() -> None:
    v: Any = ["x"] * 10
    for _ in range(9):
        v = [v] * 10  # 10**10 leaves, shared
    t0 = time.monotonic()
    s = brief(v)
    assert len(s) <= 120 and s.endswith("...") and time.monotonic() - t0 < 0.1
    assert brief(10**5000).startswith("<an integer of")


# --- deep nesting (#14.3) --------------------------------------------------------------------------------


def test_deep_flow_nesting_in_a_cluster_file_does_not_kill_the_process(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 50_000 + "]" * 50_000 + "\n")
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "schedule", "--cluster", str(path)],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert p.returncode == 2, p.stderr
    assert f"{path}:1:{MAX_NESTING_DEPTH + 1}: nesting deeper than {MAX_NESTING_DEPTH} levels is refused" in p.stderr


@pytest.mark.parametrize("depth", [1000, MAX_NESTING_DEPTH + 1])
def test_deep_config_exits_2(tmp_path: Path, depth: int) -> None:
    nested = "x"
    for _ in range(depth - 1):
        nested = "{a: " + nested + "}"
    path = tmp_path / "k.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    f"profiles: [{{schedulerName: s, pluginConfig: [{{name: x, args: {nested}}}]}}]\n")
    code, _, err = run("config", "view", "--config", str(path))
    assert code == 2 and "nesting deeper than" in err


def test_deep_block_nesting_is_refused() -> None:
    text = "kind: Node\nmetadata:\n  name: n\n  annotations:\n" + "".join(
        "  " * (i + 2) + f"k{i}:\n" for i in range(MAX_NESTING_DEPTH + 5))
    with pytest.raises(InputError, match="nesting deeper than"):
        cluster_from_text(text)


def test_nesting_at_the_limit_is_accepted() -> None:
    # the document mapping is level 1; metadata, annotations-like unknown field down to the limit
    inner = "[" * (MAX_NESTING_DEPTH - 3) + "]" * (MAX_NESTING_DEPTH - 3)
    c = cluster_from_text(f"kind: Node\nmetadata: {{name: n}}\nextra: {{deep: {inner}}}\n")
    assert c.nodes[0].name == "n"


# --- values YAML cannot turn into Python -------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    pytest.param("kind: Node\nmetadata: {name: n, generation: " + "9" * 5000 + "}\n", id="5000-digit-integer"),
    pytest.param("kind: Node\nmetadata: {name: n, creationTimestamp: 2024-13-45}\n", id="impossible-date"),
])
def test_unconstructible_values_are_input_errors(text: str) -> None:
    with pytest.raises(InputError, match="a value cannot be read"):
        cluster_from_text(text)


# --- duplicate uids (#14.5) -------------------------------------------------------------------------------


@pytest.mark.parametrize(("second", "message"), [
    pytest.param(POD % ("b", "u1"), 'document 3: Pod default/b: metadata.uid: Duplicate value: "u1": same uid as '
                 "Pod default/a (document 2)", id="two-pending-pods"),
    pytest.param(POD.replace("spec: {", "spec: {nodeName: n1, ") % ("b", "u1"),
                 'document 3: Pod default/b: metadata.uid: Duplicate value: "u1"', id="pending-and-running"),
    pytest.param(POD % ("a", "u2"), 'document 3: Pod default/a: metadata.name: Duplicate value: "a": same '
                 "namespace/name as the Pod in document 2", id="same-name-other-uid"),
    pytest.param("kind: Node\nmetadata: {name: n2, uid: u9}\n---\nkind: Node\nmetadata: {name: n3, uid: u9}\n",
                 'document 4: Node n3: metadata.uid: Duplicate value: "u9": same uid as Node n2 (document 3)',
                 id="two-nodes-one-uid"),
])
def test_duplicate_identities_are_refused_naming_both(tmp_path: Path, second: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER + "---\n" + second)
    with pytest.raises(ManifestValidationError) as ei:
        load_cluster(path)
    assert message in str(ei.value)
    code, _, err = run("schedule", "--cluster", str(path))
    assert code == 2 and message in err


def test_running_pods_with_one_uid_are_refused() -> None:
    running = POD.replace("spec: {", "spec: {nodeName: n1, ")
    with pytest.raises(ManifestValidationError, match=r'Pod default/b: metadata\.uid: Duplicate value: "r"'):
        cluster_from_text(NODE + "---\n" + running % ("a", "r") + "---\n" + running % ("b", "r"))


def test_every_problem_is_listed() -> None:
    text = (NODE + "---\n" + POD % ("a", "u1") + "---\n" + POD % ("b", "u1")
            + "---\nkind: Pod\nmetadata: {name: c}\n"
            + "spec: {containers: [{name: c, resources: {requests: {cpu: zz}}}]}\n")
    with pytest.raises(ManifestValidationError) as ei:
        cluster_from_text(text)
    assert len(ei.value.errors) == 2
    assert isinstance(ei.value, SchedulingFrameworkError)


@pytest.mark.parametrize("kind", ["[]", "[ResourceSlice]", "{a: 1}", "3", "true"])
def test_kind_of_the_wrong_type_is_a_manifest_error(kind: str) -> None:
    # found by the parser fuzzer: a list as kind reached a dict lookup and raised TypeError
    with pytest.raises(ManifestValidationError, match="document 1: object: kind: Required value"):
        cluster_from_text(f"kind: {kind}\nmetadata: {{name: x}}\n")


@pytest.mark.parametrize("loader", ["C", "pure"])
@pytest.mark.parametrize(("opener", "closer"), [("[", "]"), ("{a: ", "}")])
def test_deep_flow_nesting_names_our_level_whatever_the_parser(monkeypatch: pytest.MonkeyPatch, loader: str,
                                                              opener: str, closer: str) -> None:
    """libyaml 0.2.5 as bundled by PyYAML 6.0.4 refuses flow nesting past 1000 levels while its scanner looks
    ahead, before our walker sees the 129th level; the refusal must still be ours, at the 129th level."""
    import yaml

    from scheduling_framework.ingest import untrusted as _input

    if loader == "pure":
        monkeypatch.setattr(_input, "YamlLoader", yaml.SafeLoader)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML built without libyaml")
    text = "x: 1\n---\n" + opener * 5000 + "1" + closer * 5000 + "\n"
    column = len(opener) * MAX_NESTING_DEPTH + 1
    with pytest.raises(InputError) as e:
        _input.load_yaml_documents(text, "deep.yaml")
    assert str(e.value) == f"deep.yaml:3:{column}: nesting deeper than {MAX_NESTING_DEPTH} levels is refused"

