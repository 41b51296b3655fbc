"""Session 29, the lead: a lock guarantees ``host_capacity_bytes`` only where its price holds sequences in host
memory. The first lock made under a serving stack (stacklock29's attempt) read "price moved, lock not updated
(expected.host_capacity_bytes 549.8 GB → 274.9 GB (-50 %); tokens/s did not move)" in the review when the H200's
assumed 512 GiB host-memory placeholder was edited, and ``price --lock`` said of every lock on the H200, with or
without a stack, "NOT the one it records (tokens/s did not move, first moved: host_capacity_bytes)", while no price
rests on ``host.capacity`` (it is in no lock's ``rests_on``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import copy_root, invoke
from passprice.locks import holds_host, priced_figures
from passprice.reproduce import expected_moved

H200 = Path("facts") / "cards" / "h200_sxm_141gb.toml"


def _halved_host(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: a copy of the registry with ``locks/r1-stack.lock.toml`` (r1-qwen7b-h200 under llamacpp-cuda-2405);
    HEAD: that copy with the H200's ``host.capacity`` 512 → 256 GiB."""
    base = copy_root(tmp_path / "base")
    made = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "-o",
                  str(base / "locks" / "r1-stack.lock.toml"), root=base)  # fmt: skip
    assert made.exit_code == 0, made.output
    head = tmp_path / "head"
    shutil.copytree(base, head)
    text = (head / H200).read_text(encoding="utf-8")
    block = "[host.capacity]\nvalue = 512\n"
    assert text.count(block) == 1
    (head / H200).write_text(text.replace(block, "[host.capacity]\nvalue = 256\n"), encoding="utf-8")
    return base, head


def test_a_host_capacity_no_price_rests_on_moves_no_lock(tmp_path: Path) -> None:
    base, head = _halved_host(tmp_path)
    result = invoke("diff", str(base), str(head), root=head)
    # it fails for its citation alone: the locator quotes the 512 GiB placeholder it kept
    # (tests/test_review_contradicted.py)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("passprice: refused: 1 fact contradicted by the citation it kept "
                                    "(h200_sxm_141gb:host.capacity): ")
    # before: "1 lock affected, 1 price moved unreviewed; 8 locks unaffected", exit 1. 10 locks: the 9 shipped (the
    # shipped stack lock r1-qwen7b-h200-llamacpp among them, unmoved too) and r1-stack.
    # The 2 warnings of check on HEAD: r1-stack duplicates the shipped r1-qwen7b-h200-llamacpp (same serving, pins,
    # floors and price), which the review lists as check does (tests/test_odds165.py), and the 22 unknown dates.
    assert result.stdout.splitlines()[1] == (
        "1 fact changed in 1 file, 1 to verify in its source; 1 fact contradicted by the citation it kept; no lock "
        "affected; 2 warnings of check on HEAD; 11 locks unaffected")
    assert "warning: locks/r1-stack.lock.toml duplicates locks/r1-qwen7b-h200-llamacpp.lock.toml" in result.stdout
    for lock in ("r1-stack", "r1-qwen7b-h200-llamacpp", "r1-qwen7b-h200"):
        priced = invoke("price", "--lock", lock, root=head)
        assert priced.exit_code == 0, priced.output
        # before: "floors hold, but the price is NOT the one LOCK records (below)"
        assert f"floors hold, and the price is the one {lock} records" in priced.stdout, priced.stdout


def test_host_capacity_counts_where_a_side_holds_host_sequences() -> None:
    was = {"tokens_per_s": 10.0, "host_sequences": 0, "host_capacity_bytes": 512.0}
    now = {"tokens_per_s": 10.0, "host_sequences": 0, "host_capacity_bytes": 256.0}
    assert "host_capacity_bytes" not in priced_figures(was, now, holds_host(was, now))
    assert expected_moved({"expected": was}, {"expected": now}) == ()
    held = {**now, "host_sequences": 3}
    assert holds_host(was, held) and "host_capacity_bytes" in priced_figures(was, held, True)
    moved = {m.field: (m.recorded, m.now) for m in expected_moved({"expected": was}, {"expected": held})}
    assert moved == {"expected.host_sequences": (0, 3), "expected.host_capacity_bytes": (512.0, 256.0)}
