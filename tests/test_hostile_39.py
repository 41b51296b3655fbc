"""Attack round 39 (issue 13): hostile input to the simulator's library API, the git settings a hook passes, and the
command-line options at their edges; one test a finding, each building its reproducer.

- (1) ``simulate()`` (and ``least_steps``, ``serve``) given from Python a trace the command line's parser refuses:
  of 296 such traces (317 random traces, a few fields each made bad, on four servings) 95 ran into ``TypeError``,
  ``OverflowError``, ``ValueError`` or ``IndexError``, 4 (a NaN arrival) ran without end, 163 were served and 34
  refused by passprice. Now every one is refused (``InputError``, one line a bad request, in the file's words).
- (2) ``GIT_DIR`` naming another repository whose ``info/attributes`` rewrites a card: the refusal said "a rule of a
  file git reads"; it names that file now.
- (3) A ``GIT_CONFIG_PARAMETERS`` git calls bogus was read as no setting (``shlex`` failing); now read as git reads
  it, and refused as git refuses it.
- (5) A GGUF header whose ``general.alignment`` is a uint64, int32 or uint8 (GGUF: a uint32; gguf.cpp asserts the
  type, gguf-py raises "Bad type for general.alignment field") was read and imported; now refused at its byte.
- (4) A trace line's ``arrival_s`` written as a 400-digit integer: ``math.isfinite`` raised ``OverflowError``, a
  traceback; now the line is refused as past the latest arrival.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import bad, invoke
from passprice.errors import InputError
from passprice.gitconfig import ConfigUnread, parameters
from passprice.registry import find_root
from passprice.servings import load_spec, resolve
from passprice.simulate import Policy, Settings, least_steps, serve, simulate
from passprice.steps import StepPricer
from passprice.trace import Request, Synthetic, Trace, parse_trace, synthetic

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pricer() -> StepPricer:
    root = find_root(REPO)
    r = resolve(root, load_spec(root, "gemma3-270m-h100"))
    return StepPricer.of(r.header, r.card, r.serving)


def _trace(*changes: dict[str, Any]) -> Trace:
    """Three good requests, the first ``len(changes)`` of them changed by ``changes``."""
    fields = [dict(index=i, line=i + 1, arrival=0.25 * i, prompt=40 + i, output=8, prefix_id=None, prefix=0)
              for i in range(3)]
    for f, change in zip(fields, changes, strict=False):
        f.update(change)
    return Trace(tuple(Request(**f) for f in fields), "hand.jsonl")


@pytest.mark.parametrize(("change", "says"), [
    ({"arrival": math.nan}, "hand.jsonl: request 0 (line 1): arrival_s: NaN is not a finite number of seconds"),
    ({"arrival": -1.0}, "hand.jsonl: request 0 (line 1): arrival_s: -1.0 is negative"),
    ({"prompt": 0}, "hand.jsonl: request 0 (line 1): prompt_tokens: 0 is zero; it must be at least 1"),
    ({"output": None}, "hand.jsonl: request 0 (line 1): output_tokens: missing"),
    ({"output": 2**64 + 3}, "hand.jsonl: request 0 (line 1): the request needs 18,446,744,073,709,551,659 "
                            "positions, longer than the serving's context limit"),
    ({"output": 1.5}, "hand.jsonl: request 0 (line 1): output_tokens: 1.5 is not an integer"),
    ({"prefix_id": "sys", "prefix": 40}, "hand.jsonl: request 0 (line 1): prefix_tokens: 40 is not below "
                                         "prompt_tokens 40"),
    ({"prefix": 7}, "hand.jsonl: request 0 (line 1): prefix: 7 without a prefix_id"),
    ({"index": 5}, "hand.jsonl: request 0 (line 1): index: 5 is not its place in the trace, 0"),
])
def test_simulate_from_python_refuses_what_the_parser_refuses(pricer: StepPricer, change: dict[str, Any],
                                                             says: str) -> None:
    trace = _trace(change)
    for call in (lambda: simulate(pricer, trace, Policy.CONTINUOUS), lambda: least_steps(pricer, trace),
                 lambda: serve(pricer, trace, [Policy.STATIC], max_steps=1000, max_work=90_000)):
        with pytest.raises(InputError) as caught:
            call()
        assert caught.value.lines[0].startswith(says), caught.value.lines


def test_random_bad_traces_are_all_refused_by_name(pricer: StepPricer) -> None:
    """A loop of random traces, each with one to three fields made bad: whatever the parser refuses, ``simulate``
    refuses with passprice's own error (before: 95 of 296 raised Python's errors, 4 never ended)."""
    rng = random.Random(39)
    bad_values = {"arrival": [-1.0, math.nan, math.inf, 1e10, True, None, "0"],
                  "prompt": [0, -1, 2**64, 1.5, True, None, "3"], "output": [0, -5, 2**63, 2.5, None],
                  "prefix": [-1, 10**9, 1.5, None], "prefix_id": ["", 3], "index": [-1, 9, None],
                  "line": [0, -2, "x"]}
    refused = 0
    for _ in range(120):
        changes = []
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(sorted(bad_values))
            changes.append({key: rng.choice(bad_values[key])})
        with pytest.raises(InputError):
            simulate(pricer, _trace(*changes), rng.choice(list(Policy)), max_work=90_000)
        refused += 1
    assert refused == 120


def test_bad_settings_from_python_are_refused(pricer: StepPricer) -> None:
    trace = _trace()
    for settings, says in ((Settings(chunk=0), "simulate: Settings.chunk is 0, not a whole number"),
                           (Settings(max_batch=2.5), "simulate: Settings.max_batch is 2.5, not a whole number"),  # type: ignore[arg-type]
                           (Settings(prefix_caching="yes"), "simulate: Settings.prefix_caching is 'yes', not True")):  # type: ignore[arg-type]
        with pytest.raises(InputError, match="^" + says):
            simulate(pricer, trace, Policy.STATIC, settings)


def test_a_parsed_or_synthetic_trace_is_not_walked_again(pricer: StepPricer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's traces are checked once, where they are made; the simulator's check passes them at once."""
    from passprice import trace as trace_module

    parsed = parse_trace(['{"arrival_s": 0, "prompt_tokens": 5, "output_tokens": 3}'], "t.jsonl", pricer.limit)
    made = synthetic(Synthetic(5, 1), pricer.limit)
    monkeypatch.setattr(trace_module, "_good", lambda *_: pytest.fail("walked again"))
    for trace in (parsed, made):
        trace_module.check_trace(trace, pricer.limit)
        assert simulate(pricer, trace, Policy.STATIC).steps > 0


