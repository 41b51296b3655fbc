"""Locks (issue 4): a lock pins the facts a price rests on, reproduces the price bit for bit whatever the facts say
later, refuses a price on facts weaker than it allows, and fails loudly (exit 2, one line, nothing overwritten) when
it was edited, truncated or is not a lock at all; ``check`` judges every file and lock of a root, ``audit`` says which
facts bind a price and how much it moves with each.

Every test works on a copy of the repository's facts, registry, schemas (and, where it needs them, locks) in a
temporary folder, through the command line (``--root``), without network.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import passprice
from passprice import serving
from passprice.cli import cli
from passprice.errors import InputError
from passprice.files import write_atomically
from passprice.locks import lock_text, read_lock
from passprice.pins import pricing_model_digest
from passprice.registry import Root
from passprice.report import cost_json
from passprice.reproduce import reproduce
from passprice.serving import price_serving
from passprice.servings import load_spec, resolve
from passprice.tables import whole_counts

REPO = Path(__file__).parent.parent
CARD = "h200_sxm_141gb"
#: A Gated-DeltaNet hybrid serving on the H200 whose recurrent state is rewritten in place every pass, so its price
#: rests on ``streams.rewrite`` (and moves with it).
MTP = "qwen35-27b-h200-mtp"
#: DeepSeek-R1-Distill-Qwen-7B at batch 1 on the H200: a memory-bound price.
R1 = "r1-qwen7b-h200"
CITE = "engineering estimate for this test: BabelStream Mul on the H100 scaled by the H200's memory clock"
FLOOR_REFUSAL = (
    "lock mtp refuses this price: streams.rewrite is estimated, below the floor measured "
    "(the price's weakest provenance is assumed, carried by draft.acceptance.2)"
)
FLOOR_ADVICE = (
    "for a what-if, price without the lock (--no-lock); to price it under the lock, two ways out: strengthen the "
    "fact's provenance (passprice fact set with a stronger --provenance and its --source), or loosen the lock's "
    "floor for it on purpose through review (`passprice lock --update -o locks/mtp.lock.toml --force --require "
    "streams.rewrite=estimated`)"
)

#: What a drift line adds for streams.rewrite re-cited by set_fact (walk52).
RECITED = ", source azure-ai-benchmarking-guide → nvidia-h200-datasheet"


def lock_exists(path: object) -> str:
    """``lock``'s line for a lock file already there, without --update or --force."""
    return (f"{path}: already exists: `--update` re-locks it with today's facts, checkpoint and code, keeping its "
            "floors; `--force` replaces it, its policy rebuilt from the flags")


