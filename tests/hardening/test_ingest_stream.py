"""The streamed cluster readers (scheduling_framework.ingest) against the whole-document loader they replace.

Every value the YAML reader builds must be what PyYAML's safe loader builds (YAML 1.1 scalars included),
every item and its ``where`` label what ``cluster._flatten`` gave, and every refusal the same message;
JSON is read as JSON. Inputs once left to the whole-document loader (merge keys, explicit collection tags,
UTF-16) are streamed and read as it reads them; a List with two ``items`` is refused (test_hostile_ingest).
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_framework.errors import InputError
from scheduling_framework.ingest import Counter, RereadWhole, stream_items, text_source
from scheduling_framework.ingest.cluster import _flatten, cluster_from_text, load_cluster
from scheduling_framework.ingest.source import open_source
from scheduling_framework.ingest.untrusted import MAX_NESTING_DEPTH, YamlLoader, load_yaml_documents

# Plain scalars whose YAML 1.1 meaning is not a string, or nearly so.
TRICKY = ["yes", "No", "ON", "off", "y", "n", "true", "False", "~", "null", "Null", "NULL", "0", "00", "0777", "0o17",
          "0x1F", "0b101", "-12", "+7", "1_000", "1e3", "1.5e3", "-1.5", ".5", ".inf", "-.Inf", ".NaN", "12:30",
          "190:20:30", "1:2.5", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10",
          "=", "nginx", "on-demand", "yes-or-no", "1.2.3", "0.0.0.0", "10Gi", "500m", "v1.31", "true_", "Nan",
          "123456789012345678901234567890", "0.", "-", "--x", "'q'", '"d"', "é", "a b", "1,000", "0_1", "09"]


def _old(text: str) -> list[tuple[str, Any]]:
    return list(_flatten(load_yaml_documents(text, "t.yaml")))


def _new(text: str) -> list[tuple[str, Any]]:
    with text_source(text, "t.yaml", "cluster input", 1 << 30) as src:
        return list(stream_items(src, Counter()))


def _same_refusal(new: str, old: str) -> None:
    """The same problem; where PyYAML's constructor (which builds nested collections last) reports a later
    occurrence, the streamed reader names the first one in document order."""
    new = new.removesuffix(": the input ends here: it looks truncated")  # the streamed reader's hint
    if new == old:
        return
    loc = re.compile(r"at t\.yaml:(\d+):(\d+): ")
    mn, mo = loc.search(new), loc.search(old)
    assert mn and mo and loc.sub("", new) == loc.sub("", old), (new, old)
    assert (int(mn[1]), int(mn[2])) <= (int(mo[1]), int(mo[2])), (new, old)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _assert_same_items(old: list[tuple[str, Any]], new: list[tuple[str, Any]]) -> None:
    """The same ``where`` labels, and values equal in value and type (NaN equal to NaN)."""
    assert [w for w, _ in old] == [w for w, _ in new]
    assert all(_same(a, b) for (_, a), (_, b) in zip(old, new, strict=True)), (old, new)


@pytest.mark.parametrize("token", TRICKY)
def test_every_tricky_plain_scalar_is_read_as_pyyaml_reads_it(token: str) -> None:
    text = f"kind: Node\nmetadata:\n  name: n\n  labels:\n    a: {token}\n    {token}: b\nlist: [{token}, x]\n"
    try:
        old = _old(text)
    except InputError as e:
        with pytest.raises(InputError) as got:
            _new(text)
        _same_refusal(str(got.value), str(e))
        return
    new = _new(text)
    _assert_same_items(old, new)


_scalars = st.one_of(st.sampled_from(TRICKY), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(),
                     st.text(max_size=8))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=4)), max_leaves=20)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(st.dictionaries(st.sampled_from(["kind", "metadata", "spec", "x", "items"]), _values,
                                      max_size=4), max_size=4),
       kind=st.sampled_from(["List", "PodList", "Thing", None]), kind_first=st.booleans(),
       flow=st.sampled_from([False, True, None]), docs=st.integers(min_value=1, max_value=3))
def test_random_documents_read_as_the_whole_document_loader_reads_them(items: list[dict[str, Any]], kind: str | None,
                                                                       kind_first: bool, flow: bool | None,
                                                                       docs: int) -> None:
    doc: dict[str, Any] = {"kind": kind} if kind_first else {}
    doc["items"] = items
    if not kind_first:
        doc["kind"] = kind
    text = "---\n".join(yaml.safe_dump(doc, default_flow_style=flow, sort_keys=False) for _ in range(docs))
    old = _old(text)
    try:
        new = _new(text)
    except RereadWhole:  # items before a kind that is not a List's: cluster_from_text builds it whole
        assert str(kind).endswith("List") is False and not kind_first
        return
    _assert_same_items(old, new)
    try:
        as_json = json.dumps(doc, allow_nan=False)
    except ValueError:
        return  # inf / nan are not JSON
    from_json = _new(as_json)
    assert [w for w, _ in from_json] == [w for w, _ in old[: len(from_json)]]


@pytest.mark.parametrize("text", [
    "a: &x [1, 2]\nb: *x\nc: *x\n",
    "kind: List\nitems:\n- &n {kind: Node, metadata: {name: a}}\n- *n\n",
    "base: &b {x: 1}\nkind: Node\nmetadata: {<<: *b, name: n}\n",  # merge key
    "kind: !!map {a: 1}\n",
    "s: !!set {a, b}\n",
    "kind: Node\nmetadata: {name: n}\n---\n---\nkind: Pod\n...\n",
    "# only a comment\n",
    "kind: List\nitems: []\n",
    "items: [{metadata: {name: a}}]\nkind: NodeList\n",
    "kind: NodeList\nitems: [{metadata: {name: a}}]\n",
    "items: [{kind: Node, metadata: {name: a}}]\nkind: Thing\n",
    "? [a, b]\n: c\n",
    "a: *undefined\n",
    "a: &x 1\nb: &x 2\n",
    "a: 2001-13-45\n",
    "a: !!int 12345678901234567890123456789012345678901234567890\n",
    "a: [1, 2\n",
    "a: b: c\n",
])
def test_edge_documents_give_the_same_items_or_the_same_refusal(text: str) -> None:
    try:
        old = _old(text)
    except InputError as e:
        with pytest.raises(InputError) as got:
            _new_or_cluster(text)
        _same_refusal(str(got.value), str(e))
        return
    try:
        new = _new(text)
    except Exception as e:  # RereadWhole: cluster_from_text starts over, building that document whole
        assert type(e).__name__ == "RereadWhole"
        return
    _assert_same_items(old, new)


def _new_or_cluster(text: str) -> Any:
    try:
        return _new(text)
    except InputError:
        raise
    except Exception:
        return cluster_from_text(text, "t.yaml")


def test_merge_keys_load() -> None:
    text = ("kind: Node\nmetadata: {name: n, labels: {zone: b}}\n---\n"
            "kind: List\nitems:\n- kind: Node\n  metadata: &m {name: m}\n"
            "- kind: Pod\n  metadata: {<<: *m, namespace: d}\n"
            "  spec: {containers: [{name: c, image: i}]}\n")
    c = cluster_from_text(text, "m.yaml")
    assert [n.name for n in c.nodes] == ["n", "m"] and [p.key for p in c.pods] == ["d/m"]


# --- JSON --------------------------------------------------------------------------------------------------------


def _list(items: list[Any], kind: str = "List", kind_first: bool = False) -> str:
    doc: dict[str, Any] = {"kind": kind} if kind_first else {"apiVersion": "v1"}
    doc["items"] = items
    if not kind_first:
        doc["kind"] = kind
    return json.dumps(doc, indent=4)


NODE = {"kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
       "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}


@pytest.mark.parametrize("kind_first", [True, False])
def test_json_typed_lists_give_their_items_the_kind(kind_first: bool) -> None:
    bare = {k: v for k, v in NODE.items() if k != "kind"}
    c = cluster_from_text(_list([bare, bare | {"metadata": {"name": "n2"}}], "NodeList", kind_first), "l.json")
    assert [n.name for n in c.nodes] == ["n1", "n2"]


def test_json_dump_reads_as_yaml_would() -> None:
    text = _list([NODE, POD])
    assert [(w, d) for w, d in _new(text)] == _old(text)
    c = cluster_from_text(text, "d.json")
    assert [n.name for n in c.nodes] == ["n1"] and [p.key for p in c.pods] == ["d/p"]


def test_yaml_flow_style_that_starts_like_json_is_read_as_yaml() -> None:
    c = cluster_from_text('{"kind": Node, metadata: {name: n1}}\n', "f.yaml")
    assert [n.name for n in c.nodes] == ["n1"]


def test_invalid_json_after_the_first_item_names_line_and_column() -> None:
    text = _list([NODE, POD])
    broken = text.replace('"name": "p"', '"name": "p",,', 1)
    with pytest.raises(InputError) as e:
        cluster_from_text(broken, "b.json")
    line = broken[: broken.index(",,")].count("\n") + 1
    assert str(e.value).startswith(f"invalid JSON at b.json:{line}:")


def test_json_nan_is_refused() -> None:
    text = _list([NODE, {**POD, "spec": {"x": float("nan")}}])
    assert "NaN" in text
    with pytest.raises(InputError, match="NaN is not a JSON value"):
        cluster_from_text(text, "n.json")


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH - 2, MAX_NESTING_DEPTH + 1, 5000, 100_000])
def test_json_nesting_is_refused_at_our_level_with_line_and_column(depth: int) -> None:
    deep = "[" * depth + "]" * depth
    text = '{"apiVersion": "v1", "items": [\n' + json.dumps(NODE) + ',\n{"kind": "Pod", "x": ' + deep + "}]}"
    total = depth + 3  # the top-level object, items, the pod
    if total <= MAX_NESTING_DEPTH:
        with pytest.raises(InputError, match=r"Required value|metadata"):
            cluster_from_text(text, "deep.json")
        return
    with pytest.raises(InputError) as e:
        cluster_from_text(text, "deep.json")
    column = len('{"kind": "Pod", "x": ') + (MAX_NESTING_DEPTH - 3) + 1
    assert str(e.value) == f"deep.json:3:{column}: nesting deeper than {MAX_NESTING_DEPTH} levels is refused"


def test_json_items_larger_than_a_read_chunk_and_split_utf8(tmp_path: Path) -> None:
    big = {**NODE, "metadata": {"name": "n1", "annotations": {"a": "é" * 3_000_000}}}
    path = tmp_path / "big.json"
    path.write_text(_list([big, POD]), encoding="utf-8")
    c = load_cluster(path)
    assert c.nodes[0].annotations["a"] == "é" * 3_000_000 and [p.key for p in c.pods] == ["d/p"]


# --- sources -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_gzip_input_and_stdin(tmp_path: Path, fmt: str) -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [NODE, POD]}
    text = json.dumps(doc) if fmt == "json" else yaml.safe_dump(doc)
    path = tmp_path / f"c.{fmt}.gz"
    path.write_bytes(gzip.compress(text.encode()))
    c = load_cluster(path)
    assert [n.name for n in c.nodes] == ["n1"] and [p.key for p in c.pods] == ["d/p"]
    with open_source("-", what="cluster file", max_bytes=1 << 20, stdin=io.BytesIO(gzip.compress(text.encode()))) \
            as src:
        from scheduling_framework.ingest.cluster import cluster_from_source

        c2 = cluster_from_source(src)
    assert [p.key for p in c2.pods] == ["d/p"]


def test_gzip_is_capped_after_decompression(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml.gz"
    path.write_bytes(gzip.compress(b"# " + b"x" * 5_000_000 + b"\n"))
    assert path.stat().st_size < 100_000
    with pytest.raises(InputError, match="more than the limit of 1000000 bytes"):
        load_cluster(path, max_input_bytes=1_000_000)


def test_corrupt_gzip_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"kind": "List", "items": [NODE]}).encode())[:-12])
    with pytest.raises(InputError, match=r"bad\.json\.gz"):
        load_cluster(path)


def test_a_huge_limit_allocates_nothing_up_front(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(NODE))
    from scheduling_framework.ingest.untrusted import read_input

    assert "n1" in read_input(path, max_bytes=30 << 30)
    assert [n.name for n in load_cluster(path, max_input_bytes=30 << 30).nodes] == ["n1"]


def test_packed_manifests_keep_everything_but_managed_fields(tmp_path: Path) -> None:
    pod = {**POD, "metadata": {**POD["metadata"], "managedFields": [{"manager": "kubectl"}],
                               "annotations": {"a": "b"}}}
    path = tmp_path / "c.json"
    path.write_text(_list([NODE, pod]))
    c = load_cluster(path)
    expected = json.loads(json.dumps(pod))
    del expected["metadata"]["managedFields"]
    assert c.pods[0].to_dict() == expected
    assert c.pods[0].raw_manifest()["metadata"]["annotations"] == {"a": "b"}
    assert c.nodes[0].to_dict() == NODE
    assert dict(c.pods[0].with_node_name("n1").raw_manifest())["spec"]["nodeName"] == "n1"


def test_word_fast_path_covers_exactly_the_boolean_and_null_words() -> None:
    """Plain scalars that start with a letter are strings unless they are one of the listed words: checked
    against PyYAML's resolver for every word those letters start, in every case variant."""
    from yaml.nodes import ScalarNode

    from scheduling_framework.ingest import yamlstream

    assert set("yYnNtTfFoO") == yamlstream._WORDS_ONLY
    resolver = yaml.resolver.Resolver()
    words = ["yes", "no", "true", "false", "on", "off", "null", "y", "n", "nul", "onn", "yess", "nulls", "o"]
    for w in words:
        for v in (w, w.upper(), w.capitalize(), w + " x"):
            tag = resolver.resolve(ScalarNode, v, (True, False))
            ev = yaml.ScalarEvent(None, None, (True, False), v)
            expected = yaml.safe_load(f"k: {v}")["k"]
            assert yamlstream.scalar_value(ev) == expected and type(yamlstream.scalar_value(ev)) is type(expected), (
                v, tag)


