"""Slip 42 (issue 13: a lock a change can slip past), each reproduced first.

A lock pins more of its card than its facts: the ``[card]`` table pins the card's title (``card.name`` of the card
file) and whether it is ``hypothetical`` (written only when true). A real registered card newly marked
``hypothetical = true``, or retitled, passed ``check`` and ``check --frozen`` ("drift: none", "all holds"),
``reproduce`` read "facts unchanged, serving unchanged", and the review (``diff main HEAD``) read ✅ "[card] changed:
name, hypothetical; no lock affected; 8 locks unaffected", although four locks pin the H200 as the real card under
its old title. The same for the serving's ``description``, which the lock's ``[serving]`` table pins: "1 serving
changed; no lock affected". None of these moves a number: each price stays as recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from cli_helpers import REPO, copy_root, invoke
from passprice.cards import load_card
from passprice.locks import StackPin, read_lock
from passprice.registry import Root
from passprice.reproduce import relabelled
from passprice.stacks import load_stack
from test_diff import commit_all, git
from test_slip_34 import H200, branch, registry, renderings

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

MTP = "locks/qwen35-27b-h200-mtp.lock.toml"
H200_LOCKS = ["qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200", "r1-qwen7b-h200-best",
              "r1-qwen7b-h200-llamacpp"]  # by name (left53: r1-qwen7b-h200 was last)
TITLE = "card.title: 'NVIDIA H200 SXM 141GB' → 'NVIDIA H200 SXM 141GB (renamed)' (the lock pinned the old)"
MADE_HYPOTHETICAL = ("card.hypothetical: false → true (the lock pinned false: its price now claims a hypothetical "
                     "card, not the real one it was locked as)")
DESCRIPTION = "serving.description: Qwen3.5-27B-[like → ish] hybrid (synthetic h… (the lock pinned the old)"
VARIANT = 'variant = "SXM5, up to 700 W, HBM3e"\n'


def hypothetical(text: str) -> str:
    """The H200 card's text marked ``hypothetical = true``."""
    assert VARIANT in text
    return text.replace(VARIANT, VARIANT + "hypothetical = true\n", 1)


def retitle(text: str) -> str:
    """The H200 card's text retitled ``NVIDIA H200 SXM 141GB (renamed)``."""
    assert 'name = "NVIDIA H200 SXM 141GB"\n' in text
    return text.replace('name = "NVIDIA H200 SXM 141GB"\n', 'name = "NVIDIA H200 SXM 141GB (renamed)"\n', 1)