def make_root(path: Path, with_locks: bool = False) -> Path:
    """A root at ``path`` holding copies of the repository's facts, registry and schemas (and locks)."""
    folders = ("facts", "registry", "schema", "sources", *(("locks",) if with_locks else ()))
    for folder in folders:
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir(exist_ok=True)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path / "root")


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def one_error(result: Result) -> str:
    """The one line of a bad-input error (exit 2), without its ``passprice: error:`` prefix."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("passprice: error: ")
    return lines[0].removeprefix("passprice: error: ")


def set_fact(root: Path, path: str, value: str, unit: str, provenance: str, cite: str = CITE) -> None:
    # a memory fact keeps its source, the H200 product page since cite102 (tests/test_cite102.py); any other is
    # re-cited to the H200 datasheet (RECITED)
    source = "nvidia-h200-product-page" if path.startswith("memory.") else "nvidia-h200-datasheet"
    ok(run(root, "fact", "set", CARD, path, "--value", value, "--unit", unit, "--provenance", provenance,
           "--source", source, "--locator", cite))


def lock(root: Path, name: str, serving_name: str, *options: str) -> Path:
    """Write ``locks/NAME.lock.toml`` for ``serving_name`` with the command line; its path."""
    path = root / "locks" / f"{name}.lock.toml"
    ok(run(root, "lock", serving_name, "-o", str(path), *options))
    return path


def price_json(root: Path, *args: str) -> dict[str, Any]:
    """``price --json``: the price a lock records (the ``lock`` key, naming the locks it was priced under, the
    ``stale`` derived facts it rests on, and ``tpot_s``, the TPOT price adds and a lock records not, apart)."""
    out: dict[str, Any] = json.loads(ok(run(root, "price", *args, "--json")).stdout)
    out.pop("lock")
    out.pop("stale")
    out.pop("tpot_s")
    return out


def lock_status(report: dict[str, Any], name: str) -> dict[str, Any]:
    (status,) = [s for s in report["locks"] if s["name"] == name]
    return dict(status)


# --- a lock outlives the facts it was written on ----------------------------------------------------------------------


def test_a_lock_reproduces_after_its_card_changed_while_check_and_price_lock_see_the_change(root: Path) -> None:
    path = lock(root, "mtp", MTP, "--require", "streams.rewrite=measured")
    recorded = tomllib.loads(path.read_text(encoding="utf-8"))["price"]
    assert recorded == price_json(root, MTP)
    # The price rests on streams.rewrite and moves with it: the hybrid's recurrent state is rewritten in place.
    assert recorded["binds"] == "memory" and recorded["rewrite_bytes"] > 0
    assert recorded["rests_on"]["streams.rewrite"] == "measured"

    set_fact(root, "streams.rewrite", "0.75", "1", "estimated")
    today = price_json(root, MTP, "--no-lock")
    assert today["tokens_per_s"] < recorded["tokens_per_s"]
    assert today["rests_on"]["streams.rewrite"] == "estimated"

    # reproduce: the recorded price, field by field and bit for bit, from the pinned facts.
    out = json.loads(ok(run(root, "reproduce", str(path), "--json")).stdout)
    assert out["equals"] is True and out["moved"] == []
    model = pricing_model_digest()
    assert out["pricing_model"] == {"recorded": model, "now": model, "changed": False, "commit": None,
                                    "commit_search_cut": None}
    assert out["changed"] == ["facts"] and out["serving_changed"] == []
    assert [d["path"] for d in out["facts_drifted"]] == ["streams.rewrite"]
    assert out["checkpoint"]["status"] == "same"
    assert list(out["price"]) == list(price_json(root, MTP, "--no-lock"))  # every field, in the documented order
    shown = whole_counts(recorded)  # its whole byte counts as every --json writes them (left53): 4912001024, not .0
    for field, value in recorded.items():
        assert out["price"][field] == value, field
        assert type(out["price"][field]) is type(shown[field]), field
    assert out["today"]["tokens_per_s"] == today["tokens_per_s"]
    rep = reproduce(Root(root), read_lock(path))
    assert rep.equals and rep.price is not None and dict(rep.price) == recorded
    assert rep.price["tokens_per_s"] == recorded["tokens_per_s"]  # float equality, not approximate
    lines = ok(run(root, "reproduce", "mtp")).stdout.splitlines()
    assert lines[:10] == [
        "mtp (locks/mtp.lock.toml): price lock of serving qwen35-27b-h200-mtp, lock format 2",
        f"  reproduces exactly: {recorded['tokens_per_s']!r} tokens/s at batch 16, binds on memory, from its 16 "
        "pinned facts",
        # Which of the pinned facts the price rests on, and why the others are pinned too (issue 17).
        "  rests on 11 of its 16 pinned facts: array, draft.acceptance.1, draft.acceptance.2, memory.bandwidth, "
        "memory.capacity, on_chip.capacity, scale, streams.append, streams.read, streams.rewrite, vector",
        "  also pinned, not read by this price (5): host.capacity, host.read, host.stream, host.write, "
        "on_chip.bandwidth — a lock pins every fact of the card (its float-matrix rates, tensor.*, only where the "
        "price reads them) and every drafting figure, so it rebuilds the card the price was made on; a change to one "
        "the price does not read is no drift",
        # the lock's digest, what a citation names (left32)
        f"  lock digest {read_lock(path).info.digest} (its [lock] digest, verified: what a citation names)",
        "  since the lock:",
        f"    facts          1 drifted: streams.rewrite: 0.8333 (measured) → 0.75 (estimated){RECITED}",
        f"    checkpoint     qwen35-27b-like: content {out['checkpoint']['pinned'][7:19]}… as pinned",
        "    serving        unchanged",
        "    pricing model  unchanged",
    ]
    row = next(line for line in lines if line.startswith("tokens_per_s"))
    assert row.split() == ["tokens_per_s", repr(recorded["tokens_per_s"]), repr(recorded["tokens_per_s"]),
                           repr(today["tokens_per_s"])]
    change = 100 * (today["tokens_per_s"] / recorded["tokens_per_s"] - 1)
    assert lines[-1] == f"  first term that moved with today's inputs: memory_s; tokens/s {change:+.4g} %"

    # check: the drift, old → new, and the broken floor.
    result = run(root, "check")
    assert result.exit_code == 1
    today_line = (
        f"  today: 3,644.2 tokens/s at batch 16 recorded; {today['tokens_per_s']:,.1f} tokens/s at batch 16 with "
        "today's inputs\n"
    )
    assert (
        "lock mtp (locks/mtp.lock.toml, locks serving qwen35-27b-h200-mtp): FAILS\n"
        "  reproduces exactly\n"
        "  pricing model: same\n"
        f"  checkpoint: qwen35-27b-like: content {out['checkpoint']['pinned'][7:19]}… as pinned\n"
        f"  floors: {FLOOR_REFUSAL}; two ways out: strengthen the fact's provenance (passprice fact set with a "
        "stronger --provenance and its --source), or loosen the lock's floor for it on purpose through review "
        "(`passprice lock --update -o locks/mtp.lock.toml --force --require "
        "streams.rewrite=estimated`)\n"
        "  drift:\n"
        f"    streams.rewrite: 0.8333 (measured) → 0.75 (estimated){RECITED}\n" + today_line
    ) in result.stdout
    assert result.stdout.endswith("check FAILED\n")
    assert str(root) not in result.stdout  # lock paths are shown relative to the root

    # price: refused under the lock by default, and with --lock, exit 1, no price printed; by file, by name, with
    # and without a SERVING.
    for args in ((MTP,), ("--lock", str(path)), ("--lock", "mtp"), (MTP, "--lock", str(path))):
        result = run(root, "price", *args)
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr == f"passprice: refused: LockFloor: {FLOOR_REFUSAL}; {FLOOR_ADVICE}\n"
    result = run(root, "price", "--lock", str(path), "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "refusal": "LockFloor",
        "lock": "mtp",
        "offending": [{"path": "streams.rewrite", "provenance": "estimated", "floor": "measured"}],
        "provenance": "assumed",
        "weakest": ["draft.acceptance.2"],
        "message": f"{FLOOR_REFUSAL}; {FLOOR_ADVICE}",
        "advice": FLOOR_ADVICE,
        "locks": ["mtp"],
    }

    # check --frozen fails too (and would on the drift alone: next test).
    assert run(root, "check", "--frozen").exit_code == 1


def test_drift_that_keeps_the_floors_passes_check_and_fails_check_frozen(root: Path) -> None:
    path = lock(root, "mtp", MTP, "--require", "streams.rewrite=measured")
    recorded = tomllib.loads(path.read_text(encoding="utf-8"))["price"]
    set_fact(root, "streams.rewrite", "0.8", "1", "measured")
    assert price_json(root, MTP)["tokens_per_s"] < recorded["tokens_per_s"]  # under the lock: it still holds

    result = ok(run(root, "check"))
    assert (
        "lock mtp (locks/mtp.lock.toml, locks serving qwen35-27b-h200-mtp): ok\n"
        "  reproduces exactly\n"
    ) in result.stdout
    assert (
        "  floors: lock mtp holds; the price's weakest provenance is assumed\n"
        "  drift:\n"
        f"    streams.rewrite: 0.8333 (measured) → 0.8 (measured){RECITED}\n"
    ) in result.stdout
    # exit 0 still; the locked price the work tree moves named on the last line (tests/test_fixw56.py)
    last = result.stdout.splitlines()[-1]
    assert last.startswith("all holds; ") and "`passprice lock --update -o locks/mtp.lock.toml`" in last, last

    result = run(root, "check", "--frozen")
    assert result.exit_code == 1
    assert "lock mtp (locks/mtp.lock.toml, locks serving qwen35-27b-h200-mtp): FAILS\n" in result.stdout
    drifted = f"  drift (an error with --frozen):\n    streams.rewrite: 0.8333 (measured) → 0.8 (measured){RECITED}\n"
    assert drifted in result.stdout
    assert result.stdout.endswith("check FAILED (--frozen: the inputs of mtp drifted since they were locked; review "
                                  "the change, then re-lock each: `passprice lock --update -o locks/mtp.lock.toml`)\n")
    report = json.loads(run(root, "check", "--frozen", "--json").stdout)
    assert report["ok"] is False and report["frozen"] is True
    status = lock_status(report, "mtp")
    assert status["path"] == "locks/mtp.lock.toml"
    assert status["reproduces"] and status["holds"]
    assert status["drift"] == [f"streams.rewrite: 0.8333 (measured) → 0.8 (measured){RECITED}"]

    # The price itself is still reproduced exactly.
    assert reproduce(Root(root), read_lock(path)).price == recorded


# --- writing a lock ---------------------------------------------------------------------------------------------------


def _tables_sorted(table: dict[str, Any], where: str = "") -> None:
    """Within every table, the plain keys are sorted and the sub-tables are sorted (TOML puts a table's plain keys
    before its sub-tables, so the file's key order is sorted within each of the two groups)."""

    def is_table(v: Any) -> bool:
        return isinstance(v, dict) or (isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v))

    plain = [k for k, v in table.items() if not is_table(v)]
    tables = [k for k, v in table.items() if is_table(v)]
    assert plain == sorted(plain), where
    assert tables == sorted(tables), where
    for k in tables:
        for sub in table[k] if isinstance(table[k], list) else [table[k]]:
            _tables_sorted(sub, f"{where}.{k}")


