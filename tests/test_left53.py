"""Left53: what a new user (walkthrough 59) saw said two ways. (1) ``kv``, ``simulate`` and ``roofline`` ``--json``
printed whole byte counts as floats (``total_bytes`` 20447232.0, ``peak_held_bytes`` 5146882048.0, ``bytes_moved``
4488058848.0) where ``price`` printed integers: every command's ``--json`` now goes through
:func:`passprice.tables.whole_counts`. (3) ``diff`` listed ``r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp,
r1-qwen7b-h200`` (its lock files' paths sorted) where ``check`` lists ``r1-qwen7b-h200`` first: every listing of locks
is in :func:`passprice.registry.lock_order`, by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_helpers import REPO, copy_root, invoke
from passprice.registry import Root, lock_order
from passprice.review import diff, render
from passprice.tables import whole_counts

GEMMA = "gemma3-270m-q4_k_m"
H200 = "h200_sxm_141gb"


def _json(*args: str, status: int = 0) -> Any:
    result = invoke(*args)
    assert result.exit_code == status, result.output
    return json.loads(result.stdout)


def _types(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, type]:
    return {k: type(data[k]) for k in keys}


# --- (1) whole counts as integers in every --json ------------------------------------------------------------------


def test_kv_json_writes_its_byte_counts_as_integers() -> None:
    """Before: ``"total_bytes": 20447232.0``. gemma3-270m at 4,096 positions: 3 global layers x 1 KV head x 256 wide
    x (K + V) x 2 B = 3,072 B a position, 15 windowed ones 15,360 B a position over their 512-position window:
    3,072 x 4,096 + 15,360 x 512 = 20,447,232 B a sequence."""
    data = _json("kv", GEMMA, "--contexts", "4k", "--cards", H200, "--json")
    assert data["per_token"] == {"attention": 3072, "windowed": 15360}
    assert [type(v) for v in data["per_token"].values()] == [int, int]
    context = data["contexts"][0]
    assert context["total_bytes"] == 20_447_232 == 3072 * 4096 + 15360 * 512
    assert _types(context, ("total_bytes", "kv_bytes", "state_bytes", "ring_bytes", "draft_kv_bytes")) == dict.fromkeys(
        ("total_bytes", "kv_bytes", "state_bytes", "ring_bytes", "draft_kv_bytes"), int)
    assert [type(k["bytes"]) for k in context["kinds"].values()] == [int, int]
    fits = context["fits"][0]
    assert fits["capacity"] == 141_000_000_000 and fits["held_per_sequence"] == 20_447_232
    assert _types(fits, ("capacity", "held_shared", "held_per_sequence")) == dict.fromkeys(
        ("capacity", "held_shared", "held_per_sequence"), int)
    assert _types(data["held_once"], ("weights", "embedding_table", "draft_weights_not_held")) == dict.fromkeys(
        ("weights", "embedding_table", "draft_weights_not_held"), int)
    assert _types(data, ("per_token_total", "draft_per_token", "kv_bytes_per_element",
                         "state_bytes_per_element")) == dict.fromkeys(
        ("per_token_total", "draft_per_token", "kv_bytes_per_element", "state_bytes_per_element"), int)
    assert _types(data["recurrence"], ("state_per_layer", "ring_per_layer")) == {"state_per_layer": int,
                                                                                  "ring_per_layer": int}
    assert {type(layer["bytes_per_position"]) for layer in data["layers"]} == {int}


def test_kv_json_keeps_a_fractional_element_size_a_float() -> None:
    """Q4_0-style codes with their scales are 0.5625 B an element: no whole count, so a float (no number changes)."""
    data = _json("kv", GEMMA, "--contexts", "4k", "--cards", H200, "--kv-bytes", "0.5625", "--json")
    assert data["kv_bytes_per_element"] == 0.5625 and type(data["per_token"]["attention"]) is int  # 864 B
    assert data["per_token"] == {"attention": 864, "windowed": 4320}


def test_simulate_json_writes_its_byte_counts_as_integers() -> None:
    """Before: ``"peak_held_bytes": 5146882048.0``."""
    data = _json("simulate", "r1-qwen7b-h200", "--synthetic", "3", "--json")
    keys = ("peak_held_bytes", "peak_reserved_bytes", "capacity_bytes", "weights_bytes")
    for policy in data["policies"].values():
        assert _types(policy, keys) == dict.fromkeys(keys, int)
        assert policy["capacity_bytes"] == 141_000_000_000 and policy["weights_bytes"] == 4_677_120_000
        assert type(policy["mean_sequences"]) is float  # a mean, not a count
    assert type(data["setup"]["emitted_per_pass"]) is float


def test_roofline_json_writes_bytes_moved_as_integers() -> None:
    """Before: ``"bytes_moved": 4488058848.0`` at batch 1; rates and bandwidths stay floats."""
    data = _json("roofline", H200, "r1-qwen7b-h200", "--json")
    assert data["points"][0]["batch"] == 1 and data["points"][0]["bytes_moved"] == 4_488_058_848
    assert {type(p["bytes_moved"]) for p in data["points"]} == {int}
    assert {type(r["bandwidth"]) for r in data["ridges"]} == {float}


def test_a_refusals_json_writes_its_byte_counts_as_integers() -> None:
    """Before: ``"needed": 23492779520000.0``: 100,000 sequences x 234,881,024 B + 4,677,120,000 B held once."""
    data = _json("price", "r1-qwen7b-h200", "--batch", "100000", "--no-lock", "--json", status=1)
    assert data["refusal"] == "NotResident"
    assert (data["needed"], data["capacity"]) == (100_000 * 234_881_024 + 4_677_120_000, 141_000_000_000)
    assert (type(data["needed"]), type(data["capacity"])) == (int, int)


def test_servings_json_writes_kv_bytes_as_its_file_does() -> None:
    """``kv_bytes = 2`` in the serving's file read ``2.0`` in ``servings --json``."""
    data = _json("servings", "--json")
    spec = data["servings"]["r1-qwen7b-h200"]
    assert (spec["kv_bytes"], type(spec["kv_bytes"]), type(spec["state_bytes"])) == (2, int, int)


