"""Slip 43 (issue 13: can a change slip past a lock or a review?), each reproduced first.

1. ``price --lock L`` (and ``price``/``best`` of a locked serving) said "floors hold, and the price is the one
   r1-qwen7b-h200 records" and nothing more after the H200 card was retitled or marked hypothetical, though
   ``check`` and the review name the relabel (slip 42): the title line is what a reader quotes.
2. A checkpoint entry's header sha256 rewritten (content as pinned): the review asked the new digest but read "no
   lock affected; 8 locks unaffected", though ``qwen3-30b-a3b-h200`` pins the old header and ``check --frozen``
   fails it until re-pinned.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke
from test_diff import commit_all
from test_slip_34 import H200, branch, registry, renderings, review
from test_slip_42 import TITLE, hypothetical, retitle

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

R1 = "locks/r1-qwen7b-h200.lock.toml"
QWEN3 = "registry/checkpoints/qwen3-30b-a3b-q4_k_m.toml"
SHA = "4918213735724575b8dff44211afa6f6401a618a51dd8974001ee6b1f65756e0"
SHA_LINE = "checkpoint.sha256: 4918213735… → 0918213735… (the lock pinned the old; the content priced is as pinned)"
PAD = " " * 16


def lock_lines(output: str) -> list[str]:
    """The ``lock`` line of a price's table and the lines under it."""
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  lock          "))
    return lines[at:]


def rewrite_sha(root: Path) -> None:
    """The Qwen3-30B-A3B entry's header sha256 rewritten 4918… → 0918… (its content, what the pricer reads, kept)."""
    entry = root / QWEN3
    text = entry.read_text(encoding="utf-8")
    assert f'\nsha256 = "{SHA}"\n' in text
    entry.write_text(text.replace(f'\nsha256 = "{SHA}"\n', f'\nsha256 = "0{SHA[1:]}"\n', 1), encoding="utf-8")


def test_1_price_under_a_lock_says_a_card_retitled(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / H200
    card.write_text(retitle(card.read_text(encoding="utf-8")), encoding="utf-8")
    result = invoke("price", "--lock", R1, root=root)
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout) == [
        f"  lock          under lock r1-qwen7b-h200 ({R1}): floors hold, and the price is the one r1-qwen7b-h200 "
        "records; relabelled since the lock (below)",
        f"{PAD}relabelled since the lock: {TITLE}",
    ]
    out = json.loads(invoke("price", "--lock", R1, "--json", root=root).stdout)
    assert out["lock"] == {"locks": ["r1-qwen7b-h200"], "note": None, "moved": [], "relabelled": [TITLE],
                           "drifted": []}
    assert round(out["tokens_per_s"], 1) == 996.1  # the price does not move: the 996.1 tokens/s the lock records