def _values(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [v for x in node.values() for v in _values(x)]
    if isinstance(node, list):
        return [v for x in node for v in _values(x)]
    return [node]


def test_the_same_lock_twice_gives_the_same_bytes(root: Path) -> None:
    args = ("--name", "same", "--require", "streams.rewrite=measured")
    first = lock(root, "a", MTP, *args)
    second = lock(root, "b", MTP, *args)
    assert first.read_bytes() == second.read_bytes()
    # Another process, with another hash seed: the same bytes.
    out = root / "locks" / "process.lock.toml"
    subprocess.run(
        [sys.executable, "-c", "from passprice.cli import main; main()", "--root", str(root), "lock", MTP,
         "-o", str(out), *args],
        env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True, capture_output=True,
    )
    assert out.read_bytes() == first.read_bytes()

    raw = first.read_bytes()
    text = raw.decode("utf-8")
    assert b"\r" not in raw and text.endswith("\n") and not text.endswith("\n\n")
    document = tomllib.loads(text)
    _tables_sorted(document)
    # No timestamp anywhere: no TOML date or time, no key that names one.
    assert not [v for v in _values(document) if isinstance(v, datetime.date | datetime.time)]
    assert not re.search(r"(?m)^\S*(time|date|stamp|when|created)\S* =", text)
    # Floats in their shortest round-trip form (Python's repr), each read back to the same double.
    floats = re.findall(r"(?m)^\S+ = (-?[0-9][0-9_.eE+-]*)$", text)
    floats = [f for f in floats if re.search(r"[.eE]", f)]
    assert len(floats) > 20
    for f in floats:
        assert repr(float(f)) == f, f
    # The text is the canonical form of what it holds: read back and written again, the same bytes.
    assert lock_text(read_lock(first)) == text
    # Without --floor, every fact the price rests on is floored at its provenance today; --require sets its own.
    assert document["policy"] == {
        "floor": "assumed",
        "paths": {**document["price"]["rests_on"], "streams.rewrite": "measured"},
    }
    assert document["lock"]["name"] == "same"
    assert document["checkpoint"]["sha256"] == resolve(Root(root), load_spec(Root(root), MTP)).header.sha256


def test_a_lock_is_named_after_its_file_and_written_readable(root: Path) -> None:
    path = lock(root, "mine", R1)
    assert tomllib.loads(path.read_text(encoding="utf-8"))["lock"]["name"] == "mine"
    assert "\n  reproduces exactly: " in ok(run(root, "reproduce", "mine")).stdout
    # Not the temporary file's private 0o600: what a new file gets under the umask.
    mask = os.umask(0o022)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_an_existing_lock_is_replaced_only_with_force_and_atomically(root: Path) -> None:
    path = lock(root, "l", R1)
    before = path.read_bytes()
    result = run(root, "lock", MTP, "-o", str(path))
    assert one_error(result) == lock_exists(path)
    assert path.read_bytes() == before
    path.chmod(0o640)

    ok(run(root, "lock", MTP, "-o", str(path), "--force"))
    after = path.read_bytes()
    assert after != before
    assert tomllib.loads(after.decode("utf-8"))["serving"]["checkpoint"] == "qwen35-27b-like"
    assert path.stat().st_mode & 0o777 == 0o640  # the replaced file's permissions are kept
    assert sorted(p.name for p in path.parent.iterdir()) == ["l.lock.toml"]  # no temporary file left behind

    # The library refuses the same way, and leaves no temporary file either.
    with pytest.raises(InputError, match="already exists"):
        write_atomically(path, "x", force=False)
    assert path.read_bytes() == after
    assert sorted(p.name for p in path.parent.iterdir()) == ["l.lock.toml"]


# --- a lock that is not what passprice wrote --------------------------------------------------------------------------


@pytest.fixture
def r1_lock(root: Path) -> Path:
    return lock(root, "r1", R1)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8", newline="\n")


def _still_refused_and_untouched(root: Path, path: Path, message: str) -> None:
    """Every command reading the lock gives the same one-line error (exit 2); ``lock -o`` does not overwrite it."""
    before = path.read_bytes()
    for args in (("reproduce", str(path)), ("price", "--lock", str(path)), ("audit", str(path))):
        assert one_error(run(root, *args)) == message, args
    assert one_error(run(root, "lock", R1, "-o", str(path))) == lock_exists(path)
    assert path.read_bytes() == before


def test_a_hand_edited_pinned_fact_fails_its_digest_naming_the_path(root: Path, r1_lock: Path) -> None:
    _edit(r1_lock, "value = 0.8333\n", "value = 0.8\n")
    with pytest.raises(InputError) as info:
        read_lock(r1_lock)
    message = str(info.value)
    assert message.startswith(
        f'{r1_lock}: facts."streams.rewrite": digest mismatch: the pinned fact streams.rewrite was edited by hand '
        "(its content hashes to sha256:"
    )
    assert message.endswith("; re-lock it instead")
    _still_refused_and_untouched(root, r1_lock, message)


def test_a_tampered_price_fails_the_lock_digest(root: Path, r1_lock: Path) -> None:
    recorded = tomllib.loads(r1_lock.read_text(encoding="utf-8"))["price"]["tokens_per_s"]
    _edit(r1_lock, f"tokens_per_s = {recorded!r}\n", "tokens_per_s = 1200.0\n")
    message = one_error(run(root, "reproduce", str(r1_lock)))
    assert re.fullmatch(
        rf"{re.escape(str(r1_lock))}: lock\.digest: the lock's contents do not match its digest sha256:[0-9a-f]{{64}} "
        r"\(edited by hand\?\): a lock is written by passprice only; no commit here holds it as written: restore it "
        rf"from a copy of it as written, then change it with `passprice lock --update -o {re.escape(str(r1_lock))}` "
        r"\(it keeps the lock's kind and policy; `--force --require PATH=PROVENANCE` loosens a floor, which the review "
        rf"shows\); or write it anew, `passprice lock SERVING --force -o {re.escape(str(r1_lock))}`",
        message,
    )
    _still_refused_and_untouched(root, r1_lock, message)


def test_a_truncated_lock_is_one_clear_error(root: Path, r1_lock: Path) -> None:
    full = r1_lock.read_bytes()
    # Cut at half its bytes: mid-string here.
    r1_lock.write_bytes(full[: len(full) // 2])
    message = one_error(run(root, "reproduce", str(r1_lock)))
    assert message.startswith(f"{r1_lock}: ")
    _still_refused_and_untouched(root, r1_lock, message)
    # Cut at a line: whole tables missing, one line that says so.
    r1_lock.write_bytes(b"".join(full.splitlines(keepends=True)[:40]))
    message = one_error(run(root, "reproduce", str(r1_lock)))
    assert message.startswith(f"{r1_lock}: incomplete lock (truncated?): missing [lock], [policy], [price], [serving]")
    assert message.endswith("; re-lock it")
    _still_refused_and_untouched(root, r1_lock, message)
    # Empty.
    r1_lock.write_bytes(b"")
    # no lock cut short: nothing was written (tests/test_fixw56.py)
    assert one_error(run(root, "reproduce", str(r1_lock))).startswith(f"{r1_lock}: empty (0 bytes): no lock was "
                                                                       "written to it")
    # Wherever it is cut (line ends, and inside lines), the lock reads as one error, never as a lock.
    ends = [i + 1 for i, c in enumerate(full) if c == 0x0A]
    cuts = sorted(set(ends[::3]) | set(range(5, len(full), 211)))
    for cut in cuts:
        if cut >= len(full) - 1:  # all but the final newline: the same document
            continue
        r1_lock.write_bytes(full[:cut])
        with pytest.raises(InputError) as info:
            read_lock(r1_lock)
        assert len(str(info.value).splitlines()) == 1, (cut, str(info.value))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("pricing_model = ", "# pricing_model = ", "lock.pricing_model: missing (required)"),
        (
            'provenance = "published"\nsource = "nvidia-h200-product-page"\nunit = "TB/s"',
            'provenance = "vendor says"\nsource = "nvidia-h200-product-page"\nunit = "TB/s"',
            "facts.\"memory.bandwidth\".provenance: 'vendor says' is not allowed here (one of 'published', "
            "'measured', 'derived', 'estimated', 'assumed')",
        ),
        (
            'floor = "estimated"',
            'floor = "rumoured"',
            "policy.floor: 'rumoured' is not allowed here (one of 'published', 'measured', 'derived', 'estimated', "
            "'assumed')",
        ),
    ],
    ids=["missing-key", "bad-fact-provenance", "bad-floor"],
)
def test_a_schema_invalid_lock_is_one_clear_error(root: Path, r1_lock: Path, old: str, new: str, expected: str) -> None:
    _edit(r1_lock, old, new)
    message = one_error(run(root, "reproduce", str(r1_lock)))
    assert message == f"{r1_lock}: {expected}"
    _still_refused_and_untouched(root, r1_lock, message)


# --- reproduce refuses what it cannot reproduce -----------------------------------------------------------------------


def test_reproduce_refuses_a_checkpoint_whose_content_is_not_the_pinned_one(root: Path, r1_lock: Path) -> None:
    pinned = tomllib.loads(r1_lock.read_text(encoding="utf-8"))["checkpoint"]
    assert pinned["name"] == "deepseek-r1-distill-qwen-7b-q4_k_m"
    # The registry entry of that name now holds another checkpoint's header (re-imported under the same name).
    ok(run(root, "import", str(REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"), "--name", pinned["name"],
           "--force"))
    from passprice.checkpoints import load_checkpoint
    from passprice.pins import checkpoint_digest

    found = checkpoint_digest(load_checkpoint(Root(root), pinned["name"]))
    assert found != pinned["content"]
    state = (
        f"{pinned['name']}: content changed ({pinned['content'][7:19]}… pinned, {found[7:19]}… today), and no entry of "
        "the registry holds the pinned content"
    )
    message = f"lock r1: checkpoint {state}; import the pinned header again (passprice import), or re-lock"
    result = run(root, "reproduce", str(r1_lock))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1] == (f"  cannot be reproduced here: the pinned checkpoint {pinned['name']} "
                                             "is gone (checkpoint, below)")
    assert f"    checkpoint     {state}" in result.stdout
    assert result.stderr == ("passprice: refused: lock r1 cannot be reproduced here: no entry of this registry holds "
                             "its pinned checkpoint, so no price is made to compare with the recorded one\n")
    out = json.loads(run(root, "reproduce", str(r1_lock), "--json").stdout)
    assert out["equals"] is False and out["price"] is None and out["changed"] == ["checkpoint content"]
    assert out["checkpoint"] == {
        "status": "changed", "ref": pinned["name"], "pinned": pinned["content"], "found": None, "today": found,
        "error": None, "unread": [], "moved_to": None, "packaged": None,  # packaged: the cp offered (walk107)
    }
    result = run(root, "audit", str(r1_lock), "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "refusal": "CheckpointChanged",
        "lock": "r1",
        "checkpoint": pinned["name"],
        "pinned": pinned["content"],
        "today": found,
        "message": message,
    }
    assert result.stderr == f"passprice: refused: CheckpointChanged: {message}\n"
    status = lock_status(json.loads(run(root, "check", "--json").stdout), "r1")
    assert status["reproduces"] is False and status["checkpoint_changed"] is True
    assert status["checkpoint"] == state


def test_reproduce_names_the_pricing_model_when_it_moves_the_price(
    root: Path, r1_lock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import pins

    document = tomllib.loads(r1_lock.read_text(encoding="utf-8"))
    recorded = document["price"]
    assert document["lock"]["pricing_model"] == pricing_model_digest()
    # A new pricing model: a softmax costs more vector multiply-adds a score (the code's digest changes with it).
    # The lock's code, no longer the running one, stands as a listed older passprice (slip 55: a digest of no code
    # listed is refused as forged; on a branch whose code is not listed yet, so would be this lock's).
    from passprice import modelhistory

    older = modelhistory.KnownModel(document["lock"]["pricing_model"], "0.1.0", "2026-12-01", "")
    monkeypatch.setattr(modelhistory, "_shipped", lambda: {older.digest: older})
    monkeypatch.setattr(pins, "pricing_model_digest", lambda folder=None: "sha256:" + "ab" * 32)
    monkeypatch.setattr(serving, "SOFTMAX_MACS_PER_SCORE", 2 * serving.SOFTMAX_MACS_PER_SCORE)
    monkeypatch.setattr(passprice, "PRICING_MODEL_VERSION", "test")  # no pass shape kept from before is served

    resolved = resolve(Root(root), load_spec(Root(root), R1))
    now = price_serving(resolved.header, resolved.card, resolved.serving)
    assert now.vector_macs > recorded["vector_macs"] and now.vector_s > recorded["vector_s"]
    moved = [f for f, v in cost_json(now).items() if v != recorded[f]]
    assert moved == ["vector_macs", "vector_s"]  # memory-bound: tokens/s does not move

    result = run(root, "reproduce", str(r1_lock))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # The test registry holds no src/passprice: the code that wrote the lock is the passprice its requirements.txt
    # named at the lock's commit (walkthrough 20; a checkout of passprice names the commit's own code).
    assert lines[1].startswith(
        "  does NOT reproduce: the pricing model changed and moves the price (first: vector_macs); the lock's own "
        "price comes from the code that wrote it: the passprice this registry's requirements.txt named at the commit "
        "that last changed the lock (`git show \"$(git log -1 --format=%H -- "
    )
    assert f"    pricing model  changed ({document['lock']['pricing_model'][7:19]} → {'ab' * 6})" in lines
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith(("vector_macs", "vector_s"))}
    assert rows == {
        "vector_macs": [repr(recorded["vector_macs"]), repr(now.vector_macs), repr(now.vector_macs)],
        "vector_s": [repr(recorded["vector_s"]), repr(now.vector_s), repr(now.vector_s)],
    }
    assert "  first term that moved (pinned inputs, today's code): vector_macs" in lines
    assert result.stderr == "passprice: refused: lock r1 does not reproduce its recorded price\n"
    out = json.loads(run(root, "reproduce", str(r1_lock), "--json").stdout)
    assert out["equals"] is False and out["first_moved"] == "vector_macs"
    assert out["changed"] == ["pricing model"]
    # commit: None — the test registry's git history holds no lock recording the old digest's code (left25b).
    assert out["pricing_model"] == {"recorded": document["lock"]["pricing_model"], "now": "sha256:" + "ab" * 32,
                                    "changed": True, "commit": None, "commit_search_cut": None}
    assert out["moved"] == [
        {"field": "vector_macs", "recorded": recorded["vector_macs"], "now": now.vector_macs},
        {"field": "vector_s", "recorded": recorded["vector_s"], "now": now.vector_s},
    ]
    status = lock_status(json.loads(run(root, "check", "--json").stdout), "r1")
    assert status["reproduces"] is False and status["pricing_model"].endswith("; the price moves")

    # The same code digest with other numbers is a different complaint: something outside the digested modules.
    monkeypatch.setattr(pins, "pricing_model_digest", lambda folder=None: document["lock"]["pricing_model"])
    result = run(root, "reproduce", str(r1_lock))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1].startswith(
        "  does NOT reproduce, although the pricing model's code is the lock's (first: vector_macs)"
    )

    # A changed digest that prices every field the same is said, and is no failure.
    monkeypatch.setattr(serving, "SOFTMAX_MACS_PER_SCORE", serving.SOFTMAX_MACS_PER_SCORE / 2)
    monkeypatch.setattr(passprice, "PRICING_MODEL_VERSION", "test, undone")
    monkeypatch.setattr(pins, "pricing_model_digest", lambda folder=None: "sha256:" + "ab" * 32)
    result = ok(run(root, "reproduce", str(r1_lock)))
    assert result.stdout.splitlines()[1].startswith(
        "  reproduces: the pricing model changed since the lock; every recorded field reproduces: "
    )
    status = lock_status(json.loads(ok(run(root, "check", "--json")).stdout), "r1")
    assert status["ok"] and status["pricing_model"].endswith("; every recorded field reproduces")


