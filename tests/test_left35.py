"""Session 33, left35: small loose ends session 32 left (issue 13).

1. The README's example lock digest was stale (``passprice reproduce f1d04adf695d`` named a digest no shipped lock
   had since the re-lock of round one): every hex digest the README shows is a shipped lock's today, a commit or an
   outside document's, or a placeholder the text explains; a re-lock that moves a shown digest fails here with the
   line to change.
2. ``lock -o PATH`` is relative to the working folder, never to ``--root`` (as pip-compile's ``-o``): ``--help`` says
   so, and a lock written outside the registry is said to be unread by its check (walkthrough 42 wrote the checkout's
   ``locks/`` from ``--root COPY`` without a word).
3. The fourteen shipped synthetic entries name a header file nobody wrote: ``audit``, ``header`` and ``checkpoints``
   say it was not kept and give the ``synth`` command that writes the bytes again; their entries (and the locks'
   pins) are unchanged.
4. README "Speed": every row names the date and code it was measured at; ``benchmarks/bench.py`` prints that cell.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import REPO, copy_root, invoke
from passprice.cli import cli

README = (REPO / "README.md").read_text(encoding="utf-8")
LOCKS = {p.name.removesuffix(".lock.toml"): tomllib.loads(p.read_text(encoding="utf-8"))["lock"]
         for p in sorted((REPO / "locks").glob("*.lock.toml"))}


def _hex(digest: str) -> str:
    return digest.removeprefix("sha256:")


# --- 1. the README's digests ------------------------------------------------------------------------------------------

#: Every other hex string the README shows, and why it stays true whatever a re-lock does. ``commit``: a commit of
#: this repository (checked below where the history is whole); ``outside``: another repository's commit, cited.
KNOWN = {
    "f1cfb7415ecb": "commit",  # the commit whose locks first record pricing model d229a791916f (README, reproduce)
    "d229a791916f": "f1cfb7415ecb",  # a pricing-model digest: what that commit's locks record, forever
    "1e835f8da2fb": "commit",  # the merge base a diff example names
    "4a60c8a1d53d": "commit",  # fact show --history's commits
    "19587b49dfff": "commit",
    "ee98f7332b36": "commit",
    "33217f5c1c90": "commit",  # fact show --history: cite67's merge (the Azure rows quoted verbatim)
    "cd588b70dcad": "commit",  # ... and its commit on the branch
    "91e21ed9": "commit",  # the Speed section's session 32 run
    "c83d4dee": "commit",  # the Speed section's round 36 (perf36) baseline
    "8a52c0a7": "commit",  # the code benchmarks/stacks.py ran in session 34 (left37) and round 37's (perf37) baseline
    "0c1e7f03": "commit",  # the Speed section's round 38 (cold38) baseline
    "29ec5f4e": "commit",  # the code benchmarks/stacks.py ran after session 34.s merges (the 195-run figures)
    "d82efb38ac44": "c23cf4390948",  # an older pricing model src/passprice/pricing_models.json lists (slip55's example)
    "c23cf4390948": "commit",  # the commit that first locked with d82efb38ac44
    "617db241a": "outside",  # ggml-org/llama.cpp's master in PR #20586's table (moe45's MoE runs above batch 1)
    "3304017b": "outside",  # "Seed 3304017b maintainers", an author's name in the history example
    "8fd0c6e1bd0f": "outside",  # Azure/AI-benchmarking-guide at that commit, a source's locator
    "007dbbf3fd17eefe9b47fee45f48f7ba5e62b714": "outside",  # ggml-org/llama.cpp's commit, its line numbers
    "a5410f046c": "outside",  # ggml-org/llama.cpp's commit whose llama-model.cpp reads gemma2's window as optional
    "a0187f68f28a": "commit",  # the commit the lock-on-a-day recipe's `--until=2026-12-02T23:59:59Z` finds (test_doc52)
    "c8ac5b1d": "a0187f68f28a",  # qwen3-30b-a3b-h200's [lock] digest at that commit, forever
    "e9162b7b357c": "commit",  # walk56: the passprice commit an old gemma3 lock's reproduce verdict names
    "e9af49f4c0f7": "commit",  # walk56: the commit that wrote a re-locked qwen3-30b-a3b-h200 digest
    # trace104: the commits that replace a session's label in the README's prose (tests/test_trace104.py)
    "f67ce189": "commit",  # the .pth Ctrl-C handler of the console script's own imports
    "748e082b": "commit",  # SIGTERM/SIGHUP answered from start-up (`passprice: terminated`)
    "eeb6d017": "commit",  # a lock pins its checkpoint entry's origin (tests/test_pin_27.py)
    "8b869011": "commit",  # the older `sweep --json` figures a Speed row's reference cell gives
    "6416001d": "commit",  # the routing question left undecided (no multi-batch Qwen3-30B-A3B table found)
}
SHOWN = re.compile(r"`passprice (?:reproduce|audit) ([0-9a-f]{8,64})` \(`([A-Za-z0-9._-]+)`'s `\[lock\] digest`")
HEX = re.compile(r"(?<![0-9A-Za-z_])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{8,64}(?![0-9A-Za-z_])")


def _line(at: int) -> int:
    return README.count("\n", 0, at) + 1


def test_1_the_digest_the_readme_cites_a_lock_by_is_that_lock_s_today() -> None:
    shown = list(SHOWN.finditer(README))
    assert shown, "the README shows no lock digest as `passprice reproduce DIGEST` (`LOCK`'s `[lock] digest`)"
    for m in shown:
        digest, name = m[1], m[2]
        today = _hex(LOCKS[name]["digest"])
        assert today.startswith(digest), (
            f"README.md line {_line(m.start())}: `passprice reproduce {digest}` is {name}'s [lock] digest no more (a "
            f"re-lock moved it): change it to {today[:len(digest)]}"
        )


def test_1_every_other_hex_string_in_the_readme_is_known_to_stay_true() -> None:
    current = {_hex(lock[key]) for lock in LOCKS.values() for key in ("digest", "pricing_model")}
    cited = {m[1] for m in SHOWN.finditer(README)}
    stale = []
    for m in HEX.finditer(README):
        token = m[0]
        if token in cited or token in KNOWN or any(d.startswith(token) for d in current):
            continue
        stale.append(f"README.md line {_line(m.start())}: {token}")
    # before: f1d04adf695d (a lock digest re-locked away), 265a73d169ea and 3f68a91b572a (another registry's), and
    # 3c54a9c52ca7 (a commit no history holds); now a shipped lock's digest or COMMIT/DATE/DIGEST placeholders
    assert stale == [], ("hex strings that are no shipped lock's digest or pricing_model today, nor in KNOWN: make "
                         "each current, a placeholder the text explains, or add it to KNOWN with why it stays true: "
                         + "; ".join(stale))
    for placeholder in ("COMMIT (DATE: the oldest commit whose locks record DIGEST)", "where COMMIT, DATE and DIGEST",
                        "COMMIT and DATE the lock's commit's first 12 hex digits and date"):
        assert placeholder in README


def test_1_the_readme_s_commits_are_this_repository_s() -> None:
    git = ["git", "-C", str(REPO)]
    probe = subprocess.run([*git, "rev-parse", "--is-shallow-repository"], capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() != "false":
        pytest.skip("not a git checkout with its whole history")
    commits = [t for t, kind in KNOWN.items() if kind == "commit"]
    asked = "".join(f"{c}^{{commit}}\n" for c in commits)
    out = subprocess.run([*git, "cat-file", "--batch-check"], input=asked, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert [line for line in out if "missing" in line] == []
    lock = subprocess.run([*git, "show", "f1cfb7415ecb:locks/r1-qwen7b-h200.lock.toml"], capture_output=True,
                          text=True, check=True).stdout
    assert 'pricing_model = "sha256:d229a791916f' in lock


# --- 2. lock -o is the working folder's -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_root(tmp_path_factory.mktemp("left35"))


def test_2_help_says_o_is_relative_to_the_working_folder() -> None:
    text = " ".join(CliRunner().invoke(cli, ["lock", "--help"]).stdout.split())
    assert ("-o, --output FILE Lock file to write, relative to the working folder (not to --root), as every -o is "
            "(default: the registry's locks/NAME.lock.toml). check, price and diff read the registry's locks/ only: "
            "a lock written elsewhere is yours to keep, and said to be.") in text


def test_2_a_lock_written_outside_the_registry_is_said_to_be_unread(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # walkthrough 42: `passprice --root COPY lock … -o locks/x.lock.toml` in a checkout wrote the checkout's locks/,
    # exit 0, not a word
    (tmp_path / "locks").mkdir()
    monkeypatch.chdir(tmp_path)
    # the running code's pricing-model digest (parsed once a process, ~7 s alone) is no part of what is tested here
    monkeypatch.setattr("passprice.pins._running", lambda: "sha256:" + "0" * 64)
    result = invoke("lock", "gemma3-270m-h100", "-o", "locks/x.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(" -> locks/x.lock.toml\n")
    assert result.stderr == (
        f"passprice: note: lock x was written to locks/x.lock.toml (relative to the working folder: {tmp_path}/locks/"
        f"x.lock.toml), outside registry {root}: its check, price and diff read {root}/locks/ only and will not see "
        f"it (without -o, lock writes {root}/locks/x.lock.toml)\n"
    )
    assert (tmp_path / "locks" / "x.lock.toml").is_file() and not (root / "locks" / "x.lock.toml").exists()
    # an absolute path is named as given, no working folder
    result = invoke("lock", "gemma3-270m-h100", "-o", str(tmp_path / "y.lock.toml"), root=root)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"passprice: note: lock y was written to {tmp_path}/y.lock.toml, outside registry ")


def test_2_a_lock_in_the_registry_s_locks_gets_no_note_and_elsewhere_inside_it_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)
    result = invoke("lock", "gemma3-270m-h100", "-o", "locks/left35.lock.toml", root=root)
    assert result.exit_code == 0 and result.stderr == "", result.output
    result = invoke("lock", "gemma3-270m-h100", "-o", "registry/z.lock.toml", root=root)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"passprice: error: registry/z.lock.toml (relative to the working folder: {root}/registry/z.lock.toml): "
        f"inside the registry, locks are read from {root}/locks/NAME.lock.toml only: a lock written here would guard "
        "nothing (check, price and diff never read it); write it there (the default), or outside the registry\n"
    )
    assert not (root / "registry" / "z.lock.toml").exists()


# --- 3. the shipped synthetic headers nobody wrote --------------------------------------------------------------------


def test_3_the_table_is_the_entries_synthesized_py_builds() -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from passprice.unkept import UNKEPT
    from synthesized import SYNTHESIZED

    table = {u.name: (sha, u.config, u.mix) for sha, u in UNKEPT.items()}
    # 14, moe44's qwen3-30b-a3b-q4_0, moe46's gpt-oss-120b-mxfp4, moe48's deepseek-v2-lite-q4_0
    assert len(UNKEPT) == len(table) == len(SYNTHESIZED) == 17
    for name, (config, mix, _) in SYNTHESIZED.items():
        text = (REPO / "registry" / "checkpoints" / f"{name}.toml").read_text(encoding="utf-8")
        # the [entry] and [header] tables alone (tomllib of the 14 whole entries took 1.3 s)
        entry = tomllib.loads(text[: text.index("\nshards = [")])
        assert table[name] == (entry["header"]["sha256"], config, mix)
        assert entry["entry"]["source"] == f"{name}.header.gguf"
        assert entry["entry"]["origin"].startswith("Synthetic")
        assert not (REPO / "tests" / "data" / entry["entry"]["source"]).exists()  # no file of that name is kept
        assert (REPO / "examples" / "configs" / config).is_file()


def test_3_the_command_given_writes_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.unkept import UNKEPT

    sha, never = next((s, u) for s, u in UNKEPT.items() if u.name == "llama2-7b-q4_0")
    assert never.command() == "passprice synth examples/configs/llama-2-7b.json --mix Q4_0 -o llama2-7b-q4_0"
    monkeypatch.chdir(tmp_path)
    words = never.command().split()[1:]
    words[1] = str(REPO / words[1])
    result = CliRunner().invoke(cli, ["--root", str(REPO), *words])
    assert result.exit_code == 0, result.output
    assert hashlib.sha256((tmp_path / "llama2-7b-q4_0").read_bytes()).hexdigest() == sha


SAID = ("not kept: this shipped synthetic header was built by passprice synth and imported without -o, so no file was "
        "written (the entry's source, llama2-7b-q4_0.header.gguf, names none); `passprice synth "
        "examples/configs/llama-2-7b.json --mix Q4_0 -o llama2-7b-q4_0` in a passprice checkout writes these bytes "
        "again (the header sha256 shown; -o's file name becomes the header's general.name: keep it llama2-7b-q4_0, "
        "then rename the file)")


def test_3_header_and_checkpoints_say_the_header_was_not_kept() -> None:
    lines = invoke("header", "llama2-7b-q4_0").stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  sha256 "))
    assert lines[at + 1] == f"  header file   {SAID}"
    for kept in ("gemma3-270m-q4_k_m", "qwen35-27b-like"):  # a real header; one tests/hybrids.py writes to tests/data
        assert "header file" not in invoke("header", kept).stdout
    listed = invoke("checkpoints").stdout.splitlines()
    assert ("  header file not kept: codellama-7b-f16, codellama-7b-q8_0, deepseek-v2-lite-q4_0, deepseek-v3-q4_k_m, "
            "gpt-oss-120b-mxfp4, "
            "gpt-oss-20b-mxfp4, "
            "llama2-13b-f16, llama2-7b-f16, llama2-7b-q4_0, llama2-7b-q4_k_m, llama3-70b-q4_k_m, llama3-8b-f16, "
            "llama3-8b-q4_k_m, llama31-8b-bf16, llama31-8b-q4_0, qwen3-30b-a3b-q4_0, qwen3-30b-a3b-q4_k_m: synthetic, "
            "built by passprice synth and imported without -o, so no header file was written (the entry's source names "
            "none); "
            "`passprice header NAME` gives the synth command that writes it again") in listed


# --- 4. README Speed rows are dated -----------------------------------------------------------------------------------

STAMP = re.compile(r"2026-\d\d-\d\d, (?:code [0-9a-f]{7}|branch perf31 \(32c20cf|session 23 \(perf23, README 8b86901)")


def test_4_every_speed_row_names_when_and_at_which_code_it_was_measured() -> None:
    section = README[README.index("\n## Speed\n"):]
    section = section[: section.index("\n## ", 5)]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0] == "| figure | passprice | reference | ratio | target | measured |"
    # 50, round head39's three header rows (first read as `header` makes it, walk, floor), sweep38's JSON-vs-CSV row,
    # speed50's header seen before with its file's status vouched for; hdr54's five rows of a synthetic header of
    # gemma3's shape with random tokens and its reader against main's; speed54's default CSV run paired with main's;
    # session 43's quiet run added the bench's two tomllib rows of the review path and four more synthetic-header rows
    assert len(rows) == 70  # session 44's quiet run: the two rows of a cold check from a wheel (digest77's bench rows)
    undated = [row[:60] for row in rows[2:] if not STAMP.match(row.rsplit(" | ", 1)[1])]
    assert undated == []


def test_4_the_bench_prints_the_measured_cell() -> None:
    spec = importlib.util.spec_from_file_location("bench_left35", REPO / "benchmarks" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    stamp = bench.measured_stamp(5.25)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d, code ([0-9a-f]{7}|unknown)( \+ changes)? \(load 5\.2\)", stamp), stamp
    if os.path.isdir(REPO / ".git") or (REPO / ".git").is_file():
        assert "unknown" not in stamp