def test_1_best_under_two_locks_names_each_lock_relabelled(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / H200
    card.write_text(hypothetical(card.read_text(encoding="utf-8")), encoding="utf-8")
    result = invoke("best", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 0, result.output
    said = ("card.hypothetical: false → true (the lock pinned false: its price now claims a hypothetical card, not "
            "the real one it was locked as)")
    assert lock_lines(result.stdout)[1:] == [f"{PAD}relabelled since the lock: r1-qwen7b-h200: {said}",
                                             f"{PAD}relabelled since the lock: r1-qwen7b-h200-best: {said}",
                                             # the shipped stack lock of the same serving pins the card too
                                             f"{PAD}relabelled since the lock: r1-qwen7b-h200-llamacpp: {said}"]
    assert lock_lines(result.stdout)[0].endswith("floors hold, and the price is the one r1-qwen7b-h200-best records; "
                                                 "relabelled since the lock (below)")


def test_1_price_under_an_unchanged_lock_says_no_relabel() -> None:
    result = invoke("price", "--lock", R1)
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout) == [
        f"  lock          under lock r1-qwen7b-h200 ({R1}): floors hold, and the price is the one r1-qwen7b-h200 "
        "records"
    ]
    lock = json.loads(invoke("price", "--lock", R1, "--json").stdout)["lock"]
    assert (lock["relabelled"], lock["drifted"]) == ([], [])


def test_1_price_under_a_lock_says_its_header_sha256_rewritten(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    rewrite_sha(root)
    result = invoke("price", "--lock", "locks/qwen3-30b-a3b-h200.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout)[1:] == [f"{PAD}relabelled since the lock: {SHA_LINE}"]


def test_2_the_review_names_the_lock_pinning_the_old_header(registry: Path) -> None:
    path = branch(registry, "s43-sha")
    rewrite_sha(path)
    commit_all(path, "the header sha256 rewritten")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    assert text.splitlines()[1] == (
        "no fact changed; 1 checkpoint entry changed; 1 checkpoint entry with a header digest dropped or rewritten, "
        "to verify; 1 lock affected, 1 to re-pin (lock --update) for check --frozen; 9 locks unaffected"
    )
    said = "; 1 lock pins the old header: qwen3-30b-a3b-h200 (re-pin: passprice lock --update)"
    verify = next(line for line in text.splitlines() if line.startswith("  to verify: header.sha256 "))
    assert verify.endswith(f"say which file holds it{said}")
    assert ("  qwen3-30b-a3b-h200 (locks/qwen3-30b-a3b-h200.lock.toml, card h200_sxm_141gb, price): pins "
            "checkpoint.sha256 as before the change, the price unmoved by it: re-pin (passprice lock --update -o "
            "locks/qwen3-30b-a3b-h200.lock.toml; check --frozen fails until then)") in text.splitlines()
    assert out["header_pinned_by"] == {QWEN3: ["qwen3-30b-a3b-h200"]}
    assert [(lock["name"], lock["drifted"]) for lock in out["locks"]] == [("qwen3-30b-a3b-h200",
                                                                            ["checkpoint.sha256"])]
    assert markdown.startswith("⚠️ **passprice diff**")
    assert "1 lock pins the old header: qwen3-30b-a3b-h200 (re-pin: passprice lock --update)" in markdown
    assert "| `qwen3-30b-a3b-h200` |" in markdown


def test_3_price_under_a_lock_says_a_citation_changed(tmp_path: Path) -> None:
    # A fact the price rests on re-cited (its value kept): check --frozen fails 4 locks ("citation or note
    # changed"), reproduce says "1 drifted", the review "4 locks affected, 4 to re-pin"; price --lock said only
    # "floors hold, and the price is the one r1-qwen7b-h200 records".
    root = copy_root(tmp_path)
    card = root / H200
    old = ("locator = \"Specifications table, H200 SXM column (a row: its label, "
           "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"")
    text = card.read_text(encoding="utf-8")
    assert old in text
    card.write_text(text.replace(old, "locator = \"Spec table: 'GPU Memory Bandwidth 4.8TB/s'\"", 1), encoding="utf-8")
    said = "memory.bandwidth: 4.8 TB/s (published) → 4.8 TB/s (published) (citation changed)"
    result = invoke("price", "--lock", R1, root=root)
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout) == [
        f"  lock          under lock r1-qwen7b-h200 ({R1}): floors hold, and the price is the one r1-qwen7b-h200 "
        "records; drifted since the lock (below)",
        f"{PAD}drifted since the lock: {said}",
    ]
    out = json.loads(invoke("best", "r1-qwen7b-h200", "--json", root=root).stdout)
    assert out["lock"]["drifted"] == [f"r1-qwen7b-h200: {said}", f"r1-qwen7b-h200-best: {said}",
                                      f"r1-qwen7b-h200-llamacpp: {said}"]  # the shipped stack lock pins the card
    assert out["lock"]["moved"] == [] and out["lock"]["relabelled"] == []


def test_4_the_review_asks_a_routing_record_retitled_and_renoted_under_a_lock(registry: Path) -> None:
    # The record qwen3-30b-a3b-h200 prices with, retitled to another workload and its note rewritten: the price
    # prints the note ("routing note"), audit the title and note, no lock pins either; the review read "[routing]
    # changed: name, note; no lock affected", ✅.
    path = branch(registry, "s43-routing")
    record = path / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = record.read_text(encoding="utf-8")
    old = 'name = "Qwen3-30B-A3B, measured skew (single-domain Python, ~8k tokens)"\n'
    assert old in text and '\nnote = "The source counts' in text
    text = text.replace(old, 'name = "Qwen3-30B-A3B, measured skew (diverse prose)"\n', 1)
    record.write_text(text.replace('\nnote = "The source counts', '\nnote = "Rewritten. The source counts', 1),
                      encoding="utf-8")
    commit_all(path, "the routing record retitled")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    # Since slip round 44 (re-locked in 5d82536) the lock pins the record's title and note: it is to re-pin.
    assert text.splitlines()[1] == ("no fact changed; 1 record retitled or re-noted under a locked price, to verify; "
                                    "1 lock affected, 1 to re-pin (lock --update) for check --frozen; 9 locks "
                                    "unaffected")
    said = ("routing record qwen3-30b-a3b-measured is retitled 'Qwen3-30B-A3B, measured skew (single-domain Python, "
            "~8k tokens)' → 'Qwen3-30B-A3B, measured skew (diverse prose)'; routing record qwen3-30b-a3b-measured's "
            "note changed: does it still describe what the locked prices rest on (qwen3-30b-a3b-h200 pins it as before "
            "the change: re-pin (passprice lock --update); a price prints the note, audit shows it)?; 1 lock prices "
            "with it: qwen3-30b-a3b-h200")
    assert f"  to verify: {said}" in text.splitlines()
    assert out["relabelled_records"] == {"facts/routing/qwen3-30b-a3b-measured.toml": said}
    assert markdown.startswith("⚠️ **passprice diff**") and "✅" not in markdown


def test_4_the_uniform_record_re_noted_asks_of_the_one_lock_pricing_with_it(registry: Path) -> None:
    # Until session 34 no lock priced with the uniform record and its re-noting asked nothing; moe46's
    # gpt-oss-120b-h100 lock prices with it, so the review asks the one question of that lock.
    path = branch(registry, "s43-uniform")
    record = path / "facts" / "routing" / "uniform.toml"
    text = record.read_text(encoding="utf-8")
    assert '\nnote = "' in text
    record.write_text(text.replace('\nnote = "', '\nnote = "Rewritten. ', 1), encoding="utf-8")
    commit_all(path, "the uniform record re-noted")
    status, text, out = review(path)
    assert status == 0, text
    assert out["relabelled_records"] == {
        "facts/routing/uniform.toml": "routing record uniform's note changed: does it still describe what the locked "
        "prices rest on (gpt-oss-120b-h100 pins it as before the change: re-pin (passprice lock --update); a price "
        "prints the note, audit shows it)?; 1 lock prices with it: gpt-oss-120b-h100"}


def test_5_context_classes_reordered_are_no_drift(tmp_path: Path) -> None:
    # gemma3-270m-h100's two context classes swapped in its serving file: every figure as recorded, yet check
    # --frozen failed the lock ("serving changed", contexts: … → the same classes swapped) and reproduce said
    # "serving contexts: share 0.75, … → share 0.25, …".
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "gemma3-270m-h100.toml"
    text = serving.read_text(encoding="utf-8")
    first = "[[contexts]]\nshare = 0.75\nposition = 1024\nlimit = 4096\n"
    second = "[[contexts]]\nshare = 0.25\nposition = 16384\nlimit = 32768\n"
    assert text.endswith(f"{first}\n{second}")
    serving.write_text(text.replace(f"{first}\n{second}", f"{second}\n{first}"), encoding="utf-8")
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 0, frozen.output
    result = invoke("reproduce", "locks/gemma3-270m-h100.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    assert "    serving        unchanged" in result.stdout.splitlines()
    assert json.loads(invoke("reproduce", "locks/gemma3-270m-h100.lock.toml", "--json",
                             root=root).stdout)["serving_differences"] == []


def test_5_a_mix_of_three_classes_means_the_same_in_any_order() -> None:
    # A plain left-to-right sum rounds by order: 0.5 × 12345.6 + 0.25 × 12345.6 + 0.25 × 999.9 is 9509.175000000001
    # one way and 9509.175 the other, so a serving's three classes reordered moved its price's last bit.
    from passprice.serving import ContextClass, ContextMix

    classes = (ContextClass(0.5, 12345.6, 16384), ContextClass(0.25, 12345.6, 16384), ContextClass(0.25, 999.9, 4096))
    plain = [sum(c.share * c.position for c in order) for order in (classes, classes[::-1])]
    assert plain == [9509.175000000001, 9509.175]
    forward, backward = ContextMix(classes), ContextMix(classes[::-1])
    assert forward.mean_position() == backward.mean_position() == 9509.175000000001  # the exact sum, rounded once
    assert forward.mean_limit() == backward.mean_limit() == 0.75 * 16384 + 0.25 * 4096
    assert forward.windowed_position(4096) == backward.windowed_position(4096)
    assert forward.windowed_held(4096, 16) == backward.windowed_held(4096, 16)
