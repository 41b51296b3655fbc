"""Attack round 32 (issue 13) on this session's new code: ``reproduce``'s each drifted fact alone, ``diff``'s
changed notes and derivations (``textchange``), the validated cache's small-file rule, walkthrough 19's routing and
stack output, and slip round 28's review changes. Each input that broke something is kept here.

1. A lock made under a serving stack whose stack facts drifted: each drifted fact alone read ``tokens/s unchanged``
   (the limit's, which no stack fact moves) though ``stack.overhead.pass`` alone took the expected price 10.61 %
   down; the first-term line read ``fixed_s; tokens/s +0 %``. Now the expected price's move follows the limit's.
2. Every card fact's note given a 3,900-character text (207 facts): the pull-request comment was 884 KB, past the
   65,536 characters GitHub takes (857 KB of citations and notes below the table); 100 card files added, a table of
   1,200 rows (118 KB). The details are cut at 30,000 characters and the table at 200 rows (weaker or to verify
   first), the rest counted.
3. The text review of those notes took 11.4 s of CPU in ``text_change`` (224 notes of 120 characters each replaced
   by 3,900: difflib's quadratic ratio for a pair the lengths alone rule out); now 0.06 s, the same output.
4. A lock file named ``zz\n\n#### ✅ all good `x`\n.lock.toml`` beside a change that moves its price: the re-lock
   command in the comment printed the name raw (a heading of the author's in the comment) and the refusal on stderr
   ran over four lines. Each word of a pasted command is now written escaped.
5. A stack's per-card share added over the share a stack lock pinned: ``facts unchanged`` while the expected price
   fell 18.63 %. The facts today's price rests on that the lock does not pin are named, and priced alone.
6. Notes differing in spacing alone (a no-break space for a space): the change read ``[ → ]``; now ``[' ' → '\\xa0']``.
7. That share pinned by a stack lock, then removed: today's price reads the stack's own share instead, so the pinned
   fact was "not read", no drift: ``facts unchanged`` and ``check --frozen`` "all holds" while the expected price
   rose 22.89 %. A pinned fact the recorded price rests on that is gone is drift.
8. The share of 5 added at a provenance the floors take: ``check --frozen`` said ``drift: none``, ``all holds``;
   a fact today's price rests on that the lock does not pin is now drift there.
9. A stack's integer_matrices moved from vector to array: no fact changed, so ``facts unchanged``, ``serving
   unchanged``, ``check --frozen`` ``drift: none`` at +3.03 % expected; the route change is now said as a change of
   what the lock priced (an error with --frozen).
10. The same change in ``diff``: the text review called the stack's table ``[method]`` (a routing record's too), and
    the pull-request comment did not mention it ("no fact changed"); now a section names each record's own table.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke, retitled
from test_slip_34 import renderings  # one in-process review rendered per format

STACK = "facts/stacks/llamacpp-cuda-2405.toml"


def _stack_lock(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    out = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--batch", "1", "--name", "r1-stack",
                 root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    return root


def _set_stack_value(root: Path, table: str, old: str, new: str) -> None:
    path = root / STACK
    text = path.read_text(encoding="utf-8")
    at = text.index(f"[{table}]\n")
    value = text.index(f"value = {old}\n", at)
    path.write_text(text[:value] + f"value = {new}\n" + text[value + len(f"value = {old}\n"):], encoding="utf-8")


def test_stack_fact_alone_moves_the_expected_price(tmp_path: Path) -> None:
    root = _stack_lock(tmp_path)
    # 500 us more a pass: the recorded expected pass 1.0039 ms (limit) + 2.70564 ms (fixed) = 4.21147 ms at 237.448
    # tokens/s becomes 4.71147 ms, 212.249 tokens/s: 4.21147 / 4.71147 - 1 = -10.61 %; the limit does not move.
    _set_stack_value(root, "overhead.pass", "0.0", "500.0")
    _set_stack_value(root, "memory.reserved", "512", "1024")
    out = invoke("reproduce", "locks/r1-stack.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's):")
    assert lines[at + 1] == "    stack.memory.reserved: tokens/s unchanged, expected tokens/s unchanged"
    assert lines[at + 2] == ("    stack.overhead.pass: tokens/s unchanged (fixed_s 2.706 ms → 3.206 ms, +18.48 %), "
                             "expected tokens/s -10.61 %")
    assert lines[at - 1] == (
        "  first term that moved with today's inputs: fixed_s; tokens/s +0 %, expected tokens/s -10.61 %"
    )
    data = json.loads(invoke("reproduce", "locks/r1-stack.lock.toml", "--json", root=root).stdout)
    alone = {a["path"]: a["price"] for a in data["facts_alone"]}
    assert abs(alone["stack.overhead.pass"]["expected"]["tokens_per_s"] - 1.0 / 0.00471147) < 0.01


def test_one_stack_fact_alone_is_the_whole_move(tmp_path: Path) -> None:
    root = _stack_lock(tmp_path)
    _set_stack_value(root, "overhead.pass", "0.0", "500.0")
    out = invoke("reproduce", "locks/r1-stack.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    assert "drifted fact alone" not in out.stdout
    assert out.stdout.splitlines()[-1] == (
        "  first term that moved with today's inputs: fixed_s; tokens/s +0 %, expected tokens/s -10.61 %"
    )


def _notes_everywhere(root: Path) -> None:
    """Every note of every card fact given a 3,900-character text (each its own: no change is said once)."""
    import re

    base = " ".join(f"word{i % 50}" for i in range(600))[:3900]
    for n, path in enumerate(sorted((root / "facts/cards").glob("*.toml"))):
        text = path.read_text(encoding="utf-8")
        parts = re.split(r'^note = ".*"$', text, flags=re.M)
        notes = [f'note = "{base} X{n}-{k}"' for k in range(len(parts) - 1)] + [""]
        text = "".join(part + note for part, note in zip(parts, notes, strict=True))
        path.write_text(text, encoding="utf-8")


def test_comment_of_many_long_notes_stays_under_githubs_limit(tmp_path: Path) -> None:
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    _notes_everywhere(head)
    status, (text, full) = renderings(REPO, "comment", "text", base=str(base), head=str(head))  # one review
    assert status == 0, text[-3000:]
    assert len(text) < 65_536, len(text)  # was 884 KB: 857 KB of citations and notes below the table
    lines = text.splitlines()
    changed = int(lines[1].split(": ", 1)[1].split(" facts changed")[0])
    shown = sum(1 for line in lines if line.startswith("- `") and " in `facts/" in line)
    last = next((line for line in lines if line.startswith("- the citations, notes and derivations of ")), None)
    if last is None:
        # session 32: the review's other sections grew (each figure to find in a changed source, walkthrough 41), so
        # the Facts section's last lines, that count among them, are cut by the comment's own budget, and said so
        assert any(line.startswith("- ✂️ and ") and " more lines of this section, cut to keep this comment within "
                   "GitHub's 65,536 characters" in line for line in lines)
        assert 1 <= shown < changed
    else:
        hidden = int(last.removeprefix("- the citations, notes and derivations of ").split(" ")[0])
        assert last.endswith(" more changed facts: the text review (`passprice diff`) shows each")
        assert shown + hidden == changed and shown >= 1 and hidden >= 1
    # a note under each fact shown (the last fact's note may be among the cut lines)
    assert shown - 1 <= text.count("**note**") <= shown
    assert full.count("note: ") >= changed  # the text review still shows every note


def test_comment_of_a_thousand_added_facts_counts_the_table_rows_past_200(tmp_path: Path) -> None:
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    card = (head / "facts/cards/a40.toml").read_text(encoding="utf-8")
    for i in range(100):
        (head / f"facts/cards/zz{i}.toml").write_text(retitled(card, f"NVIDIA A40 zz{i}"), encoding="utf-8")
    out = invoke("diff", str(base), str(head), "--format", "comment")
    # their quote look-ups under the review's bound (past the 512 before, exit 1; tests/test_bound147.py)
    assert out.exit_code == 0, out.output
    assert len(out.stdout) < 65_536, len(out.stdout)  # 118 KB with the table whole
    lines = out.stdout.splitlines()
    assert lines[1].split(": ", 1)[1].startswith("1,200 facts added in 100 new files")  # 12 facts an A40 file
    assert sum(1 for line in lines if line.startswith("| `zz")) == 200
    # each a copied citation of the A40's, to verify (tests/test_fix166.py)
    assert ("and 1,000 more changed facts (1000 of them weaker or to verify): the text review (`passprice diff`) lists "
            "each") in lines, lines[-5:]


def test_a_rewrite_is_told_without_the_quadratic_matching(monkeypatch: pytest.MonkeyPatch) -> None:
    import difflib

    from passprice.textchange import text_change

    def quadratic(self: difflib.SequenceMatcher[str]) -> float:
        raise AssertionError("ratio() called")

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", quadratic)
    old = "The datasheet says '80GB HBM2e' (decimal); the device reports 81,920 MiB = 80 GiB, what a serving fills."
    new = " ".join(f"word{i % 50}" for i in range(600))
    assert text_change(old, new) == f"{old} → {new}"  # lengths alone bound the ratio: 2 x 44 / (44 + 1199) < 0.5


def test_a_lock_file_name_with_newlines_writes_no_markdown_into_the_comment(tmp_path: Path) -> None:
    """A lock added under a name holding newlines (and a heading after them), beside a change moving its price:
    the re-lock command of slip round 28 printed the name raw, so the pull-request comment gained a heading
    ``#### ✅ all good`` of the author's, and the refusal on stderr ran over four lines."""
    import shutil

    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    name = "zz\n\n#### ✅ all good `x`\n"
    shutil.copy(head / "locks/r1-qwen7b-h200.lock.toml", head / f"locks/{name}.lock.toml")
    card = head / "facts/cards/h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    at = text.index("[memory.capacity]\nvalue = 141\n")
    card.write_text(text[:at] + "[memory.capacity]\nvalue = 150\n" + text[at + 30:], encoding="utf-8")
    out = invoke("diff", str(base), str(head), "--format", "comment")
    assert out.exit_code == 1, out.output
    assert "\n#### ✅ all good" not in out.stdout
    wanted = ("- `r1-qwen7b-h200`: the change moved its price and its file records the old one: once the move is "
              "reviewed, re-lock it with `` passprice lock --update -o "
              "'locks/zz\\n\\n#### ✅ all good `x`\\n.lock.toml' ``")  # fmt: skip
    assert wanted in out.stdout.splitlines()
    assert len(out.stderr.splitlines()) == 1 and out.stderr.startswith("passprice: refused: ")
    assert "-o 'locks/zz\\n\\n#### ✅ all good `x`\\n.lock.toml'" in out.stderr


