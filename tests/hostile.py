"""Hostile inputs, one or more per class of issue 13 (an attacker's names, numbers, files and headers), each a
:class:`Case`: the files it builds in a work folder, the command it runs, and the exit status and text it must end
with. ``tests/test_hostile.py`` runs every case in-process (no traceback may escape); ``benchmarks/hostile.py`` runs
them in subprocesses and measures each one's time and peak memory.

A case's ``args`` may name ``{work}`` (the work folder) and ``{root}`` (a private copy of the checkout's facts,
registry and locks inside it, which the command runs against and may break).
"""

from __future__ import annotations

import gzip
import lzma
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import attrs
from gguf import GGUFValueType as V

from gguf_bytes import Array, Meta, Tensor, decode, encode, meta_index
from passprice import ggml
from passprice.gguf_header import read_header

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
R1 = "r1-qwen7b-h200"
H200 = "h200_sxm_141gb"
QWEN35 = DATA / "qwen35-27b-like.header.gguf"
LONG = "n" * 300  # a name no file system takes (a component is at most 255 bytes)
F32 = ggml.by_name("F32").id


@attrs.frozen
class Case:
    """One hostile input: ``name`` (``c05-xz-string-declares-1.25GiB``), the issue's ``klass`` (1 … 14), the
    passprice ``args`` (after ``--root {root}``), the ``exit`` status it must end with, ``says`` (text the first
    stderr line must hold; for exit 0, text stdout must hold), ``build`` (makes its files in the work folder) and
    ``env`` (environment variables to set)."""

    name: str
    klass: int
    args: tuple[str, ...]
    exit: int
    says: str
    build: Callable[[Path], None] = lambda work: None
    env: tuple[tuple[str, str], ...] = ()

    def argv(self, work: Path) -> list[str]:
        """``--root ROOT`` and the args with the work folder filled in."""
        root = work / "root"
        return ["--root", str(root), *(a.format(work=work, root=root) for a in self.args)]

    def expected(self, work: Path) -> str:
        """``says`` with the work folder filled in."""
        return self.says.format(work=work, root=work / "root")


def prepare(work: Path) -> Path:
    """A private copy of the checkout's facts, registry, locks and sources in ``work/root``; the root."""
    root = work / "root"
    root.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(REPO / folder, root / folder)
    return root


# --- builders --------------------------------------------------------------------------------------------------------


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _serving(name: str, body: str) -> Callable[[Path], None]:
    def build(work: Path) -> None:
        _write(work / "root" / "registry" / "servings" / f"{name}.toml", body)

    return build


