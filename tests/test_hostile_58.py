"""Attack round 58 (issue 13, hostile input): each input that escaped, built here and kept as a test.

1. A registry file past its kind's cap was read whole (up to 64 MiB) before it was refused by its size: a 50 MB
   checkpoint entry cost ``checkpoints`` 172 MiB and ``check`` 169 MiB at their peak. Now the open file's ``fstat``
   refuses it before a byte is read, and at most ``cap + 1`` bytes are read when it holds more than it said.
2. An 8 MiB checkpoint entry of one-key tables (1.06 million lines) cost ``tomllib`` 6.5-7 s and 594 MiB before
   ``checkpoints`` printed its one line; one line of 4.2 million integers 9.6 s. Now counted before it is parsed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import catches_sigterm, until
from hostile import REPO, prepare
from passprice import files, schema
from passprice.cli import cli
from passprice.errors import InputError

_ENTRY = "registry/checkpoints/gemma3-270m-q4_k_m.toml"


# --- 1. Refused by the open file's size, never read whole ----------------------------------------------------------


def test_a_50_mb_entry_is_refused_before_a_byte_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    path = tmp_path / "x.toml"
    with open(path, "wb") as f:
        f.truncate(50_000_000)  # sparse: reading it whole is what is measured against
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            schema.read_bytes(path, "checkpoint")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value) == (f"{path}: larger than 8 MiB, the most a checkpoint file may hold (50,000,000 bytes; "
                                 "with PASSPRICE_MAX_HEADER_BYTES set past 32 MiB, 64 MiB)")
    assert peak < 1 << 20, peak  # was the whole file (50 MB) and more


def test_a_file_holding_more_than_its_size_said_is_read_to_the_cap_only(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that grew after its ``fstat`` (or reports no size, as ``/proc``'s do): read to ``cap + 1`` bytes, then
    refused by the kind's own line."""
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    path = tmp_path / "x.toml"
    with open(path, "wb") as f:
        f.truncate(50_000_000)
    real = os.fstat

    def small(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((*st[:6], 10, *st[7:10]))  # st_size 10, the rest as it is

    monkeypatch.setattr(files.os, "fstat", small)
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            schema.read_bytes(path, "checkpoint")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value) == (f"{path}: larger than 8 MiB, the most a checkpoint file may hold (8,388,609 bytes; "
                                 "with PASSPRICE_MAX_HEADER_BYTES set past 32 MiB, 64 MiB)")
    assert peak < 20 << 20, peak  # the cap and a copy at most, not 50 MB


@pytest.mark.parametrize(("rel", "args", "cap"), [
    (_ENTRY, ["checkpoints"], "8 MiB, the most a checkpoint file may hold (50,000,000 bytes; with "
                              "PASSPRICE_MAX_HEADER_BYTES set past 32 MiB, 64 MiB)"),
    (_ENTRY, ["check"], "8 MiB, the most a checkpoint file may hold (50,000,000 bytes; with "
                        "PASSPRICE_MAX_HEADER_BYTES set past 32 MiB, 64 MiB)"),
    ("registry/servings/r1-qwen7b-h200.toml", ["price", "r1-qwen7b-h200"],
     "256 KiB, the most a serving file may hold (50,000,000 bytes; PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)"),
])
def test_a_50_mb_registry_file_is_one_line_naming_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rel: str,
                                                          args: list[str], cap: str) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    root = prepare(tmp_path)
    with open(root / rel, "r+b") as f:
        f.truncate(50_000_000)
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("passprice: error: ") and line.endswith(f"{rel}: larger than {cap}"), line


# --- 2. A checkpoint entry's lines and separators are counted before it is parsed -----------------------------------


def _one_key_tables() -> bytes:
    text = "".join(f"[t{i}]\na = 1\n" for i in range(600_000)).encode()[: 8 << 20]
    return text[: text.rfind(b"\n") + 1]


