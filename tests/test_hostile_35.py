"""Round 35 of hostile input (#13): the planning back-off of ``simulate`` and the code around it, the review's
newest paths, the TOML fast paths and the classes of the issue.

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line, or
the work counted: units are exact counts, not timings).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.cli_helpers import invoke

from passprice import simulate as simulate_module
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.servings import load_spec, resolve
from passprice.simulate import Policy, simulate
from passprice.steps import StepPricer
from passprice.trace import Request, Trace
from test_slip_34 import renderings  # one in-process review rendered per format

ROOT = find_root(Path(__file__).resolve().parent.parent)


def _pricer(name: str) -> StepPricer:
    r = resolve(ROOT, load_spec(ROOT, name))
    return StepPricer.of(r.header, r.card, r.serving)


def _lone(n: int) -> Trace:
    """``n`` requests 10,000 s apart (5-token prompts, 3 output tokens): each served alone, in one stretch."""
    return Trace(tuple(Request(i, i + 1, i * 1e4, 5, 3) for i in range(n)), "lone.jsonl")


# --- (a) simulate: requests that arrive one at a time, each after the last finished -------------------------------


def test_lone_arrivals_charge_the_peak_check_and_back_off_the_tries_that_plan_nobody() -> None:
    """20,000 requests 10,000 s apart (1.2 MB, and its first 15,000 under 1 MB) on ``gemma3-270m-h100``, continuous:
    each request's stretch tried to plan the next arrival ahead (the prediction: about 1 ms of CPU, charged 10 and a
    unit every 32 looks) and checked the peak of memory held (660-860 µs, charged nothing), 61 units a request at
    19-28 µs a unit: 2.5 s of CPU before the refusal (``gpt-oss-20b-h200``: 2.4 s, 30 µs a unit). A try that plans
    nobody now backs the next tries off as ``PLAN_BACKOFF`` does, and each peak check costs ``WORK_PEAK``: 81 units a
    request at 10-11 µs a unit, the same outcome as step by step."""
    pricer = _pricer("gemma3-270m-h100")
    trace = _lone(60)
    free = simulate(pricer, trace, Policy.CONTINUOUS)
    alone = simulate(pricer, trace, Policy.CONTINUOUS, stretches=False)
    assert free == alone  # the work is not part of the outcome
    assert (free.steps, simulate_module.WORK_PEAK) == (180, 40)
    # Each request: a stretch 40, its peak check 40, its finish 1; and the 3 tries before the back-off, 20 each
    # (3,443 before: a try at every request but the last, the peak checks free).
    assert free.work == 60 * 81 + 3 * 20, free.work
    with pytest.raises(InputError, match=r"^simulate: the continuous run passed the 2,000 units of work left of "):
        simulate(pricer, trace, Policy.CONTINUOUS, max_work=2_000)


def test_a_drafting_block_advances_no_further_than_its_sequences_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    """The drafting ``qwen35-27b-h200-mtp`` serving the same lone requests: each stretch advanced its one sequence
    through a block of ``BLOCK`` (65,536) passes — two accumulations of 65,536 rows, uncharged — whatever the 2
    tokens it had left, the block sized by the next arrival 10,000 s ahead: 2.7 s of CPU and 1.0 s of the
    system's before the refusal, 35 µs a unit. A block now ends 2 passes past the finish it runs to."""
    advanced: list[int] = []
    real = simulate_module.advance

    def advance(start: np.ndarray, emitted: float, steps: int) -> np.ndarray:
        advanced.append(steps)
        return real(start, emitted, steps)

    monkeypatch.setattr(simulate_module, "advance", advance)
    pricer = _pricer("qwen35-27b-h200-mtp")
    trace = _lone(40)
    free = simulate(pricer, trace, Policy.CONTINUOUS)
    assert advanced and max(advanced) <= 3, max(advanced)
    assert free == simulate(pricer, trace, Policy.CONTINUOUS, stretches=False)



# --- (b) git config: files git refuses were read, and a value's blanks read otherwise than git reads them ----------

#: Config texts git refuses (``fatal: bad config line N``) that passprice read, each with the line git names.
GIT_REFUSES = (
    ("[ core ]\nattributesFile = rules\n", 1),  # a blank after '['
    ('[core "x" ]\n', 1),  # a blank between the subsection's quote and ']'
    ("[core]\nattributesFile ; a comment\n", 2),  # a key alone, then a comment: git takes a key alone at the line's end
    ("[core]\nattributesFile\r= rules\n", 2),  # CRLF ends are git's; a lone carriage return is not
    (" \ufeff[core]\nattributesFile = rules\n", 1),  # a byte-order mark past the file's first byte
    ("[]\n", 1),
)