# --- audit ------------------------------------------------------------------------------------------------------------


def test_audit_of_a_memory_bound_price(root: Path) -> None:
    result = ok(run(root, "audit", R1, "--batch", "1", "--json"))
    a = json.loads(result.stdout)
    assert list(a) == ["title", "batch", "tokens_per_s", "by_hand", "binds", "provenance", "weakest", "facts",
                       "sources", "stale_descriptions", "quotes_checked", "checkpoint"]
    assert a["stale_descriptions"] == []  # left43: no record here names a row its facts do not cite
    assert sorted(a["sources"]) == sorted({f["source"] for f in a["facts"] if f["source"] is not None})
    assert a["title"].startswith(f"audit of {R1} (today's facts)")
    rows = {f["path"]: f for f in a["facts"]}
    for f in a["facts"]:
        assert list(f) == [
            "path", "value", "unit", "base_value", "provenance", "source", "locator", "cite", "note", "derivation",
            "derivation_text", "stale", "cancelled", "floor", "margin", "binding", "weakest", "elasticity", "step",
            "refused", "derived_by", "elasticity_rederived", "quote_check",
        ]
    # left31: the derived facts a fact feeds, re-derived by their formulas, take its move away (memory-bound: the
    # streams' shares are derived from the bandwidth, so the price moves with them, not with the bandwidth alone).
    assert rows["memory.bandwidth"]["derived_by"] == ["streams.read", "streams.append"]
    assert rows["memory.bandwidth"]["elasticity_rederived"] == 0.0
    cost = price_json(root, R1, "--batch", "1")
    assert a["binds"] == cost["binds"] == "memory"
    assert a["tokens_per_s"] == cost["tokens_per_s"]
    assert list(rows) == list(cost["rests_on"])

    # Binding: the memory term's bandwidth and the stream shares with bytes to move (weights; the KV cache appended).
    assert {p for p, f in rows.items() if f["binding"]} == {"memory.bandwidth", "streams.read", "streams.append"}
    # Every memory byte of the pass is divided by memory.bandwidth, so while memory binds, tokens/s is exactly
    # proportional to it: +1 % of bandwidth is +1 % of tokens/s, up to rounding.
    assert abs(rows["memory.bandwidth"]["elasticity"] - 1.0) < 1e-6
    # streams.read divides only the weights' share of the memory time: by hand, from the price's own fields.
    bandwidth, read = rows["memory.bandwidth"]["base_value"], rows["streams.read"]["base_value"]
    weights_s = cost["weight_bytes"] / (bandwidth * read)
    share = weights_s / cost["memory_s"]
    assert 0.9 < share < 1.0
    assert abs(rows["streams.read"]["elasticity"] - share) < 1e-3
    # (exactly, for the +1 % step: the memory time loses share × (1 − 1/1.01) of itself)
    assert rows["streams.read"]["elasticity"] == pytest.approx((1 / (1 - share * (1 - 1 / 1.01)) - 1) / 0.01, rel=1e-9)
    assert abs(rows["streams.append"]["elasticity"] - (1 - share)) < 1e-3
    # The array does not bind: its rate does not move the price at all.
    assert not rows["array"]["binding"]
    assert abs(rows["array"]["elasticity"]) < 1e-9
    assert "streams.rewrite" not in rows  # nothing is rewritten in place: the price does not rest on it
    assert all(f["step"] == 0.01 for f in a["facts"])

    # The weakest named: the paths carrying the price's provenance.
    assert a["provenance"] == cost["provenance"] == "estimated"
    assert a["weakest"] == cost["weakest"] == ["scale", "on_chip.capacity"]
    assert [p for p, f in rows.items() if f["weakest"]] == ["scale", "on_chip.capacity"]

    text = ok(run(root, "audit", R1)).stdout
    assert (
        f"  {cost['tokens_per_s']:,.1f} tokens/s at batch 1, binds on memory; "
        "weakest provenance estimated (scale, on_chip.capacity)\n"
    ) in text
    # left32: then its elasticity with streams.read and streams.append re-derived from it
    assert re.search(r"(?m)^\*  memory\.bandwidth +4\.8 TB/s  published +\+1\.000  +\+0\.000$", text)
    read = f"{rows['streams.read']['elasticity']:+.3f}"
    assert re.search(rf"(?m)^\*  streams\.read +0\.9333  measured +{re.escape(read)}$", text)
    assert re.search(r"(?m)^   array +989\.5 TMAC/s  derived +\+0\.000$", text)
    assert re.search(r"(?m)^!  scale +33\.5 Tcycle/s  estimated +\+0\.000$", text)
    page = "  nvidia-h200-product-page — NVIDIA H200 GPU product page (Specifications table) (NVIDIA, unknown)\n"
    assert f"citations, by source:\n{page}" in text  # the H200 datasheet until cite102
    bandwidth = ("memory.bandwidth: Specifications table, H200 SXM column (a row: its label, "
                 "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'")
    assert f"    {bandwidth}\n" in text


