"""Attack round 37 (issue 13: hostile input on sessions 17-18's code): HEAD's own code answering texts and tables the
review shows whole. Each test builds the reproducer of one finding and asserts the exit status and the line said."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import invoke
from test_hostile_35 import _head_side_json
from test_slip_34 import renderings  # one in-process review rendered per format

#: GitHub's most characters in a pull request's comment.
COMMENT = 65_536


def test_an_error_of_a_million_characters_keeps_the_review_and_comment_short(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering every lock ``{"error": "E" * 1,000,000}``: an error passed the answer's check
    (a text) and was shown whole in the lock's floors, its "HEAD cannot price" line and each unlocked serving's: the
    review and the comment were 14 MB each (refusal messages were already held to 4,096 characters; errors were
    not). Such an answer is now one short line."""
    path = _head_side_json(tmp_path, (
        '    for r in out["results"].values():\n'
        '        r["error"], r["price"] = "E" * 10**6, None\n'))
    status, shown = renderings(path, "text", "comment")  # one review, as text and as the comment
    assert status == 1, shown[0][-3000:]
    for out in shown:
        assert len(out) < COMMENT, len(out)
        assert "its error is 1,000,000 characters (at most 4,096 read)" in out


def test_a_binds_of_a_million_characters_keeps_the_review_short(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering every price whole but its ``binds`` 1,000,000 characters (a text, as checked):
    shown whole on each line naming what binds, a review of 14 MB (``card``: 1 MB). A price's names are now at most
    256 characters, else the lock is not priced, in one line."""
    path = _head_side_json(tmp_path, (
        '    for r in out["results"].values():\n'
        '        if isinstance(r.get("price"), dict):\n'
        '            r["price"]["binds"] = "B" * 10**6\n'))
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    assert len(result.stdout) < COMMENT, len(result.stdout)
    assert "its price.binds is 1,000,000 characters (at most 256 read)" in result.stdout


def test_a_price_resting_on_thousands_of_assumed_facts_is_one_short_line(tmp_path: Path) -> None:
    """HEAD's ``side_json`` adding 200,000 assumed facts to each price's ``rests_on`` (a table of provenances, as
    checked): the floors' line named each one below its floor, a review of 10 MB and a refusal line of 6 MB (its
    ``--require`` advice), 8.9 s. A price (or its ``weakest``, or the ``facts``) of more than 256 paths is now not
    priced, in one line; 300 of them are enough to show it."""
    path = _head_side_json(tmp_path, (
        '    for r in out["results"].values():\n'
        '        if isinstance(r.get("price"), dict):\n'
        '            r["price"]["rests_on"].update({"card.k%d" % i: "assumed" for i in range(300)})\n'))
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    assert "its price.rests_on holds 308 paths (at most 256 read)" in result.stdout
    assert "--require card.k" not in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr[:3000]


def test_a_serving_files_head_rows_past_the_vocabulary_names_the_file(tmp_path: Path) -> None:
    """A serving file whose ``draft.head_rows`` is past the checkpoint's vocabulary (``qwen35-27b-h200-mtp`` with
    2,147,483,648 rows; the long fuzz, ``PASSPRICE_FUZZ=400``): the error line named the option ``--head-rows``,
    which no one gave, and not the file. It now names the file and its key; the option, given, is still named."""
    from cli_helpers import bad, copy_root

    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "qwen35-27b-h200-mtp.toml"
    text = serving.read_text(encoding="utf-8")
    assert text.count("head_rows = 32768") == 1
    serving.write_text(text.replace("head_rows = 32768", "head_rows = 2147483648"), encoding="utf-8")
    bad("price", "qwen35-27b-h200-mtp", root=root,
        says="registry/servings/qwen35-27b-h200-mtp.toml: draft.head_rows: 2,147,483,648 rows, more than the "
        "248,320 rows of the vocabulary")
    bad("price", "qwen35-27b-h200-mtp", "--head-rows", "300000", root=root,
        says="--head-rows (draft.head_rows): 300,000 rows, more than the 248,320 rows of the vocabulary")


def test_a_letter_under_200000_combining_marks_is_tokenized_whole() -> None:
    """A text of one letter under 200,000 combining marks (400 KB, as a note or a derivation of a changed fact may
    be): each mark was added to its letter's token one at a time, a new text each time, quadratic: 2.1 s for the
    change's two texts (0.65 s for 100,000). The pieces are now joined once (0.17 s); the letter and its marks stay
    one token, the change shown after them."""
    from passprice.textchange import _tokens, text_change

    marks = "\u0301" * 200_000
    assert _tokens(f"a{marks} x") == [f"a{marks}", " ", "x"]
    assert text_change(f"a{marks} x", f"a{marks} y") == "… [x → y]"


def test_a_user_config_of_ten_thousand_includes_naming_nothing_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``~/.gitconfig`` of 70,000 ``include.path`` lines each naming no file (969 KB): only names of files that
    are there were counted against the 1,000 includes, so each absence was looked up (and, under the result memo,
    stamped): ``check`` took 2.3 s of CPU (1.0 s without them), 4.5 s kept by the memo. Past 10,000 names, there or
    not, the config is now refused in one line (the bound, 10,000, still reads: ``all holds``)."""
    from passprice.gitconfig import MAX_INCLUDE_NAMES
    from test_hostile_29 import _git_registry
    from test_hostile_33 import _home

    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    nothing = tmp_path / "nothing"
    names = "".join(f"\tpath = {nothing}/{n}\n" for n in range(MAX_INCLUDE_NAMES + 1))
    (home / ".gitconfig").write_text(f"[include]\n{names}", encoding="utf-8")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: {home / '.gitconfig'}: more than 10,000 names of files to include in all, there or not "
        "(git config; so whether they name a file of attribute rules cannot be told)"]
    (home / ".gitconfig").write_text(f"[include]\n{names.rsplit(chr(9), 1)[0]}", encoding="utf-8")
    assert invoke("check", root=path).exit_code == 0


