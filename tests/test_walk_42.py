"""Walkthrough 42 (README only, a card author): an AMD Instinct MI325X added by copying ``mi300x.toml``, its memory
figures re-cited, priced, compared, audited, locked, and one datasheet figure changed as a pull request would. Each
test builds the reproducer of one finding and asserts the exit status and the words.

Finding 1: with the copy's ``memory.bandwidth`` set to 6 TB/s, ``check`` called the three stream shares stale and
said to run ``passprice fact recompute mi325x``, which writes the MI300X's BabelStream rates over the MI325X's
bandwidth (0.645, not 0.7302) as ``measured`` shares of the MI325X: no measurement of it. A stale fact citing the
place another card's same fact cites now says so, and the hint says to recompute once the figures hold.
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import copy_card, copy_root, invoke


def _copied_mi325x(root: Path) -> Path:
    card = root / "facts" / "cards" / "mi325x.toml"
    copy_card(root / "facts" / "cards" / "mi300x.toml", card)
    text = card.read_text()
    old = "[memory.bandwidth]\nvalue = 5.3\n"
    assert old in text
    card.write_text(text.replace(old, "[memory.bandwidth]\nvalue = 6.0\n"))
    return card


def test_a_copied_cards_stale_share_says_its_figures_are_the_other_cards(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _copied_mi325x(root)
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    read = next(line for line in lines if "mi325x.toml: streams.read is stale" in line)
    # 3.87 TB/s (the MI300X's BabelStream Dot) / 6 TB/s = 0.645: the number `fact recompute` would write
    assert "recomputed from today's inputs it is 0.645, not 0.7302" in read, read
    assert read.endswith(
        "; it cites the same place as another card's (facts/cards/mi300x.toml: streams.read): if copied from there, "
        "its figures are that card's, so recompute it only where they hold for this card, else cite this card's own "
        "(or mark it estimated or assumed) with `passprice fact set`"
    ), read
    # each once where check lists it, and again before "check FAILED" (the first 5 problems: tests/test_fix53w.py)
    listed = lines[:lines.index(next(line for line in lines if line.startswith("problems, as listed at the top")))]
    assert sum(" is stale: " in line and "same place as another card's" in line for line in listed) == 3
    assert (
        "  to write them from today's inputs (once the copied ones hold for this card): "
        "`passprice fact recompute mi325x`" in lines
    ), result.stdout
    # The MI300X's own shares are not stale and carry no such words.
    assert not any(line.startswith("  facts/cards/mi300x.toml:") for line in lines), result.stdout


def test_a_stale_share_citing_a_place_of_its_own_is_not_called_copied(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = _copied_mi325x(root)
    # The copy's Dot re-cited to a measurement of its own (a made-up locator): no other card cites that place.
    text = card.read_text()
    old = 'HBM Bandwidth table (BabelStream): row \'| Dot   | 3.87              |\' in TB/s"\nnote'
    assert old in text
    card.write_text(text.replace(old, 'our MI325X BabelStream run: Dot 3.87 TB/s"\nnote', 1))
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    read = next(line for line in result.stdout.splitlines() if "mi325x.toml: streams.read is stale" in line)
    assert read.endswith("recomputed from today's inputs it is 0.645, not 0.7302"), read
    # streams.rewrite and streams.append still cite the MI300X's places: the hint still waits on them.
    assert "  to write them from today's inputs (once the copied ones hold for this card): " in result.stdout


def test_explain_knows_the_term_seconds_a_review_prints() -> None:
    """Finding 2: a review's lock row read ``price moved, lock not updated (memory_s)`` and ``passprice explain
    memory_s`` answered "'memory_s' is not a term passprice defines", though every word an output prints is to be
    in the glossary. Each term's seconds (``memory_s`` … ``pass_s``, as ``--json`` and the review name them) is its
    term's alias."""
    for name, term in (("memory_s", "memory"), ("host_s", "host"), ("array_s", "array"), ("vector_s", "vector"),
                       ("scale_s", "scale"), ("pass_s", "pass")):
        result = invoke("explain", name)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"{term}: "), result.stdout
        assert name in result.stdout.splitlines()[0]


def _bad_check(root: Path, line: str) -> None:
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [line], result.stderr


