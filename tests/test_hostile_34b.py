"""Round 34b of hostile input (#13): the code of the two hours before it (the TOML fast paths, the planning back-off,
the review's added-record descriptions, stack spans, install files and HEAD-code pin pricing).

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tests.cli_helpers import invoke, side_processes
from tests.test_newcomer_21 import ROUTING, SOURCE, _git, _repo
from tests.test_slip_29 import lock_lines
from tests.test_slip_34 import printed, renderings  # one in-process review rendered per format

from passprice.modellist import UNRECORDED_SAYS

# --- (a) an added record's description in the pull-request comment: no bound on its length ------------------------

#: GitHub takes a comment of at most 65,536 characters.
GITHUB_COMMENT = 65_536


def test_added_records_of_huge_texts_keep_the_comment_under_githubs_limit(tmp_path: Path) -> None:
    """A routing record's own ``note`` had no length bound but its file's 256 KiB: 200,000 ``<`` (each ``&lt;`` in
    Markdown) made the comment 801 KB (since attack round 48 a note is at most 4,000 characters, whose 16,000 in
    Markdown are still cut here); 20 source records within their schema's bounds, title, publisher and ``read``
    of ``@`` (each ``@&#8203;``), some 400 KB more. Each description is cut, saying its length, and past 20,000
    characters in all left to the text review, which shows each whole."""
    root = _repo(tmp_path)
    note = "<" * 4_000
    (root / "sources" / "mixtral-of-experts-paper.toml").write_text(SOURCE, encoding="utf-8")
    (root / "facts" / "routing" / "mixtral-8x7b-pile.toml").write_text(
        ROUTING.replace('note = "Read by eye off the bars, so estimated."', f'note = "{note}"'), encoding="utf-8")
    for i in range(20):
        (root / "sources" / f"at-{i:02d}.toml").write_text(
            SOURCE.replace('title = "Mixtral of Experts"', f'title = "{"@" * 300}"')
            .replace('publisher = "Mistral AI"', f'publisher = "{"@" * 200}"')
            .replace('read = "Section 5, Routing analysis, Figure 7."', f'read = "{"@" * 2000}"'),
            encoding="utf-8")
    _git(root, "add", "-A")
    status, (markdown, text) = renderings(root, "markdown", "text", base="HEAD", head=None)
    assert status == 0, markdown[-2000:]
    assert len(markdown) < GITHUB_COMMENT // 2, len(markdown)
    lines = markdown.splitlines()
    routing = next(line for line in lines if line.startswith("- `mixtral-8x7b-pile` (added"))
    assert routing.startswith("- `mixtral-8x7b-pile` (added, `facts/routing/mixtral-8x7b-pile.toml`): routing record "
                              "Mixtral-8x7B, read off the paper's Figure 7: 8 experts, 2 a token, for "
                              "mixtral-8x7b-q4_k_m; note: &lt;&lt;")
    assert routing.endswith("&lt;… (4,113 characters: the text review (`passprice diff`) shows it whole)")
    assert len(routing) < 2_100
    sources = [line for line in lines if line.startswith("- `at-")]
    assert len(sources) == 19  # the first 20 added records are described (MAX_ADDED_RECORDS), the 21st listed
    assert sources[-1] == "- `at-18` (added, `sources/at-18.toml`): described in the text review (`passprice diff`)"
    assert "`sources/at-19.toml` (added)" in lines[-1]
    assert f"; note: {note}" in text  # the text review shows it whole


# --- (b) HEAD's own code pricing its locks' pins (sidecode.price_pins): an answer of another shape --------------------


@functools.cache
def _forged() -> Path:
    """Slip 29's forged price (r1's recorded price set to HEAD's, its pins left as BASE's) on a branch ``pr`` of
    :func:`test_slip_10._base`'s registry, uncommitted: made once a process (a re-lock in process, ~0.5 s of CPU) for
    the four tests of HEAD's code below, each of which copies it (suite47), removed at the process's exit."""
    from test_diff import git
    from test_slip_10 import _base
    from test_slip_29 import _relock_apart

    folder = Path(tempfile.mkdtemp(prefix="passprice-34b-"))
    atexit.register(shutil.rmtree, folder, True)
    path = _base(folder / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    _relock_apart(path, keep="pins")
    return path


def _head_answers(tmp_path: Path, body: str) -> Path:
    """Slip 29's forged price (:func:`_forged`, copied) in a registry whose HEAD's ``reproduce.find_checkpoint`` runs
    ``body`` (in the process pricing the pins)."""
    from test_diff import commit_all

    path = shutil.copytree(_forged(), tmp_path / "registry", symlinks=True)
    module = path / "src" / "passprice" / "reproduce.py"
    text = module.read_text(encoding="utf-8")
    head = "def find_checkpoint(root: Root, lock: Lock) -> tuple[GGUFHeader | None, CheckpointState]:\n"
    assert text.count(head) == 1
    module.write_text(text.replace(head, head + body), encoding="utf-8")
    commit_all(path, "streams.read 0.95; r1's price; reproduce.py")
    return path


_R1_LOCK = "locks/r1-qwen7b-h200.lock.toml"
_NOT_PRICED = f"{_R1_LOCK}: does NOT reproduce from its own pinned inputs with HEAD's own code: they were not priced ("


def test_head_s_code_answering_a_result_that_is_no_table_fails_the_review_in_one_line(tmp_path: Path) -> None:
    """HEAD's code wrote ``{"results": {LOCK: 5}}`` and left: ``'int' object has no attribute 'get'``, a traceback
    (exit 1, no review)."""
    import json

    path = _head_answers(tmp_path, (
        "    import json as j, os, sys\n"
        f"    sys.stdout.write(j.dumps({{'results': {{{_R1_LOCK!r}: 5}}}}))\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"))
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    assert result.exception is None or isinstance(result.exception, SystemExit)
    line, unrecorded = lock_lines(json.loads(result.stdout)["head_check"])
    assert UNRECORDED_SAYS in unrecorded  # slip 58: the forged lock's digest is in no record of the list
    assert line.startswith(_NOT_PRICED + "its own code could not price it: it answered 5, not a table)")


def test_head_s_code_failing_with_a_huge_line_fails_the_review_in_a_short_line(tmp_path: Path) -> None:
    """HEAD's code failed with a last line of 1,000,000 characters on its standard error: the review's line (and its
    pull-request comment) carried every one of them."""
    import json

    path = _head_answers(tmp_path, "    raise RuntimeError('x' * 1_000_000)\n")
    status, (as_json, markdown) = renderings(path, "json", "markdown")
    assert status == 1, as_json[-3000:]
    line, unrecorded = lock_lines(json.loads(as_json)["head_check"])
    assert UNRECORDED_SAYS in unrecorded  # slip 58: the forged lock's digest is in no record of the list
    # the last 64 KiB of its standard error are kept (MAX_STDERR, test (d)): the line's end, cut at 300 characters
    assert line.startswith(_NOT_PRICED + "its own code could not price it: xxx")
    assert "x… (65,535 characters)); check it with HEAD's code" in line
    assert len(line) < 800
    assert len(markdown) < 20_000


# --- (c) a checkpoint entry's changed claims (checkpoint_claims): no bound on entry.source or entry.imported_by -------


def test_a_claim_of_a_million_characters_keeps_the_comment_short(tmp_path: Path) -> None:
    """``entry.imported_by`` rewritten to 1,000,000 ``<``: the claims line made a comment of 4,000,740 characters,
    exit 0 (round 34b: cut to say its length). Since session 28 the schema bounds the claim at 200 characters of one
    line: HEAD's entry does not read, the review exits 2, and each line quoting the value is cut (the text review
    too: 1,876 characters in all)."""
    root = _repo(tmp_path)
    entry = root / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"
    text = entry.read_text(encoding="utf-8")
    assert text.count('imported_by = "passprice 0.1.0"') == 1
    entry.write_text(text.replace('imported_by = "passprice 0.1.0"', f'imported_by = "{"<" * 1_000_000}"'),
                     encoding="utf-8")
    said = "… is too long (1,000,000 characters; at most 200)"
    status, (markdown, text_review) = renderings(root, "markdown", "text", base="HEAD", head=None)
    assert status == 2, markdown[-2000:]
    assert len(markdown) < 10_000, len(markdown)
    line = next(line for line in markdown.splitlines()
                if line.startswith("- registry/checkpoints/gemma3-270m-q4_k_m.toml: entry.imported_by: '&lt;&lt;"))
    assert line.endswith(said) and len(line) < 600, line
    assert len(text_review) < 10_000, len(text_review)
    start = f"registry/checkpoints/gemma3-270m-q4_k_m.toml: entry.imported_by: '{'<' * 90}"
    quoted = [line for line in text_review.splitlines() if line.strip().startswith(start)]
    assert quoted and all(line.endswith(said) and len(line) < 300 for line in quoted), quoted


# --- (d) HEAD's own code writing without end: the review kept every byte it wrote ------------------------------------


def test_a_side_s_code_writing_without_end_is_kept_to_a_bound() -> None:
    """``sidecode._run`` keeps at most MAX_STDOUT bytes of the answer (then stops the process) and the last
    MAX_STDERR of its standard error: both were kept whole (400 MB on standard error took the review to 1.7 GB)."""
    import sys

    from passprice import sidecode

    child = ("import sys\nsys.stdin.read()\nchunk = 'x' * (1 << 20)\n"
             "for _ in range(100): sys.stderr.write(chunk)\nsys.stderr.write('\\nthe last line\\n')\n"
             "for _ in range(40): sys.stdout.write(chunk)\n")
    status, out, err, why = sidecode._run([sys.executable, "-c", child], b"{}", Path.cwd(), {})
    assert status is None
    assert why == "wrote more than 33,554,432 bytes of answer"
    assert sidecode.MAX_STDOUT < len(out) <= sidecode.MAX_STDOUT + (1 << 16)
    assert len(err) == sidecode.MAX_STDERR
    assert sidecode._last_line(err) == "the last line"
    status, out, err, why = sidecode._run([sys.executable, "-c", "import sys; print(sys.stdin.read()[::-1])"],
                                          b"x" * 300_000 + b"y", Path.cwd(), {})
    assert (status, why, err) == (0, "", b"")
    assert out == b"y" + b"x" * 300_000 + b"\n"  # a payload past a pipe's buffer is written whole


def test_head_s_code_writing_a_flood_of_answer_fails_the_review_in_one_line(tmp_path: Path) -> None:
    import json

    path = _head_answers(tmp_path, (
        "    import os, sys\n"
        "    chunk = b'[' * (1 << 20)\n"
        "    for _ in range(40): os.write(1, chunk)\n"
        "    os._exit(0)\n"))
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    line, unrecorded = lock_lines(json.loads(result.stdout)["head_check"])
    assert UNRECORDED_SAYS in unrecorded  # slip 58: the forged lock's digest is in no record of the list
    assert line.startswith(_NOT_PRICED + "its own code could not price it: wrote more than 33,554,432 bytes of "
                                         "answer)")


# --- (e) HEAD's own code that never answers: each ask held the review for the whole limit ----------------------------


def test_head_s_code_that_never_answers_is_asked_once(tmp_path: Path, monkeypatch: Any) -> None:
    """HEAD's package sleeping at its import: the review asked it three times (its locks' pins, its locks' prices, the
    unlocked servings), each for the whole TIMEOUT_S (300 s: 15 minutes); now once, the later asks answered at once
    with why."""
    import json

    from passprice import sidecode

    path = _head_answers(tmp_path, "    pass\n")
    init = path / "src" / "passprice" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\nimport time\ntime.sleep(600)\n", encoding="utf-8")
    from test_diff import commit_all

    commit_all(path, "a package that never answers")
    monkeypatch.setattr(sidecode, "TIMEOUT_S", 1)  # the package sleeps 600 s: 1 s is as past it as 3 s, 2 s sooner
    monkeypatch.setattr(sidecode, "_STUCK", {})
    runs = side_processes(monkeypatch)
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    assert len(runs) == 1
    assert all(proc.poll() is not None for proc in runs)  # stopped with the review, not left running
    line, unrecorded = lock_lines(json.loads(result.stdout)["head_check"])
    assert UNRECORDED_SAYS in unrecorded  # slip 58: the forged lock's digest is in no record of the list
    assert line.startswith(_NOT_PRICED + "its own code could not price it: took longer than 1 s)")
    assert "its own code could not price it: took longer than 1 s, asked before: not run again" in result.stdout


# --- (f) how passprice is installed: a workflow beside facts.yml ------------------------------------------------------


def test_a_workflow_added_beside_facts_yml_is_named_as_an_install_file(tmp_path: Path) -> None:
    """A pull request adding ``.github/workflows/review.yml`` (a job of its own: another passprice, the sticky
    comment) read "no fact changed; no lock affected", exit 0, and named nothing: only facts.yml was looked at."""
    import json

    root = _repo(tmp_path)
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "review.yml").write_text(
        "on: pull_request\njobs:\n  r:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: pip install passprice==0.0.1\n", encoding="utf-8")
    (root / ".github" / "workflows" / "sub").mkdir()  # a folder GitHub does not read: not an install file
    work = invoke("diff", "HEAD", "--json", root=root)
    assert work.exit_code == 0, work.output[-2000:]
    assert json.loads(work.stdout)["install_changed"] == [".github/workflows/review.yml"]
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "a workflow")
    status, (text, as_json) = renderings(root, "text", "json", base="HEAD~", head="HEAD")
    assert status == 0
    lines = text.splitlines()
    assert lines[1] == "no fact changed; no lock affected; 10 locks unaffected; how passprice is installed changed " \
                       "(.github/workflows/review.yml)"
    assert json.loads(as_json)["install_changed"] == [".github/workflows/review.yml"]
    assert json.loads(invoke("diff", "HEAD", "--json", root=root).stdout)["install_changed"] == []


def test_head_s_code_answering_a_price_of_text_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """The older path (``sidecode.price_locks``: each lock re-priced on HEAD by HEAD's own ``side_json``) took any
    answer: HEAD's ``side_json`` returning ``{"price": {"tokens_per_s": "x"}}`` for every lock was a ``ValueError``
    traceback in the review (``PriceSide.tokens_per_s``; round 34b's leftover, fixed by the lead). Now each such
    result is one error line naming what is wrong, and the review fails (exit 1)."""
    import json

    from test_diff import commit_all, git
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    module = path / "src" / "passprice" / "reproduce.py"
    text = module.read_text(encoding="utf-8")
    head = "def side_json(root: Root, requests: list[Mapping[str, Any]]) -> dict[str, Any]:\n"
    assert text.count(head) == 1
    module.write_text(text.replace(head, head + (
        '    return {"results": {str(r["key"]): {"price": {"tokens_per_s": "x"}} for r in requests}}\n')),
        encoding="utf-8")
    commit_all(path, "reproduce.py answers text")
    status, (as_json, text), err = printed(path, "json", "text")  # an exception escaping the review fails the test
    assert status == 1, as_json[-3000:]
    assert err.startswith("passprice: refused: ") and err.count("\n") == 1, err
    assert "Traceback" not in as_json + text + err
    said = ('its own code could not price it: it answered {"price": {"tokens_per_s": "x"}}: its price.tokens_per_s '
            "is not a number")
    assert json.dumps(said)[1:-1] in as_json
    assert said in text, text[-3000:]
