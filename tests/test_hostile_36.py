"""Attack round 36 (issue 13: hostile input on session 18's new code): a measured run's routing record, the review's
description of an added measurement file, the renamed-card hint, document hashes. Each test builds the reproducer
of one finding and asserts the exit status and the error line."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import copy_root, invoke

RUN = """#:schema ../../schema/measurement.schema.json
[source]
name = "A run of Qwen3-30B-A3B on one H200"
source = "xiongjiedai-gpu-benchmarks"

[[run]]
id = "a36.qwen3moe.tg128"
stack = "llamacpp-cuda-2507"
card = "h200_sxm_141gb"
checkpoint = "qwen3-30b-a3b-q4_k_m"
routing = "{routing}"
batch = 1
positions = [0, 128]
tokens_per_s = 160.5
locator = "an attack round's made-up figure"
"""


def _run_naming(tmp_path: Path, routing: str) -> Path:
    root = copy_root(tmp_path)
    (root / "registry" / "measurements" / "a36.toml").write_text(RUN.format(routing=routing))
    return root


def test_a_measured_runs_routing_record_outside_the_registry_is_refused(tmp_path: Path) -> None:
    """A run's ``routing = "/any/file.toml"`` (a routing record copied outside the registry) was read and priced
    with: ``check`` said "all holds" (exit 0), ``validate`` priced it, where the same path as its ``card`` is refused
    (a registry file names nothing outside the registry: CI would read and quote a file of the machine)."""
    outside = tmp_path / "elsewhere" / "skew.toml"
    outside.parent.mkdir()
    shutil.copy(copy_root(tmp_path / "src") / "facts" / "routing" / "qwen3-30b-a3b-measured.toml", outside)
    root = _run_naming(tmp_path, str(outside))
    for command in ("check", "validate"):
        result = invoke(command, root=root)
        assert result.exit_code == 2, result.output
        assert (
            f"passprice: error: registry/measurements/a36.toml: run.0.routing: {outside} lies outside the registry"
            in result.stderr.replace(str(root) + "/", "")
        ), result.stderr
    # a path relative to the working folder is refused whatever it names, as a card's is
    root = _run_naming(tmp_path / "rel", "facts/routing/qwen3-30b-a3b-measured.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert (
        "registry/measurements/a36.toml: run.0.routing: 'facts/routing/qwen3-30b-a3b-measured.toml' is a path "
        "relative to the working folder" in result.stderr
    ), result.stderr
    # the registry name still prices
    assert invoke("check", root=_run_naming(tmp_path / "ok", "qwen3-30b-a3b-measured")).exit_code == 0