def lock_block(output: str, name: str) -> list[str]:
    """The lines of ``check``'s report for the lock ``name``, its own line first."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"lock {name} ("))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def test_1_a_real_card_made_hypothetical_is_drift_and_fails_frozen(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / H200
    card.write_text(hypothetical(card.read_text(encoding="utf-8")), encoding="utf-8")
    plain = invoke("check", root=root)
    assert plain.exit_code == 0, plain.output  # drift alone fails only --frozen
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1, frozen.output
    assert frozen.stdout.splitlines()[0].endswith("0 problems; 5 of 10 locks FAIL")
    for name in H200_LOCKS:
        block = lock_block(frozen.stdout, name)
        assert block[0].endswith("): FAILS")
        assert block[block.index("  drift (an error with --frozen):") + 1:][:1] == [f"    {MADE_HYPOTHETICAL}"]
        # the price is untouched ("reproduces exactly", or, until the lead re-locks, "reproduces: the pricing model
        # changed since the lock; every recorded field reproduces")
        assert block[1] in ("  reproduces exactly", "  reproduces: the pricing model changed since the lock; every "
                            "recorded field reproduces")
    assert lock_block(frozen.stdout, "gemma3-270m-h100")[-1] == "  drift: none"
    assert "check FAILED (--frozen: the inputs of qwen3-30b-a3b-h200, qwen35-27b-h200-mtp, r1-qwen7b-h200, " \
           "r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp drifted since they were locked" in frozen.stdout
    out = json.loads(invoke("check", "--frozen", "--json", root=root).stdout)
    mtp = next(lock for lock in out["locks"] if lock["name"] == "qwen35-27b-h200-mtp")
    assert (mtp["drift"], mtp["drifted"], mtp["ok"], mtp["reproduces"]) == ([MADE_HYPOTHETICAL], True, False, True)


def test_1_a_card_retitled_is_drift_and_reproduce_says_it(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / H200
    card.write_text(retitle(card.read_text(encoding="utf-8")), encoding="utf-8")
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1, frozen.output
    block = lock_block(frozen.stdout, "r1-qwen7b-h200")
    assert block[block.index("  drift (an error with --frozen):") + 1:] == [f"    {TITLE}"]
    result = invoke("reproduce", MTP, root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index("  since the lock:")
    assert lines[at + 1:at + 6] == [
        "    facts          unchanged",
        "    checkpoint     qwen35-27b-like: content a268266c30f9… as pinned",
        "    serving        unchanged",
        f"    relabelled     {TITLE}",
        lines[at + 5],  # the pricing model line (the digest moves with this code until the lead re-locks)
    ]
    assert lines[at + 5].startswith("    pricing model  ")
    assert "  reproduces" in lines[1] and "3644.210997903983 tokens/s at batch 16" in lines[1]
    out = json.loads(invoke("reproduce", MTP, "--json", root=root).stdout)
    assert out["relabelled"] == [TITLE]
    assert "relabelled" in out["changed"] and "facts" not in out["changed"]
    assert out["price"]["tokens_per_s"] == 3644.210997903983


def test_1_a_hypothetical_card_made_real_is_drift(tmp_path: Path) -> None:
    # The reverse: WS1's `hypothetical = true` removed (the review asks it, slip 38); check --frozen failed nothing.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "ws1_hypothetical.toml"
    text = card.read_text(encoding="utf-8")
    assert "hypothetical = true\n" in text
    card.write_text(text.replace("hypothetical = true\n", "", 1), encoding="utf-8")
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1, frozen.output
    block = lock_block(frozen.stdout, "qwen35-27b-ws1-trailing")
    assert block[block.index("  drift (an error with --frozen):") + 1:] == [
        "    card.hypothetical: true → false (the lock pinned true: its price now reads as a real card's, locked as a "
        "hypothetical one's)"
    ]


def test_2_a_serving_description_changed_is_drift(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "qwen35-27b-h200-mtp.toml"
    text = serving.read_text(encoding="utf-8")
    assert 'description = "Qwen3.5-27B-like hybrid' in text
    serving.write_text(text.replace('description = "Qwen3.5-27B-like hybrid', 'description = "Qwen3.5-27B-ish hybrid'),
                       encoding="utf-8")
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1, frozen.output
    assert frozen.stdout.splitlines()[0].endswith("0 problems; 1 of 10 locks FAIL")
    block = lock_block(frozen.stdout, "qwen35-27b-h200-mtp")
    assert block[block.index("  drift (an error with --frozen):") + 1:] == [f"    {DESCRIPTION}"]


def test_2_a_stack_title_changed_is_said() -> None:
    # No shipped lock is made under a stack: the lock's [stack] pin is given an old title here.
    root = Root(REPO)
    lock = read_lock(REPO / MTP)
    stack = load_stack(root, "llamacpp-cuda-2405")
    pinned = attrs.evolve(lock, stack=StackPin(stack.name, stack.integer_matrices, stack.float_matrices, "old"))
    card = load_card(root, "h200_sxm_141gb")
    assert relabelled(lock, card) == ()
    assert relabelled(pinned, card, None, stack) == (
        "stack.llamacpp-cuda-2405.title: 'old' → 'llama.cpp, CUDA backend, builds b2824-b2843 (May 2024)' (the lock "
        "pinned the old)",
    )


def test_3_the_review_flags_a_card_made_hypothetical_and_retitled(registry: Path) -> None:
    path = branch(registry, "s42-card")
    card = path / H200
    card.write_text(retitle(hypothetical(card.read_text(encoding="utf-8"))), encoding="utf-8")
    commit_all(path, "the H200 is hypothetical now")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    assert text.splitlines()[1] == ("no fact changed; 1 card retitled or made hypothetical, to verify; 5 locks "
                                    "affected, 5 to re-pin (lock --update) for check --frozen; 5 locks unaffected")
    said = ("card h200_sxm_141gb is now marked hypothetical: its prices no longer claim a real card; is it not the "
            "product its figures cite?; card h200_sxm_141gb is retitled 'NVIDIA H200 SXM 141GB' → 'NVIDIA H200 SXM "
            "141GB (renamed)': is it the same card?; 5 locks pin it as it was: " + ", ".join(H200_LOCKS))
    assert f"  to verify: {said}" in text
    assert ("  r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml, card h200_sxm_141gb, price): pins card.title, "
            "card.hypothetical as before the change, the price unmoved by it: re-pin (passprice lock --update -o "
            "locks/r1-qwen7b-h200.lock.toml; check --frozen fails until then)") in text.splitlines()
    assert out["relabelled_cards"] == {H200: said}
    assert sorted(lock["name"] for lock in out["locks"]) == sorted(H200_LOCKS)
    assert all(lock["drifted"] == ["card.title", "card.hypothetical"] for lock in out["locks"])
    assert out["unaffected"] == ["gemma3-270m-h100", "gpt-oss-120b-h100", "qwen35-27b-h100-every8",
                                 "qwen35-27b-ws1-trailing", "r1-qwen7b-mi300x-int8kv"]
    assert markdown.startswith("⚠️ **passprice diff**")
    assert "✅" not in markdown


def test_3_the_review_flags_a_serving_description_changed(registry: Path) -> None:
    path = branch(registry, "s42-description")
    serving = path / "registry" / "servings" / "qwen35-27b-h200-mtp.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace('description = "Qwen3.5-27B-like hybrid',
                                                                   'description = "Qwen3.5-27B-ish hybrid'),
                       encoding="utf-8")
    commit_all(path, "described otherwise")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    assert text.splitlines()[1] == ("no fact changed; 1 serving changed; 1 lock affected, 1 to re-pin (lock "
                                    "--update) for check --frozen; 9 locks unaffected")
    assert [(lock["name"], lock["drifted"]) for lock in out["locks"]] == [("qwen35-27b-h200-mtp",
                                                                            ["serving.description"])]
    assert markdown.startswith("⚠️ **passprice diff**")


def test_2_a_checkpoint_entrys_header_sha256_rewritten_is_drift(tmp_path: Path) -> None:
    # The lock pins the header sha256 the entry states beside its content digest; the entry's rewritten (content as
    # pinned) passed check --frozen: "content 5cda2d34b241… as pinned", "drift: none". The review asks it (slip 38).
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml"
    sha = "4918213735724575b8dff44211afa6f6401a618a51dd8974001ee6b1f65756e0"
    text = entry.read_text(encoding="utf-8")
    assert f'\nsha256 = "{sha}"\n' in text
    entry.write_text(text.replace(f'\nsha256 = "{sha}"\n', f'\nsha256 = "0{sha[1:]}"\n', 1), encoding="utf-8")
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1, frozen.output
    assert frozen.stdout.splitlines()[0].endswith("0 problems; 1 of 10 locks FAIL")
    block = lock_block(frozen.stdout, "qwen3-30b-a3b-h200")
    assert "  checkpoint: qwen3-30b-a3b-q4_k_m: content 5cda2d34b241… as pinned" in block
    assert block[block.index("  drift (an error with --frozen):") + 1:] == [
        "    checkpoint.sha256: 4918213735… → 0918213735… (the lock pinned the old; the content priced is as pinned)"
    ]


def test_2_a_stack_title_changed_under_a_lock_made_under_it_is_drift_and_reviewed(registry: Path) -> None:
    # r1 locked under llama.cpp's stack (beside the shipped r1-qwen7b-h200-llamacpp, made the same way), then the
    # stack retitled: both locks made under it drift.
    path = branch(registry, "s42-stack-base")
    locked = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "-o",
                    str(path / "locks" / "r1-stack.lock.toml"), root=path)
    assert locked.exit_code == 0, locked.output
    commit_all(path, "r1 under the stack")
    git(path, "checkout", "-q", "-b", "s42-stack")
    stack = path / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    old = 'name = "llama.cpp, CUDA backend, builds b2824-b2843 (May 2024)"\n'
    assert old in stack.read_text(encoding="utf-8")
    stack.write_text(stack.read_text(encoding="utf-8").replace(old, 'name = "llama.cpp CUDA (May 2024)"\n'),
                     encoding="utf-8")
    commit_all(path, "the stack retitled")
    frozen = invoke("check", "--frozen", root=path)
    assert frozen.exit_code == 1, frozen.output
    block = lock_block(frozen.stdout, "r1-stack")
    assert block[block.index("  drift (an error with --frozen):") + 1:] == [
        "    stack.llamacpp-cuda-2405.title: 'llama.cpp, CUDA backend, builds b2824-b2843 (May 2024)' → 'llama.cpp "
        "CUDA (May 2024)' (the lock pinned the old)"
    ]
    out = json.loads(invoke("diff", "s42-stack-base", "HEAD", "--json", root=path).stdout)
    assert [(lock["name"], lock["drifted"]) for lock in out["locks"]] == [
        ("r1-qwen7b-h200-llamacpp", ["stack.llamacpp-cuda-2405.title"]),
        ("r1-stack", ["stack.llamacpp-cuda-2405.title"]),
    ]


def test_4_a_price_on_a_card_marked_hypothetical_says_so_in_its_title_line(tmp_path: Path) -> None:
    """Session 25 (lead, after slip 42): ``price``, ``best`` and the ``cards`` listing showed a real card newly marked
    ``hypothetical = true`` under its plain title (``… on h200_sxm_141gb (NVIDIA H200 SXM 141GB)``); only ``check``
    and the review said it. Every title line now reads ``, hypothetical`` after the title (``cards.shown_title``),
    unless the title says so already (WS1's does); the price itself is unchanged."""
    from passprice.cards import shown_title

    root = copy_root(tmp_path)
    card = root / H200
    before = invoke("price", "r1-qwen7b-h200", "--json", root=root)
    card.write_text(hypothetical(card.read_text(encoding="utf-8")), encoding="utf-8")
    price = invoke("price", "r1-qwen7b-h200", root=root)
    assert price.exit_code == 0, price.output
    assert price.stdout.splitlines()[0] == (
        "deepseek-r1-distill-qwen-7b-q4_k_m on h200_sxm_141gb (NVIDIA H200 SXM 141GB, hypothetical)")
    best = invoke("best", "r1-qwen7b-h200", root=root)
    assert best.exit_code == 0, best.output
    assert best.stdout.splitlines()[0].endswith(" on h200_sxm_141gb (NVIDIA H200 SXM 141GB, hypothetical)")
    listing = invoke("cards", root=root)
    rows = [line for line in listing.stdout.splitlines() if line.startswith("h200_sxm_141gb ")]
    assert len(rows) == 1 and "NVIDIA H200 SXM 141GB, hypothetical" in rows[0], listing.output
    after = invoke("price", "r1-qwen7b-h200", "--json", root=root)
    assert json.loads(after.stdout)["tokens_per_s"] == json.loads(before.stdout)["tokens_per_s"]
    ws1 = load_card(Root(REPO), "ws1_hypothetical")
    assert ws1.hypothetical and shown_title(ws1) == "WS1 (hypothetical weight-streaming card)"
    h200 = load_card(Root(REPO), "h200_sxm_141gb")
    assert not h200.hypothetical and shown_title(h200) == "NVIDIA H200 SXM 141GB"