def test_whole_counts_leaves_a_headers_metadata_as_the_file_types_it() -> None:
    """A GGUF header's F32 value under a key ending ``_bytes`` is the file's float, not a count passprice made."""
    made = whole_counts({"metadata": {"x.cache_bytes": 2.0}, "header_bytes": 64.0, "rate": 4.8e12})
    assert made == {"metadata": {"x.cache_bytes": 2.0}, "header_bytes": 64, "rate": 4.8e12}
    assert type(made["metadata"]["x.cache_bytes"]) is float and type(made["header_bytes"]) is int


# --- (2) a fact's history says what changed in fact set's and the review's words --------------------------------


def test_fact_show_history_says_a_change_as_fact_set_says_it(tmp_path: Path) -> None:
    """Before: ``fact set`` said ``(citation, note changed, derivation removed)`` of an edit that ``fact show
    --history`` then said as ``changed: locator, note, derivation`` (the file's keys); both now read
    :func:`passprice.factparts.change_said`, and ``--json``'s ``changed`` names the same parts."""
    from test_history import CARD, git, registry

    root = registry(tmp_path)
    edited = invoke("fact", "set", CARD, "streams.rewrite", "--value", "0.8333", "--unit", "1", "--provenance",
                    "measured", "--source", "azure-ai-benchmarking-guide", "--locator", "another row",
                    "--note", "another note", root=root)
    assert edited.exit_code == 0, edited.output
    said = "citation, note changed, derivation removed"
    assert edited.stdout.endswith(f": streams.rewrite: 0.8333 (measured) -> 0.8333 (measured) ({said})\n")
    git(root, "commit", "-qam", "re-cited")
    shown = invoke("fact", "show", CARD, "streams.rewrite", "--history", root=root)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[3] == f"  0.8333 (measured)   {said}"  # was "  0.8333 (measured)   changed: locator, note, derivation"
    assert lines[7] == "  0.8333 (measured)   new"  # was "changed: new"
    data = json.loads(invoke("fact", "show", CARD, "streams.rewrite", "--history", "--json", root=root).stdout)
    assert [v["changed"] for v in data["versions"]] == [["citation", "note", "derivation"], ["new"]]


# --- (3) one order for every listing of locks -----------------------------------------------------------------------


R1_LOCKS = ["r1-qwen7b-h200", "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp"]


def test_lock_order_puts_a_name_before_the_names_it_begins() -> None:
    """By file name, ``-`` (0x2d) sorts before ``.`` (0x2e): ``r1-qwen7b-h200.lock.toml`` came after the two others."""
    paths = [f"locks/{n}.lock.toml" for n in reversed(R1_LOCKS)]
    assert sorted(paths) == [f"locks/{n}.lock.toml" for n in (*R1_LOCKS[1:], R1_LOCKS[0])]  # the file-name order
    assert [lock_order(p)[0] for p in sorted(paths, key=lock_order)] == R1_LOCKS
    assert sorted(R1_LOCKS, key=lock_order) == R1_LOCKS == sorted(R1_LOCKS)  # names: as Root.names sorts them
    assert lock_order(f"/x/locks/{R1_LOCKS[0]}.lock.toml") == (R1_LOCKS[0], f"/x/locks/{R1_LOCKS[0]}.lock.toml")


def test_check_and_audit_list_the_registrys_locks_in_lock_order() -> None:
    """``check`` and ``audit`` list ``Root.names(locks)``: the order :func:`lock_order` gives the files."""
    root = Root(REPO)
    files = [p.name for p in (REPO / "locks").iterdir() if p.name.endswith(".lock.toml")]
    assert root.names(root.locks, ".lock.toml") == [lock_order(f)[0] for f in sorted(files, key=lock_order)]
    assert [n for n in root.names(root.locks, ".lock.toml") if n.startswith("r1-qwen7b-h200")] == R1_LOCKS


def test_diff_lists_locks_in_lock_order_in_text_json_and_markdown(tmp_path: Path) -> None:
    """Before: the review listed ``r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, r1-qwen7b-h200`` (its lock files'
    paths sorted) in its text, ``--json`` (``locks``, ``removed``, ``dropping``) and Markdown, where ``check`` lists
    ``r1-qwen7b-h200`` first. The three locks removed on HEAD, nothing priced."""
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    for name in R1_LOCKS:
        (head / "locks" / f"{name}.lock.toml").unlink()
    d = diff(Root(head), str(base), str(head))
    data = d.to_json()
    assert [lock["name"] for lock in data["locks"]] == R1_LOCKS
    assert data["removed"] == data["dropping"] == R1_LOCKS
    text = render(d, "text").splitlines()
    assert [line.split(" ")[2] for line in text if line.startswith("  r1-qwen7b-h200")] == R1_LOCKS
    rows = [line.split("`")[1] for line in render(d, "markdown").splitlines() if line.startswith("| `r1-")]
    assert rows == R1_LOCKS
