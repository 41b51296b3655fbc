"""left92: session 43's leftovers (issue 13), each reproducer built in its test.

- (1) a one-line text holding U+FFF0–U+FFF8 (unassigned, default-ignorable: invisible) passed ``fact set
  --locator`` (exit 0, written); a source's ``url``, ``copies`` and ``repository`` holding a tag character
  (U+E0041) passed ``check`` and ``audit`` (exit 0): their patterns are their own, and stated no ``one-line`` format.
- (2) a first-format lock edited by hand whose name another lock of ``locks/`` carries was told to ``lock --update -o
  FILE`` after restoring it, which is refused there (left58); now the re-lock under its file's name, which works.
- (4) the review of a revision streamed every registry document past the file cap through ``git cat-file blob`` to
  hash it, whatever its size: 1 GiB of zeros is 1,045,032 bytes of pack and 1.57 s of CPU (4.7 s wall) on top of
  the review's own. Now past ``gitread.HASHED_BYTES`` (512 MiB) none is hashed, and the one line names the document.
- (5) ``reproduce LOCK`` whose history search (``model_commit``) was cut by its cap named the commit that last
  changed the lock as the lock's code, in its verdict (text and ``--json``), as if the history held no other answer.
- (3) one ``lock --update`` of a first-format lock looked ``locks/`` over twice (``update_name_clash``, every file
  parsed whole, then ``require_unique_name``): once now, each file's ``[lock]`` table alone parsed. A file there
  nesting arrays 3,000 deep under a ``[lock]`` table of the lock's name made ``lock`` a RecursionError traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

R1 = "r1-qwen7b-h200"

#: What a one-line text holding an invisible character is told.
ONE_LINE_SAID = ("holds a control character, a line separator, a bidi control or an invisible character (a newline, a "
                 "tab, U+2028, U+202E, U+200B …): write it on one line")


# --- (1) U+FFF0–U+FFF8 in a one-line text, a tag character in an address ---------------------------------------------


def test_1_the_unassigned_specials_are_refused_in_a_one_line_text(tmp_path: Path) -> None:
    # before: `fact set … --locator 'Table<U+FFF0> 1'` exit 0, the locator written (ONE_LINE named U+FFF9–U+FFFB
    # alone of the Specials block; U+FFF0–U+FFF8 are Default_Ignorable_Code_Point too)
    import re

    from passprice.schema import ONE_LINE, ecma_pattern

    one_line = re.compile(ecma_pattern(ONE_LINE))
    for code in range(0xFFF0, 0xFFFC):
        assert not one_line.search(f"Table{chr(code)} 1"), hex(code)
    for ch in "\ufffc\ufffd\uffef\ufe0f":  # the object replacement and replacement characters print; so do these
        assert one_line.search(f"Table{ch} 1"), repr(ch)
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    for ch, shown in (("\ufff0", "\\ufff0"), ("\ufff8", "\\ufff8")):
        assert bad("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9", "--unit", "1", "--provenance",
                   "estimated", "--source", "nvidia-h200-datasheet", "--locator", f"Table{ch} 1", root=root) == [
            f"passprice: error: {card}: streams.read.locator: 'Table{shown} 1' {ONE_LINE_SAID}"]
    assert card.read_bytes() == before


def test_1_a_tag_character_in_a_source_address_is_refused(tmp_path: Path) -> None:
    # before: url = "https://…/README.md<U+E0041>" passed audit --source (exit 0) and check: the address patterns
    # (ECMA-262 classes without the `u` flag) cannot name a range past U+FFFF, and they stated no one-line format
    from passprice.schema import problems

    record = {"title": "A title", "kind": "web-page", "read": "read it all", "publisher": "Someone",
              "date": "2024", "retrieved": "2024-01-02", "commit": "unknown",
              "url": "unknown", "repository": "https://example.org/r"}
    described = {"url": 'where the document is, or "unknown"',
                 "copies": "an http:// or https:// address (a copy with no address is said in read or note)",
                 "repository": "a document kept in a git repository: the repository's address (facts locate files "
                               "in it)"}
    for suffix, shown in (("\U000e0041", "\\U000e0041"), ("\U000e007f", "\\U000e007f"), ("\ufff3", "\\ufff3"),
                          ("\u200b", "\\u200b")):
        address = f"https://example.org/a{suffix}"
        for key, said in described.items():
            value = [address] if key == "copies" else address
            found = problems({"source": {**record, key: value}}, "source")
            where = "source.copies.0" if key == "copies" else f"source.{key}"
            assert found == [f"{where}: 'https://example.org/a{shown}' is not {said}"], (key, found)
    assert problems({"source": {**record, "url": "https://example.org/a\U000e0100"}}, "source") == []  # a selector
    root = copy_root(tmp_path)
    source = root / "sources" / "alvarobartt-cuda-device-query.toml"
    text = source.read_text(encoding="utf-8")
    url = "https://github.com/alvarobartt/cuda-device-query/blob/785c09f81d56cedba22460cb643b23ae0e1ba3b3/README.md"
    assert text.count(f'url = "{url}"') == 1
    source.write_text(text.replace(f'url = "{url}"', f'url = "{url}\U000e0041"'), encoding="utf-8")
    assert bad("audit", "--source", "alvarobartt-cuda-device-query", root=root) == [
        f"passprice: error: {source}: source.url: '{url}\\U000e0041' is not where the document is, or \"unknown\""]


# --- (3) one look over locks/ a lock run ------------------------------------------------------------------------------


def _old_alone(tmp_path: Path) -> tuple[Path, Path]:
    """A registry whose ``locks/`` holds ``old.lock.toml`` (a first-format lock named R1) and R1's other locks, not
    R1's own lock; the root and the old lock's path."""
    root = copy_root(tmp_path)
    (root / "locks" / f"{R1}.lock.toml").unlink()
    old = root / "locks" / "old.lock.toml"
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    return root, old


def test_3_a_first_format_update_looks_locks_over_once(tmp_path: Path, monkeypatch: Any) -> None:
    # before: update_name_clash (before the price) and require_unique_name (before the write) each listed and read
    # the folder: 100 current-format locks of 169 KB holding the name cost the two 5,966 ms of CPU, now 40 ms
    from passprice import locks

    root, old = _old_alone(tmp_path)
    looks: list[str] = []
    holders = locks.name_holders

    def counted(*args: Any) -> list[tuple[str, dict[str, Any]]]:
        looks.append(args[2])
        return holders(*args)

    monkeypatch.setattr(locks, "name_holders", counted)
    done = invoke("lock", "--update", "-o", str(old), root=root)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("locked r1-qwen7b-h200 (price, locks serving r1-qwen7b-h200): 996.1 tokens/s")
    assert looks == [R1]
    # beside a current-format lock of its name the update is refused, as left58 refused it, after that one look
    looks.clear()
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    before = old.read_bytes()
    shutil.copy(REPO / "locks" / f"{R1}.lock.toml", root / "locks" / "taken.lock.toml")
    assert bad("lock", "--update", "-o", str(old), root=root) == [
        f"passprice: error: {old}: lock.name: 'r1-qwen7b-h200' is also the name of locks/taken.lock.toml: --update "
        "would write this first-format lock in today's format, whose name must be unique (a first-format lock's name "
        "is the serving it locks, so the two could share it; `passprice check` refuses two current-format locks of "
        f"one name): re-lock it under its file's name (`passprice lock r1-qwen7b-h200 --force -o {old}`), or remove "
        "it; nothing written"]
    assert looks == [R1] and old.read_bytes() == before


def test_3_a_lock_file_nesting_past_the_parser_is_passed_over(tmp_path: Path) -> None:
    # before: RecursionError('maximum recursion depth exceeded'), a traceback (tomllib.loads, uncaught); now the
    # file is passed over as one that does not parse is (check refuses it, naming it); since left98 one that holds the
    # lock's name quoted refuses the name (it may be a lock of it), exit 2 naming it, and one that does not is passed
    # over
    root = copy_root(tmp_path)
    best = root / "locks" / f"{R1}-best.lock.toml"
    deep = '\nformat = 2\nx = ' + "[" * 3000 + "]" * 3000 + "\n"
    (root / "locks" / "deep.lock.toml").write_text(f'[lock]\nname = "{R1}-best"{deep}', encoding="utf-8")
    bad("lock", "--update", "-o", str(best), root=root,
        says=f"lock.name: '{R1}-best' is also the name of locks/deep.lock.toml, which does not read "
             "(locks/deep.lock.toml: not valid TOML: arrays or tables nested too deeply), though its [lock] table's "
             f"name reads '{R1}-best' at line 2, read line by line")
    (root / "locks" / "deep.lock.toml").write_text(f'[lock]\nname = "other"{deep}', encoding="utf-8")
    done = invoke("lock", "--update", "-o", str(best), root=root)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"locked {R1}-best (best, locks serving {R1}): 33,339.2 tokens/s at batch 580")


def test_3_the_lock_table_is_read_alone_where_it_is_laid_out_as_written() -> None:
    from passprice.locks import lock_table_of

    written = (REPO / "locks" / f"{R1}.lock.toml").read_bytes()
    table = lock_table_of(written)
    assert isinstance(table, dict) and table["name"] == R1 and table["format"] == 2
    # a name written as a multi-line string (the [lock] pattern cuts it) is read from the whole file
    assert lock_table_of(b'[lock]\nname = """r1-\nx"""\nformat = 2\n') == {"name": "r1-\nx", "format": 2}
    assert lock_table_of(b'[lock]\r\nname = "a"\r\n') == {"name": "a"}  # Windows newlines
    assert lock_table_of(b"lock = 3\n") == 3  # no table: what the file gives the key (callers test its type)
    for broken in (b"[lock]\nname = \"a\n", b"\xff[lock]\n", b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n", b"a = 1\n"):
        assert lock_table_of(broken) is None, broken


# --- (2) a hand-edited first-format lock whose name is taken ---------------------------------------------------------


def _edited_old(tmp_path: Path, beside_r1: bool) -> tuple[Path, Path]:
    """A registry whose ``locks/`` holds ``old.lock.toml``, a first-format lock named R1 with its card's title edited
    by hand (its ``[lock] digest`` no longer matches), with R1's own lock or without it; the root and the old lock."""
    tmp_path.mkdir()
    root = copy_root(tmp_path)
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml" or not beside_r1:
            other.unlink()
    old = root / "locks" / "old.lock.toml"
    text = (REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml").read_text(encoding="utf-8")
    edited = text.replace('title = "NVIDIA H200 SXM 141GB"', 'title = "NVIDIA H200 SXM 141 GB"', 1)
    assert edited != text
    old.write_text(edited, encoding="utf-8")
    return root, old


#: What the digest line of old.lock.toml says first.
EDITED = ("lock.digest: the lock's contents do not match its digest sha256:e27e4844291d99589860029fc5ba6e0fa291df44470"
          "414b00dfd21bfb5292f5c (edited by hand?): a lock is written by passprice only; ")


def test_2_a_hand_edited_first_format_lock_whose_name_is_taken_is_told_the_relock_that_works(tmp_path: Path) -> None:
    # before: "… restore it from the last commit that holds it as written (`git checkout REV -- FILE`), then change
    # it with `passprice lock --update -o FILE` …", and that update, of the restored lock, exits 2 ("lock.name:
    # 'r1-qwen7b-h200' is also the name of locks/r1-qwen7b-h200.lock.toml: --update would write …", left58)
    root, old = _edited_old(tmp_path / "beside", beside_r1=True)
    way = ("re-lock it under its file's name: `passprice lock r1-qwen7b-h200 --force -o {}` (the default policy; "
           "`lock --update` keeps its name, 'r1-qwen7b-h200', which locks/r1-qwen7b-h200.lock.toml holds, and is "
           "refused), or remove it")
    checked = invoke("check", root=root)
    assert checked.exit_code == 2 and checked.stdout.rstrip().endswith("check FAILED")
    assert checked.stderr.splitlines() == [
        f"passprice: error: locks/old.lock.toml: {EDITED}{way.format('locks/old.lock.toml')}"]
    assert bad("reproduce", str(old), root=root) == [f"passprice: error: {old}: {EDITED}{way.format(old)}"]
    done = invoke("lock", R1, "--force", "-o", str(old), root=root)  # what it says works, with no restore first
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("locked old (price, locks serving r1-qwen7b-h200): 996.1 tokens/s at batch 1")
    assert invoke("check", root=root).exit_code == 0
    # alone in its folder (its update is let by) it is told to restore and update it, as before
    root, old = _edited_old(tmp_path / "alone", beside_r1=False)
    assert bad("reproduce", str(old), root=root) == [
        f"passprice: error: {old}: {EDITED}no commit here holds it as written: restore it from a copy of it as "
        f"written, then change it with `passprice lock --update -o {old}` (it keeps the lock's kind and policy; "
        f"`--force --require PATH=PROVENANCE` loosens a floor, which the review shows); or write it anew, `passprice "
        f"lock SERVING --force -o {old}`"]  # out of git (tests/test_fix190.py names the commit in git)


# --- (5) a verdict resting on a cut history search ------------------------------------------------------------------


def test_5_a_verdict_resting_on_a_cut_history_search_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: "does NOT reproduce: the pricing model changed …; the lock's own price comes from the code that wrote
    # it: the passprice of the commit that last changed the lock (`git log -1 --format=%H -- …`), installed …", in
    # the text and in --json's "reproduction", with the search cut (the cap forced to 0: walk56's old lock)
    from passprice import gitread
    from test_walk56 import BEFORE_WINDOW55, needs_history

    if needs_history.args[0]:
        pytest.skip("the checkout's git history is not here")
    old = tmp_path / "gemma-old.lock.toml"
    old.write_bytes(subprocess.run(["git", "show", f"{BEFORE_WINDOW55}:locks/gemma3-270m-h100.lock.toml"],
                                   cwd=REPO, capture_output=True, check=True).stdout)
    fallback = (f"the passprice of the commit that last changed the lock (`git log -1 --format=%H -- {old}`), a "
                "fallback: the history search for the commit whose locks record its pricing model was cut before "
                "finding one, so the lock's code may be another commit's (pricing model, below), installed in a "
                "virtual environment of its own")
    monkeypatch.setattr(gitread, "PICKAXE_TOTAL_BYTES", 0)
    result = invoke("reproduce", str(old))
    assert result.exit_code == 1, result.output
    assert fallback in result.stdout.splitlines()[1]
    said = json.loads(invoke("reproduce", str(old), "--json").stdout)
    assert said["pricing_model"]["commit"] is None and said["pricing_model"]["commit_search_cut"].startswith(
        "not searched: none of the ")
    assert fallback in said["reproduction"]
    # a whole search finds the commit, and its verdict names it with no word of a cut
    monkeypatch.undo()
    said = json.loads(invoke("reproduce", str(old), "--json").stdout)
    assert said["pricing_model"]["commit"] is not None and said["pricing_model"]["commit_search_cut"] is None
    assert "(the oldest commit whose locks record its pricing model: pricing model, below)" in said["reproduction"]
    assert "cut" not in said["reproduction"]


def test_5_a_commit_found_by_a_cut_search_is_said_to_be_of_what_was_read() -> None:
    import attrs

    from passprice.locks import read_lock
    from passprice.registry import Root
    from passprice.reproduce import reproduce

    rep = reproduce(Root(REPO), read_lock(REPO / "locks" / f"{R1}.lock.toml"))
    from passprice.locks import Moved

    moved = attrs.evolve(rep, pricing_model="sha256:" + "0" * 64, moved=(Moved("tokens_per_s", 2.0, 1.0),))
    assert moved.model_changed and not moved.equals
    said = moved.verdict("locks/x.lock.toml", ("0123456789ab", "2026-01-02"), "an older commit was not read")
    assert ("the passprice of commit 0123456789ab (the oldest commit whose locks record its pricing model of those "
            "the history search read; the search was cut, and an older commit may have written it: pricing model, "
            "below)") in said


# --- (4) a document whose blob is past what a review hashes -----------------------------------------------------------


def test_4_a_revision_document_past_what_a_review_hashes_is_named_not_streamed(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # before: streamed through `git cat-file blob` and hashed whatever its size (the cap lowered stands in for a blob
    # of 1 GiB of zeros, 1,045,032 bytes of pack, 1.57 s of CPU); now refused before git is asked, naming it
    import hashlib

    from passprice import gitread, schema
    from test_diff import commit_all, git

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    (path / "notes").mkdir()
    document = b"\0" * (schema.MAX_TOML_BYTES + 2)
    (path / "notes" / "doc.md").write_bytes(document)
    (path / "sources" / "my-notes.toml").write_text(
        '[source]\ntitle = "My notes"\nkind = "registry"\npublisher = "me"\npath = "notes/doc.md"\n'
        f'sha256 = "{hashlib.sha256(document).hexdigest()}"\nread = "how the figures were read off it"\n',
        encoding="utf-8")
    commit_all(path, "a registry with a large document")
    git(path, "commit", "-q", "--no-verify", "--allow-empty", "-m", "nothing")
    streamed: list[str] = []
    hashed = gitread.blob_sha256
    monkeypatch.setattr(gitread, "blob_sha256", lambda top, blob, *a: streamed.append(blob) or hashed(top, blob, *a))
    monkeypatch.setattr(gitread, "HASHED_BYTES", schema.MAX_TOML_BYTES + 1)
    head = git(path, "rev-parse", "HEAD~1").strip()[:12]
    assert bad("diff", "HEAD~1", "HEAD", root=path) == [
        f"passprice: error: notes/doc.md at {head}: {schema.MAX_TOML_BYTES + 2:,} bytes as committed, past the "
        f"{schema.MAX_TOML_BYTES + 1:,} bytes of documents passprice hashes from a revision (gitread.HASHED_BYTES; a "
        "few bytes of a pack can hold gigabytes): not hashed; keep so large a document outside the registry, or record "
        "a smaller copy of it"]
    assert streamed == []
    monkeypatch.setattr(gitread, "HASHED_BYTES", schema.MAX_TOML_BYTES + 2)  # within it: hashed as git streams it
    review = invoke("diff", "HEAD~1", "HEAD", "--json", root=path)
    assert review.exit_code == 0, review.output
    assert json.loads(review.stdout)["head_check"] == [] and len(set(streamed)) == 1
