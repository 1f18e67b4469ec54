"""Reading cluster dumps whatever the input: memory and time follow the objects (issue #36 items 4, 5, 6, 13).

- Item 4: no input takes a path that buffers the whole file. NUL bytes are refused after a few bytes, UTF-16/32
  is transcoded as it is read, YAML merge keys and explicit tags are read by the streamed reader.
- Item 5: the JSON reader is linear in the size of one item (it re-decoded the unfinished item after every read).
- Item 6: duplicate keys are a warning naming the object and the key path, and an error under ``strict``.
- Item 13: a truncated dump or a file that holds no Kubernetes objects is named as such, with file and line.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduling_framework import cli
from scheduling_framework.errors import InputError, ManifestValidationError
from scheduling_framework.ingest import Counter, stream_items, text_source
from scheduling_framework.ingest.cluster import cluster_from_text, load_cluster
from scheduling_framework.ingest.source import Source
from tests.hardening.test_ingest_stream import _new, _old

ROOT = Path(__file__).resolve().parents[2]

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
SPEC = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"}, "spec": SPEC}
CLUSTER_YAML = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, POD]}, sort_keys=False)


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture()
def no_whole_document_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything reads the whole input into memory (the path items 4 removes)."""
    from scheduling_framework.ingest import cluster

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole-document path was taken")

    monkeypatch.setattr(Source, "read_text", refuse, raising=False)
    monkeypatch.setattr(cluster, "load_yaml_documents", refuse)


def _peak_rss_mib(code: str) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter; its peak RSS in MiB and what it printed.

    The peak is ``VmHWM``, the high-water mark of the interpreter's own address space. ``ru_maxrss`` is not: Linux
    carries it over from the forked copy of the parent, so under a long pytest run it reports pytest's size."""
    prog = code + ("\nprint('RSS', next(int(line.split()[1]) for line in open('/proc/self/status')"
                   " if line.startswith('VmHWM:')) / 1024)\n")
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    rss = float(p.stdout.rsplit("RSS ", 1)[1])
    return rss, p.stdout


# --- item 4: every input streams or is refused early ----------------------------------------------------------