def test_audit_of_a_lock_uses_its_pinned_facts(root: Path) -> None:
    path = lock(root, R1, R1)
    before = json.loads(ok(run(root, "audit", str(path), "--json")).stdout)
    assert before["title"].startswith(f"audit of lock {R1} (pinned facts)")
    assert json.loads(ok(run(root, "audit", f"{R1}.lock.toml", "--json")).stdout) == before
    today_before = json.loads(ok(run(root, "audit", R1, "--json")).stdout)
    assert today_before["tokens_per_s"] == before["tokens_per_s"]

    set_fact(root, "memory.bandwidth", "5.2", "TB/s", "published")
    set_fact(root, "scale", "20", "Tcycle/s", "assumed")
    assert json.loads(ok(run(root, "audit", str(path), "--json")).stdout) == before
    today = json.loads(ok(run(root, "audit", R1, "--json")).stdout)  # the serving of the same name: today's facts
    assert today["tokens_per_s"] > before["tokens_per_s"]
    assert today["weakest"] == ["scale"]

    # A lock's serving is pinned: options cannot change it.
    result = run(root, "audit", str(path), "--batch", "4")
    assert result.exit_code == 2
    assert "--batch cannot apply to lock r1-qwen7b-h200 (" in result.stderr
    assert "a lock pins its batch (it is audited as it was priced)" in result.stderr