def test_an_arrival_of_four_hundred_digits_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text('{"arrival_s": 1' + "0" * 400 + ', "prompt_tokens": 5, "output_tokens": 5}\n', encoding="utf-8")
    lines = bad("simulate", "gemma3-270m-h100", "--trace", str(path))
    # Named by its length since tests/test_fix168.py (its 401 digits were printed whole).
    assert lines == [f"passprice: error: {path}:1: arrival_s: a 401-digit number is past 1e+09 s (about 31 years) "
                     "after the start"]


def test_git_dir_s_rule_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout (ident, a rule of "
        f"{other / '.git' / 'info' / 'attributes'}), so what a review reads from git is not what check and price "
        "read in a checkout; remove the rule for passprice's files"]


@pytest.mark.parametrize(("text", "pairs"), [
    ("", []),
    ("'core.attributesfile=/r'", [("core.attributesfile", "/r")]),
    ("'a.b'='it'\\''s'  'c.d'= 'e.f'", [("a.b", "it's"), ("c.d", ""), ("e.f", "")]),
])
def test_git_config_parameters_read_as_git_reads_them(text: str, pairs: list[tuple[str, str]]) -> None:
    assert parameters(text) == pairs


@pytest.mark.parametrize(("text", "says"), [
    ("'core.attributesfile'='/r", "byte 22: a quote not closed"),
    ("core.attributesfile=/r", "byte 0: not a single-quoted word"),
    ("'a.b=c'x", "byte 7: text right after a quoted key"),
    ("'a.b'=c", "byte 6: a value not single-quoted"),
    (" 'a.b=c'", "byte 0: not a single-quoted word"),
    ("'=c'", "byte 4: an empty key"),
])
def test_a_bogus_git_config_parameters_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                                                  says: str) -> None:
    with pytest.raises(ConfigUnread, match=f"^GIT_CONFIG_PARAMETERS: {says}; git refuses it too"):
        parameters(text)


def test_check_refuses_a_bogus_git_config_parameters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook's ``GIT_CONFIG_PARAMETERS`` naming a rule file, its quote not closed: git refuses to run ("bogus format
    in GIT_CONFIG_PARAMETERS"); ``check`` read no setting and said all holds. Now one line, exit 2."""
    from test_hostile_29 import _git_registry
    from test_hostile_33 import _home

    _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    rules = tmp_path / "rules"
    rules.write_text("facts/cards/a40.toml ident\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.attributesfile'='{rules}")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "passprice: error: GIT_CONFIG_PARAMETERS: byte 22: a quote not closed; git refuses it too "
        "('bogus format in GIT_CONFIG_PARAMETERS') and runs no command: set it as git -c writes it "
        "('key=value', single-quoted, apart by spaces) or unset it"]


@pytest.mark.parametrize(("kind", "article"), [("UINT64", "a uint64"), ("INT32", "an int32"), ("UINT8", "a uint8")])
def test_an_alignment_not_a_uint32_is_refused(tmp_path: Path, kind: str, article: str) -> None:
    from gguf_bytes import Meta, V, decode, encode
    from passprice.gguf_header import read_header

    meta, tensors = decode(read_header(REPO / "tests/data/gemma3-270m-q4_k_m.header.gguf.xz"))
    meta = [m for m in meta if m.key != "general.alignment"] + [Meta("general.alignment", V[kind], 32)]
    path = tmp_path / "h.gguf"
    path.write_bytes(encode(meta, tensors))
    lines = bad("header", str(path))
    assert len(lines) == 1 and lines[0].startswith(f"passprice: error: {path}: byte "), lines
    assert lines[0].endswith(f": general.alignment is {article}, not a uint32 (GGUF's type for it)"), lines