def _gzip_of(head: bytes, filler: bytes, total: int) -> bytes:
    """``head`` then ``filler`` repeated to ``total`` bytes, gzip-compressed as concatenated members (cheap to
    make: one 16 MiB member repeated)."""
    block = filler * ((16 << 20) // len(filler))
    member = gzip.compress(block, compresslevel=9)
    return gzip.compress(head) + member * (total // len(block))


@pytest.mark.parametrize(("head", "filler"), [
    pytest.param(b"", b"\0", id="only-NUL-bytes"),
    pytest.param(b"\0\0\0\0kind: Node\n", b"\0", id="NUL-prefixed-text"),
    pytest.param(b'{"kind": "List", "items": [', b"\0", id="json-then-NUL"),
    pytest.param(b"kind: List\nitems:\n- ", b"\0", id="yaml-then-NUL"),
    pytest.param(codecs.BOM_UTF16_LE + "kind: List\nitems: [".encode("utf-16-le"), b"\0", id="utf-16-then-NUL"),
])
def test_a_gzip_bomb_of_nul_bytes_is_refused_at_once_naming_the_file(tmp_path: Path, head: bytes,
                                                                    filler: bytes) -> None:
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(_gzip_of(head, filler, 3 << 30))  # 3 GiB once decompressed, under the 64 GiB default cap
    assert path.stat().st_size < 4 << 20
    t0 = time.monotonic()
    with pytest.raises(InputError) as e:
        load_cluster(path)
    assert time.monotonic() - t0 < 10
    assert str(path) in str(e.value)
    assert "NUL" in str(e.value) or "#x0000" in str(e.value)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_the_cli_refuses_a_nul_bomb_with_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(_gzip_of(b"", b"\0", 3 << 30))
    rss, out = _peak_rss_mib(
        "import io\nfrom scheduling_framework import cli\nerr = io.StringIO()\n"
        f"code = cli.main(['schedule', '--cluster', {str(path)!r}], io.StringIO(), err)\n"
        "print('CODE', code); print('ERR', err.getvalue())")
    assert "CODE 2" in out and str(path) in out and "MemoryError" not in out and "internal error" not in out
    assert rss < 400, rss


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("bom", [True, False])
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_utf16_and_utf32_dumps_are_streamed(tmp_path: Path, no_whole_document_path: None, encoding: str, bom: bool,
                                            fmt: str) -> None:
    pod = {**POD, "metadata": {"name": "café-ü", "namespace": "d"}}
    doc = {"apiVersion": "v1", "kind": "List", "items": [NODE, pod]}
    text = json.dumps(doc, ensure_ascii=False) if fmt == "json" else yaml.safe_dump(doc, allow_unicode=True)
    marks = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE, "utf-32-le": codecs.BOM_UTF32_LE,
             "utf-32-be": codecs.BOM_UTF32_BE}
    path = tmp_path / f"c.{fmt}"
    path.write_bytes((marks[encoding] if bom else b"") + text.encode(encoding))
    c = load_cluster(path)
    assert [n.name for n in c.nodes] == ["n1"] and [p.key for p in c.pods] == ["d/café-ü"]


@pytest.mark.parametrize(("data", "offset"), [
    pytest.param(codecs.BOM_UTF16_LE + "kind: Node\n".encode("utf-16-le") + b"\x00\xdc" + b"a\0" * 10, 24,
                 id="lone-low-surrogate"),
    pytest.param("kind: Node\n".encode("utf-16-be") + b"\xd8\x00\x00a", 22, id="high-surrogate-without-low"),
    pytest.param(codecs.BOM_UTF32_LE + "k".encode("utf-32-le") + b"\x00\x00\x11\x00", 8, id="utf-32-out-of-range"),
])
def test_broken_utf16_names_the_file_offset(tmp_path: Path, data: bytes, offset: int) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(data)
    with pytest.raises(InputError, match=rf"cannot decode cluster file .*c\.yaml as UTF-(16|32)-[LB]E: invalid byte "
                                         rf"at offset {offset} "):
        load_cluster(path)


def test_a_utf16_dump_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """96 MiB of UTF-16 (a small List, then blank lines): the transcoding reader holds a chunk, not the file."""
    path = tmp_path / "c.yaml.gz"
    path.write_bytes(_gzip_of(codecs.BOM_UTF16_LE + CLUSTER_YAML.encode("utf-16-le"), "\n".encode("utf-16-le"),
                              96 << 20))
    rss, out = _peak_rss_mib("from scheduling_framework.ingest.cluster import load_cluster\n"
                             f"c = load_cluster({str(path)!r})\nprint('PODS', [p.key for p in c.pods])")
    baseline, _ = _peak_rss_mib("from scheduling_framework.ingest.cluster import load_cluster\n"
                                f"load_cluster({str(ROOT / 'examples' / 'tiny-cluster.yaml')!r})")
    assert "PODS ['d/p']" in out
    assert rss - baseline < 60, (rss, baseline)


MERGE_CASES = [
    "base: &b {x: 1, y: 2}\nkind: Node\nmetadata: {<<: *b, name: n}\n",
    "a: &a {x: 1}\nb: &b {x: 2, y: 2}\nc: {<<: [*a, *b], z: 3}\n",
    "a: &a {x: 1}\nc: {z: 3, <<: *a, x: 9}\n",
    "a: &a {x: 1}\nb: &b {y: 1}\nc: {<<: *a, <<: *b}\n",
    "a: &a {x: 1, <<: {w: 0}}\nc: {<<: *a}\n",
    "c: {<<: {x: 1}, <<: [{y: 2}, {z: 3}]}\n",
    "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b}\nd: *b\n",
    "c: {<<: 3}\n",
    "c: {<<: [{x: 1}, 2]}\n",
    "c: [<<]\n",
    "c: <<\n",
    "c: {=: 1}\n",
    "s: !!set {a, b}\n",
    "o: !!omap [{a: 1}, {b: 2}]\n",
    "p: !!pairs [{a: 1}, {a: 2}]\n",
    "o: !!omap [{a: 1, b: 2}]\n",
    "o: !!omap [3]\n",
    "o: !!omap {a: 1}\n",
    "m: !!map [1, 2]\n",
    "m: !!seq {a: 1}\n",
    "m: !!map {a: 1}\nn: !!seq [1]\nk: !!str 3\n",
    "x: !custom {a: 1}\n",
    "x: !!python/object:os.system {a: 1}\n",
    "kind: !!map {a: 1}\n",
    "kind: List\nitems: !!seq [{kind: Node, metadata: {name: a}}]\n",
    "kind: List\nitems:\n- &n {kind: Node, metadata: {name: a}}\n- {<<: *n, metadata: {name: b}}\n",
]


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("a: &a {app: 1}\nb: &b {app: 2, tier: b}\nc: {<<: [*a, *b]}\n", {"app": 1, "tier": "b"},
                 id="earlier-mapping-wins"),
    pytest.param("a: &a {app: 1}\nc: {app: 0, <<: [*a, {app: 2}]}\n", {"app": 0}, id="explicit-key-wins"),
])
def test_merge_keys_follow_the_yaml_spec_as_kubectl_reads_them(text: str, expected: dict[str, Any]) -> None:
    """Keys of mappings earlier in a ``<<`` sequence override later ones (the merge key spec, and go-yaml, which
    kubectl reads YAML with); PyYAML 6.0.4 makes the later one win for keys longer than a character."""
    assert _new(text)[0][1]["c"] == expected


