"""Findings of the 57th README-only walkthrough (a new user's three uses: review fact changes in a pull request,
reproduce a historic price from its lock, audit the citation a price rests on). Each finding is kept as a reproducer:
a serving whose description alone was rewritten read ``comments or layout only: every field of the serving reads as
before`` under its file, while each lock of it said it pinned ``serving.description`` as before the change (1); the
README quoted the lock-on-a-day reproduction's drift as "4 drifted" where it prints 5 (2); its tour said ``check
--frozen`` fails on anything a lock pinned that drifted, where a pinned fact the price does not read is no drift (3);
and a serving stack retitled under a lock read ``[stack] changed: name`` alone, neither title said (4). The review's
refusal ``locks … already out of date on BASE``, which named no way out, is kept in test_use_45."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from cli_helpers import copy_root, invoke
from passprice.review.changes import _description_changed
from passprice.servings import ServingSpec

R1 = "registry/servings/r1-qwen7b-h200.toml"
SAID = "DeepSeek-R1-Distill-Qwen-7B Q4_K_M on one H200 SXM: 4K contexts half used, contiguous 16-bit KV cache"


# --- 1. a serving's description rewritten is said under its file ---------------------------------------------------


def test_1_a_description_rewritten_is_said_under_the_serving_file(tmp_path: Path) -> None:
    # Before: "  comments or layout only: every field of the serving reads as before", in the text and nothing in the
    # markdown or --json (`serving: []`), while the rows of r1-qwen7b-h200's three locks said "pins serving.description
    # as before the change" and check --frozen failed on it.
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    for root in (base, head):  # the serving's own lock alone, so the review prices 2 locks, not 20
        for lock in (root / "locks").glob("*.lock.toml"):
            if lock.name != "r1-qwen7b-h200.lock.toml":
                lock.unlink()
    text = (head / R1).read_text(encoding="utf-8")
    (head / R1).write_text(text.replace(SAID, "R1-Qwen-7B on an H200", 1), encoding="utf-8")
    reviewed = invoke("diff", str(base), str(head), root=head)
    lines = reviewed.stdout.splitlines()
    at = lines.index("registry/servings/r1-qwen7b-h200.toml (serving r1-qwen7b-h200): changed")
    assert lines[at + 1] == f"  description: {SAID} → R1-Qwen-7B on an H200"
    assert "comments or layout only" not in reviewed.stdout
    assert "  r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml, card h200_sxm_141gb, price): pins serving.description " \
           "as before the change, the price unmoved by it: re-pin (passprice lock --update -o " \
           "locks/r1-qwen7b-h200.lock.toml; check --frozen fails until then)" in lines


def test_1_the_description_line_alone() -> None:
    old = ServingSpec(checkpoint="deepseek-r1-distill-qwen-7b-q4_k_m", card="h200_sxm_141gb", description=SAID)
    assert _description_changed(old, old) == ()
    assert _description_changed(old, attrs.evolve(old, batch=8)) == ()  # a priced field: serving_changes says it
    assert _description_changed(old, attrs.evolve(old, description=None)) == (f"description: {SAID} → (none)",)
    assert _description_changed(attrs.evolve(old, description=None), old) == (f"description: (none) → {SAID}",)
    # a long text keeps what it shares and brackets the change
    longer = SAID + " and a prompt cache of 2,000 positions held once"
    assert _description_changed(attrs.evolve(old, description=longer),
                                attrs.evolve(old, description=longer.replace("2,000", "4,000"))) == (
        "description: …and a prompt cache of [2 → 4],000 positions held once",)


# --- 2. the README's lock-on-a-day reproduction says what the command prints --------------------------------------


def test_2_the_readme_quotes_the_drift_the_lock_of_a_day_reproduces_with(tmp_path: Path) -> None:
    # Before: the README quoted "facts  4 drifted: routing.hot_experts: … (citation or note changed); scale: 33.5
    # Tcycle/s (estimated) → 33.5 Tcycle/s (estimated) (derivation changed: digits none → 4); …", where the command
    # printed "facts          5 drifted: on_chip.capacity: …" (cite71 re-cited on_chip.capacity and scale).
    import re
    import subprocess

    from cli_helpers import REPO

    lock, commit = "locks/qwen3-30b-a3b-h200.lock.toml", "a0187f68f28a"
    shown = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{lock}"], capture_output=True, text=True)
    if shown.returncode != 0:
        pytest.skip("the checkout's git history is not here")
    old = tmp_path / "old.lock.toml"
    old.write_text(shown.stdout, encoding="utf-8")
    result = invoke("reproduce", str(old))
    assert result.exit_code == 0, result.output
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    quoted = re.search(r"`since the lock` names each pinned fact today's files hold otherwise, the first five "
                       r"briefly and the rest counted \(`(facts [^`]*?) …", readme)
    assert quoted is not None
    # (left52: each part that changed named, "(citation or note changed; derivation changed)" before)
    # (left60, session 43: the H200's memory.capacity note no longer names an unregistered MLPerf file: a 6th drift)
    # (cite102: the H200's memory and rate facts cite its product page since: 9 drifts)
    # (fix54w: each briefly, the value once where it is the pinned one)
    assert quoted[1].startswith("facts 9 drifted, every value as pinned: array: 989.5 TMAC/s (note changed); "
                                "memory.bandwidth: 4.8 TB/s (citation changed), source nvidia-h200-datasheet → "
                                "nvidia-h200-product-page;")
    assert quoted[1] in " ".join(result.stdout.split())


# --- 3. check --frozen and a pinned fact the price does not read ----------------------------------------------------


def test_3_a_pinned_fact_no_price_reads_is_no_drift_and_the_tour_says_so(tmp_path: Path) -> None:
    # The H200's host.capacity (an assumed 512 GiB placeholder) halved: the 5 H200 locks pin it, none of their prices
    # reads it (no sequence in host memory), and check --frozen passes, as DESIGN.md's "Pinned and floored" says.
    # Before: the README's tour read "check --frozen  # ... and nothing a lock pinned drifted (as cargo --locked)".
    from cli_helpers import REPO

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("[host.capacity]\nvalue = 512\n") == 1
    card.write_text(text.replace("[host.capacity]\nvalue = 512\n", "[host.capacity]\nvalue = 256\n"), encoding="utf-8")
    shown = invoke("reproduce", str(root / "locks" / "r1-qwen7b-h200.lock.toml"), root=root)
    assert shown.exit_code == 0, shown.output
    assert ("    facts          unchanged (of those the price reads); no drift in 1 pinned fact changed today that "
            "it does not read: host.capacity (value changed)") in shown.stdout.splitlines()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert ("passprice check --frozen                 # ... and nothing a lock pinned drifted (as cargo --locked; a "
            "pinned fact its price does not read, host.* at no host sequences, is no drift)\n") in readme


# --- 4. a serving stack retitled says what it was and what it is -----------------------------------------------------


def test_4_a_stack_retitled_says_both_titles_and_the_lock_made_under_it(tmp_path: Path) -> None:
    # Before: "  [stack] changed: name" and nothing more under the stack's file, no "to verify", where a card, a
    # routing record or a drafting method retitled says both titles and the locks pinning them.
    rel = "facts/stacks/llamacpp-cuda-2405.toml"
    title = 'name = "llama.cpp, CUDA backend, builds b2824-b2843 (May 2024)"'
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    for root in (base, head):  # the lock made under the stack alone
        for lock in (root / "locks").glob("*.lock.toml"):
            if lock.name != "r1-qwen7b-h200-llamacpp.lock.toml":
                lock.unlink()
    text = (head / rel).read_text(encoding="utf-8")
    assert text.count(title) == 1
    (head / rel).write_text(text.replace(title, 'name = "llama.cpp CUDA, May 2024"'), encoding="utf-8")
    reviewed = invoke("diff", str(base), str(head), root=head)
    assert reviewed.exit_code == 0, reviewed.output
    lines = reviewed.stdout.splitlines()
    assert lines[1] == ("no fact changed; 1 record retitled or re-noted under a locked price, to verify; 1 lock "
                        "affected, 1 to re-pin (lock --update) for check --frozen")
    at = lines.index("facts/stacks/llamacpp-cuda-2405.toml (stack llamacpp-cuda-2405): changed")
    assert lines[at + 1:at + 3] == [
        "  [stack] changed: name",
        "  to verify: serving stack llamacpp-cuda-2405 relabelled: its title llama.cpp, CUDA backend, builds "
        "b2824-b2843 (May 2024) → llama.cpp CUDA, May 2024: does it still name the runtime and builds its runs "
        "measured (r1-qwen7b-h200-llamacpp pins it as before the change: re-pin (passprice lock --update); audit "
        "shows it)?; 1 lock made under it: r1-qwen7b-h200-llamacpp",
    ]


def test_4_a_stack_relabelled_with_no_lock_under_it_asks_nothing(tmp_path: Path) -> None:
    rel = "facts/stacks/lmdeploy-turbomind-2312.toml"  # no lock is made under it
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    for root in (base, head):
        for lock in (root / "locks").glob("*.lock.toml"):
            lock.unlink()
    text = (head / rel).read_text(encoding="utf-8")
    (head / rel).write_text(text.replace('\nname = "', '\nname = "renamed ', 1), encoding="utf-8")
    reviewed = invoke("diff", str(base), str(head), root=head)
    assert reviewed.exit_code == 0, reviewed.output
    lines = reviewed.stdout.splitlines()
    at = lines.index("facts/stacks/lmdeploy-turbomind-2312.toml (stack lmdeploy-turbomind-2312): changed")
    assert lines[at + 1] == "  [stack] changed: name"
    assert "to verify" not in reviewed.stdout
