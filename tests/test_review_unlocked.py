"""The pull-request review shows every registered serving whose price a fact change moves, locked or not: a
serving no lock names (qwen3next-80b-a3b-h200 and qwen35-27b-h200-chat rest on the H200's streams.rewrite, and no
lock pins them) is re-priced on both sides and listed, marked not locked, with before/after and the change in %;
it never fails the review (nothing pins it), and the review says so and gives the command that locks it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, invoke
from passprice import sidecode
from passprice.registry import Root
from passprice.review import Diff, PriceSide, diff, diff_markdown, diff_text
from passprice.unlocked import ServingMove, named_files

CARD_FILE = "facts/cards/h200_sxm_141gb.toml"
MTP_LOCK = "locks/qwen35-27b-h200-mtp.lock.toml"
#: streams.rewrite derives from BabelStream's Mul over memory.bandwidth: Mul 4.0 → 3.6 TB/s makes it 0.75.
EDITS = (
    ("[streams.rewrite]\nvalue = 0.8333", "[streams.rewrite]\nvalue = 0.75"),
    ("derivation.inputs.mul = { value = 4.0,", "derivation.inputs.mul = { value = 3.6,"),
)
BANDWIDTH = 4.8e12  # B/s, the H200's memory.bandwidth
OLD, NEW = 0.8333, 0.75


def make_sides(tmp: Path, drop: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """BASE and HEAD folders: copies of the checkout's registry, HEAD with streams.rewrite lowered; the files in
    ``drop`` removed from both."""
    sides = []
    for name in ("base", "head"):
        root = tmp / name
        for folder in ("facts", "registry", "locks", "schema", "sources"):
            shutil.copytree(REPO / folder, root / folder)
        for rel in drop:
            (root / rel).unlink()
        sides.append(root)
    card = sides[1] / CARD_FILE
    text = card.read_text(encoding="utf-8")
    for old, new in EDITS:
        assert text.count(old) == 1
        text = text.replace(old, new)
    card.write_text(text, encoding="utf-8")
    return sides[0], sides[1]


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Diff, list[list[str]]]:
    """The review of the change, and the servings each unlocked re-pricing asked for (BASE's, then HEAD's)."""
    base, head = make_sides(tmp_path_factory.mktemp("unlocked"))
    asked: list[list[str]] = []
    real = sidecode.price_locks

    def recording(root: Root, code: Any, requests: Any) -> dict[str, Any]:
        asked.append([r["serving"] for r in requests])
        return real(root, code, requests)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sidecode, "price_locks", recording)
        d = diff(Root(head), str(base), str(head))
    return d, asked


def test_only_the_unlocked_servings_the_change_reaches_are_re_priced(reviewed: tuple[Diff, list[list[str]]]) -> None:
    d, asked = reviewed
    # The H200's servings no lock names (qwen3-30b-a3b-h200, r1-qwen7b-h200 and qwen35-27b-h200-mtp are locked);
    # the MI300X's and H100's are not reached by an H200 card change and are not priced.
    reached = ["deepseek-v3-h200", "gpt-oss-120b-h200", "gpt-oss-20b-h200", "qwen35-27b-h200-chat",
               "qwen3next-80b-a3b-h200"]
    assert asked == [reached, reached]
    # Of those, two rest on streams.rewrite (a recurrent state rewritten in place); the other two do not move.
    assert [(m.name, m.card, m.changed, m.inputs, m.moved) for m in d.unlocked] == [
        ("qwen35-27b-h200-chat", "h200_sxm_141gb", ("streams.rewrite",), ("facts",), "memory_s"),
        ("qwen3next-80b-a3b-h200", "h200_sxm_141gb", ("streams.rewrite",), ("facts",), "memory_s"),
    ]


def test_each_unlocked_move_is_the_rewrite_stream_s_hand_checked(reviewed: tuple[Diff, list[list[str]]]) -> None:
    d, _ = reviewed
    chat, nxt = d.unlocked
    for m, batch in ((chat, 256), (nxt, 16)):
        b, a = m.before.price, m.after.price
        assert b is not None and a is not None and a["batch"] == batch
        # Only the rewritten state's stream moves: batch × rewrite_bytes at bandwidth × share, 0.8333 → 0.75.
        moved = batch * a["rewrite_bytes"] / BANDWIDTH * (1 / NEW - 1 / OLD)
        assert a["memory_s"] - b["memory_s"] == pytest.approx(moved, rel=1e-9)
    # qwen3next at 16 sequences binds on memory: 150,994,944 B of state a sequence, +67.08 µs a pass.
    assert nxt.after.price is not None and nxt.after.price["rewrite_bytes"] == 150_994_944
    assert nxt.binds() == "memory"
    assert (nxt.before.tokens_per_s, nxt.after.tokens_per_s) == (
        pytest.approx(16 / 0.003961568575, rel=1e-9), pytest.approx(16 / 0.004028653279, rel=1e-9)
    )
    assert nxt.relative == pytest.approx(0.003961568575 / 0.004028653279 - 1, rel=1e-8)  # -1.665 %
    # The chat serving at 256 binds on its array (34.42 ms against 24.04 ms of memory): its memory time moves by
    # 0.779 ms, its tokens/s does not.
    assert chat.binds() == "array" and chat.relative == 0.0
    assert chat.before.tokens_per_s == chat.after.tokens_per_s == pytest.approx(21584.1845868, rel=1e-9)


def test_the_review_fails_on_the_locked_price_only(reviewed: tuple[Diff, list[list[str]]]) -> None:
    d, _ = reviewed
    assert d.exit_status == 1 and [lock.name for lock in d.stale] == ["qwen35-27b-h200-mtp"]
    # the mul input moved under its unchanged quote (``row '| Mul | 4.00 |' in TB/s``) is the other reason: a table
    # row's numbers are read in the unit its locator names after the quote
    reason, quote = d.refusal_reasons()
    assert reason.startswith("it moves the locked price of qwen35-27b-h200-mtp without re-locking")
    assert quote.startswith("1 fact's quotes state another figure than its own (h200_sxm_141gb:streams.rewrite)")
    # (the chat serving's price did not move, only its memory_s: not counted as moving, tests/test_walk117.py)
    assert d.summary().endswith("9 locks unaffected; 1 serving no lock pins moves, 1 more only a term of its price "
                                "(memory_s) (not locked, informational)")


def test_text_markdown_and_json_show_them_alike(reviewed: tuple[Diff, list[list[str]]]) -> None:
    d, _ = reviewed
    text = diff_text(d).splitlines()
    heading = text.index(
        "servings no lock pins whose price (or only a term of it) moves (informational: nothing pins them, so they "
        "cannot fail the review; lock one to have reviews judge it)"
    )
    assert text[heading + 1] == "  qwen35-27b-h200-chat (card h200_sxm_141gb): NOT LOCKED, memory_s moved"
    assert text[heading + 3] == "    tokens/s  21,584.2 → 21,584.2  (+0 %: memory_s moved, the price did not)"
    at = text.index("  qwen3next-80b-a3b-h200 (card h200_sxm_141gb): NOT LOCKED, memory_s moved")
    assert text[at + 1: at + 6] == [
        "    changed   streams.rewrite",
        "    tokens/s  4,038.8 → 3,971.6  (-1.665 %)",
        "    pass      3.962 ms → 4.029 ms",
        "    binds     memory",
        "    lock it   `passprice lock qwen3next-80b-a3b-h200 -o locks/qwen3next-80b-a3b-h200.lock.toml`",
    ]
    markdown = diff_markdown(d).splitlines()
    assert markdown[0].startswith("❌ **passprice diff**")  # the locked price, not the unlocked ones
    assert "#### Servings no lock pins" in markdown
    assert "| serving | changed | tokens/s BASE | tokens/s HEAD | change | binds | lock it |" in markdown
    assert (
        "| `qwen3next-80b-a3b-h200` (not locked) | `streams.rewrite` | 4,038.8 | 3,971.6 | -1.665 % | memory | "
        "`passprice lock qwen3next-80b-a3b-h200 -o locks/qwen3next-80b-a3b-h200.lock.toml` |"
    ) in markdown
    assert (
        "| `qwen35-27b-h200-chat` (not locked) | `streams.rewrite` | 21,584.2 | 21,584.2 | +0 % (memory_s moved) | "
        "array | `passprice lock qwen35-27b-h200-chat -o locks/qwen35-27b-h200-chat.lock.toml` |"
    ) in markdown
    (note,) = [line for line in markdown if line.startswith("ℹ️")]
    assert note == (
        "ℹ️ These registered servings are not locked: their prices (or only a term of one) move, but nothing pins "
        "them, so they cannot fail this review (informational). Lock one (the command in the last column) to have "
        "reviews judge it."
    )
    out = json.loads(json.dumps(d.to_json()))
    assert [(u["serving"], u["locked"], u["moved"], u["changed"]) for u in out["unlocked"]] == [
        ("qwen35-27b-h200-chat", False, "memory_s", ["streams.rewrite"]),
        ("qwen3next-80b-a3b-h200", False, "memory_s", ["streams.rewrite"]),
    ]
    nxt = out["unlocked"][1]
    assert nxt["relative_change"] == pytest.approx(-0.016651893, rel=1e-7)
    assert nxt["lock_command"] == "passprice lock qwen3next-80b-a3b-h200 -o locks/qwen3next-80b-a3b-h200.lock.toml"
    assert nxt["before"]["tokens_per_s"] == d.unlocked[1].before.tokens_per_s
    assert nxt["after"]["rests_on"]["streams.rewrite"] == "measured"


def test_unlocked_moves_alone_pass_the_review(tmp_path: Path) -> None:
    # Without the hybrid's lock, the change reaches no locked price: three unlocked servings move, and they fail
    # nothing; the review fails on the mul input moved under its unchanged quote alone (``'| Mul | 4.00 |' in TB/s``).
    base, head = make_sides(tmp_path, drop=(MTP_LOCK,))
    result = invoke("diff", str(base), str(head), "--format", "markdown", root=head)
    assert result.exit_code == 1, result.output
    d = diff(Root(head), str(base), str(head))
    assert [r.split(" (")[0] for r in d.refusal_reasons()] == ["1 fact's quotes state another figure than its own"]
    assert "`qwen35-27b-h200-mtp` (not locked) | `streams.rewrite` | 3,644.2 | 3,556.8 | -2.398 % |" in result.stdout
    assert result.stdout.count("(not locked)") == 3
    assert "no lock affected" in result.stdout.splitlines()[0]


def test_a_review_re_prices_at_most_so_many_unlocked_servings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Five unlocked servings on the H200 are reached (moe46's gpt-oss-120b-h200 the fifth); with a bound of 2 the first
    # two by name are re-priced (neither rests on streams.rewrite, so neither moves) and the other three are counted,
    # not priced.
    from passprice import unlocked

    monkeypatch.setattr(unlocked, "MAX_REPRICED", 2)
    base, head = make_sides(tmp_path)
    d = diff(Root(head), str(base), str(head))
    assert d.unlocked == () and d.unlocked_left_out == 3 and d.to_json()["unlocked_left_out"] == 3
    line = ("3 more servings no lock pins are reached by the change and were not re-priced (a review re-prices at "
            "most 2)")
    assert diff_text(d).splitlines()[-1] == line
    assert f"ℹ️ {line}." in diff_markdown(d).splitlines()
    # the summary says it too (round 17: a review of 205 servings said "199 … move" and nothing of the rest)
    assert "0 servings no lock pins move, 3 more not re-priced (not locked, informational)" in diff_text(d)


def _side(tokens: float | None = None, refusal: str | None = None, message: str = "m") -> PriceSide:
    if tokens is not None:
        return PriceSide(price={"tokens_per_s": tokens, "pass_s": 1 / tokens, "binds": "memory"})
    return PriceSide(refusal={"refusal": refusal, "message": message})


def test_a_refusal_that_comes_or_goes_is_a_move() -> None:
    def moved(before: PriceSide, after: PriceSide) -> str | None:
        return ServingMove("s", "c", before, after).moved

    assert moved(_side(10.0), _side(refusal="NotResident")) == "refused on HEAD"
    assert moved(_side(refusal="NotResident"), _side(10.0)) == "priced on HEAD"
    assert moved(_side(refusal="NotResident"), _side(refusal="NotResident")) is None
    assert moved(_side(refusal="NotResident"), _side(refusal="NotResident", message="other")) == "refusal changed"
    assert moved(_side(10.0), PriceSide(error="card does not read")) == "not priced on HEAD"
    m = ServingMove("s", "c", _side(10.0), _side(refusal="NotResident", message="needs 80 GB, holds 40 GB"))
    assert m.relative is None and m.how() == "refused on HEAD" and m.binds() == "memory → –"


def test_a_serving_names_the_files_its_price_reads() -> None:
    data = (REPO / "registry/servings/qwen35-27b-h200-chat.toml").read_bytes()
    assert named_files(data) == {
        ("card", "h200_sxm_141gb"), ("checkpoint", "qwen35-27b-like"), ("draft", "qwen35-mtp")
    }
    assert named_files(b'card = "facts/cards/x.toml"\nrouting = "uniform"\n') == {("card", "x"), ("routing", "uniform")}
    assert named_files(b"not toml [") == set()


def test_a_serving_head_refuses_gets_no_lock_advice() -> None:
    """Walkthrough 11: under "Servings no lock pins", a serving refused ``NotResident`` on HEAD was advised
    ``passprice lock NAME -o …``, which, pasted, exits 1 (a refused price cannot be locked). Only a serving HEAD
    prices gets the command."""
    from passprice.review import PriceSide
    from passprice.unlocked import ServingMove

    refused = {"refusal": "NotResident", "message": "the card memory must hold more"}
    gone = ServingMove("deepseek-v3-mi300x", "mi300x", PriceSide(refusal=refused), PriceSide(refusal=refused))
    assert gone.lock_words is None
    assert gone.lock_command == "– (HEAD does not price it: no price to lock)"
    assert gone.to_json()["lock_command"] is None
    priced = ServingMove("x", "mi300x", PriceSide(refusal=refused), PriceSide(price={"tokens_per_s": 1.0}))
    assert priced.lock_command == "`passprice lock x -o locks/x.lock.toml`"