# --- policies ---------------------------------------------------------------------------------------------------------


def test_floor_and_require_policies(root: Path) -> None:
    # Default: every fact the price rests on floored at its provenance today, the floor at the weakest of them.
    default = tomllib.loads(lock(root, "default", R1).read_text(encoding="utf-8"))
    assert default["policy"] == {"floor": "estimated", "paths": default["price"]["rests_on"]}
    assert default["policy"]["paths"] == {
        "memory.bandwidth": "published", "memory.capacity": "published", "streams.read": "measured",
        "streams.append": "measured", "array": "derived", "vector": "derived", "scale": "estimated",
        "on_chip.capacity": "estimated",
    }

    # --require on a path at its current provenance holds, and is written.
    path = lock(root, "req", R1, "--floor", "estimated", "--require", "streams.append=measured", "--require",
                "memory.bandwidth=published")
    assert tomllib.loads(path.read_text(encoding="utf-8"))["policy"] == {
        "floor": "estimated",
        "paths": {"memory.bandwidth": "published", "streams.append": "measured"},
    }
    # A floor on a path the price does not rest on would guard nothing: refused, naming it (no recurrent state here,
    # no host memory, no drafts).
    for unread in ("streams.rewrite", "host.read", "on_chip.bandwidth", "draft.acceptance.3"):
        message = one_error(run(root, "lock", R1, "-o", str(root / "locks" / "u.lock.toml"), "--require",
                                f"{unread}=measured"))
        assert message == (
            f"lock u: the price does not rest on {unread}, so a floor there would guard nothing (it rests on "
            "memory.bandwidth, memory.capacity, streams.read, streams.append, array, vector, scale, on_chip.capacity); "
            "drop the floor"
        )
    assert not (root / "locks" / "u.lock.toml").exists()

    # A --require stricter than today's fact refuses to write the lock.
    target = root / "locks" / "strict.lock.toml"
    result = run(root, "lock", R1, "-o", str(target), "--require", "streams.read=published")
    assert result.exit_code == 1
    assert result.stderr == (
        "passprice: refused: LockFloor: lock strict refuses this price: streams.read is measured, "
        "below the floor published "
        f"(the price's weakest provenance is estimated, carried by scale, on_chip.capacity); {target} not written "
        "(for these floors to accept it, strengthen streams.read to published or above with a citation that backs "
        "it, e.g. passprice fact set h200_sxm_141gb streams.read --provenance published --source ID --locator "
        "LOCATOR … in a registry of your own; or floor it at its own provenance on purpose: "
        "--require streams.read=measured)\n"
    )
    assert not target.exists()
    # So does a floor above the price's weakest fact, naming every fact below it.
    result = run(root, "lock", R1, "-o", str(target), "--floor", "derived")
    assert result.exit_code == 1
    assert "scale is estimated, below the floor derived; on_chip.capacity is estimated, below the floor derived" in (
        result.stderr
    )
    assert not target.exists()
    # A per-path floor looser than the floor lets that path through.
    path = lock(root, "loose", R1, "--floor", "derived", "--require", "scale=estimated", "--require",
                "on_chip.capacity=assumed")
    policy = tomllib.loads(path.read_text(encoding="utf-8"))["policy"]
    assert policy == {"floor": "derived", "paths": {"on_chip.capacity": "assumed", "scale": "estimated"}}
    ok(run(root, "price", "--lock", str(path)))
    set_fact(root, "array", "989.5", "TMAC/s", "estimated")  # below derived: refused
    set_fact(root, "on_chip.capacity", "115088", "KiB", "assumed")  # its own floor: allowed
    result = run(root, "price", "--lock", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        "passprice: refused: LockFloor: lock loose refuses this price: array is estimated, below the floor derived "
        "(the price's weakest provenance is assumed, carried by on_chip.capacity); for a what-if, price without the "
        "lock (--no-lock); to price it under the lock, two ways out: strengthen the fact's provenance (passprice fact "
        "set with a stronger --provenance and its --source), or loosen the lock's floor for it on purpose through "
        "review (`passprice lock --update -o locks/loose.lock.toml --force --require array=estimated`)\n"
    )

    # Bad policies are bad input.
    for bad, why in (
        ("streams.rewirte=measured", "'streams.rewirte' is not a fact path"),
        ("streams.rewrite", "'streams.rewrite' is not PATH=PROVENANCE"),
    ):
        result = run(root, "lock", R1, "-o", str(target), "--require", bad)
        assert result.exit_code == 2 and why in result.stderr
    assert one_error(run(root, "lock", R1, "-o", str(target), "--require", "streams.rewrite=vendor")) == (
        "--require streams.rewrite: 'vendor' is not a provenance (one of published, measured, derived, estimated, "
        "assumed)"
    )
    assert run(root, "lock", R1, "-o", str(target), "--floor", "vendor").exit_code == 2
    assert not target.exists()