def test_a_sources_copies_written_as_one_string_says_to_write_a_list_of_addresses(tmp_path: Path) -> None:
    """Finding 3: README says a source record gives "the ``copies`` read instead of or besides the original", not
    that it is a list of http(s) addresses; ``copies = "a stored text copy"`` read ``source.copies: 'a stored text
    copy' is not of type 'array'``, and the list then read ``does not match '^https?://[^\\\\s\\\\x00-\\\\x1f…'``."""
    root = copy_root(tmp_path)
    path = root / "sources" / "vultr-mi325x.toml"
    text = ('#:schema ../schema/source.schema.json\n[source]\ntitle = "Hardware Requirements"\nkind = "web-page"\n'
            'publisher = "Vultr"\ndate = "2026-03-11"\nurl = "https://docs.vultr.com/inference-cookbook/rocm/"\n'
            'retrieved = "2026-12-05"\nread = "the MI325X Specifications table"\ncopies = "a stored text copy"\n')
    path.write_text(text)
    _bad_check(root, (
        "passprice: error: sources/vultr-mi325x.toml: source.copies: 'a stored text copy' is one string, not a "
        "list: write [\"a stored text copy\"] (addresses of copies of it that were read instead of (or besides) "
        "the original)"))
    path.write_text(text.replace('copies = "a stored text copy"', 'copies = ["a stored text copy"]'))
    _bad_check(root, (
        "passprice: error: sources/vultr-mi325x.toml: source.copies.0: 'a stored text copy' is not an http:// or "
        "https:// address (a copy with no address is said in read or note)"))


def test_a_lock_added_before_a_later_edit_is_not_called_edited_by_hand(tmp_path: Path) -> None:
    """Finding 4: the card, its serving and its lock committed on a branch, then the card's bandwidth edited (6 →
    5.9 TB/s) without re-locking, the review against ``main`` said "1 with pins edited by hand" and told the author
    to "restore its file as BASE has it (`git checkout BASE -- FILE`)", a file BASE has not. A lock the change adds
    pinning what no side holds now says it was most likely locked before a later edit, and to re-lock it."""
    base = copy_root(tmp_path / "base")
    head = copy_root(tmp_path / "head")
    _copied_mi325x(head)
    for args in (
        ("new-serving", "r1-qwen7b-mi325x", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "mi325x",
         "--batch", "64", "--description", "walk42"),
        ("fact", "recompute", "mi325x"),  # the shares as the copy's check leaves them, so the card checks
        ("lock", "r1-qwen7b-mi325x", "-o", str(head / "locks" / "r1-qwen7b-mi325x.lock.toml")),
    ):
        made = invoke(*args, root=head)
        assert made.exit_code == 0, (args, made.output)
    card = head / "facts" / "cards" / "mi325x.toml"
    card.write_text(card.read_text().replace("[memory.bandwidth]\nvalue = 6.0\n", "[memory.bandwidth]\nvalue = 5.9\n"))
    assert invoke("fact", "recompute", "mi325x", root=head).exit_code == 0
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "1 added (pinning what no side holds)" in lines[1] and "edited by hand" not in lines[1], lines[1]
    # counted once (slip 55: "1 lock affected, 1 added pinning what no side holds, 1 price moved unreviewed, 1 added";
    # then "1 added pinning what no side holds, 1 added", two locks read where one was: tests/test_fix53w.py)
    assert "1 lock affected, 1 added (pinning what no side holds); HEAD fails the review's rules" in lines[1], lines[1]
    assert "moved unreviewed" not in lines[1]
    assert ("  r1-qwen7b-mi325x (locks/r1-qwen7b-mi325x.lock.toml, card mi325x, price): it pins what no side of the "
            "change holds (locked before a later commit of the change edited a fact it pins, or edited by hand): see "
            "HEAD fails the review's rules") in lines, result.stdout
    markdown = invoke("diff", str(base), str(head), "--format", "markdown").stdout.splitlines()
    assert ("- `r1-qwen7b-mi325x`: it pins what no side of the change holds (locked before a later commit of the "
            "change edited a fact it pins, or edited by hand): re-lock it with `passprice lock --update -o "
            "locks/r1-qwen7b-mi325x.lock.toml`") in markdown
    assert not any("git checkout BASE" in line and "mi325x" in line for line in markdown)