@pytest.mark.parametrize("text", MERGE_CASES)
def test_merge_keys_and_explicit_tags_stream_as_pyyaml_reads_them(text: str) -> None:
    try:
        old = _old(text)
    except InputError as e:
        with pytest.raises(InputError) as got:
            _new(text)
        assert str(got.value) == str(e)
        return
    new = _new(text)
    assert new == old
    assert [[type(v) for v in d.values()] for _, d in new if isinstance(d, dict)] == \
           [[type(v) for v in d.values()] for _, d in old if isinstance(d, dict)]
    assert [list(d) for _, d in new if isinstance(d, dict)] == [list(d) for _, d in old if isinstance(d, dict)]


def test_a_dump_with_merge_keys_loads_without_the_whole_document_path(no_whole_document_path: None) -> None:
    text = ("kind: Node\nmetadata: {name: n, labels: {zone: b}}\n---\n"
            "kind: List\nitems:\n- kind: Node\n  metadata: &m {name: m}\n"
            "- !!map\n  kind: Pod\n  metadata: {<<: *m, namespace: d}\n"
            "  spec: {containers: [{name: c, image: i}]}\n")
    c = cluster_from_text(text, "m.yaml")
    assert [n.name for n in c.nodes] == ["n", "m"] and [p.key for p in c.pods] == ["d/m"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_an_object_with_items_that_is_not_a_list_is_read_whole_without_the_text_path(
        no_whole_document_path: None, fmt: str) -> None:
    doc = {"items": [NODE], "kind": "Thing", "metadata": {"name": "t"}}
    text = yaml.safe_dump(doc, sort_keys=False) if fmt == "yaml" else json.dumps(doc)
    c = cluster_from_text(text + ("---\n" + yaml.safe_dump(NODE) if fmt == "yaml" else ""), f"t.{fmt}")
    assert [o.kind for o in c.objects] == ["Thing"] and c.objects[0].raw["items"] == [NODE]


# --- item 5: one big item costs time linear in its size --------------------------------------------------------


def _big_node(annotations: int) -> dict[str, Any]:
    return {**NODE, "metadata": {"name": "big", "annotations": {f"example.com/key-{i}": f"value {i} \\ \" é"
                                                                for i in range(annotations)}}}


def _read_seconds(text: str) -> float:
    t0 = time.process_time()
    with text_source(text, "big.json", "cluster input", 1 << 34) as src:
        got = list(stream_items(src, Counter()))
    elapsed = time.process_time() - t0
    assert len(got) == 1 and len(got[0][1]["metadata"]["annotations"]) > 1000
    return elapsed


def test_a_big_json_item_reads_in_time_linear_in_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 12 MB Node read in 64 KiB chunks: re-decoding the unfinished item after every read made this ~40 times
    json.loads; linear reading stays within a few times it, whatever the chunk size."""
    from scheduling_framework.ingest import jsonstream, source

    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [_big_node(300_000)]}, indent=4)
    assert len(text) > 12_000_000
    t0 = time.process_time()
    json.loads(text)
    reference = time.process_time() - t0
    monkeypatch.setattr(jsonstream, "CHUNK", 1 << 14)
    monkeypatch.setattr(source, "CHUNK", 1 << 14)
    ours = min(_read_seconds(text) for _ in range(2))
    assert ours < 6 * reference + 0.2, (ours, reference)


def test_a_big_json_string_reads_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_framework.ingest import jsonstream, source

    big = {**NODE, "metadata": {"name": "big", "annotations": {"a": "x\\\"y" * 3_000_000, "b": "1"}}}
    text = json.dumps({"kind": "List", "apiVersion": "v1", "items": [big]})
    t0 = time.process_time()
    json.loads(text)
    reference = time.process_time() - t0
    monkeypatch.setattr(jsonstream, "CHUNK", 1 << 14)
    monkeypatch.setattr(source, "CHUNK", 1 << 14)
    t0 = time.process_time()
    with text_source(text, "big.json", "cluster input", 1 << 34) as src:
        got = list(stream_items(src, Counter()))
    ours = time.process_time() - t0
    assert got[0][1]["metadata"]["annotations"]["a"] == "x\\\"y" * 3_000_000
    assert ours < 6 * reference + 0.2, (ours, reference)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_an_object_over_the_size_limit_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    from scheduling_framework.ingest import jsonstream

    monkeypatch.setattr(jsonstream, "MAX_OBJECT_CHARS", 1 << 20)
    items = [NODE, _big_node(40_000), POD]
    if fmt == "json":
        text = '{"apiVersion": "v1", "kind": "List", "items": [\n' + ",\n".join(map(json.dumps, items)) + "]}"
        start = "big.json:3:1: "
    else:
        text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})
        line = text[: text.index("- apiVersion: v1", text.index("- apiVersion: v1") + 1)].count("\n") + 1
        start = f"big.yaml:{line}: "
    with pytest.raises(InputError) as e:
        cluster_from_text(text, f"big.{fmt}")
    assert str(e.value).startswith(start) and "items[1]" in str(e.value) and "larger than 1 MiB" in str(e.value), \
        str(e.value)


_BIG = "x" * (600 << 10)  # each value under the 1 MiB limit of the tests below, four of them over it
_HUGE = "x" * (32 << 20)


@pytest.mark.parametrize(("name", "text", "start"), [
    # libyaml holds the scalar it scans whole until its event: one huge scalar was built (gigabytes from a small
    # .gz, 7 GB RSS for 3 GiB) and a few big ones were all kept, as the marks were only checked every 4096 events
    pytest.param("c.yaml", "kind: Node\napiVersion: v1\nmetadata: {name: n}\na: " + _HUGE + "\n",
                 "c.yaml:1: document 1 ", id="yaml-one-scalar"),
    pytest.param("c.yaml", "kind: Node\napiVersion: v1\nmetadata: {name: n}\n"
                 + "".join(f"f{i}: {_BIG}\n" for i in range(4)), "c.yaml:1: document 1 ", id="yaml-scalars"),
    pytest.param("c.yaml", "kind: List\napiVersion: v1\nitems:\n- kind: Node\n  metadata: {name: a}\n"
                 "- kind: Node\n  metadata:\n    name: b\n    annotations:\n      a: |\n"
                 + "        xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n" * 600_000, "c.yaml:6: document 1 items[1] ",
                 id="yaml-block-scalar-in-an-item"),
    pytest.param("c.yaml", "a: &" + _HUGE + " 1\n", "c.yaml:1: document 1 ", id="yaml-anchor"),
    # a document that is not a List was checked one top-level field at a time
    pytest.param("c.json", json.dumps({**NODE, **{f"f{i}": _BIG for i in range(4)}}), "c.json:1: document 1 ",
                 id="json-fields"),
    pytest.param("c.json", json.dumps({"kind": "List", "apiVersion": "v1", "items": [NODE],
                                       **{f"f{i}": _BIG for i in range(4)}}), "c.json:1: document 1 ",
                 id="json-list-fields"),
    pytest.param("c.json", json.dumps({**NODE, "a": _HUGE}), "c.json:1:", id="json-one-scalar"),
])
def test_an_object_of_a_few_big_values_is_refused_before_it_is_built(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, text: str, start: str) -> None:
    import tracemalloc

    from scheduling_framework.ingest import jsonstream

    monkeypatch.setattr(jsonstream, "MAX_OBJECT_CHARS", 1 << 20)
    path = tmp_path / name
    path.write_text(text)
    del text
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as e:
            load_cluster(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(e.value).replace(str(tmp_path) + "/", "")
    assert message.startswith(start) and "document 1 " in message and "is larger than 1 MiB" in message, message
    assert peak < 12 << 20, peak  # the files are 2.4 MiB (four big values), 23 MiB or 32 MiB


# --- item 6: duplicate keys --------------------------------------------------------------------------------------


def _dup_pod_json(ws: str = "") -> str:
    """A Pod with two ``spec`` keys: the first binds it to n1, the second does not."""
    bound = json.dumps({**SPEC, "nodeName": "n1"})
    return (f'{{"apiVersion"{ws}: "v1", "kind"{ws}: "Pod", "metadata"{ws}: {{"name"{ws}: "p", "namespace"{ws}: "d"}}, '
            f'"spec"{ws}: {bound}, "spec": {json.dumps(SPEC)}}}')


def _dup_pod_yaml() -> str:
    return ("kind: Pod\napiVersion: v1\nmetadata: {name: p, namespace: d}\nspec:\n  nodeName: n1\n"
            "  containers: [{name: c, image: i}]\nspec:\n  containers: [{name: c, image: i}]\n")


@pytest.mark.parametrize("text", [
    pytest.param('{"apiVersion": "v1", "kind": "List", "items": [' + json.dumps(NODE) + ", " + _dup_pod_json() + "]}",
                 id="json"),
    pytest.param('{"apiVersion": "v1", "kind": "List", "items": [' + json.dumps(NODE) + ", " + _dup_pod_json(" ")
                 + "]}", id="json-with-space-before-colons"),
    pytest.param(yaml.safe_dump(NODE) + "---\n" + _dup_pod_yaml(), id="yaml"),
])
def test_a_duplicate_key_is_a_warning_naming_object_and_key_and_an_error_under_strict(text: str) -> None:
    c = cluster_from_text(text, "dup")
    assert [p.key for p in c.pods] == ["d/p"] and c.pods[0].spec.node_name == ""  # the last one is read
    assert [w for w in c.warnings if "duplicate" in w] == ['duplicate field "spec" (the last one is read): Pod d/p']
    with pytest.raises(ManifestValidationError) as e:
        cluster_from_text(text, "dup", strict=True)
    assert e.value.errors == [f'document {2 if "---" in text else 1}{"" if "---" in text else " items[1]"}: '
                              'Pod d/p: duplicate field "spec"']


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_duplicate_keys_are_named_by_their_path(fmt: str) -> None:
    pod = ('{"kind": "Pod", "metadata": {"name": "p", "labels": {"app": "a", "app": "b"}}, "spec": {"containers": '
           '[{"name": "c", "image": "i", "image": "j"}], "tolerations": [], "tolerations": []}}')
    wrapper = '{"kind": "List", "apiVersion": "v1", "kind": "List", "items": [' + pod + "]}"
    text = wrapper if fmt == "json" else wrapper.replace('"', "")  # YAML flow style
    with pytest.raises(ManifestValidationError) as e:
        cluster_from_text(text, "dup", strict=True)
    assert sorted(e.value.errors) == sorted([
        'document 1: List: duplicate field "kind"',
        'document 1 items[0]: Pod default/p: duplicate field "metadata.labels.app"',
        'document 1 items[0]: Pod default/p: duplicate field "spec.containers[0].image"',
        'document 1 items[0]: Pod default/p: duplicate field "spec.tolerations"',
    ])


@pytest.mark.parametrize("text", [
    pytest.param("kind: Node\nmetadata:\n  name: n\n  annotations: &a {x: '1'}\n  labels: {<<: *a, x: '2'}\n",
                 id="merge-override"),
    pytest.param("kind: Node\nmetadata: {name: n, labels: {<<: {x: 1}, <<: {y: 1}}}\n", id="two-merge-keys"),
    pytest.param('{"kind": "Node", "metadata": {"name": "n", "annotations": {"a": "{\\"b\\": \\"c\\", \\"b\\": 1}",'
                 ' "k\\\\": "v", "q": "\\\\\\":"}}}', id="json-escaped-quotes-in-strings"),
    pytest.param('{"kind" :"Node" , "metadata"\n:\n{"name"\t: "n"}}', id="json-whitespace-before-colons"),
])
def test_what_is_not_a_duplicate_key_gives_no_warning(text: str) -> None:
    c = cluster_from_text(text, "t", strict=True)
    assert [n.name for n in c.nodes] == ["n"]
    assert not [w for w in c.warnings if "duplicate" in w]


def test_a_dump_as_kubectl_writes_it_has_no_duplicate_warning(tmp_path: Path) -> None:
    from benchmarks.dump import write

    path = tmp_path / "c.json"
    with path.open("w") as f:
        write(f, 20, "json", managed_fields=True)
    c = load_cluster(path, strict=True)
    assert len(c.nodes) == 20
    assert not [w for w in c.warnings if "duplicate" in w]


def test_the_cli_warns_of_a_duplicate_key_and_refuses_it_under_strict(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [' + json.dumps(NODE) + ", " + _dup_pod_json()
                    + "]}")
    code, out, err = run("schedule", "--cluster", str(path), "--seed", "1")
    assert code == 0 and 'warning: duplicate field "spec" (the last one is read): Pod d/p' in err
    assert "d/p" in out and "Scheduled" in out
    code, _, err = run("schedule", "--cluster", str(path), "--strict")
    assert code == 2 and 'document 1 items[1]: Pod d/p: duplicate field "spec"' in err


def test_a_list_with_two_items_arrays_is_refused(tmp_path: Path) -> None:
    for text in ('{"kind": "List", "items": [' + json.dumps(NODE) + '],\n"items": []}',
                 "kind: List\nitems:\n- " + json.dumps(NODE) + "\nitems: []\n"):
        with pytest.raises(InputError, match=r"t: document 1: a second items list, at line [24]: refused"):
            cluster_from_text(text, "t")


# --- item 13: truncated dumps and files that are not Kubernetes objects --------------------------------------------


def _kubectl_dump(fmt: str, nodes: int = 3) -> str:
    from benchmarks.dump import write

    out = io.StringIO()
    write(out, nodes, fmt)
    return out.getvalue()


@pytest.mark.parametrize("fraction", [0.31, 0.5, 0.77, 0.93])
def test_a_truncated_yaml_dump_names_file_item_and_line_and_says_truncated(tmp_path: Path, fraction: float) -> None:
    text = _kubectl_dump("yaml")
    assert text.rstrip().endswith('resourceVersion: ""')
    path = tmp_path / "cut.yaml"
    path.write_text(text[: int(len(text) * fraction)])
    with pytest.raises((InputError, ManifestValidationError)) as e:
        load_cluster(path)
    message = str(e.value)
    assert str(path) in message and "looks truncated" in message and "items[" in message, message
    assert "line " in message or f"{path}:" in message
    code, _, err = run("schedule", "--cluster", str(path))
    assert code == 2 and "looks truncated" in err and str(path) in err


@pytest.mark.parametrize("fraction", [0.31, 0.5, 0.77, 0.999])
def test_a_truncated_json_dump_names_file_item_and_line_and_says_truncated(tmp_path: Path, fraction: float) -> None:
    text = _kubectl_dump("json")
    path = tmp_path / "cut.json"
    path.write_text(text[: int(len(text) * fraction)])
    with pytest.raises(InputError) as e:
        load_cluster(path)
    message = str(e.value)
    assert f"{path}:" in message and "looks truncated" in message, message
    if fraction < 0.99:
        assert "items[" in message


def test_a_truncated_list_whose_kind_comes_first_says_the_input_looks_truncated(tmp_path: Path) -> None:
    text = "kind: List\napiVersion: v1\nitems:\n" + "".join(
        f"- kind: Node\n  apiVersion: v1\n  metadata:\n    name: n{i}\n  status:\n    capacity: {{cpu: '4'}}\n"
        for i in range(5))
    cut = text[: text.index("name: n4") + 7]  # the last item ends inside its name: "n" is read, no newline
    path = tmp_path / "cut.yaml"
    path.write_text(cut.replace("  metadata:\n    name: n", "  metadata:\n    labels: {}\n    name: n", 1)[:-1]
                    + "\n  status: {capacity: {cpu: zz}")
    with pytest.raises((InputError, ManifestValidationError)) as e:
        load_cluster(path)
    message = str(e.value)
    assert str(path) in message and "looks truncated" in message and "items[4]" in message, message


def test_a_complete_list_without_kind_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("apiVersion: v1\nitems:\n- " + json.dumps(NODE) + "\nmetadata: {resourceVersion: ''}\n")
    with pytest.raises(InputError) as e:
        load_cluster(path)
    assert str(path) in str(e.value) and "no kind" in str(e.value) and "truncated" not in str(e.value)


@pytest.mark.parametrize("text", [
    pytest.param('version: "3.9"\nservices:\n  web:\n    image: nginx\n    ports: ["80:80"]\n', id="compose"),
    pytest.param('{"name": "app", "version": "1.0.0", "dependencies": {}}', id="package-json"),
])
def test_a_file_that_holds_no_kubernetes_objects_says_so(tmp_path: Path, text: str) -> None:
    path = tmp_path / "not-k8s.yaml"
    path.write_text(text)
    code, _, err = run("schedule", "--cluster", str(path))
    assert code == 2
    assert str(path) in err and "not a Kubernetes object" in err and "line 1" in err, err