def _replace(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def build(work: Path) -> None:
        path = work / "root" / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return build


def _symlink_loop(name: str) -> Callable[[Path], None]:
    def build(work: Path) -> None:
        os.symlink(f"{name}.b", work / name)
        os.symlink(name, work / f"{name}.b")

    return build


def _fifo(rel: str) -> Callable[[Path], None]:
    def build(work: Path) -> None:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(work / rel)

    return build


def _arch(block_count: int = 0) -> list[Meta]:
    return [
        Meta("general.architecture", V.STRING, "llama"),
        Meta("llama.block_count", V.UINT32, block_count),
        Meta("llama.embedding_length", V.UINT32, 1),
        Meta("llama.context_length", V.UINT32, 4096),
    ]


def _header(name: str, raw: bytes, compress: str = "") -> Callable[[Path], None]:
    def build(work: Path) -> None:
        data = lzma.compress(raw) if compress == "xz" else gzip.compress(raw) if compress == "gz" else raw
        _write(work / name, data)

    return build


def _qwen35(mutate: Callable[[list[Meta], list[Tensor]], None]) -> bytes:
    """The Qwen3.5-27B-like header (a real structure: 64 blocks, GQA, MTP), mutated."""
    meta, tensors = decode(read_header(QWEN35, cache=False))
    mutate(meta, tensors)
    return encode(meta, tensors)


def _set(key: str, value: int, kind: V = V.UINT32) -> Callable[[list[Meta], list[Tensor]], None]:
    def mutate(meta: list[Meta], tensors: list[Tensor]) -> None:
        meta[meta_index(meta, key)] = Meta(meta[meta_index(meta, key)].key, kind, value)

    return mutate


def _drop_blocks(gone: set[int]) -> Callable[[list[Meta], list[Tensor]], None]:
    """Every tensor of the blocks ``gone`` removed, block_count left as it was (65): phantom blocks."""

    def mutate(meta: list[Meta], tensors: list[Tensor]) -> None:
        tensors[:] = [t for t in tensors if not (t.name.startswith("blk.") and int(t.name.split(".")[1]) in gone)]

    return mutate


def _flat() -> bytes:
    """0 blocks, a 1 × 1 embedding and head: sequences hold no memory, so only on-chip rows bound the batch."""
    return encode(_arch(), [Tensor("token_embd.weight", (1, 1), F32), Tensor("output.weight", (1, 1), F32)])


def _mixed_arrays() -> bytes:
    inner = Array(V.ARRAY, (Array(V.INT32, (1, 2)), Array(V.STRING, ("a",)), Array(V.FLOAT32, (0.5,))))
    return encode(
        [*_arch(1), Meta("t.mixed", V.ARRAY, inner)],
        [Tensor("token_embd.weight", (8, 16), F32), Tensor("blk.0.attn_norm.weight", (8,), F32)],
    )


def _entry_with(key_line: str) -> Callable[[Path], None]:
    """A checkpoint entry ``odd.toml``: the gemma3 entry with one metadata line added."""

    def build(work: Path) -> None:
        checkpoints = work / "root" / "registry" / "checkpoints"
        text = (checkpoints / "gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")
        text = text.replace('name = "gemma3-270m-q4_k_m"', 'name = "odd"', 1)
        _write(checkpoints / "odd.toml", text + key_line + "\n")

    return build


def _redigested_lock(path: str, value: float) -> Callable[[Path], None]:
    """``locks/r1-qwen7b-h200.lock.toml`` with the pinned fact ``path`` set to ``value`` and every digest recomputed,
    as an attacker who knows the digest rule would write it."""

    def build(work: Path) -> None:
        from passprice.locks import lock_text, read_lock

        file = work / "root" / "locks" / f"{R1}.lock.toml"
        lock = read_lock(file)
        facts = dict(lock.facts)
        facts[path] = attrs.evolve(facts[path], value=value, amount=value)
        _write(work / "bad.lock.toml", lock_text(attrs.evolve(lock, facts=facts)))

    return build


def _card_value(old: str, new: str, name: str = "slow") -> Callable[[Path], None]:
    def build(work: Path) -> None:
        cards = work / "root" / "facts" / "cards"
        text = (cards / f"{H200}.toml").read_text(encoding="utf-8")
        assert old in text
        _write(cards / f"{name}.toml", text.replace(old, new, 1))

    return build


def _draft_key(key: str) -> Callable[[Path], None]:
    def build(work: Path) -> None:
        drafts = work / "root" / "facts" / "drafts"
        source = next(iter(sorted(drafts.glob("*.toml"))))
        text = source.read_text(encoding="utf-8")
        _write(drafts / "odd.toml", text + f'\n[acceptance."{key}"]\nvalue = 0.5\nunit = "1"\nprovenance = "assumed"\n'
               'source = "deepseek-v3-technical-report"\nlocator = "Table 1"\n')

    return build


def _all(*builds: Callable[[Path], None]) -> Callable[[Path], None]:
    def build(work: Path) -> None:
        for b in builds:
            b(work)

    return build


_SERVING_HEAD = f'checkpoint = "gemma3-270m-q4_k_m"\ncard = "{H200}"\n'
_BIG = "1" + "0" * 400
_FACT = ("--unit", "1", "--provenance", "estimated")
_SOURCE = ("--source", "nvidia-h200-datasheet")

CASES: tuple[Case, ...] = (
    # 1. Names over 255 bytes and loops of symbolic links: OSError / RuntimeError tracebacks once.
    Case("c01-card-name-too-long", 1, ("price", R1, "--card", LONG), 2, "the name is longer than the file system"),
    Case("c01-checkpoint-too-long", 1, ("price", "--checkpoint", LONG, "--card", H200), 2, "longer than the file"),
    Case("c01-serving-too-long", 1, ("price", LONG), 2, "the name is longer than the file system allows"),
    Case("c01-fact-show-too-long", 1, ("fact", "show", LONG, "memory.bandwidth"), 2, "longer than the file system"),
    Case("c01-kv-too-long", 1, ("kv", LONG), 2, "the name is longer than the file system allows"),
    Case("c01-reproduce-too-long", 1, ("reproduce", LONG), 2, "the name is longer than the file system allows"),
    Case("c01-import-name-too-long", 1, ("import", str(QWEN35), "--name", LONG), 2, "300 characters; at most 200"),
    Case("c01-output-too-long", 1, ("lock", R1, "-o", "{work}/" + LONG), 2, "longer than the file system allows"),
    Case("c01-plot-too-long", 1, ("roofline", H200, R1, "--plot", "{work}/" + LONG + ".png"), 2, "longer than the"),
    Case("c01-diff-too-long", 1, ("diff", LONG), 2, "the name is longer than the file system allows"),
    Case("c01-name-in-a-serving-file", 1, ("price", "odd"), 2, "longer than the file system allows",
         _serving("odd", f'checkpoint = "{LONG}"\ncard = "{H200}"\n')),
    Case("c01-init-folder-too-long", 1, ("init", "{work}/" + LONG), 2, "longer than the file system allows"),
    Case("c01-routing-too-long", 1, ("price", R1, "--routing", LONG), 2, "longer than the file system allows"),
    Case("c01-audit-fact-too-long", 1, ("audit", "--fact", f"{LONG}:hot_share"), 2, "longer than the file system"),
    Case("c01-stack-too-long", 1, ("price", R1, "--stack", LONG), 2, "longer than the file system allows"),
    Case("c01-header-symlink-loop", 1, ("header", "{work}/loop.gguf"), 2, "{work}/loop.gguf: a loop of symbolic links",
         _symlink_loop("loop.gguf")),
    Case("c01-card-symlink-loop", 1, ("price", R1, "--card", "{work}/loop.toml"), 2,
         "{work}/loop.toml: a loop of symbolic links", _symlink_loop("loop.toml")),
    # 2. Integers the schemas left unbounded: OverflowError / ValueError tracebacks once.
    Case("c02-limit-10e400", 2, ("price", "odd"), 2, "odd.toml: contexts.0.limit: an integer of 401 digits is out of "
         "range (at most 4294967295)",
         _serving("odd", _SERVING_HEAD + f"contexts = [{{share = 1, limit = {_BIG}}}]\n")),
    Case("c02-kv-page-10e400", 2, ("price", "odd"), 2, "odd.toml: kv_page: an integer of 401 digits is out of range",
         _serving("odd", _SERVING_HEAD + f"kv_page = {_BIG}\n")),
    Case("c02-shared-prefix-10e400", 2, ("price", "odd"), 2, "odd.toml: shared_prefix: an integer of 401 digits",
         _serving("odd", _SERVING_HEAD + f"kv_page = 16\nshared_prefix = {_BIG}\n")),
    Case("c02-head-rows-10e400", 2, ("price", "odd"), 2, "odd.toml: draft.head_rows: an integer of 401 digits",
         _serving("odd", _SERVING_HEAD + f'draft = {{method = "qwen35-mtp", tokens = 1, head_rows = {_BIG}}}\n')),
    Case("c02-sweep-positions-10e400", 2, ("sweep", "--file", "{work}/grid.toml"), 2,
         "grid.toml: positions.0: an integer of 401 digits is out of range",
         lambda work: _write(work / "grid.toml", f'servings = ["{R1}"]\nbatches = [1]\npositions = [{_BIG}]\n')),
    Case("c02-entry-float32-10e400", 2, ("header", "odd"), 2, 'metadata."t.f".value: an integer of 401 digits is past '
         "float32's range (±3.4028234663852886e+38)", _entry_with(f'"t.f" = {{ type = "float32", value = {_BIG} }}')),
    Case("c02-entry-uint64-superscript", 2, ("header", "odd"), 2, "metadata.\"t.u\".value: '²' is not a uint64",
         _entry_with('"t.u" = { type = "uint64", value = "²" }')),
    Case("c02-entry-uint64-5000-digits", 2, ("header", "odd"), 2, "metadata.\"t.u\".value: '99999",
         _entry_with('"t.u" = { type = "uint64", value = "' + "9" * 5000 + '" }')),
    Case("c02-acceptance-key-5000-digits", 2, ("fact", "show", "odd", "acceptance.1"), 2,
         "odd.toml: acceptance: unknown key '99999999999999999999", _draft_key("9" * 5000)),
    # 3. Figures that underflow a pass to zero time: ZeroDivisionError once; a lock pinning 0 or a negative value.
    Case("c03-underflowing-card", 3, ("price", R1, "--card", "slow"), 2,
         "slow.toml: memory.bandwidth.value: 1e-320 is less than the minimum of 1e-09",
         _card_value('value = 4.8\nunit = "TB/s"', 'value = 1e-320\nunit = "B/s"')),
    Case("c03-lock-pins-zero-share", 3, ("reproduce", "{work}/bad.lock.toml"), 2,
         'bad.lock.toml: facts."streams.read".value: 0.0 is less than the minimum of 1e-06',
         _redigested_lock("streams.read", 0.0)),
    Case("c03-lock-pins-negative-bandwidth", 3, ("reproduce", "{work}/bad.lock.toml"), 2,
         'facts."memory.bandwidth".value: -4.8 is less than the minimum', _redigested_lock("memory.bandwidth", -4.8)),
    # 4. FIFOs and devices: a hang, or "no such checkpoint file", once.
    Case("c04-fifo-header", 4, ("header", "{work}/pipe.gguf"), 2, "pipe.gguf: is a FIFO (named pipe), not a regular "
         "file", _fifo("pipe.gguf")),
    Case("c04-fifo-checkpoint", 4, ("price", "--checkpoint", "{work}/pipe.gguf", "--card", H200), 2,
         "pipe.gguf: is a FIFO (named pipe), not a regular file", _fifo("pipe.gguf")),
    Case("c04-fifo-card-in-registry", 4, ("check",), 2, "facts/cards/pipe.toml: is a FIFO (named pipe)",
         _fifo("root/facts/cards/pipe.toml")),
    Case("c04-fifo-model-config", 4, ("synth", "{work}/config.json", "-o", "{work}/x.gguf"), 2,
         "config.json: is a FIFO (named pipe), not a regular file", _fifo("config.json")),
    Case("c04-dev-zero-checkpoint", 4, ("price", "--checkpoint", "/dev/zero", "--card", H200), 2,
         "/dev/zero: is a character device, not a regular file"),
    # 5. Compressed headers past the cap: 31 s and 2.6 GiB once.
    Case("c05-xz-string-declares-1.25GiB", 5, ("header", "{work}/s.gguf.xz"), 2, "string length 1342177280 needs at "
         "least 1,342,177,280 bytes: past 33,554,432 bytes, the most passprice reads of a header (set "
         "PASSPRICE_MAX_HEADER_BYTES", _header("s.gguf.xz", encode([*_arch(), Meta("k", V.STRING, b"\0" * 200_000,
                                                                                     declared=1_342_177_280)]), "xz")),
    Case("c05-xz-array-of-2^62-strings", 5, ("import", "{work}/a.gguf.xz"), 2, f"array of {2**62} string needs at "
         "least", _header("a.gguf.xz", encode([*_arch(), Meta("k", V.ARRAY, Array(V.STRING, (), 2**62))]) + bytes(
             1 << 16), "xz")),
    Case("c05-xz-nested-arrays-over-zeros", 5, ("import", "{work}/n.gguf.xz"), 2, "array of 2097152 arrays: past the "
         "524,288 strings and inner arrays passprice walks", _header("n.gguf.xz", encode([*_arch(), Meta(
             "k", V.ARRAY, Array(V.ARRAY, (), 1 << 21))]) + bytes(1 << 20), "xz")),
    Case("c05-gz-4GB-array", 5, ("import", "{work}/g.gguf.gz"), 2, "array of 4000000000 uint8 needs at least "
         "4,000,000,000 bytes: past", _header("g.gguf.gz", encode([*_arch(), Meta(
             "k", V.ARRAY, Array(V.UINT8, (), 4_000_000_000))]) + bytes(1 << 20), "gz")),
    Case("c05-cap-lowered-by-the-environment", 5, ("header", str(DATA / "gemma3-270m-q4_k_m.header.gguf.xz")), 2,
         "array of 262144 string: past the 93,750 strings and inner arrays passprice walks in a header of at most "
         "6,000,000 bytes (set PASSPRICE_MAX_HEADER_BYTES", env=(("PASSPRICE_MAX_HEADER_BYTES", "6000000"),)),
    Case("c05-cap-that-is-no-number", 5, ("header", str(QWEN35)), 2, "PASSPRICE_MAX_HEADER_BYTES: 'lots' is not a "
         "number of bytes", env=(("PASSPRICE_MAX_HEADER_BYTES", "lots"),)),
    # 6. A flat curve: best and roofline never finished once.
    Case("c06-best-flat-curve", 6, ("best", "--checkpoint", "{work}/flat.gguf", "--card", H200), 1,
         "refused: FlatCurve: tokens/s levels off", _header("flat.gguf", _flat())),
    Case("c06-roofline-flat-curve", 6, ("roofline", H200, "--checkpoint", "{work}/flat.gguf"), 1,
         "refused: FlatCurve", _header("flat.gguf", _flat())),
    # 7. Heads and blocks that contradict the tensors: priced with exit 0 once.
    Case("c07-head-count-0", 7, ("kv", "{work}/h.gguf"), 2, "qwen35.attention.head_count: 0 for block 3, but the "
         "block has KV heads", _header("h.gguf", _qwen35(_set("attention.head_count", 0)))),
    Case("c07-head-count-kv-0", 7, ("max-batch", "--checkpoint", "{work}/h.gguf", "--card", H200), 2,
         "qwen35.attention.head_count_kv: 0, but 17 blocks hold attention", _header("h.gguf", _qwen35(
             _set("attention.head_count_kv", 0)))),
    Case("c07-more-kv-heads-priced", 7, ("price", "--checkpoint", "{work}/h.gguf", "--card", H200), 2,
         "attention.head_count_kv: 64 KV heads, more than the 24 query heads", _header("h.gguf", _qwen35(
             _set("attention.head_count_kv", 64)))),
    Case("c07-phantom-blocks", 7, ("price", "--checkpoint", "{work}/h.gguf", "--card", H200), 2,
         "qwen35.block_count: 65, but no tensor belongs to block 2, 3, 4 (blk.N.…)",
         _header("h.gguf", _qwen35(_drop_blocks({2, 3, 4})))),
    # 8. Whatever import writes reads back: inner arrays of different types once made an entry nothing could read.
    Case("c08-mixed-inner-arrays-import", 8, ("import", "{work}/mixed.gguf", "--name", "mixed"), 0,
         "imported", _header("mixed.gguf", _mixed_arrays())),
    # 9. Silently accepted: clipped requests, a clamped --head-rows, control characters in a citation.
    Case("c09-simulate-limit-cuts-requests", 9, ("simulate", R1, "--synthetic", "50", "--limit", "16"), 0,
         "cut to fit the limit of 16 positions: 50 prompts (to at most 8 tokens, half the limit, leaving the rest for "
         "the output)"),
    Case("c09-head-rows-10e12", 9, ("price", "qwen35-27b-h200-mtp", "--head-rows", "1000000000000"), 2,
         "Invalid value for '--head-rows': 1,000,000,000,000 is out of range (a whole number from 1 to 4,294,967,295)"),
    Case("c09-head-rows-past-vocabulary", 9, ("price", "qwen35-27b-h200-mtp", "--head-rows", "1000000"), 2,
         "--head-rows (draft.head_rows): 1,000,000 rows, more than the 248,320 rows of the vocabulary"),
    Case("c09-locator-with-bel", 9, ("fact", "set", H200, "streams.read", "--value", "0.9", *_FACT, *_SOURCE,
                                     "--locator", "a table with a bell \a in it"), 2,
         "streams.read.locator: 'a table with a bell \\x07 in it' holds a control character"),
    Case("c09-note-with-newline", 9, ("fact", "set", H200, "streams.read", "--value", "0.9", *_FACT, *_SOURCE,
                                      "--locator", "Table 1", "--note", "first line\nsecond line"), 2,
         "holds a control character, a line separator, a bidi control or an invisible character (a newline"),
    Case("c09-host-read-1e-320", 9, ("fact", "set", H200, "host.read", "--value", "1e-320", "--unit", "GB/s",
                                     "--provenance", "assumed", *_SOURCE, "--locator", "Table 1"), 2,
         "host.read.value: 1e-320 is less than the minimum of 1e-09"),
    # 10. A bad serving file is bad input (file and key, exit 2), not a refusal with advice about flags.
    Case("c10-serving-share-half", 10, ("price", "odd"), 2, "odd.toml: contexts: the shares sum to 0.5, not 1",
         _serving("odd", _SERVING_HEAD + "contexts = [{share = 0.5, limit = 1024}]\n")),
    Case("c10-serving-batch-0", 10, ("price", "odd"), 2, "odd.toml: batch: 0 is less than the minimum of 1",
         _serving("odd", _SERVING_HEAD + "batch = 0\n")),
    Case("c10-serving-position-past-limit", 10, ("price", "odd"), 2,
         "odd.toml: contexts.0.position: 2000 is not below the class's limit 1024",
         _serving("odd", _SERVING_HEAD + "contexts = [{share = 1, limit = 1024, position = 2000}]\n")),
    # 12. Writing: a device, a folder that does not exist, a read-only file.
    Case("c12-output-dev-null", 12, ("lock", R1, "-o", "/dev/null", "--force"), 2,
         "/dev/null: is a character device, not a regular file: passprice replaces regular files only"),
    Case("c12-output-missing-folder", 12, ("sweep", R1, "--batches", "1", "-o", "{work}/new/grid.csv"), 2,
         "cannot write: the folder {work}/new does not exist (passprice does not create it)"),
    Case("c12-read-only-card", 12, ("fact", "set", H200, "streams.read", "--value", "0.9", *_FACT, *_SOURCE,
                                    "--locator", "Table 1"), 2, "is read-only; passprice does not replace it",
         lambda work: os.chmod(work / "root" / "facts" / "cards" / f"{H200}.toml", 0o444)),
    # 13. One bad card: check and cards name it on stderr (exit 2) and still show the good ones.
    Case("c13-check-with-a-nan-card", 13, ("check",), 2, "facts/cards/slow.toml: memory.bandwidth.value: must be a "
         "finite number, not nan", _card_value("value = 4.8\n", "value = nan\n")),
    Case("c13-cards-with-a-nan-card", 13, ("cards",), 2, "slow.toml: memory.bandwidth.value: must be a finite number",
         _card_value("value = 4.8\n", "value = nan\n")),
)
