"""Escapes of round 5 (issue 13): bad input that ended in a line naming neither file nor key, on stdout with exit 1,
or not at all. Each test builds its reproducer and asserts the exit status and the error line."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

MEASURED = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


def _first_tokens_per_s(root: Path, value: str) -> Path:
    """The first run of the llama-bench measurement file measured at ``value`` tokens/s."""
    path = root / MEASURED
    lines = path.read_text().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if line.startswith("tokens_per_s = "))
    lines[i] = f"tokens_per_s = {value}\n"
    path.write_text("".join(lines))
    return path


# ---------------------------------------------------------------------------------------------------------------------
# 1. A run measured at 5e-324 tokens/s (schema-valid: > 0) made validate print "the result's runs.16.limit_ratio is
# inf" (no file, no run, no good run shown) and calibrate fit on it with exit 0. Now: the file and run.0's key, the
# good runs still shown; calibrate refuses by the same line.


@pytest.mark.parametrize("value", ["5e-324", "1e-306", "0.009"])
def test_validate_and_calibrate_name_the_run_too_small_to_divide_by(tmp_path: Path, value: str) -> None:
    # 1e-306 divided (a pass of 1e306 s), but the card's limit over it (about 150 / 1e-306) did not; since round 16
    # the measurement schema floors a measured tokens/s at 0.01 (one token in 100 s), so each is the schema's line.
    root = copy_root(tmp_path)
    path = _first_tokens_per_s(root, value)
    line = f"{path}: run.0.tokens_per_s: {value} is less than the minimum of 0.01"
    result = invoke("validate", "--json", root=root)
    assert result.exit_code == 2
    assert result.stderr == f"passprice: error: {line.removeprefix(f'{root}/')}\n"  # as check names it (28c)
    assert "Infinity" not in result.stdout
    # calibrate names it so too (leftovers 28d: it named ROOT/registry/…)
    bad("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root, says=line.removeprefix(f"{root}/"))


# ---------------------------------------------------------------------------------------------------------------------
# 2. File problems were reported on stdout with exit 1: a derivation cycle, a source.path naming nothing, a serving
# pairing its checkpoint with another model's routing record (and `price` of it refused it without naming the file).
# Bad files are bad input: one line naming file and key on stderr, exit 2; check still reports the rest.


def _check_fails_with(root: Path, lines: list[str]) -> str:
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"passprice: error: {line}" for line in lines]
    assert "lock r1-qwen7b-h200 " in result.stdout  # the rest of the report is still shown
    return result.stdout


def test_a_cycle_of_derivations_is_bad_input(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "rtx_4090.toml"
    text = card.read_text()
    for path, other in (("streams.rewrite", "streams.append"), ("streams.append", "streams.rewrite")):
        start = text.index(f"[{path}]")
        end = text.index("\n[", start + 1)
        block = "".join(line + "\n" for line in text[start:end].splitlines() if not line.startswith("derivation."))
        block += f'derivation.formula = "x"\nderivation.inputs.x = {{ fact = "{other}", value = 0.9145, unit = "1" }}'
        text = text[:start] + block + text[end:]
    card.write_text(text)
    _check_fails_with(root, [
        "facts/cards/rtx_4090.toml: streams.rewrite.derivation: a cycle of derivations: streams.rewrite -> "
        "streams.append -> streams.rewrite (a fact cannot derive from itself: derive one of them from its source)",
        "facts/cards/rtx_4090.toml: streams.append.derivation: a cycle of derivations: streams.append -> "
        "streams.rewrite -> streams.append (a fact cannot derive from itself: derive one of them from its source)",
    ])


def test_a_serving_pairing_a_model_with_another_models_routing_is_bad_input(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "deepseek-v3-h200.toml"
    serving.write_text(serving.read_text().replace('routing = "uniform"', 'routing = "qwen3-30b-a3b-measured"'))
    why = (
        "routing: routing record 'qwen3-30b-a3b-measured' applies to checkpoint qwen3-30b-a3b-q4_k_m only "
        "(facts/routing/qwen3-30b-a3b-measured.toml: checkpoints), not 'deepseek-v3-q4_k_m'"
    )
    bad("price", "deepseek-v3-h200", root=root, says=f"registry/servings/deepseek-v3-h200.toml: {why}")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"passprice: error: registry/servings/deepseek-v3-h200.toml: {why}")
    assert len(result.stderr.splitlines()) == 1


# ---------------------------------------------------------------------------------------------------------------------
# 3. A source record's source.path must be a document of this registry: a regular file inside the root, every link
# and `..` resolved (and, since slip round 29, named by its own plain path, no link along it). `../base/README.md`, a
# link to /etc/passwd, a FIFO and a link to /dev/zero passed check.


def _source_path(root: Path, path: str) -> None:
    record = root / "sources" / "passprice-card-review.toml"
    old = 'path = "facts/cards/README.md"'
    assert old in record.read_text()
    record.write_text(record.read_text().replace(old, f'path = "{path}"'))


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("facts/cards/NOPE.md", "facts/cards/NOPE.md is not a file of this registry"),
        ("../outside.md", "../outside.md lies outside the registry (a document of this registry is a file inside its "
         "root)"),
        ("passwd", "passwd lies outside the registry"),
        ("zero", "zero lies outside the registry"),
        ("fifo", "fifo is a FIFO (named pipe), not a regular file of this registry"),
        ("facts", "facts is a folder, not a regular file of this registry"),
    ],
)
def test_a_source_path_is_a_regular_file_inside_the_registry(tmp_path: Path, path: str, says: str) -> None:
    root = copy_root(tmp_path)
    (tmp_path / "outside.md").write_text("not of the registry\n")
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "zero").symlink_to("/dev/zero")
    os.mkfifo(root / "fifo")
    _source_path(root, path)
    line = "sources/passprice-card-review.toml: source.path: "
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"passprice: error: {line}{says}")
    # Every card citing the source (and every stack fitted on such a card) is named too, each ending in the cause.
    assert len(lines) == 6 and all(f"{line}{says}" in later for later in lines[1:]), result.stderr


def test_a_source_path_through_a_link_inside_the_registry_is_refused(tmp_path: Path) -> None:
    """It held until slip round 29: a review reads the document through git at each revision, where a link is a blob
    holding its target's name, so no revision's review could price the locks resting on what cited it."""
    root = copy_root(tmp_path)
    (root / "review.md").symlink_to(root / "facts" / "cards" / "README.md")
    _source_path(root, "review.md")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == (
        "passprice: error: sources/passprice-card-review.toml: source.path: review.md passes through a symbolic link "
        "(review.md): a document of this registry is a file at its own path (a review reads it through git at each "
        "revision, where a link holds only its target's name): put the document itself there, or name its own path "
        "in source.path")
    record = root / "sources" / "passprice-card-review.toml"  # back: the file itself
    record.write_text(record.read_text().replace('path = "review.md"', 'path = "facts/cards/README.md"'))
    assert invoke("check", root=root).exit_code == 0


# ---------------------------------------------------------------------------------------------------------------------
# 4. A registry file naming a file outside the registry: a serving with card = "/any/file.toml" made check (CI) read
# that file and quote its mistyped values ('SECRET-cap' is not of type 'object') in the PR comment. A name a registry
# file gives that is a path resolves inside the root, or is refused by name; the command line may name any path.

INSIDE = "a registry file names registry entries or files inside the registry"


def _outside_card(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.toml"
    secret.write_text('memory = "SECRET-cap"\n')
    return secret


def test_a_serving_naming_a_file_outside_the_registry_is_refused_unread(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    secret = _outside_card(tmp_path)
    serving = root / "registry" / "servings" / "r1-qwen7b-h200.toml"
    text = serving.read_text()
    serving.write_text(text.replace('card = "h200_sxm_141gb"', f'card = "{secret}"'))
    # the serving file relative to the registry, as check names it (left29b: it was absolute under --root)
    line = f"registry/servings/r1-qwen7b-h200.toml: card: {secret} lies outside the registry ({root}): {INSIDE}"
    assert bad("price", "r1-qwen7b-h200", root=root, says=line) == [f"passprice: error: {line}"]
    result = invoke("check", root=root)
    assert result.exit_code == 2 and "SECRET" not in result.output
    assert f"registry/servings/r1-qwen7b-h200.toml: card: {secret} lies outside the registry" in result.stderr
    # The command line may name any file: the card is read (and refused as the card it is not).
    serving.write_text(text)
    bad("price", "r1-qwen7b-h200", "--card", str(secret), root=root, says=f"{secret}: ")
    # A path inside the root, through .. or not, is one clone's file: a registry's serving file names the card
    # (check passed it where diff of two revisions refused it as outside: cold5, #13).
    inside = f"{root}/facts/../facts/cards/h200_sxm_141gb.toml"
    serving.write_text(text.replace('card = "h200_sxm_141gb"', f'card = "{inside}"'))
    bad("price", "r1-qwen7b-h200", root=root,
        says=f"registry/servings/r1-qwen7b-h200.toml: card: '{inside}' is an absolute path")


def test_a_sweep_file_measurement_file_and_lock_of_the_registry_name_files_inside_it(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = tmp_path / "h200.toml"
    card.write_text((root / "facts" / "cards" / "h200_sxm_141gb.toml").read_text())
    sweep = root / "grid.toml"
    sweep.write_text(f'servings = ["r1-qwen7b-h200"]\ncards = ["{card}"]\nbatches = [1]\n')
    bad("sweep", "--file", str(sweep), root=root,
        says=f"{sweep}: cards.0: {card} lies outside the registry ({root}): {INSIDE}")
    outside = tmp_path / "grid.toml"  # a sweep file of the user's own, outside the registry: any card it names
    outside.write_text(sweep.read_text())
    assert invoke("sweep", "--file", str(outside), root=root).exit_code == 0

    measured = root / MEASURED
    measured.write_text(measured.read_text().replace('card = "h100_pcie_80gb"', f'card = "{card}"', 1))
    line = f"{measured}: run.0.card: {card} lies outside the registry ({root}): {INSIDE}"
    result = invoke("validate", root=root)  # the file named on stderr, the other file's runs still shown
    # the measurement file named relative to the registry, as check names it (leftovers 28c)
    assert result.exit_code == 2 and result.stderr == f"passprice: error: {line.removeprefix(f'{root}/')}\n"
    assert "pr15131.rtx_4090.l31-8b-q4_0.ub16 " in result.stdout
    result = invoke("check", root=root)
    assert result.exit_code == 2 and f"{MEASURED}: run.0.card: {card} lies outside" in result.stderr
    measured.write_text(measured.read_text().replace(f'card = "{card}"', 'card = "h100_pcie_80gb"'))

    # A lock made with a card outside the registry (lock refuses to write one into locks/ since round 5: it is
    # made outside and copied in, as a pull request could): reproduce does not read that card for today's price (it
    # still reproduces from the facts it pins).
    made = tmp_path / "outside.lock.toml"
    assert invoke("lock", "r1-qwen7b-h200", "--card", str(card), "-o", str(made), root=root).exit_code == 0
    made.rename(root / "locks" / "outside.lock.toml")
    card.write_text('memory = "SECRET-cap"\n')
    result = invoke("reproduce", "outside", root=root)
    assert result.exit_code == 0 and "SECRET" not in result.output
    assert ("facts          today's files do not read: locks/outside.lock.toml: serving.card: "
            f"{card} lies outside the registry") in result.stdout


# ---------------------------------------------------------------------------------------------------------------------
# 5. synth ignored Qwen-MoE's dense-block keys (mlp_only_layers, decoder_sparse_step) and built an all-MoE header
# with exit 0; 4,096 layers were built in full (1.3 s) before the header failed to read back.

CONFIG = Path(__file__).resolve().parent.parent / "examples" / "configs" / "qwen3-30b-a3b.json"


def _config(tmp_path: Path, **changes: object) -> Path:
    document = json.loads(CONFIG.read_text())
    document["config"].update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        # past the schema's bounds (a block index or step past the 4,096 blocks a config may have): the schema's line
        ({"mlp_only_layers": list(range(100_000))}, "config.mlp_only_layers: 100,000 items (at most 4,096)"),
        ({"mlp_only_layers": [1, 2]},
         "config: mlp_only_layers [1, 2]: passprice builds a routed FFN in every block; dense blocks among routed ones "
         "are not built (give [])"),
        ({"decoder_sparse_step": 0}, "config: decoder_sparse_step 0: passprice builds a routed FFN in every block"),
        ({"decoder_sparse_step": 10**30},
         f"config.decoder_sparse_step: {10**30} is greater than the maximum of 4096"),
        ({"decoder_sparse_step": 2},
         "config: decoder_sparse_step 2: passprice builds a routed FFN in every block (a step of 1); a step other "
         "than 1 makes blocks dense, which it does not build"),
        ({"num_hidden_layers": 4096},
         "config: num_hidden_layers 4096: 49,155 tensors is more than the 2,048 passprice reads of a header of at most "
         "33,554,432 bytes"),
    ],
)
def test_synth_refuses_what_it_would_not_build_as_given(tmp_path: Path, changes: dict[str, object], says: str) -> None:
    path = _config(tmp_path, **changes)
    out = tmp_path / "x.gguf"
    bad("synth", str(path), "-o", str(out), says=f"{path}: {says}")
    assert not out.exists()


def test_synth_still_builds_the_published_qwen3_moe(tmp_path: Path) -> None:
    path = _config(tmp_path, mlp_only_layers=[], decoder_sparse_step=1)
    assert invoke("synth", str(path), "-o", str(tmp_path / "x.gguf")).exit_code == 0


# ---------------------------------------------------------------------------------------------------------------------
# 6. Inconsistent files: a stack's range.rows.min of 1,000,000 above its max 1 only showed later ("calibrated on batch
# 1,000,000 … 1"); a checkpoint entry's alignment 2^63-1, a tensor offset 2^63-1 or dims 2^63-1 passed header and
# reproduce. The entry is now held to the binary reader's own limits (gguf_header.alignment_problem, dims_problem,
# offset_problem: one place), and the reader to llama.cpp's (a uint32 power of two, elements and bytes in int64,
# offsets aligned).


def test_a_stack_range_whose_min_is_above_its_max_is_refused(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = stack.read_text()
    at = text.index("value = 1", text.index("[range.rows.min]"))
    stack.write_text(text[:at] + "value = 1000000" + text[at + len("value = 1"):])
    line = (f"{stack}: range.rows.min: 1,000,000 is above range.rows.max 1: a range runs from its least to its largest "
            "value")
    bad("validate", "--stack", "llamacpp-cuda-2405", root=root, says=line)
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert "facts/stacks/llamacpp-cuda-2405.toml: range.rows.min: 1,000,000 is above range.rows.max 1" in result.stderr


ENTRY = "registry/checkpoints/gemma3-270m-q4_k_m.toml"
BIG = str(2**63 - 1)


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("alignment = 32", f"alignment = {BIG}",
         f"header.alignment: {BIG} is not a power of two from 1 to 2,147,483,648 (a uint32)"),
        ("dims = [640], offset = 0", f"dims = [640], offset = {BIG}",
         "header.tensors.0.offset: data offset 9,223,372,036,854,775,807 is not a multiple of the alignment 32"),
        ("dims = [640], offset = 0", f"dims = [{BIG}], offset = 0",
         f"header.tensors.0.dims: dims [{BIG}] of F32 take 36,893,488,147,419,103,228 bytes, beyond int64"),
        ("dims = [640], offset = 0", f"dims = [{2**32}, {2**31}], offset = 0",
         f"header.tensors.0.dims: dims [{2**32}, {2**31}] hold 9,223,372,036,854,775,808 elements, beyond int64"),
    ],
)
def test_a_checkpoint_entry_is_bounded_as_the_binary_header_is(tmp_path: Path, old: str, new: str, says: str) -> None:
    root = copy_root(tmp_path)
    entry = root / ENTRY
    text = entry.read_text()
    assert old in text
    entry.write_text(text.replace(old, new, 1))
    bad("header", "gemma3-270m-q4_k_m", root=root, says=f"{entry}: {says}")
    result = invoke("reproduce", "gemma3-270m-h100", root=root)
    assert result.exit_code == 1 and f"{ENTRY}: {says}" in result.stdout


def test_the_binary_reader_refuses_the_same(tmp_path: Path) -> None:
    from passprice.gguf_header import HeaderError, read_header

    def header(dims: tuple[int, ...], offset: int, alignment: int | None = None) -> Path:
        kv = b""
        if alignment is not None:
            kv = struct.pack("<Q", 17) + b"general.alignment" + struct.pack("<IQ", 10, alignment)  # uint64
        raw = b"GGUF" + struct.pack("<IQQ", 3, 1, 1 if kv else 0) + kv
        raw += struct.pack("<Q", 1) + b"t" + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        raw += struct.pack("<IQ", 0, offset)
        path = tmp_path / f"t{len(list(tmp_path.iterdir()))}.gguf"
        path.write_bytes(raw)
        return path

    for path, says in (
        (header((4,), 0, 2**40), "general.alignment 1099511627776 is not a power of two from 1 to 2,147,483,648"),
        (header((4,), 33), "tensor 't': data offset 33 is not a multiple of the alignment 32"),
        (header((2**32, 2**31), 0), "tensor 't': dims [4294967296, 2147483648] hold 9,223,372,036,854,775,808 "
         "elements, beyond int64"),
    ):
        with pytest.raises(HeaderError) as e:
            read_header(path, cache=False)
        assert says in str(e.value)
    assert read_header(header((4,), 64), cache=False).tensors[0].offset == 64


# ---------------------------------------------------------------------------------------------------------------------
# 7. Messages that did not say what was wrong: a stack's memory.reserved above the card's capacity ("holds
# -1,048,575,… bytes"), PASSPRICE_MAX_HEADER_BYTES of 29 digits ("is not a number of bytes"), a TOML file starting
# with a byte-order mark ("Invalid statement (line 1, column 1)"), and init --requirement of 100 KB (accepted).


def test_a_reserve_above_the_cards_capacity_is_named(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = stack.read_text()
    old = 'value = 512\nunit = "MiB"'
    assert old in text
    stack.write_text(text.replace(old, 'value = 100\nunit = "GiB"', 1))
    bad("price", "--checkpoint", "llama3-8b-q4_k_m", "--card", "h100_pcie_80gb", "--stack", "llamacpp-cuda-2405",
        "--position", "256", root=root,
        says="facts/stacks/llamacpp-cuda-2405.toml: memory.reserved: 107,374,182,400 bytes reserved exceeds card "
        "h100_pcie_80gb's memory.capacity of 85,520,809,984 bytes")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("9" * 29, f"PASSPRICE_MAX_HEADER_BYTES: {'9' * 29} bytes is out of range: give a number of bytes from 24 to "
         "9,223,372,036,854,775,807"),
        ("12", "PASSPRICE_MAX_HEADER_BYTES: 12 bytes is out of range: give a number of bytes from 24 to"),
        ("12k", "PASSPRICE_MAX_HEADER_BYTES: '12k' is not a number of bytes"),
    ],
)
def test_the_header_cap_variable_says_its_range(monkeypatch: pytest.MonkeyPatch, value: str, says: str) -> None:
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", value)
    header = Path(__file__).resolve().parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    bad("header", str(header), says=says)


def test_a_toml_file_with_a_byte_order_mark_is_named_as_such(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = b"\xef\xbb\xbf" + card.read_bytes()
    card.write_bytes(before)
    line = f"{card}: starts with a byte-order mark (U+FEFF): save it as UTF-8 without BOM"
    bad("price", "r1-qwen7b-h200", root=root, says=line)
    bad("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.8", "--unit", "TB/s", "--provenance",
        "published", "--source", "nvidia-h200-datasheet", "--locator", "x", root=root, says=line)
    assert card.read_bytes() == before  # nothing written


def test_init_bounds_the_requirement_line(tmp_path: Path) -> None:
    bad("init", str(tmp_path / "r"), "--requirement", "passprice==1.0 " + "x" * 100_000,
        says="--requirement: 100,015 characters: a requirement line is at most 4,096 characters")
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------------------------------------------------
# 8. Under an ASCII locale (PYTHONUTF8=0 LC_ALL=POSIX) Python hands UTF-8 arguments on as lone surrogates: lock -o
# é.lock.toml, init 初始 and --locator "Table é" were refused as "not UTF-8 text". The check reads the bytes given.

_CHILD = "import sys; from passprice.cli import main; sys.argv[0] = 'passprice'; main()"


def test_utf8_arguments_under_an_ascii_locale(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    env = {**os.environ, "PYTHONUTF8": "0", "LC_ALL": "POSIX", "PYTHONIOENCODING": ""}
    env.pop("LANG", None)

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-c", _CHILD, "--root", str(root), *args], env=env, cwd=tmp_path,
                              capture_output=True, timeout=120)

    done = run("lock", "r1-qwen7b-h200", "-o", str(root / "locks" / "é.lock.toml"))
    assert done.returncode == 0, done.stderr
    assert 'name = "é"' in (root / "locks" / "é.lock.toml").read_text(encoding="utf-8")
    done = run("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.8", "--unit", "TB/s",
               "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator", "Table é")
    assert done.returncode == 0, done.stderr
    assert 'locator = "Table é"' in (root / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8")
    done = run("init", "初始")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "初始" / "facts" / "cards").is_dir()
    # Bytes that are not UTF-8 are still refused, by the same check.
    done = subprocess.run([sys.executable, "-c", _CHILD, "--root", str(root), "init", os.fsdecode(b"bad\xff")],
                          env=env, cwd=tmp_path, capture_output=True, timeout=120)
    assert done.returncode == 2 and b"is not UTF-8 text" in done.stderr, done.stderr


# ---------------------------------------------------------------------------------------------------------------------
# 9. With HOME unwritable, roofline --plot printed matplotlib's several-line warning on stderr ("mkdir -p failed …",
# "Matplotlib created a temporary cache directory …"). passprice now points MPLCONFIGDIR at a temporary folder.


def test_plot_with_an_unwritable_home_prints_no_matplotlib_warning(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    env["HOME"] = "/dev/null"  # no folder can be made below it, even by root
    out = tmp_path / "r.png"
    done = subprocess.run([sys.executable, "-c", _CHILD, "roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot",
                           str(out)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"plot -> {out}\n"
    assert out.read_bytes().startswith(b"\x89PNG")


def test_check_reports_a_fit_that_cannot_be_re_run_as_a_bad_file(tmp_path: Path) -> None:
    """A run of 1e-306 tokens/s divides, but the stack's fit over it cannot be re-run: ``check`` said so on stdout
    with exit 1 (the last of round 4's file problems reported as a failed check); it is bad input, on stderr. Since
    round 16 the measurement schema floors a measured tokens/s at 0.01: the run itself is the bad input."""
    root = copy_root(tmp_path)
    _first_tokens_per_s(root, "1e-306")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: {MEASURED}: run.0.tokens_per_s: 1e-306 is less than the minimum of 0.01"
    ]
    assert "lock r1-qwen7b-h200 " in result.stdout  # the rest of the report is still shown