def test_an_entry_of_a_million_one_key_tables_is_refused_unparsed(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    root = prepare(tmp_path)
    (root / _ENTRY).write_bytes(_one_key_tables())
    result = CliRunner().invoke(cli, ["--root", str(root), "checkpoints"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (
        f"passprice: error: {_ENTRY}: 1,062,464 lines, past the 8,192 a checkpoint entry may hold (import writes one "
        "a tensor, shard and metadata key): not parsed")


@pytest.mark.parametrize(("variable", "cap", "said"), [
    (None, "131,072", " (8 times as many with PASSPRICE_MAX_HEADER_BYTES set past 32 MiB)"),
    ("1000000000", "1,048,576", ""),
])
def test_an_entry_of_one_line_of_four_million_integers_is_refused_unparsed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str | None, cap: str, said: str) -> None:
    if variable is None:
        monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    else:
        monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", variable)
    path = tmp_path / "x.toml"
    path.write_bytes(b"a = [" + b"1," * 4_000_000 + b"1]\n")
    with pytest.raises(InputError) as caught:
        schema.require_entry_shape(path, path.read_bytes())
    # 4,000,000 commas, an '=', a '[' and a line end (a '[' counted since attack105)
    assert str(caught.value) == (f"{path}: 4,000,003 separators (',', '=', '.', '[', '{{' and line ends outside "
                                 f"strings), past the {cap} a checkpoint entry may hold{said}: not parsed")


def test_separators_inside_strings_are_not_counted() -> None:
    """A header's kept text may hold any number of commas: what ``import`` writes reads back."""
    text = b'a = "' + b",=" * 200_000 + b'"\nb = \'' + b"," * 200_000 + b"'\nc = \"\\\",,,\"\n"
    schema.require_entry_shape("x", text)
    with pytest.raises(InputError, match=r"x: 400,\d+ separators"):  # a multi-line string: counted whole
        schema.require_entry_shape("x", b'a = """' + b",=" * 200_000 + b'"""\n')


def test_every_shipped_entry_is_well_under_the_counts() -> None:
    for entry in sorted((REPO / "registry" / "checkpoints").glob("*.toml")):
        data = entry.read_bytes()
        assert data.count(b"\n") < schema.MAX_ENTRY_LINES // 4
        assert schema._separators(data) + data.count(b"\n") < schema.MAX_ENTRY_SEPARATORS // 4
        schema.require_entry_shape(entry, data)


def test_import_refuses_an_entry_it_could_not_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.checkpoints import write_entry

    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    path = tmp_path / "registry" / "checkpoints" / "big.toml"
    with pytest.raises(InputError, match=r"big.toml: 10,000 lines, past the 8,192 a checkpoint entry may hold .*"
                                         r"\(it would not read back\): nothing written$"):
        write_entry(path, "a = 1\n" * 10_000)
    assert not path.exists()


# --- 4. PASSPRICE_MAX_HEADER_BYTES raises the entry's caps only when it raises the reader's ----------------------


def test_the_schema_knows_the_header_readers_default_cap() -> None:
    from passprice import gguf_header

    assert schema.HEADER_READER_CAP == gguf_header.MAX_HEADER_BYTES


@pytest.mark.parametrize(("value", "cap"), [
    (None, 8 << 20), ("", 8 << 20), ("24", 8 << 20), ("33554432", 8 << 20), (" 33554433 ", 64 << 20),
    ("1000000000", 64 << 20), ("0", 8 << 20), ("-1", 8 << 20), ("1e99", 8 << 20), ("abc", 8 << 20), ("9" * 40, 8 << 20),
])
def test_the_entry_cap_follows_the_header_readers_cap(monkeypatch: pytest.MonkeyPatch, value: str | None,
                                                      cap: int) -> None:
    """Set to 24 (a lower header cap, whose reader keeps less) it raised the entry cap to 64 MiB, and a 50 MB entry
    was parsed; a value the reader refuses is refused before any command (below) and raises nothing here."""
    if value is None:
        monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    else:
        monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", value)
    assert schema.kind_cap("checkpoint") == cap


@pytest.mark.parametrize(("value", "line"), [
    ("0", "0 bytes is out of range: give a number of bytes from 24 to 9,223,372,036,854,775,807"),
    ("-1", "'-1' is not a number of bytes (a whole number, at least 24)"),
    ("1e99", "'1e99' is not a number of bytes (a whole number, at least 24)"),
    ("abc", "'abc' is not a number of bytes (a whole number, at least 24)"),
])
def test_an_odd_header_cap_is_one_line_before_any_entry_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                value: str, line: str) -> None:
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", value)
    root = prepare(tmp_path)
    result = CliRunner().invoke(cli, ["--root", str(root), "checkpoints"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == f"passprice: error: PASSPRICE_MAX_HEADER_BYTES: {line}\n"


def test_a_lower_header_cap_keeps_the_8_mib_entry_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", "24")
    root = prepare(tmp_path)
    with open(root / _ENTRY, "r+b") as f:
        f.truncate(9 << 20)
    result = CliRunner().invoke(cli, ["--root", str(root), "checkpoints"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (
        f"passprice: error: {_ENTRY}: larger than 8 MiB, the most a checkpoint file may hold (9,437,184 bytes; with "
        "PASSPRICE_MAX_HEADER_BYTES set past 32 MiB, 64 MiB)")


# --- 3. SIGTERM and SIGHUP in the first moments: one line, 128 + the signal ----------------------------------------

_PTH = REPO / "src" / "passprice_sigint.pth"


def _python(code: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          **kwargs)  # type: ignore[call-overload]


def _site_line(argv0: str) -> str:
    """The .pth file's line run as ``site`` runs it, in a process whose ``argv[0]`` is ``argv0``."""
    return f"import sys; sys.argv[0] = {argv0!r}; exec({_PTH.read_text(encoding='utf-8').strip()!r}); "


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_while_site_starts_is_one_line(name: str) -> None:
    """Before, the default action: killed by the signal (status -15 / -1 to a caller), nothing said."""
    number = getattr(signal, name)
    done = _python(_site_line("/somewhere/bin/passprice")
                   + f"import os, time; os.kill(os.getpid(), {number}); time.sleep(5); print('go on')")
    assert (done.returncode, done.stdout, done.stderr) == (128 + number, "", "passprice: terminated\n")


def test_passprice_takes_the_handlers_over_and_leaves_an_ignored_sighup_ignored() -> None:
    done = _python(_site_line("/somewhere/bin/passprice")
                   + "import signal as s; import passprice; "
                   "print(s.getsignal(s.SIGTERM).__name__, s.getsignal(s.SIGHUP).__name__)")
    assert done.stdout == "_interrupted _interrupted\n", done.stderr
    done = _python(_site_line("/somewhere/bin/passprice")
                   + "import signal as s; import passprice; "
                   "print(s.getsignal(s.SIGTERM).__name__, s.getsignal(s.SIGHUP) == s.SIG_IGN)",
                   preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    assert done.stdout == "_interrupted True\n", done.stderr
    done = _python(_site_line("/somewhere/bin/pip") + "import signal as s; print(s.getsignal(s.SIGTERM) == s.SIG_DFL)")
    assert done.stdout == "True\n", done.stderr


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("delay", [0.05, 0.15, 0.3])
def test_the_command_terminated_early_says_so(name: str, delay: float) -> None:
    command = Path(sys.executable).parent / "passprice"
    if not command.is_file():
        pytest.skip("no passprice console script beside this interpreter")
    env = {**os.environ, "PASSPRICE_NO_MEMO": "1"}  # a cold check takes seconds: the signal comes while it runs
    process = subprocess.Popen([str(command), "--no-cache", "check"], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    # The delay counts from the .pth's handlers being in place: before, in CPython's own start, the signal has its
    # default action (killed, no line; README). That start took 0.05 s here and well past 0.3 s on a busy machine
    # (killed by the signal, -15: the project's CI, session 41), so a delay counted from the process's start
    # reached a later stage of the run, or none, by the machine's load.
    assert until(lambda: process.poll() is not None or catches_sigterm(process.pid))
    time.sleep(delay)
    assert process.poll() is None, "the check ended before the signal: nothing was terminated"
    number = getattr(signal, name)
    process.send_signal(number)
    _, err = process.communicate(timeout=60)
    assert "Traceback" not in err
    assert process.returncode == 128 + number, (process.returncode, err)
    assert err.endswith("passprice: terminated\n"), err


# --- 4. What this session added: the lock digest lookup -------------------------------------------------------------

# r1-qwen7b-h200's [lock] digest, read off the shipped lock (a re-lock moves it)
_LOCK_DIGEST = tomllib.loads((REPO / "locks" / "r1-qwen7b-h200.lock.toml").read_text(encoding="utf-8"))["lock"][
    "digest"].removeprefix("sha256:")


@pytest.mark.parametrize("body", [
    "x = " + "[" * 100_000 + "]" * 100_000 + "\n",  # RecursionError: a traceback, exit 1
    "x = " + "9" * 5000 + "\n",  # ValueError past Python's 4,300 digits: a traceback, exit 1
    "a" + ".a" * 20_000 + " = 1\n",  # a 40 KB dotted key: 6.6 s of tomllib
])
@pytest.mark.parametrize("args", [["audit", "deadbeef12"], ["audit", "zz", "--batch", "3"]])
def test_a_hostile_lock_file_beside_a_digest_lookup_is_passed_over(tmp_path: Path, body: str,
                                                                   args: list[str]) -> None:
    root = prepare(tmp_path)
    (root / "locks" / "zz.lock.toml").write_text(body, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    [line] = result.stderr.splitlines()
    if args[1] == "zz":
        assert line.startswith("passprice: error: audit: --batch cannot apply to lock zz: "), line
    else:
        assert line.startswith(f"passprice: error: lock 'deadbeef12': no such file, and no lock in {root / 'locks'} "
                               "has that [lock] digest"), line


def test_the_whole_digest_of_two_copies_asks_for_a_name_not_more_digits(tmp_path: Path) -> None:
    root = prepare(tmp_path)
    (root / "locks" / "zcopy.lock.toml").write_bytes((root / "locks" / "r1-qwen7b-h200.lock.toml").read_bytes())
    said = {}
    for ref in (_LOCK_DIGEST[:8], f"sha256:{_LOCK_DIGEST}"):
        result = CliRunner().invoke(cli, ["--root", str(root), "audit", ref])
        assert result.exit_code == 2, result.output
        said[ref] = result.stderr
    assert said[_LOCK_DIGEST[:8]] == (
        f"passprice: error: lock '{_LOCK_DIGEST[:8]}': no such file; the [lock] digests of 2 locks in "
        f"{root / 'locks'} begin with it (r1-qwen7b-h200, zcopy): give more of the digest, or name the lock\n")
    assert said[f"sha256:{_LOCK_DIGEST}"] == (
        f"passprice: error: lock 'sha256:{_LOCK_DIGEST}': no such file; 2 locks in {root / 'locks'} have that "
        "[lock] digest (r1-qwen7b-h200, zcopy: copies of one lock): name the lock by its name or file\n")


def test_the_undated_warning_names_at_most_5_records() -> None:
    """3,021 undated records (3,000 copies of one in a registry) made ``check``'s warning a line of 60 KB naming each;
    ``sources`` lists them all."""
    from passprice.sources import undated_line

    ids = [f"s{i}" for i in range(3021)]
    line = undated_line(ids)
    assert line is not None and line.startswith(
        f'3,021 source records say retrieved = "unknown" ({", ".join(ids[:3])} and 3,018 more): no date is recorded')
    assert f"({', '.join(ids[:5])}): " in (undated_line(ids[:5]) or "")
    assert undated_line(["a"]) is not None and undated_line(["a"]).startswith(  # type: ignore[union-attr]
        '1 source record says retrieved = "unknown" (a): ')


# --- 4. What this session added: header's kept array offsets --------------------------------------------------------


@pytest.mark.parametrize("spans", [
    {"tokenizer.ggml.tokens": (0, 10**12)},  # past the file
    {"tokenizer.ggml.tokens": (50, 10)},  # backwards
    {"tokenizer.ggml.tokens": (-5, 10)},
    {"tokenizer.ggml.tokens": ("0", "9")},
    {"tokenizer.ggml.tokens": (0.5, 9.5)},
    {"tokenizer.ggml.tokens": (0,)},
    {"t.after": (0, 8)},  # not a long array
    {"nowhere": (0, 8)},
    {},  # the long array's offsets not kept
    ["not", "a", "dict"],
])
def test_forged_kept_offsets_are_a_miss_and_the_header_is_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  spans: object) -> None:
    """A cache entry kept without the digests whose offsets point past the header, backwards or at nothing: a miss,
    and the digests read with them are the ones parsing gives."""
    from passprice import cache, gguf_header
    from test_header_seen_before import write

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    gguf_header.clear_cache()
    path = write(tmp_path / "h.gguf")
    expected = gguf_header.read_header(path, cache=False)  # parsed, with its digests
    gguf_header.read_header(path, array_digests=False)  # keeps the entry with its offsets
    gguf_header.clear_cache()
    real, cap = os.path.realpath(path), gguf_header.header_cap()
    kept = cache.kept_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), tuple)
    assert kept is not None and kept[9] is not None
    cache.keep_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), (*kept[:9], spans))
    assert gguf_header._seen_before(real, path, cap) is None
    again = gguf_header.read_header(path)
    assert again.metadata == expected.metadata
    assert again.metadata["tokenizer.ggml.tokens"].sha256 == expected.metadata["tokenizer.ggml.tokens"].sha256


# --- 4. What this session added: synth -o's advice ------------------------------------------------------------------


def test_synth_advice_for_a_configuration_named_like_an_option_runs(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``synth -o out.gguf -- -x.json`` advised ``passprice synth -x.json --mix Q4_K_M --import NAME``, which is
    refused: "No such option '-x'"."""
    root = prepare(tmp_path)
    config = REPO / "examples" / "configs" / "deepseek-r1-distill-qwen-7b.json"
    (tmp_path / "-x.json").write_bytes(config.read_bytes())
    monkeypatch.chdir(tmp_path)
    made = CliRunner().invoke(cli, ["--root", str(root), "synth", "-o", "out.gguf", "--", "-x.json"])
    assert made.exit_code == 0, made.output
    [advice] = [line for line in made.stdout.splitlines() if "not imported" in line]
    assert advice.startswith("  not imported: `passprice synth ./-x.json --mix Q4_K_M --import NAME` imports"), advice
    again = CliRunner().invoke(cli, ["--root", str(root), "synth", "./-x.json", "--mix", "Q4_K_M", "--import", "x"])
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize("open_string", [b'"\\', b'"', b"'", b'"a\\', b'\\"'])
def test_strings_left_open_are_taken_to_their_line_end(open_string: bytes) -> None:
    """``"\\"\\"\\"…`` left open: the pattern that needed the closing quote scanned the rest of the line again from
    each quote (10,000 of them: 1.8 s; 40,000 past a minute); one left open now ends at its line's end, each start
    matched once (a million of them: about 0.1 s)."""
    data = b"a = [" + b"1," * 140_000 + b"1]\nb = " + open_string * 1_000_000 + b"\\\n"
    with pytest.raises(InputError, match=r"^x: 140,005 separators "):
        schema.require_entry_shape("x", data)
