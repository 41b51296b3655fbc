"""Left32 (issue 13's leftovers: what a user reads of audit and reproduce): ``reproduce`` prints the lock's digest, so
a published price is matched to the lock it came from; every serving option given to an audit of a lock (named by
file, name or digest) is one error line naming the option, what the lock pins and what to do; the re-derived
elasticity (``elasticity_rederived``) is a column of the text and markdown audits, not only of ``--json``."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import click
import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice.cli import cli

R1 = "r1-qwen7b-h200"
BEST = "r1-qwen7b-h200-best"


def _digest(name: str) -> str:
    """The ``[lock] digest`` read off the shipped lock ``locks/NAME.lock.toml``."""
    with (REPO / "locks" / f"{name}.lock.toml").open("rb") as f:
        digest: str = tomllib.load(f)["lock"]["digest"]
    assert digest.startswith("sha256:") and len(digest) == 71
    return digest


# --- 1. reproduce prints the lock's digest --------------------------------------------------------------------------


def test_reproduce_prints_the_lock_digest() -> None:
    digest = _digest(R1)
    text = invoke("reproduce", R1)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    # after what the price rests on and what else is pinned, before what changed since the lock
    at = lines.index(f"  lock digest {digest} (its [lock] digest, verified: what a citation names)")
    assert lines[at - 1].startswith("  also pinned, not read by this price (6): ")
    assert lines[at + 1] == "  since the lock:"
    document = json.loads(invoke("reproduce", R1, "--json").stdout)
    assert document["lock_digest"] == digest
    # the same digest as the audit's lock line, which a paper cites (README: "To cite a price")
    audited = json.loads(invoke("audit", f"{R1}.lock.toml", "--json").stdout)
    assert audited["lock_digest"] == digest


def test_reproduce_of_a_best_lock_prints_its_own_digest() -> None:
    digest = _digest(BEST)
    assert digest != _digest(R1)
    document = json.loads(invoke("reproduce", BEST, "--json").stdout)
    assert document["lock_digest"] == digest
    assert f"  lock digest {digest} " in invoke("reproduce", BEST).stdout


# --- 2. a lock pins what every serving option would change ----------------------------------------------------------

#: A valid value for every serving option of ``audit`` (a flag: ``None``); the test fails when audit gains an option
#: this table does not name, so each new one is checked against a lock too.
VALUES: dict[str, str | None] = {
    "--checkpoint": "deepseek-r1-distill-qwen-7b-q4_k_m", "--card": "h200_sxm_141gb", "--batch": "3",
    "--position": "100", "--limit": "1024", "--kv-page": "16", "--contiguous": None, "--kv-bytes": "1",
    "--state-bytes": "4", "--activation-words": "1", "--scaling": "sub32", "--attention": "array",
    "--kv-rotated": None, "--no-kv-rotated": None, "--draft": "mtp", "--draft-tokens": "2", "--head-rows": "100",
    "--flush": "every-pass", "--host-memory": None, "--no-host-memory": None, "--shared-prefix": "16",
    "--prefix-read-once": None, "--no-prefix-read-once": None, "--routing": "uniform", "--max-tpot": "0.05",
    "--stack": "llamacpp-cuda-2405", "--memory-use": "0.9",
}

#: Options of ``audit`` that apply to a lock as to a serving (how to measure, draw or print it) or audit backwards.
APPLY = {"--source", "--fact", "--format", "--step", "--plot", "--force", "--json", "--help", "-h"}


def test_the_table_names_every_serving_option_of_audit() -> None:
    assert isinstance(cli, click.Group)
    command = cli.commands["audit"]
    named = {o for p in command.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
    assert named - APPLY == set(VALUES)


@pytest.mark.parametrize("option", sorted(VALUES))
def test_each_option_on_a_lock_is_one_line_naming_it(option: str) -> None:
    value = VALUES[option]
    words = [option] if value is None else [option, value]
    shown = " ".join(words)
    # by file name: which lock, what it pins, and the two things to do
    lines = bad("audit", f"{BEST}.lock.toml", *words,
                says=f"passprice: error: audit: {option} cannot apply to lock {BEST}: a lock pins its ")
    assert len(lines) == 1
    # a number is echoed as typed (--kv-bytes 1, not click's 1.0): the serving's audit reads it the same
    echoed = shown
    assert (
        f"(it is audited as it was priced), so the option would change nothing; audit the lock without it, passprice "
        f"audit {BEST}.lock.toml, or its serving with it: passprice audit {R1} {echoed} (see '"
    ) in lines[0], lines[0]


@pytest.mark.parametrize(("option", "pins"), [("--batch", "batch"), ("--no-host-memory", "serving's choices"),
                                              ("--stack", "stack (or none)"), ("--card", "card")])
def test_an_option_on_a_lock_named_by_its_digest_names_the_lock(option: str, pins: str) -> None:
    # left32: `audit DIGEST --batch 3` said "DIGEST is a lock"; a digest names a lock, and the line says which.
    value = VALUES[option]
    words = [option] if value is None else [option, value]
    prefix = _digest(R1).removeprefix("sha256:")[:12]
    [line] = bad("audit", prefix, *words)
    assert line.startswith(
        f"passprice: error: audit: {option} cannot apply to lock {R1} (whose [lock] digest {prefix} is): a lock pins "
        f"its {pins} (it is audited as it was priced), so the option would change nothing; audit the lock without "
        f"it, passprice audit {R1}.lock.toml, or its serving with it: passprice audit {R1} {' '.join(words)}"
    ), line
    # the whole digest, sha256: and all, as a paper cites it
    [line] = bad("audit", _digest(R1), *words)
    assert f"cannot apply to lock {R1} (whose [lock] digest {_digest(R1)} is)" in line


def test_several_options_on_a_lock_are_named_in_one_line() -> None:
    [line] = bad("audit", f"{BEST}.lock.toml", "--batch", "3", "--no-prefix-read-once")
    assert (f"audit: --batch, --no-prefix-read-once cannot apply to lock {BEST}: a lock pins its batch and its "
            "serving's choices (it is audited as it was priced), so the options would change nothing; audit the lock "
            f"without them, passprice audit {BEST}.lock.toml, or its serving with them: passprice audit {R1} --batch 3 "
            "--no-prefix-read-once") in line


def test_an_off_flag_on_a_lock_is_no_longer_ignored() -> None:
    # Found (left32): a `v is not False` test let `audit LOCK --no-host-memory` exit 0, the flag silently dropped.
    for flag in ("--no-host-memory", "--no-kv-rotated", "--no-prefix-read-once"):
        [line] = bad("audit", f"{R1}.lock.toml", flag)
        assert f"audit: {flag} cannot apply to lock {R1}: " in line


def test_a_digest_no_lock_has_says_so_whatever_the_options() -> None:
    [line] = bad("audit", "deadbeefdead", "--batch", "3")
    assert "lock 'deadbeefdead': no such file, and no lock in " in line
    assert "has that [lock] digest" in line


def test_options_that_apply_to_a_lock_still_do() -> None:
    # --step, --format (and --json, --plot) measure, print or draw the lock's audit: not refused
    result = invoke("audit", f"{BEST}.lock.toml", "--step", "5")
    assert result.exit_code == 0, result.output
    assert "by re-pricing, measured over a 5 % change" in result.stdout
    document = json.loads(invoke("audit", f"{BEST}.lock.toml", "--step", "5", "--format", "json").stdout)
    assert {r["step"] for r in document["facts"]} == {0.05}


# --- 3. the re-derived elasticity in the text and markdown tables ---------------------------------------------------


def test_rederived_elasticity_is_a_column_of_text_and_markdown() -> None:
    document = json.loads(invoke("audit", R1, "--json").stdout)
    rows = {r["path"]: r for r in document["facts"]}
    assert rows["memory.bandwidth"]["derived_by"] == ["streams.read", "streams.append"]
    assert rows["memory.bandwidth"]["elasticity_rederived"] == 0.0
    assert rows["memory.bandwidth"]["elasticity"] == pytest.approx(1.0, abs=1e-9)
    assert rows["streams.read"]["derived_by"] == [] and rows["streams.read"]["elasticity_rederived"] is None

    text = invoke("audit", R1).stdout.splitlines()
    header = next(line for line in text if " fact " in line and "elasticity" in line)
    assert header.rstrip().endswith("elasticity  re-derived")
    bandwidth = next(line for line in text if line.startswith("*  memory.bandwidth "))
    assert bandwidth.split()[-2:] == ["+1.000", "+0.000"]
    read = next(line for line in text if line.startswith("*  streams.read "))
    assert read.split()[-1] == "+0.972"  # no re-derived figure: nothing derives from it

    markdown = invoke("audit", R1, "--format", "markdown").stdout
    assert ("| fact | value | provenance | floor (margin) | elasticity | re-derived | term | source: locator |"
            in markdown)
    assert ("| `memory.bandwidth` | 4.8 TB/s | published | published (at floor) | +1.000 | +0.000 | **binds** |"
            in markdown)
    assert "| `streams.read` | 0.9333 | measured | measured (at floor) | +0.972 |  | **binds** |" in markdown
    assert ("\n\nRe-derived: inputs of other rows' derivations: memory.bandwidth (of streams.read, streams.append) "
            "+0.000 re-derived; vector (of scale) +0.000 re-derived — ") in markdown


def test_a_price_without_derived_inputs_has_no_rederived_column() -> None:
    # gemma3-270m-h100: does any fact of its card derive from another? If none, the column is left out.
    document = json.loads(invoke("audit", "gemma3-270m-h100", "--json").stdout)
    derived = any(r["derived_by"] for r in document["facts"])
    text = invoke("audit", "gemma3-270m-h100").stdout
    assert ("re-derived" in text.split("\n\n")[1]) is derived


def test_a_fifo_among_the_locks_is_never_opened(tmp_path: Path) -> None:
    # Found (left32): looking up the lock a digest names, and the serving an option's lock locks, opened every
    # locks/*.lock.toml, so a FIFO there would have blocked `audit DIGEST --batch 3`; read as a lock is read, it is
    # passed over, and the FIFO's own audit says what to do.
    root = copy_root(tmp_path)
    os.mkfifo(root / "locks" / "zz.lock.toml")
    prefix = _digest(R1).removeprefix("sha256:")[:12]
    [line] = bad("audit", prefix, "--batch", "3", root=root)
    assert f"audit: --batch cannot apply to lock {R1} (whose [lock] digest {prefix} is)" in line
    # Slip 54: the FIFO named as the lock is refused first, as `audit zz` refuses it, before any word on the option
    # (it said "--no-host-memory cannot apply to lock zz").
    fifo = root / "locks" / "zz.lock.toml"
    said = f"passprice: error: {fifo}: is a FIFO (named pipe), not a regular file: passprice reads regular files only"
    assert bad("audit", "zz", "--no-host-memory", root=root) == [said]