def test_a_card_share_over_the_pinned_stack_share_is_named(tmp_path: Path) -> None:
    """A stack's ``[cards.h200_sxm_141gb.share.read]`` added over the ``share.read`` a stack lock pinned: the price
    no longer reads the pinned fact, so nothing drifted, and reproduce said ``facts unchanged`` while the expected
    price fell 18.63 %."""
    root = _stack_lock(tmp_path)
    with (root / STACK).open("a", encoding="utf-8") as f:
        f.write('\n[cards.h200_sxm_141gb.share.read]\nvalue = 0.5\nunit = "1"\nprovenance = "assumed"\n'
                'source = "passprice-stack-calibration"\nlocator = "a test"\n')  # fmt: skip
    out = invoke("reproduce", "locks/r1-stack.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert ("    facts          the price now rests on 1 fact the lock does not pin: "
            "stack.cards.h200_sxm_141gb.share.read: 0.5 (assumed)") in lines  # fmt: skip
    # The weights' read at share 0.9883: 4.37056 GB / (4.8 TB/s x 0.9333 x 0.9883) = 0.98714 ms of the expected
    # pass 4.21147 ms; at 0.5 it takes 0.98714 x 0.9883 / 0.5 ms: 5.17551 ms, 193.22 tokens/s, -18.63 %.
    assert lines[-1] == "  first term that moved with today's inputs: ratio; tokens/s +0 %, expected tokens/s -18.63 %"
    _set_stack_value(root, "overhead.pass", "0.0", "500.0")
    out = invoke("reproduce", "locks/r1-stack.lock.toml", root=root)
    lines = out.stdout.splitlines()
    assert lines[-2:] == [
        "    stack.overhead.pass: tokens/s unchanged (fixed_s 2.706 ms → 3.206 ms, +18.48 %), expected tokens/s "
        "-10.61 %",
        "    stack.cards.h200_sxm_141gb.share.read: tokens/s unchanged, expected tokens/s -18.63 %",
    ]
    data = json.loads(invoke("reproduce", "locks/r1-stack.lock.toml", "--json", root=root).stdout)
    assert [u["path"] for u in data["unpinned"]] == ["stack.cards.h200_sxm_141gb.share.read"]