@pytest.mark.parametrize(("text", "line"), GIT_REFUSES)
def test_a_config_file_git_refuses_is_refused_at_the_line_git_names(tmp_path: Path, text: str, line: int) -> None:
    """Each text was read (a setting found, or none) where git stops with ``fatal: bad config line N``: ``check``
    took ``core.attributesFile`` from a file git never applies (every git command fails on it). Each is now refused
    naming the line git names (and the cross-check with git itself, where installed)."""
    import shutil
    import subprocess

    from passprice.gitconfig import ConfigUnread, entries

    path = tmp_path / "config"
    path.write_bytes(text.encode())
    with pytest.raises(ConfigUnread, match=rf"config: line {line}: .*; not git config \(git refuses this file too\)$"):
        list(entries(text, str(path)))
    git = shutil.which("git")
    if git is not None:
        done = subprocess.run([git, "config", "-f", str(path), "--no-includes", "--get-all", "core.attributesfile"],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 128 and f"bad config line {line} " in done.stderr, done.stderr


def test_a_values_blanks_are_spaces_as_git_reads_them(tmp_path: Path) -> None:
    """git writes each unquoted blank inside a value as a space (``parse_value``): ``attributesFile = a<TAB>b``
    names ``a b``, a file passprice did not look at (it looked at ``a<TAB>b``); a quoted tab stays a tab."""
    from passprice.gitconfig import entries

    text = '[core]\nattributesFile = rules\tfile \nattributesFile = "rules\tfile"\n'
    assert [v for name, v in entries(text, "config") if name == "core.attributesfile"] == ["rules file", "rules\tfile"]


# --- (c) the review: HEAD's own code answering a price the review cannot show -------------------------------------


def _head_side_json(tmp_path: Path, body: str) -> Path:
    """A registry whose HEAD's ``reproduce.side_json`` (each lock re-priced by HEAD's own code, in its own process)
    runs ``body`` on ``out``, what the real one answered, and returns it."""
    from test_diff import commit_all, git
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    module = path / "src" / "passprice" / "reproduce.py"
    text = module.read_text(encoding="utf-8")
    head = "def side_json(root: Root, requests: list[Mapping[str, Any]]) -> dict[str, Any]:\n"
    assert text.count(head) == 1
    module.write_text(text.replace(head, head + "    out = _real_side_json(root, requests)\n" + body
                                   + "    return out\n\n\n" + head.replace("side_json", "_real_side_json")),
                      encoding="utf-8")
    commit_all(path, "reproduce.py answers otherwise")
    return path


def test_a_price_of_tokens_per_s_alone_fails_the_text_review_in_one_line(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering ``{"price": {"tokens_per_s": 5.0}}`` for every lock passed the answer's check
    (a number) but the text review and the pull-request comment read its ``pass_s`` and ``binds``: a ``KeyError``
    traceback (``diff main HEAD``, ``--format markdown``), only ``--json`` said anything. Each lock now says what
    is missing, in one line, and the review fails (exit 1)."""
    path = _head_side_json(tmp_path, (
        '    out["results"] = {k: {"price": {"tokens_per_s": 5.0}} for k in out["results"]}\n'))
    said = 'its own code could not price it: it answered {"price": {"tokens_per_s": 5.0}}: its price has no pass_s'
    # one review rendered as text and as markdown (a renderer's traceback would fail the test here)
    status, printed = renderings(path, "text", "markdown")
    assert status == 1, printed[0][-3000:]
    for stdout in printed:
        assert said in stdout and "Traceback" not in stdout


def test_a_price_of_nan_is_no_nan_in_the_review_s_json(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering every price whole but its ``tokens_per_s`` ``NaN`` (JSON's ``NaN``, which
    Python's reader takes): the review's ``--json`` wrote ``"tokens_per_s": NaN`` and ``"relative_change": NaN``,
    which no strict JSON reader takes (``jq``, a browser's ``JSON.parse``). The answer is now refused as not a
    finite number, in one line."""
    import json

    path = _head_side_json(tmp_path, (
        '    for r in out["results"].values():\n'
        '        if isinstance(r.get("price"), dict):\n'
        '            r["price"]["tokens_per_s"] = float("nan")\n'))
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    assert result.exit_code == 1, result.output[-3000:]

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the review's JSON")

    json.loads(result.stdout, parse_constant=refuse)
    assert "its price.tokens_per_s is not a finite number" in result.stdout


def test_a_spec_that_is_no_serving_fails_its_locks_not_the_whole_review(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering every lock's ``spec`` as ``{"x": 1}``: the review stopped at the first (exit 2,
    ``HEAD: not a serving: required field missing @ $.checkpoint; …``, naming no lock, no review at all). Each lock
    now says its answer is no serving, in one line, and the review goes on and fails (exit 1)."""
    path = _head_side_json(tmp_path, '    for r in out["results"].values():\n        r["spec"] = {"x": 1}\n')
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    assert "its spec is not a serving (its spec: not a serving: required field missing @ $.checkpoint" in result.stdout


def test_a_refusal_of_a_million_characters_keeps_the_review_short(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering a refusal named with 1,000,000 ``X`` for every lock: the review and the
    pull-request comment were 15 MB each (GitHub takes 65,536 characters). Such an answer is now one short line."""
    path = _head_side_json(tmp_path, (
        '    for r in out["results"].values():\n'
        '        r["refusal"], r["price"] = {"refusal": "X" * 10**6, "message": "m"}, None\n'))
    status, printed = renderings(path, "text", "comment")  # one review, as text and as the comment
    assert status == 1, printed[0][-3000:]
    for stdout in printed:
        assert len(stdout) < 65_536, len(stdout)
        assert "its refusal's name is not a refusal's name (letters, digits and " in stdout


def test_a_provenance_that_is_none_fails_its_lock_in_one_line(tmp_path: Path) -> None:
    """HEAD's ``side_json`` answering every price resting on ``"bogus"`` provenances passed the answer's check (a
    table of texts) and the review judged the lock's floors on them: ``ValueError("'bogus' is not a valid
    Provenance")``, a traceback. Each lock now says its answer's ``rests_on`` is no table of provenances, exit 1."""
    path = _head_side_json(tmp_path, (
        '    for r in out["results"].values():\n'
        '        if isinstance(r.get("price"), dict):\n'
        '            r["price"]["rests_on"] = {k: "bogus" for k in r["price"]["rests_on"]}\n'))
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 1, result.output[-3000:]
    assert "its price.rests_on is not a table of provenances" in result.stdout
