"""Issue 13's leftovers, session 28 (left28b): output files whose names no checkout on Windows holds are refused by
every command that writes, outside the registry too (one rule, :func:`passprice.files.require_windows_name`); a
file of passprice's own code named in bytes that are not UTF-8 stops no price (the cache key encoded the package's
file names as strict UTF-8); and every command's ``--json`` failure path prints one line on stderr (exit 2) and,
since session 30, one JSON document on stdout (nothing, in session 28)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke, retitled

# --- 1. one rule for every file passprice writes: a name Windows cannot hold is refused ---------------------------

WINDOWS_RULES = {
    "CON.csv": "CON names a device on Windows",
    "a:b.csv": "':' is a character no file name on Windows holds",
    "x.csv.": "the name 'x.csv.' ends in a dot, which Windows drops",
}
WINDOWS_TAIL = "no checkout on Windows can hold the name (Git for Windows refuses it)"

CONFIG = str(REPO / "examples" / "configs" / "codellama-7b.json")

#: Each command that writes a file outside the registry, with the option naming it (session 27's leftovers: 12 of
#: these 13 wrote the file, exit 0; roofline needed a serving first).
WRITERS = [
    ("sweep -o CON.csv", ("sweep", "-o"), "CON.csv", "CON names a device on Windows"),
    ("sweep -o a:b.csv", ("sweep", "-o"), "a:b.csv", "':' is a character no file name on Windows holds"),
    ("sweep -o x.csv.", ("sweep", "-o"), "x.csv.", "the name 'x.csv.' ends in a dot, which Windows drops"),
    ("sweep --plot", ("sweep", "--plot"), "p|q.svg", "'|' is a character no file name on Windows holds"),
    ("simulate -o", ("simulate", "r1-qwen7b-h200", "--synthetic", "5", "-o"), "COM1.json",
     "COM1 names a device on Windows"),
    ("simulate --plot", ("simulate", "r1-qwen7b-h200", "--synthetic", "5", "--plot"), "lpt\u00b9.svg",
     "LPT\u00b9 names a device on Windows"),
    ("roofline --plot", ("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot"), "nul.svg",
     "NUL names a device on Windows"),
    ("validate --plot", ("validate", "--plot"), "a?b.svg", "'?' is a character no file name on Windows holds"),
    ("audit --plot", ("audit", "r1-qwen7b-h200", "--plot"), "a*b.svg",
     "'*' is a character no file name on Windows holds"),
    ("lock -o", ("lock", "r1-qwen7b-h200", "--name", "ok", "-o"), "a:b.lock.toml",
     "':' is a character no file name on Windows holds"),
    ("synth -o", ("synth", CONFIG, "-o"), "a<b.gguf", "'<' is a character no file name on Windows holds"),
]


@pytest.mark.parametrize(("args", "name", "rule"), [w[1:] for w in WRITERS], ids=[w[0] for w in WRITERS])
def test_an_output_file_windows_cannot_hold_is_refused_outside_the_registry(
    tmp_path: Path, args: tuple[str, ...], name: str, rule: str
) -> None:
    root = copy_root(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    target = out / name
    lines = bad(*args, str(target), root=root, says=f"{target}: {rule}: {WINDOWS_TAIL}")
    assert len(lines) == 1, lines
    assert list(out.iterdir()) == []  # nothing written, no temporary file left


@pytest.mark.parametrize("name", ["aux", "x.", "a|b", "Con.v2", "ok "])
def test_init_into_a_folder_windows_cannot_hold_is_refused(tmp_path: Path, name: str) -> None:
    dest = tmp_path / name
    lines = bad("init", str(dest), says=f"{dest}: ")
    assert len(lines) == 1 and WINDOWS_TAIL in lines[0], lines
    assert not dest.exists()


def test_init_refuses_a_folder_it_would_create_above_the_registry(tmp_path: Path) -> None:
    dest = tmp_path / "new" / "aux" / "registry"
    bad("init", str(dest), says=f"{tmp_path / 'new' / 'aux'}: AUX names a device on Windows: {WINDOWS_TAIL}")
    assert not (tmp_path / "new").exists()


def test_init_into_an_ordinary_folder_still_writes(tmp_path: Path) -> None:
    result = invoke("init", str(tmp_path / "reg.v2"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "reg.v2" / "facts").is_dir()


def test_init_into_a_folder_already_there_judges_only_what_it_creates(tmp_path: Path) -> None:
    """A folder the user made is not init's to judge (as the folder of an output file is not): only the names init
    creates are (the registry's own files and folders, all plain)."""
    (tmp_path / "aux").mkdir()
    result = invoke("init", str(tmp_path / "aux"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "aux" / "facts").is_dir()


def test_fact_set_on_a_card_file_windows_cannot_hold_leaves_it_untouched(tmp_path: Path) -> None:
    """Before: ``fact set aux memory.bandwidth --value 4.7`` rewrote ``facts/cards/aux.toml`` (4.8 -> 4.7), exit 0."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "aux.toml"
    text = retitled((root / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8"), "Odd card")
    card.write_text(text, encoding="utf-8")
    bad("fact", "set", "aux", "memory.bandwidth", "--value", "4.7", "--unit", "TB/s", "--provenance", "published",
        "--source", "nvidia-h200-datasheet", "--locator", "p. 1", root=root,
        says=f"{card}: AUX names a device on Windows: {WINDOWS_TAIL}")
    assert card.read_text(encoding="utf-8") == text


def test_an_ordinary_output_name_is_written(tmp_path: Path) -> None:
    target = tmp_path / "grid.v2.csv"
    result = invoke("sweep", "r1-qwen7b-h200", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8").startswith("card,serving,")


# --- 2. a code file named in bytes that are not UTF-8 --------------------------------------------------------------

ODD = os.fsdecode(b"\xff\xfe odd.py")


def test_a_non_utf8_code_file_beside_a_changed_pricing_model_prices_on_both_sides(tmp_path: Path) -> None:
    """tests/test_hostile_19's scenario where the side's code differs from the running code (so the side is priced by
    its own code, in its own process): before, "HEAD cannot price: its own code could not price it:
    UnicodeEncodeError: 'utf-8' codec can't encode characters in position 6129-6130: surrogates not allowed", the
    lock not judged, exit 1 (the cache key of every cached read encoded the package's file names as strict UTF-8)."""
    from test_diff import commit_all
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    cost = path / "src" / "passprice" / "cost.py"
    cost.write_text(cost.read_text(encoding="utf-8") + "\n_LEFT28B = 1\n", encoding="utf-8")  # the model's digest moves
    commit_all(path, "a pricing module changed")
    (path / "src" / "passprice" / ODD).write_text("x = 1\n", encoding="utf-8")
    result = invoke("diff", "main", root=path)
    assert result.exit_code == 0, result.output
    assert "no lock affected; 1 lock unaffected; passprice's own code changed (1 file)" in result.stdout
    assert "  src/passprice/\\udcff\\udcfe odd.py\n" in result.stdout
    assert "Unicode" not in result.output and "cannot price" not in result.output


def test_the_running_package_holding_a_non_utf8_file_name_prices(tmp_path: Path) -> None:
    """passprice run from a package folder holding ``<0xff 0xfe> odd.py`` (an editable checkout, say), its cache on:
    before, ``price`` ended in a traceback (UnicodeEncodeError from the cache key), exit 1; now it prices, twice (the
    second from the cache)."""
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    (path / "src" / "passprice" / ODD).write_text("x = 1\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(path / "src")
    env["PASSPRICE_CACHE_DIR"] = str(tmp_path / "cache")
    for _ in range(2):
        done = subprocess.run([sys.executable, "-B", "-m", "passprice", "--root", str(path), "price", "r1-qwen7b-h200",
                               "--json"], cwd=path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert '"tokens_per_s"' in done.stdout
        assert "Traceback" not in done.stderr and "surrogates" not in done.stderr


def test_the_cache_key_of_a_non_utf8_name_is_its_own() -> None:
    from passprice import cache

    one = cache._key_start("a\udcff").hexdigest()
    other = cache._key_start("a\udcfe").hexdigest()
    assert one != other
    assert one != cache._key_start("a\ufffd").hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", one)


# --- 3. every command's --json failure path: one line on stderr, exit 2, and (session 30) the one JSON document ------


def _bad_inputs(tmp: Path) -> dict[str, Path]:
    """One bad file of each kind: a card whose ``memory.bandwidth.value`` is text, a GGUF header cut at 100 bytes,
    a lock that is not TOML, a trace whose 2nd request has a negative prompt, a sweep file with batch 0 among its
    batches' bounds, a config that is not JSON."""
    card_text = (REPO / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8")
    assert card_text.count("value = 4.8\n") == 1
    files = {
        "card": ("card.toml", retitled(card_text, "Bad card").replace("value = 4.8\n", 'value = "x"\n')),
        "lock": ("bad.lock.toml", "[lock\n"),
        "trace": ("trace.jsonl", '{"arrival_s": 0.0, "prompt_tokens": 8, "output_tokens": 4}\n'
                                 '{"arrival_s": 0.1, "prompt_tokens": -1, "output_tokens": 4}\n'),
        "grid": ("grid.toml", 'servings = ["r1-qwen7b-h200"]\npositions = [512]\nbatches = { from = 1, to = 2, '
                              'factor = 0 }\n'),
        "config": ("config.json", '{"model_type": '),
    }
    out = {}
    for kind, (name, text) in files.items():
        out[kind] = tmp / name
        out[kind].write_text(text, encoding="utf-8")
    header = (REPO / "tests" / "data" / "qwen35-27b-like.header.gguf").read_bytes()
    out["header"] = tmp / "cut.gguf"
    out["header"].write_bytes(header[:100])
    (tmp / "taken" / "facts").mkdir(parents=True)
    out["taken"] = tmp / "taken"
    out["noroot"] = tmp / "noroot"
    out["noroot"].mkdir()
    return out


#: Every command with --json, one bad input each (``{kind}`` is a file of :func:`_bad_inputs`; ``@root`` runs under
#: ``--root`` a folder that is no registry, ``@copy`` under a private copy of the checkout's registry, not a git one).
JSON_FAILURES = [
    ("audit", "r1-qwen7b-h200", "--card", "{card}"),
    ("best", "r1-qwen7b-h200", "--card", "{card}"),
    ("calibrate", "--stack", "no-such-stack"),
    ("@root", "cards"),
    ("@root", "check"),
    ("@root", "checkpoints"),
    ("compare", "r1-qwen7b-h200", "--cards", "{card}"),
    ("@copy", "diff", "HEAD"),
    ("explain", "no-such-term"),
    ("facts", "{card}"),
    ("header", "{header}"),
    ("@copy", "import", "{header}"),
    ("init", "{taken}"),
    ("kv", "{header}"),
    ("@copy", "lock", "r1-qwen7b-h200", "--card", "{card}", "--name", "x"),
    ("max-batch", "r1-qwen7b-h200", "--card", "{card}"),
    ("@copy", "new-serving", "x", "--checkpoint", "{header}", "--card", "h200_sxm_141gb"),
    ("price", "r1-qwen7b-h200", "--card", "{card}"),
    ("reproduce", "{lock}"),
    ("roofline", "{card}"),
    ("@root", "servings"),
    ("simulate", "r1-qwen7b-h200", "--trace", "{trace}"),
    ("@root", "sources"),
    ("speculate", "r1-qwen7b-h200", "--card", "{card}"),
    ("sweep", "--file", "{grid}"),
    ("synth", "{config}", "-o", "{taken}/x.gguf"),
    ("validate", "--stack", "no-such-stack"),
    ("fact", "show", "{card}"),
    ("@copy", "fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "abc", "--unit", "TB/s",
     "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator", "p. 1"),
    ("fact", "recompute", "{card}"),
]


def test_3_every_command_with_json_is_in_the_list() -> None:
    from passprice.cli import cli

    def with_json(group: object, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        for name, command in getattr(group, "commands", {}).items():
            if hasattr(command, "commands"):
                found |= with_json(command, (*prefix, name))
            elif any("--json" in p.opts for p in command.params):
                found.add((*prefix, name))
        return found

    listed = set()
    for case in JSON_FAILURES:
        words = [w for w in case if not w.startswith("@")]
        listed.add(tuple(words[:2]) if words[0] == "fact" else (words[0],))
    assert listed == with_json(cli, ())


@pytest.mark.parametrize("case", JSON_FAILURES, ids=[" ".join(c[:3]) for c in JSON_FAILURES])
def test_3_a_json_failure_prints_its_error_document_and_one_line(tmp_path: Path, case: tuple[str, ...]) -> None:
    """Session 28b pinned nothing on stdout here; since session 30 ``--json`` always prints one document: the error
    document, whose one problem is the stderr line without ``passprice: error:`` (tests/test_json_30.py)."""
    files = _bad_inputs(tmp_path)
    root = REPO
    if case[0] == "@root":
        root, case = files["noroot"], case[1:]
    elif case[0] == "@copy":
        root, case = copy_root(tmp_path), case[1:]
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in case]
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("passprice: error: "), result.stderr
    assert json.loads(result.stdout) == {"error": {"status": 2,
                                                   "problems": [lines[0].removeprefix("passprice: error: ")]}}


LISTINGS = [("cards",), ("servings",), ("checkpoints",), ("sources",), ("check",), ("compare", "gemma3-270m-h100"),
            ("validate",)]


@pytest.mark.parametrize("command", LISTINGS, ids=[c[0] for c in LISTINGS])
def test_3_a_listing_with_one_bad_file_prints_one_whole_json_document(tmp_path: Path, command: tuple[str, ...]) -> None:
    """The one kind of --json failure that prints its own document (every other prints the error document since
    session 30): a listing (and ``check``, ``validate``'s runs and ``compare``'s every
    card; ``diff``'s review likewise) still shows every good file (issue 13's class 13), as one document that parses,
    and says the bad file's line, exit 2."""
    root = copy_root(tmp_path)
    folder = {"cards": "facts/cards", "sources": "facts/cards", "compare": "facts/cards", "validate":
              "registry/measurements", "checkpoints": "registry/checkpoints"}.get(command[0], "registry/servings")
    broken = root / folder / "zz_broken.toml"
    broken.write_text("garbage = [\n", encoding="utf-8")
    result = invoke(*command, "--json", root=root)
    assert result.exit_code == 2, result.output
    said = f"{folder}/zz_broken.toml: not valid TOML: Invalid value (at end of document: line 2, column 1)"
    # each relative to the registry, validate too (leftovers 28c: it said ROOT/registry/measurements/…)
    assert result.stderr == f"passprice: error: {said}\n"
    assert isinstance(json.loads(result.stdout), dict)
