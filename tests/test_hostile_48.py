"""Attack round 48 (issue 13): the lock tables ``[routing]`` and ``[draft]`` (slip round 44) hand-edited and
re-digested, and the titles and notes they pin. Each test builds its reproducer and asserts the exit status and the
exact line (before the round: exit 0, nothing said, or a 100 KB line on every price)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import attrs
import pytest

from cli_helpers import bad, copy_root, invoke

QWEN3 = "locks/qwen3-30b-a3b-h200.lock.toml"  # routes with qwen3-30b-a3b-measured, drafts with nothing
QWEN35 = "locks/qwen35-27b-h200-mtp.lock.toml"  # drafts with qwen35-mtp, routes with nothing
ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"
DRAFT = "facts/drafts/qwen35-mtp.toml"
PINS_OWN = "a lock pins the title and note of its own serving's record only; re-lock it"


def _redigested(root: Path, rel: str, **tables: object) -> None:
    """The lock ``rel`` of ``root`` with its ``routing`` / ``draft`` pins replaced and every digest recomputed, as
    an attacker who knows the digest rule (or passprice's own writer) would write it."""
    from passprice.locks import lock_text, read_lock

    path = root / rel
    path.write_text(lock_text(attrs.evolve(read_lock(path), **tables)), encoding="utf-8")


def _cut(text: str) -> str:
    """A long text as an error line shows it (:func:`passprice.schema.shown_value`: 99 characters, then ``…``)."""
    return f"'{text[:99]}…"


# --- 1. a [routing] or [draft] table pinning a record the lock's serving does not use -------------------------------


@pytest.mark.parametrize(("rel", "table", "name", "said"), [
    (QWEN3, "routing", "uniform", "routing.name: 'uniform' is not the routing record the lock priced with (its "
     "serving's is 'qwen3-30b-a3b-measured' (serving.routing))"),
    (QWEN35, "routing", "uniform", "routing.name: 'uniform' is not the routing record the lock priced with (its "
     "serving routes with no record)"),
    (QWEN35, "draft", "deepseek-v3-mtp", "draft.name: 'deepseek-v3-mtp' is not the drafting method the lock priced "
     "with (its serving's is 'qwen35-mtp' (serving.draft.method))"),
    (QWEN3, "draft", "qwen35-mtp", "draft.name: 'qwen35-mtp' is not the drafting method the lock priced with (its "
     "serving drafts with no method)"),
])  # fmt: skip
def test_a_pin_of_another_record_is_refused(tmp_path: Path, rel: str, table: str, name: str, said: str) -> None:
    """Re-digested, a ``[routing]`` table naming ``uniform`` in the Qwen3 lock (its serving routes with
    ``qwen3-30b-a3b-measured``), one added to the dense MTP lock, a ``[draft]`` table naming ``deepseek-v3-mtp`` in
    the MTP lock and one added to the Qwen3 lock: ``check``, ``reproduce`` and ``price --lock`` each exited 0 and said
    nothing (the pin is compared with the record of its own name only, so it was compared with nothing)."""
    from passprice.locks import RecordPin

    root = copy_root(tmp_path)
    _redigested(root, rel, **{table: RecordPin(name, "A title", "A note.")})
    line = f"passprice: error: {root / rel}: {said}: {PINS_OWN}"
    assert bad("reproduce", str(root / rel), root=root) == [line]
    assert bad("price", "--lock", str(root / rel), root=root) == [line]
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert f"passprice: error: {rel}: {said}: {PINS_OWN}" in checked.stderr.splitlines()


def test_a_pin_of_a_record_named_by_a_long_name_is_cut(tmp_path: Path) -> None:
    """A ``[routing]`` table named by 300 ``u``: the refusal shows the name cut, as every error line shows a long
    text (before the fix above: exit 0 and nothing said)."""
    from passprice.locks import RecordPin

    root = copy_root(tmp_path)
    _redigested(root, QWEN3, routing=RecordPin("u" * 300, "A title"))
    assert bad("reproduce", str(root / QWEN3), root=root) == [
        f"passprice: error: {root / QWEN3}: routing.name: {_cut('u' * 300)} is not the routing record the lock priced "
        f"with (its serving's is 'qwen3-30b-a3b-measured' (serving.routing)): {PINS_OWN}"
    ]


# --- 2. a pinned title or note of any length --------------------------------------------------------------------------


@pytest.mark.parametrize(("rel", "table", "key", "size", "cap"), [
    (QWEN3, "routing", "title", 100_000, 200),
    (QWEN3, "routing", "title", 201, 200),
    (QWEN3, "routing", "note", 4_001, 4_000),
    (QWEN35, "draft", "title", 201, 200),
    (QWEN35, "draft", "note", 100_000, 4_000),
])  # fmt: skip
def test_a_pinned_title_or_note_is_bounded(tmp_path: Path, rel: str, table: str, key: str, size: int,
                                           cap: int) -> None:
    """A re-digested lock pinning a routing title of 100,000 characters: ``check``, ``reproduce`` and ``price
    --lock`` exited 0 and printed it whole on their ``relabelled since the lock`` line (100 KB each), where a card's
    pinned title is at most 200 characters (attack round 47). Titles are capped as a card's, notes as a fact's."""
    from passprice.locks import read_lock

    root = copy_root(tmp_path)
    pin = getattr(read_lock(root / rel), table)
    _redigested(root, rel, **{table: attrs.evolve(pin, **{key: "A" * size})})
    line = (f"passprice: error: {root / rel}: {table}.{key}: {_cut('A' * size)} is too long ({size:,} characters; at "
            f"most {cap:,})")
    assert bad("reproduce", str(root / rel), root=root) == [line]
    assert bad("price", "--lock", str(root / rel), root=root) == [line]


def test_a_pinned_title_of_200_characters_reads(tmp_path: Path) -> None:
    """The cap's edge: a pinned routing title of exactly 200 characters reads, and is said relabelled."""
    from passprice.locks import read_lock

    root = copy_root(tmp_path)
    lock = read_lock(root / QWEN3)
    assert lock.routing is not None
    _redigested(root, QWEN3, routing=attrs.evolve(lock.routing, title="T" * 200))
    result = invoke("reproduce", str(root / QWEN3), root=root)
    assert result.exit_code == 0, result.output
    assert f"routing.title: {'T' * 200!r} → 'Qwen3-30B-A3B, measured skew (single-domain Python, ~8k tokens)'" in (
        result.stdout
    )


# --- 3. the records' own titles and notes, a serving's description, a stack's title -----------------------------------


def _set_key(path: Path, key: str, value: str) -> None:
    text = path.read_text(encoding="utf-8")
    new, count = re.subn(rf'(?m)^{key} = "[^\n]*"', f'{key} = "{value}"', text, count=1)
    assert count == 1, (path, key)
    path.write_text(new, encoding="utf-8")


@pytest.mark.parametrize(("rel", "key", "table", "size", "cap", "args"), [
    (ROUTING, "name", "routing", 100_000, 200, ("price", "qwen3-30b-a3b-h200", "--json")),
    (ROUTING, "note", "routing", 4_001, 4_000, ("price", "qwen3-30b-a3b-h200")),
    (DRAFT, "name", "method", 201, 200, ("price", "qwen35-27b-h200-mtp")),
    (DRAFT, "note", "method", 100_000, 4_000, ("speculate", "qwen35-27b-h200-mtp")),
    ("registry/servings/r1-qwen7b-h200.toml", "description", "", 1_001, 1_000, ("price", "r1-qwen7b-h200")),
])  # fmt: skip
def test_a_record_title_note_or_description_is_bounded(tmp_path: Path, rel: str, key: str, table: str, size: int,
                                                        cap: int, args: tuple[str, ...]) -> None:
    """A routing record titled with 100,000 characters (its ``name`` key) passed ``check`` and made ``price``,
    ``best``, ``roofline``, ``max-batch``, ``sweep``, ``reproduce``, ``audit`` and ``diff`` (text and ``--json``) each
    print a 100 KB line, 300 KB in all for ``price``; a note, a drafting method's title and a serving's description
    likewise (a card's title is capped at 200 characters since attack round 47)."""
    root = copy_root(tmp_path)
    _set_key(root / rel, key, "A" * size)
    where = f"{table}.{key}" if table else key
    too_long = f"is too long ({size:,} characters; at most {cap:,})"
    assert bad(*args, root=root) == [f"passprice: error: {root / rel}: {where}: {_cut('A' * size)} {too_long}"]


def test_a_stack_title_is_bounded(tmp_path: Path) -> None:
    """A serving stack titled with 201 characters passed ``check`` (its title heads every expected price)."""
    root = copy_root(tmp_path)
    rel = "facts/stacks/llamacpp-cuda-2405.toml"
    _set_key(root / rel, "name", "S" * 201)
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert (f"passprice: error: {rel}: stack.name: {_cut('S' * 201)} is too long (201 characters; at most 200)"
            in checked.stderr.splitlines())


def test_new_serving_writes_no_description_past_the_cap(tmp_path: Path) -> None:
    """``new-serving --description`` of 1,001 characters is refused by the serving schema, and nothing is written."""
    root = copy_root(tmp_path)
    out = root / "registry" / "servings" / "longd.toml"
    assert bad("new-serving", "longd", "r1-qwen7b-h200", "--description", "d" * 1001, root=root) == [
        f"passprice: error: {out}: description: {_cut('d' * 1001)} is too long (1,001 characters; at most 1,000) "
        "(nothing written)"
    ]
    assert not out.exists()


# --- 4. a title that reads "hypothetical" spelled with look-alikes ---------------------------------------------------


@pytest.mark.parametrize(("title", "spelled"), [
    ("\uff28\uff59\uff50\uff4f\uff54\uff48\uff45\uff54\uff49\uff43\uff41\uff4c GPU X",  # full-width letters
     " (spelled '\\uff28\\uff59\\uff50\\uff4f\\uff54\\uff48\\uff45\\uff54\\uff49\\uff43\\uff41\\uff4c')"),
    ("Hyp\u043ethetical GPU X", " (spelled 'Hyp\\u043ethetical')"),  # a Cyrillic о
])  # fmt: skip  (a soft hyphen, "Hypo\u00adthetical", is refused by the one-line rule since attack80: test_attack80)
def test_a_title_reading_hypothetical_is_warned(tmp_path: Path, title: str, spelled: str) -> None:
    """A copy of the RTX 4090's card, not marked hypothetical, titled ``Ｈｙｐｏｔｈｅｔｉｃａｌ GPU X`` (or with a
    Cyrillic ``о``, or a soft hyphen in the word): ``check`` gave no warning and ``cards`` showed the title bare, where
    ``Hypothetical GPU X`` is warned of and shown ``, not marked hypothetical`` (session 26b), and two titles are
    compared as they read (attack round 46)."""
    root = copy_root(tmp_path)
    text = (root / "facts" / "cards" / "rtx_4090.toml").read_text(encoding="utf-8")
    text, count = re.subn(r'(?m)^name = "[^\n]*"', f'name = "{title}"', text, count=1)
    assert count == 1
    (root / "facts" / "cards" / "zz.toml").write_text(text, encoding="utf-8")
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    assert (f"  warning: facts/cards/zz.toml: card.name: {title!r} says hypothetical, but the card is not marked "
            "hypothetical = true: it is priced, locked and reviewed as a real card; mark it hypothetical, or retitle "
            f"it{spelled}") in checked.stdout.splitlines()
    (row,) = [line for line in invoke("cards", root=root).stdout.splitlines() if line.startswith("zz ")]
    assert f"{title}, not marked hypothetical" in row.replace("\\xad", "\u00ad")


# --- 5. a checkpoint entry named as its file, with a character no entry name holds ------------------------------------


@pytest.mark.parametrize(("name", "spelled"), [("LPT\u00b9", " (spelled 'LPT\\xb9')"), ('g\\"', "")])
def test_an_entry_name_no_entry_holds_says_what_a_name_is(tmp_path: Path, name: str, spelled: str) -> None:
    """``registry/checkpoints/LPT¹.toml`` (a Windows device) and ``g".toml``, each an entry named as its file: the
    line said ``entry.name: 'LPT¹' is not the entry's name: its file name less .toml``, which it is; what is wrong is
    a character an entry's name may not hold."""
    root = copy_root(tmp_path)
    shown = name.replace("\\", "")
    text = (root / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")
    assert 'name = "gemma3-270m-q4_k_m"' in text
    (root / "registry" / "checkpoints" / f"{shown}.toml").write_text(
        text.replace('name = "gemma3-270m-q4_k_m"', f'name = "{name}"', 1), encoding="utf-8"
    )
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert checked.stderr.splitlines()[0] == (
        f"passprice: error: registry/checkpoints/{shown}.toml: entry.name: {shown!r} is not a checkpoint name "
        f"(letters, digits, '.', '_' and '-', first a letter or digit), its file name less .toml{spelled}"
    )


# --- 6. a pinned figure the lock's serving does not read --------------------------------------------------------------


def _pinned_more(root: Path, rel: str, copies: dict[str, str]) -> None:
    """The lock ``rel`` re-digested with pinned facts added: each new path a copy of a pinned one."""
    from passprice.locks import read_lock

    lock = read_lock(root / rel)
    _redigested(root, rel, facts={**lock.facts, **{new: lock.facts[old] for new, old in copies.items()}})


@pytest.mark.parametrize(("rel", "copies", "said"), [
    (QWEN35, {f"draft.acceptance.{i}": "draft.acceptance.1" for i in range(3, 63)},
     'facts."draft.acceptance.3" (and 59 more past it): a figure the lock\'s serving does not read (it drafts 2 '
     "tokens a pass: serving.draft.tokens)"),
    (QWEN3, {"draft.acceptance.1": "streams.read"},
     'facts."draft.acceptance.1": a figure the lock\'s serving does not read (it drafts nothing: '
     "serving.draft.tokens)"),
    ("locks/r1-qwen7b-h200.lock.toml", {"routing.hot_share": "streams.read"},
     'facts."routing.hot_share": a figure the lock\'s serving does not read (it routes with no record: '
     "serving.routing)"),
])  # fmt: skip
def test_a_pin_the_serving_does_not_read_is_refused(tmp_path: Path, rel: str, copies: dict[str, str],
                                                    said: str) -> None:
    """The MTP lock (two draft tokens) re-digested with ``draft.acceptance.3`` to ``draft.acceptance.62`` pinned:
    ``check`` and ``check --frozen`` said "0 problems" and ``reproduce`` exit 0, while the review failed the same
    file as 60 pins no registry holds; a drafting figure pinned in a lock that drafts nothing, a routing figure in one
    that routes with no record, likewise passed."""
    root = copy_root(tmp_path)
    _pinned_more(root, rel, copies)
    line = f"{said}: passprice lock pins only what the price reads; re-lock it"
    assert bad("reproduce", str(root / rel), root=root) == [f"passprice: error: {root / rel}: {line}"]
    for args in (("check",), ("check", "--frozen")):
        checked = invoke(*args, root=root)
        assert checked.exit_code == 2, checked.output
        assert checked.stderr.splitlines() == [f"passprice: error: {rel}: {line}"]


# --- 7. a lock name no lock file can carry ----------------------------------------------------------------------------


def test_lock_name_past_a_file_name_is_refused(tmp_path: Path) -> None:
    """``lock R1 --name <5,000 a> -o x.lock.toml`` wrote the lock, exit 0, and printed the name whole on every line
    naming it; ``locks/NAME.lock.toml`` cannot exist for it (255 bytes a file name). 245 characters is the most."""
    root = copy_root(tmp_path)
    out = tmp_path / "x.lock.toml"
    assert bad("lock", "r1-qwen7b-h200", "--name", "a" * 246, "-o", str(out), root=root) == [
        f"passprice: error: Invalid value for --name: {_cut('a' * 246)} is not a lock name: 246 characters, where a "
        "lock file locks/NAME.lock.toml holds at most 245 before .lock.toml (see 'cli lock --help')"
    ]
    assert not out.exists()
    written = invoke("lock", "r1-qwen7b-h200", "--name", "a" * 245, "-o", str(out), root=root)
    assert written.exit_code == 0, written.output


@pytest.mark.parametrize(("key", "cap"), [("name", 245), ("serving", 250)])
def test_a_re_digested_lock_name_or_serving_past_a_file_name_is_refused(tmp_path: Path, key: str, cap: int) -> None:
    """A re-digested lock whose ``lock.name`` (or ``lock.serving``) is 5,000 characters: ``check``, ``reproduce`` and
    ``price`` exited 0 and printed the name whole (a 10,168-character line in ``price``)."""
    from passprice.locks import read_lock

    root = copy_root(tmp_path)
    rel = "locks/r1-qwen7b-h200.lock.toml"
    lock = read_lock(root / rel)
    _redigested(root, rel, info=attrs.evolve(lock.info, **{key: "a" * 5000}))
    assert bad("reproduce", str(root / rel), root=root) == [
        f"passprice: error: {root / rel}: lock.{key}: {_cut('a' * 5000)} is too long (5,000 characters; at most {cap})"
    ]


# --- 8. a git revision that names a tree or a blob, not a commit ------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          check=True, capture_output=True)  # fmt: skip
    return done.stdout.decode().strip()


def test_diff_of_a_tree_or_a_blob_says_it_is_no_commit(tmp_path: Path) -> None:
    """``diff HEAD^{tree}``, ``diff HEAD:facts`` and ``diff <a blob's id>`` said "neither a folder nor a revision of
    the git checkout", where each is a revision, of an object that is not a commit."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the registry")
    blob = _git(root, "rev-parse", "HEAD:facts/cards/h200_sxm_141gb.toml")
    for revision, kind in (("HEAD^{tree}", "tree"), ("HEAD:facts", "tree"), (blob, "blob")):
        assert bad("diff", revision, root=root) == [
            f"passprice: error: {revision}: names a {kind} of the git checkout at {root}, not a commit: diff compares "
            "commits (or two folders)"
        ]
    assert bad("diff", "HEAD~5", root=root) == [
        f"passprice: error: HEAD~5: neither a folder nor a revision of the git checkout at {root}"
    ]
