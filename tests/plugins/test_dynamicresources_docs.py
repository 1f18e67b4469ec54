"""docs/dra.md: the worked GPU cluster runs as written and prints what the page shows."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shlex

import pytest

from scheduling_framework.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "dra.md"


def section() -> str:
    return DOC.read_text(encoding="utf-8").split("## Worked example", 1)[1].split("\n## ", 1)[0]


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", section(), re.S)


@pytest.fixture
def cluster_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    [yaml_text] = blocks("yaml")
    (tmp_path / "gpu-cluster.yaml").write_text(yaml_text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_walk_through_prints_what_the_page_shows(cluster_dir: pathlib.Path) -> None:
    [console] = blocks("console")
    argv = shlex.split(console.strip().removeprefix("$ "))
    assert argv[0] == "scheduling-framework"
    out, err = io.StringIO(), io.StringIO()
    assert main(argv[1:], stdout=out, stderr=err) == 0, err.getvalue()
    shown = blocks("text")[0]
    assert out.getvalue().startswith(shown)
    text = out.getvalue()
    # the explain part names the devices and, on the CPU node, the claim that could not be allocated
    assert re.search(r"claim train-0-gpu-\w{5}: gpu=gpu.example.com/gpu-b/gpu-0", text)
    assert re.search(r"cpu-1 +UnschedulableAndUnresolvable DynamicResources: cannot allocate all claims "
                     r"\[claim: train-0-gpu-\w{5}\]", text)


def test_python_walk_through_prints_what_the_page_shows(cluster_dir: pathlib.Path) -> None:
    [code] = blocks("python")
    expected = blocks("text")[1]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, str(DOC), "exec"), {"__name__": "dra_example"})
    assert buf.getvalue() == expected


def test_json_claims_shape(cluster_dir: pathlib.Path) -> None:
    import json

    out = io.StringIO()
    assert main(["schedule", "--cluster", "gpu-cluster.yaml", "--seed", "1", "--output", "json"], stdout=out,
                stderr=io.StringIO()) == 0
    pods = {p["pod"]: p for p in json.loads(out.getvalue())["pods"]}
    assert "claims" not in pods["default/web"]
    [claim] = pods["default/train-0"]["claims"]
    assert claim["podClaimName"] == "gpu" and claim["name"].startswith("train-0-gpu-")
    assert claim["allocation"] == {"devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-b",
                                                "device": "gpu-0"}]}
    assert pods["default/train-3"]["claims"][0]["allocation"] is None


def test_resulting_cluster_keeps_allocations_so_runs_compose(cluster_dir: pathlib.Path) -> None:
    import json

    import yaml

    out = io.StringIO()
    assert main(["schedule", "--cluster", "gpu-cluster.yaml", "--seed", "1", "--output", "yaml"], stdout=out,
                stderr=io.StringIO()) == 0
    day2 = yaml.safe_load(out.getvalue())
    claims = [o for o in day2["items"] if o["kind"] == "ResourceClaim"]
    assert len(claims) == 3 and all(c["status"]["allocation"] and c["status"]["reservedFor"] for c in claims)
    train0 = next(o for o in day2["items"] if o["kind"] == "Pod" and o["metadata"]["name"] == "train-0")
    assert train0["spec"]["nodeName"] == "gpu-b"
    assert train0["status"]["resourceClaimStatuses"][0]["resourceClaimName"].startswith("train-0-gpu-")
    (cluster_dir / "day2.yaml").write_text(out.getvalue())
    out2 = io.StringIO()
    assert main(["schedule", "--cluster", "day2.yaml", "--seed", "1", "--output", "json"], stdout=out2,
                stderr=io.StringIO()) == 0
    [pending] = json.loads(out2.getvalue())["pods"]
    assert pending["pod"] == "default/train-3" and pending["outcome"] == "Unschedulable"