def test_price_lock_without_a_serving_prices_the_locks_serving_with_todays_facts(root: Path) -> None:
    path = lock(root, "r1", R1)
    recorded = tomllib.loads(path.read_text(encoding="utf-8"))["price"]
    assert price_json(root, "--lock", str(path)) == recorded
    set_fact(root, "memory.bandwidth", "5.2", "TB/s", "published")
    today = price_json(root, "--lock", str(path))
    assert today == price_json(root, R1)
    named = json.loads(ok(run(root, "price", "--lock", "r1", "--json")).stdout)["lock"]
    assert (named["locks"], named["note"]) == (["r1"], None)
    # Its floors hold, but today's price is not the one it records: said beside the verdict, with what drifted.
    (moved,) = named["moved"]
    assert moved["recorded_tokens_per_s"] == recorded["tokens_per_s"] and moved["tokens_per_s"] == today["tokens_per_s"]
    assert moved["drifted"] == ["memory.bandwidth: 4.8 TB/s (published) → 5.2 TB/s (published)"]
    assert today["tokens_per_s"] == pytest.approx(recorded["tokens_per_s"] * 5.2 / 4.8, rel=1e-12)
    text = ok(run(root, "price", "--lock", "r1")).stdout
    assert text.startswith("deepseek-r1-distill-qwen-7b-q4_k_m on h200_sxm_141gb")
    # A best-batch lock prices the best batch (once the stream shares follow the new bandwidth: lock refuses a price
    # on stale derived facts, walk107).
    ok(run(root, "fact", "recompute", CARD))
    best = lock(root, "best", R1, "--best")
    assert price_json(root, "--lock", str(best)) == price_json(root, "--lock", str(best))
    assert price_json(root, "--lock", str(best))["batch"] == tomllib.loads(best.read_text())["price"]["batch"] > 1