def test_a_thousand_unfitted_runs_are_counted_with_a_separator(tmp_path: Path) -> None:
    """A measurement file of 1,000 runs of stack ``llamacpp-cuda-2405`` (171 KB) that its fit does not name:
    ``check``'s warning said "1000 measured runs of stack llamacpp-cuda-2405 are not in its fit (…, and 995 more)",
    the one count of the review and check without a thousands separator."""
    from cli_helpers import copy_root
    from passprice.calibrate import review_stacks
    from passprice.registry import Root

    root = copy_root(tmp_path)
    run = ('\n[[run]]\nid = "a37.{i}"\nstack = "llamacpp-cuda-2405"\ncard = "h100_pcie_80gb"\ncheckpoint = '
           '"llama2-7b-q4_0"\nbatch = 1\npositions = [0, {p}]\ntokens_per_s = 100.5\nlocator = "table 1, a row"\n')
    (root / "registry" / "measurements" / "a37.toml").write_text(
        '[source]\nname = "many runs"\nsource = "xiongjiedai-gpu-benchmarks"\n'
        + "".join(run.format(i=i, p=128 + i) for i in range(1000)), encoding="utf-8")
    problems, warnings = review_stacks(Root(root))
    assert problems == []
    said = [w for w in warnings if "llamacpp-cuda-2405.toml: " in w]
    assert len(said) == 1 and ": 1,000 measured runs of stack llamacpp-cuda-2405 are not in its fit (a37.0, " in said[0]
    assert "a37.4 and 995 more): run passprice calibrate --stack llamacpp-cuda-2405" in said[0], said


def test_a_rule_of_the_repository_git_dir_names_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``GIT_DIR`` naming another repository (a hook's, a script's), whose ``info/attributes`` puts ``ident`` on a
    card: git applies that repository's rules (``git check-attr`` says ``ident: set``), but ``check`` looked only at
    the repository above the registry, found no rule and said "all holds" (exit 0). Session 18's leftover."""
    from test_diff import git
    from test_hostile_29 import _git_registry
    from test_hostile_33 import _home

    _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / ".git" / "info").mkdir(exist_ok=True)
    (other / ".git" / "info" / "attributes").write_text("facts/cards/a40.toml ident\n", encoding="utf-8")
    assert invoke("check", root=path).exit_code == 0
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout (ident, a rule of "
        f"{other / '.git' / 'info' / 'attributes'}), so what a review reads from git is not what check and price "
        "read in a checkout; remove the rule for passprice's files"]  # the file named since attack round 39


def test_a_lock_heads_code_gives_no_result_for_is_not_said_missing_on_head(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering ``{"results": {}}``: the lock HEAD holds was reviewed as "not judged: no such
    lock on HEAD", the review's words for a lock the side lacks. Its code's silence is now said as such."""
    path = _head_side_json(tmp_path, '    out["results"] = {}\n')
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    assert "no such lock on HEAD" not in result.stdout
    assert "HEAD cannot price: its own code could not price it: it gave no result for it" in result.stdout


def test_two_thousand_modules_added_keep_the_comment_under_githubs_limit(tmp_path: Path) -> None:
    """A pull request adding 2,000 empty modules of 110-character names under ``src/passprice/many/``: the comment
    named each (268 KB, past the 65,536 characters GitHub takes), where every other list of it shows 20 and counts
    the rest. The text review still names each."""
    from test_diff import commit_all, git
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    many = path / "src" / "passprice" / "many"
    many.mkdir()
    for i in range(2000):
        (many / (f"m{i:05d}_" + "x" * 100 + ".py")).write_bytes(b"")
    commit_all(path, "many modules")
    status, (comment, text) = renderings(path, "comment", "text")
    assert status == 0, comment[-3000:]
    assert len(comment) < COMMENT, len(comment)
    assert "- and 1,980 more files: the text review (`passprice diff`) lists each" in comment
    assert "src/passprice/many/m01999_" in text


def test_copies_of_one_module_count_each_against_a_sides_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies of one blob under many names were counted once against a side's 256 MiB (``MAX_SIDE_BYTES``), yet
    each was written out and read again: 200 copies of a 4 MiB module under ``src/passprice/big/`` (14 KB packed)
    wrote 800 MB and took the review to 892 MB of memory; 4,000 of a 64 MiB file would have written 256 GB. Each
    name now counts. Shown here under a bound lowered to the code's size and 1 MiB: ten copies of 512 KiB pass it."""
    from passprice import gitread
    from test_diff import commit_all, git
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    code = sum(p.stat().st_size for p in (path / "src" / "passprice").rglob("*.py"))
    monkeypatch.setattr(gitread, "MAX_SIDE_BYTES", code + (1 << 20))
    git(path, "checkout", "-q", "-b", "pr")
    big = path / "src" / "passprice" / "big"
    big.mkdir()
    for i in range(10):
        (big / f"b{i}.py").write_bytes(b"#" * (512 << 10))
    commit_all(path, "ten copies of one module")
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 2, result.output[-3000:]
    assert "the files passprice reads add up to " in result.stderr and f"past {code + (1 << 20):,} " in result.stderr