def test_a_change_of_spacing_alone_is_shown() -> None:
    """Near-identical notes differing in spacing alone (a no-break space for a space, two spaces for one): the
    change read ``[ → ]``, and a space added ``[+ ]``, which says nothing of what changed."""
    from passprice.textchange import text_change

    old = ("The datasheet says 80GB HBM2e (decimal); the device reports 81,920 MiB = 80 GiB, the memory a serving "
           "can fill completely.")  # fmt: skip
    assert text_change(old, old.replace("reports 81", "reports\u00a081")) == (
        "…HBM2e (decimal); the device reports [' ' → '\\xa0']81,920 MiB = 80 GiB, …"
    )
    assert text_change(old, old.replace(";", " ;")) == (
        "…datasheet says 80GB HBM2e (decimal) [+ ' '] ; the device reports 81,920 …"
    )
    assert text_change(old, old.replace("80 GiB", "80 GiBs")) == (
        "…reports 81,920 MiB = 80 [GiB → GiBs], the memory a serving …"
    )


CARD_SHARE = ('\n[cards.h200_sxm_141gb.share.read]\nvalue = 0.5\nunit = "1"\nprovenance = "assumed"\n'
              'source = "passprice-stack-calibration"\nlocator = "a test"\n')  # fmt: skip


def test_a_removed_card_share_a_stack_lock_rests_on_is_drift(tmp_path: Path) -> None:
    """A stack lock made with the stack's ``[cards.h200_sxm_141gb.share.read]`` (0.5), which is then removed: today's
    price reads the stack's own ``share.read`` (0.9883) instead, so the pinned fact was "not read" and no drift:
    reproduce said ``facts unchanged`` and ``check --frozen`` ``drift: none … all holds`` while the expected price
    rose 22.89 % (193.22 → 237.45 tokens/s, the inverse of the -18.63 % above)."""
    root = copy_root(tmp_path)
    original = (root / STACK).read_text(encoding="utf-8")
    (root / STACK).write_text(original + CARD_SHARE, encoding="utf-8")
    out = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--batch", "1", "--name", "r1-card",
                 root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    (root / STACK).write_text(original, encoding="utf-8")
    out = invoke("reproduce", "locks/r1-card.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert "    facts          1 drifted: stack.cards.h200_sxm_141gb.share.read: 0.5 (assumed) → gone" in lines
    assert lines[-1] == "  first term that moved with today's inputs: ratio; tokens/s +0 %, expected tokens/s +22.89 %"
    out = invoke("check", "--frozen", root=root)
    assert out.exit_code == 1
    lines = out.stdout.splitlines()
    at = lines.index("lock r1-card (locks/r1-card.lock.toml): FAILS")
    assert lines[at + 5:at + 7] == [
        "  drift (an error with --frozen):", "    stack.cards.h200_sxm_141gb.share.read: 0.5 (assumed) → gone"
    ]


def test_check_frozen_fails_on_a_fact_the_lock_does_not_pin(tmp_path: Path) -> None:
    """The per-card share added over the pinned one, at a provenance the lock's floors take (estimated): ``check
    --frozen`` said ``drift: none``, ``all holds`` (exit 0) of a lock whose expected price had fallen 18.63 %."""
    root = _stack_lock(tmp_path)
    with (root / STACK).open("a", encoding="utf-8") as f:
        f.write(CARD_SHARE.replace('"assumed"', '"estimated"'))
    out = invoke("check", "--frozen", root=root)
    assert out.exit_code == 1, out.output
    lines = out.stdout.splitlines()
    at = lines.index("lock r1-stack (locks/r1-stack.lock.toml): FAILS")
    assert lines[at + 4:at + 7] == [
        "  floors: lock r1-stack holds; the price's weakest provenance is estimated",
        "  drift (an error with --frozen):",
        "    stack.cards.h200_sxm_141gb.share.read: not pinned → 0.5 (estimated): the price now rests on it",
    ]
    assert invoke("check", root=root).exit_code == 0  # without --frozen: the floors hold


def test_a_stack_route_changed_is_said(tmp_path: Path) -> None:
    """A stack's integer_matrices moved from vector to array (no fact changed): reproduce said ``facts unchanged``,
    ``serving unchanged`` and ``check --frozen`` ``drift: none`` while the expected price rose 3.03 %."""
    root = _stack_lock(tmp_path)
    path = root / STACK
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('integer_matrices = "vector"', 'integer_matrices = "array"'), encoding="utf-8")
    out = invoke("reproduce", "locks/r1-stack.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert "    serving        stack llamacpp-cuda-2405 integer_matrices: vector → array" in lines
    assert lines[-1] == "  first term that moved with today's inputs: ratio; tokens/s +0 %, expected tokens/s +3.031 %"
    out = invoke("check", "--frozen", root=root)
    assert out.exit_code == 1
    lines = out.stdout.splitlines()
    at = lines.index("lock r1-stack (locks/r1-stack.lock.toml): FAILS")
    assert lines[at + 4:at + 6] == [
        "  serving changed (an error with --frozen):", "    stack llamacpp-cuda-2405 integer_matrices: vector → array"
    ]


def test_a_records_own_table_changed_is_in_the_comment_and_named_by_its_table(tmp_path: Path) -> None:
    """A stack's integer_matrices changed (no fact): the text review called the table ``[method]`` and the
    pull-request comment did not mention the change at all ("no fact changed"); a routing record's too."""
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    path = head / STACK
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('integer_matrices = "vector"', 'integer_matrices = "array"'), encoding="utf-8")
    routing = head / "facts/routing/qwen3-30b-a3b-measured.toml"
    routing.write_text(routing.read_text(encoding="utf-8").replace("experts for 90 %", "experts for 90 percent"),
                       encoding="utf-8")  # fmt: skip
    _, (text, comment) = renderings(REPO, "text", "comment", base=str(base), head=str(head))  # one review
    lines = text.splitlines()
    assert "  [stack] changed: integer_matrices" in lines and "  [routing] changed: note" in lines
    # walkthrough 82: the lock made under the stack names the route it pinned, as reproduce does (it read
    # "changed   –", its expected price +3.03 %)
    at = next(n for n, line in enumerate(lines) if line.startswith("  r1-qwen7b-h200-llamacpp (locks/"))
    block = lines[at:lines.index("", at)]
    assert "    changed   serving" in block
    assert "    serving   stack llamacpp-cuda-2405 integer_matrices: vector → array" in block
    lines = comment.splitlines()
    at = lines.index("#### Records' own tables changed")
    assert lines[at + 2].startswith("- `facts/routing/qwen3-30b-a3b-measured.toml`: `[routing]` `note` — ⚠️ **to "
                                    "verify**: routing record qwen3-30b-a3b-measured's note changed")  # slip 43
    # walkthrough 82: a route moved under the locks made under the stack is to verify, old → new
    assert lines[at + 3].startswith("- `facts/stacks/llamacpp-cuda-2405.toml`: `[stack]` `integer_matrices` — ⚠️ **to "
                                    "verify**: serving stack llamacpp-cuda-2405 rerouted: its integer_matrices "
                                    "'vector' → 'array'"), lines[at + 3]