# --- check ------------------------------------------------------------------------------------------------------------


def test_check_passes_on_the_repository_and_validates_every_file_kind() -> None:
    result = CliRunner().invoke(cli, ["--root", str(REPO), "check", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stdout
    report = json.loads(result.stdout)
    expected = {
        "cards": len(list((REPO / "facts" / "cards").glob("*.toml"))),
        "drafts": len(list((REPO / "facts" / "drafts").glob("*.toml"))),
        "routings": len(list((REPO / "facts" / "routing").glob("*.toml"))),
        "stacks": len(list((REPO / "facts" / "stacks").glob("*.toml"))),
        "checkpoints": len(list((REPO / "registry" / "checkpoints").glob("*.toml"))),
        "measurements": len(list((REPO / "registry" / "measurements").glob("*.toml"))),
        "sources": len(list((REPO / "sources").glob("*.toml"))),
        "servings": len(list((REPO / "registry" / "servings").glob("*.toml"))),
        "locks": len(list((REPO / "locks").glob("*.lock.toml"))),
    }
    assert report["kinds"] == expected and all(expected.values())
    assert report["files"] == sum(expected.values())
    assert report["ok"] is True and report["problems"] == []
    assert sorted(s["path"] for s in report["locks"]) == sorted(
        f"locks/{p.name}" for p in (REPO / "locks").glob("*.lock.toml")
    )
    assert all(s["reproduces"] and s["holds"] for s in report["locks"])
    text = CliRunner().invoke(cli, ["--root", str(REPO), "check"]).stdout
    counts = ", ".join(f"{n} {kind}" for kind, n in expected.items())
    assert text.startswith(f"checked {sum(expected.values())} files ({counts}): 0 problems\n")
    assert str(REPO.resolve()) not in text
    assert text.endswith("all holds\n")


def test_check_reports_a_broken_file_of_every_kind_with_file_and_key_path(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root", with_locks=True)
    _edit(root / "facts" / "cards" / "b200.toml", '[memory.bandwidth]\nvalue = 8\nunit = "TB/s"',
          '[memory.bandwidth]\nvalue = 8\nunit = "GB"')
    _edit(root / "facts" / "drafts" / "deepseek-v3-mtp.toml", 'provenance = "published"', 'provenance = "rumoured"')
    _edit(root / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml", "\nversion = 3\n", "\nversion = 4\n")
    _edit(root / "registry" / "servings" / "r1-qwen7b-mi300x-int8kv.toml", "batch = 1\n", "batch = -1\n")
    _edit(root / "locks" / "r1-qwen7b-h200.lock.toml", 'floor = "estimated"', 'floor = "rumoured"')

    result = run(root, "check")
    assert result.exit_code == 2  # bad files are bad input: named on stderr, the rest of the report on stdout
    lines = result.stdout.splitlines()
    # 9 locks read: 1 fails, 1 is not judged (its serving file does not read), the 10th file does not read
    assert lines[0].endswith(": 5 problems (5 on stderr); 1 of 9 locks FAIL, 1 not judged (1 more lock file does not "
                             "read, on stderr)")
    problems = [line.removeprefix("passprice: error: ") for line in result.stderr.splitlines()]
    assert problems == [
        "facts/cards/b200.toml: memory.bandwidth.unit: 'GB' is not allowed here (one of 'B/s', 'kB/s', 'MB/s', "
        "'GB/s', 'TB/s', 'PB/s', 'KiB/s', 'MiB/s', 'GiB/s', 'TiB/s')",
        "facts/drafts/deepseek-v3-mtp.toml: acceptance.1.provenance: 'rumoured' is not allowed here (one of "
        "'published', 'measured', 'derived', 'estimated', 'assumed')",
        "registry/checkpoints/gemma3-270m-q4_k_m.toml: header.version: 4 is not allowed here (one of 2, 3)",
        "registry/servings/r1-qwen7b-mi300x-int8kv.toml: batch: -1 is less than the minimum of 1",
        "locks/r1-qwen7b-h200.lock.toml: policy.floor: 'rumoured' is not allowed here (one of 'published', "
        "'measured', 'derived', 'estimated', 'assumed')",
    ]
    assert result.stdout.endswith("check FAILED\n")
    # The lock resting on the broken checkpoint is still listed, and fails.
    report = json.loads(run(root, "check", "--json").stdout)
    assert report["ok"] is False
    gemma = lock_status(report, "gemma3-270m-h100")
    version = "registry/checkpoints/gemma3-270m-q4_k_m.toml: header.version: 4 is not allowed here (one of 2, 3)"
    assert gemma["reproduces"] is False and gemma["checkpoint_changed"] is True
    assert gemma["checkpoint"] == (
        f"gemma3-270m-q4_k_m: does not read ({version}), and no entry of the registry holds the pinned content"
    )
    assert gemma["holds"] is False and gemma["verdict"] == f"today's files do not read: {version}"