def test_loader_choice_is_visible() -> None:
    assert YamlLoader in (getattr(yaml, "CSafeLoader", None), yaml.SafeLoader)


def test_spooled_stdin_is_bounded_by_free_space(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_framework.ingest import source

    class Usage:
        free = source.SPOOL_MARGIN + 10_000

    monkeypatch.setattr(source.shutil, "disk_usage", lambda _: Usage())
    with pytest.raises(InputError, match="free space left to hold it"):
        open_source("-", what="cluster file", max_bytes=1 << 30, stdin=io.BytesIO(b"# x\n" * 5000))


def test_cli_reads_gzip_and_json_from_stdin(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.fixture_runner import ROOT

    doc = gzip.compress(json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE, POD]}).encode())
    p = subprocess.run([sys.executable, "-m", "scheduling_framework", "schedule", "--cluster", "-", "--output",
                        "json", "--seed", "1"], input=doc, capture_output=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [(r["pod"], r["node"]) for r in out["pods"]] == [("d/p", "n1")]


@pytest.mark.parametrize("text", ['{"kind": "List", "items":', '{"kind": "List", "items": [', '{"a"', '{"a":',
                                  '{"kind": "List", "items": [{"kind": "Node"}', '{"items": [1, 2], "kind": "List"} x',
                                  '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}},]}'])
def test_truncated_json_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError):
        cluster_from_text(text, "t.json")


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64, 1000])
def test_json_reader_reads_the_same_whatever_the_chunk_boundaries(monkeypatch: pytest.MonkeyPatch,
                                                                 chunk: int) -> None:
    """Every way the text can be cut between two reads (inside a literal, a number, a key, a string, a
    multi-byte character, between items) gives the items json.loads gives."""
    from benchmarks.dump import items
    from scheduling_framework.ingest import jsonstream, source

    dump = {"apiVersion": "v1", "items": [*items(2)][:8], "kind": "List", "metadata": {"resourceVersion": ""}}
    dump["items"][1]["metadata"]["annotations"] = {"note": "é€😀 \\ \" null true false 12.5e-3", "n": "null"}
    dump["items"][2]["spec"]["extra"] = [None, True, False, -0.0, 12345678901234567890, 1.5e300, "", {}, []]
    text = json.dumps(dump, indent=4, ensure_ascii=False)
    monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    monkeypatch.setattr(source, "CHUNK", chunk)
    with text_source(text, "c.json", "cluster input", 1 << 30) as src:
        got = [d for _, d in stream_items(src, Counter())]
    assert got == json.loads(text)["items"]