def test_a_stack_note_past_4000_characters_is_refused_as_a_cards_is(tmp_path: Path) -> None:
    """Round 32's leftover: the stack schema bounded locators (2,000) but not notes, where cards, drafting methods
    and routing records allow 4,000 characters: a 100,000-character note passed check."""
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = stack.read_text(encoding="utf-8")
    note = text.split("\nnote = ", 1)[1].split("\n", 1)[0]  # the [stack] table's own note, its first
    stack.write_text(text.replace(f"\nnote = {note}\n", f'\nnote = "{"x" * 4001}"\n', 1), encoding="utf-8")
    out = invoke("check", root=root)
    assert out.exit_code == 2
    lines = [line for line in out.stderr.splitlines() if "stack.note" in line]
    assert len(lines) == 1
    said = (r"passprice: error: facts/stacks/llamacpp-cuda-2405\.toml: stack\.note: 'x{90,100}… is too long \(4,001 "
            r"characters; at most 4,000\)")  # the bound and the length said since round 33
    assert re.fullmatch(said, lines[0]), lines


def test_a_card_and_a_routing_record_of_one_name(tmp_path: Path) -> None:
    """Round 32's leftover: with facts/cards/a40.toml and facts/routing/a40.toml, ``fact show a40 routing.hot_share``
    said "not a card fact path", silent on the routing record of that name."""
    import shutil

    root = copy_root(tmp_path)
    shutil.copy(root / "facts" / "routing" / "uniform.toml", root / "facts" / "routing" / "a40.toml")
    shown = invoke("fact", "show", "a40", "routing.hot_share", root=root)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == "a40 (facts/routing/a40.toml), a routing record"
    card = invoke("fact", "show", "a40", "memory.bandwidth", root=root)
    assert card.exit_code == 0 and card.stdout.startswith("a40 (facts/cards/a40.toml)")
    wrong = invoke("fact", "show", "a40", "nonsense", root=root)
    assert wrong.exit_code == 2
    assert wrong.stderr.startswith(
        f"passprice: error: {root / 'facts' / 'routing' / 'a40.toml'}: nonsense: no such fact (it has "
        "routing.hot_experts, routing.hot_share); nor a fact path of the card a40 (memory.capacity, "
    )
