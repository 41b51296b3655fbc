"""Every word passprice prints that a newcomer may not know is defined once, here: ``passprice explain TERM``, the
README's glossary and the legend under a price table are all read from :data:`TERMS`, so they cannot disagree.

The README's glossary section is :func:`markdown` verbatim (``python docs/make.py`` rewrites it; a test compares).
"""

from __future__ import annotations

import difflib
import re

import attrs

from passprice.errors import InputError


@attrs.frozen
class Term:
    """One term: its ``name`` as passprice prints it, the other spellings it is looked up by (``aliases``), a
    one-line ``short`` definition (``explain``'s listing), the ``long`` one (``explain``'s, the README's), and a
    ``tag`` of a few words for a table's legend (the ``short`` one when empty)."""

    name: str
    short: str
    long: str
    aliases: tuple[str, ...] = ()
    tag: str = ""


_TERMS = (
    Term(
        "binds",
        "the term that takes longest: the pass takes that long",
        "The five terms of a pass (memory, host, array, vector, scale) run overlapped, so a pass takes as long as the "
        "largest; the pass *binds* on that term. A price table marks it `← binds`; `rests on` marks the facts of the "
        "binding term with `*`. Raising a fact of a term that does not bind does not speed the pass up.",
        ("bind", "bound", "binding"),
        tag="the largest term: the pass takes that long",
    ),
    Term(
        "memory",
        "seconds to move the pass's bytes through card memory",
        "The memory term: the weights read once a pass (shared by the batch) plus each sequence's own bytes (KV "
        "cache, recurrent state, log, conv ring), each stream at `memory.bandwidth` times its share (`streams.*`).",
        tag="bytes through card memory",
    ),
    Term(
        "host",
        "seconds to move the sequences held in host memory over the host link",
        "The host term: with `--host-memory`, sequences that do not fit in card memory live in pinned host memory "
        "and are read and written over the host link each pass (`host.read`, `host.write`, at the DMA share "
        "`host.stream`). 0 s when every sequence is in card memory.",
        ("host link", "host memory"),
        tag="bytes over the host link",
    ),
    Term(
        "array",
        "seconds of integer multiply-adds on the matrix array",
        "The card's integer matrix array (tensor cores, matrix cores), as a rate of multiply-adds a second (MAC/s): "
        "a 4-bit weight code times an 8-bit activation code. A wider weight code is split into 4-bit digits and a "
        "two-word activation into two words, one pass each. Quantized matrices (Q4_K, Q8_0 …) run here.",
        ("integer array", "tensor cores"),
        tag="integer multiply-adds",
    ),
    Term(
        "vector",
        "seconds of f32 multiply-adds on the vector units",
        "The card's f32 vector units (CUDA cores, SIMD lanes), as multiply-adds a second (MAC/s): norms, attention's "
        "products over the KV cache (`--attention vector`), recurrences, and float matrices (F32, F16, BF16). A "
        "price says when float matrices are priced here: passprice has no tensor-core rate for float types, so "
        "such a model is priced as if its matrices ran on the vector units.",
        ("vector units", "f32"),
        tag="f32 multiply-adds",
    ),
    Term(
        "scale",
        "seconds of block-scale work: each weight block's integer sum rescaled",
        "The block-scale lanes: every quantized weight block's integer sums leave the array to be multiplied by the "
        "block's scales (and minimums). The card fact `scale` is the cycles a second of all lanes together, in "
        "Tcycle/s (10^12 cycles a second); a K-quant block costs more lane cycles than a Q8_0 block.",
        ("scale lanes", "block scale", "Tcycle/s"),
        tag="block-scale lane cycles",
    ),
    Term(
        "pass",
        "one decode step of every sequence in the batch",
        "One decode pass: every sequence of the batch advances by one verified token (plus its drafted ones), every "
        "weight crossing the card once for all of them. passprice prices one pass; tokens/s is the batch's tokens "
        "emitted a pass over the pass's seconds.",
        ("decode pass",),
    ),
    Term(
        "token-row",
        "one token's activations through a layer; a sequence carries 1 + drafts a pass",
        "A token-row is one token's activation vector crossing a layer. Each sequence carries its verified token "
        "and each drafted token as rows, so a pass multiplies every weight by batch × (1 + drafts) rows. Token-rows "
        "live in on-chip memory while they cross a layer.",
        ("token-rows", "rows"),
    ),
    Term(
        "TPOT",
        "time per output token of one sequence: pass time over tokens emitted a pass",
        "Time per output token: how long one sequence waits for each of its tokens, the pass's seconds over the "
        "tokens a sequence emits a pass (1 without drafts). Throughput (tokens/s) is the whole batch's.",
        ("time per output token",),
    ),
    Term(
        "activation word",
        "how many words an activation crosses the array in (1: 8-bit codes, 2: 16-bit)",
        "`--activation-words N`: each activation enters the integer array as N 8-bit words; 2 words (16-bit "
        "activations) cost the array and the scale lanes twice the passes of 1. 0 means the activations are not "
        "quantized, which the array cannot read (refused).",
        ("activation words", "activation-words"),
    ),
    Term(
        "flush",
        "how a recurrent state is carried from token to token: every-pass, every:N, trailing:N",
        "`--flush`: how a Gated-DeltaNet (recurrent) layer's dense state is carried. `every-pass` reads it and "
        "writes it back every pass; `every:N` writes it back once every N accepted tokens, a log of each token's "
        "key, value, decay and gate carrying it between flushes (read with the state every pass); `trailing:N` "
        "writes it back a window behind, each window of N logged tokens replayed over the next (the log holds at "
        "most 2N tokens). Only models with recurrent layers pay for it (`streams.rewrite`).",
        ("state flush",),
    ),
    Term(
        "head rows",
        "vocabulary rows a drafting head reads (a trimmed draft vocabulary)",
        "`--head-rows R`: the rows of the output (LM head) matrix a drafting head multiplies, when it drafts over a "
        "trimmed vocabulary (as EAGLE-style heads do); without it a draft reads the whole vocabulary.",
        ("head-rows",),
    ),
    Term(
        "drafts",
        "tokens proposed per pass by speculative decoding, verified in the same pass",
        "Speculative decoding: a drafting method (an MTP block, a draft head) proposes K tokens a pass; the next "
        "pass verifies them as extra token-rows. The tokens a pass emits are 1 + a1 + a1·a2 + …, from the "
        "method's acceptance facts (`facts/drafts/`).",
        ("draft", "draft tokens", "speculative decoding", "MTP"),
    ),
    Term(
        "streams.read",
        "share of memory.bandwidth sustained on one long read (the weights)",
        "`streams.read`: the share of `memory.bandwidth` a card sustains streaming one long read, as the weights and "
        "embedding rows are read each pass (e.g. a measured BabelStream Copy or Dot share).",
    ),
    Term(
        "streams.rewrite",
        "share of memory.bandwidth sustained on memory read and written back in place (recurrent state)",
        "`streams.rewrite`: the share of `memory.bandwidth` sustained when memory is read and written back in place, "
        "as a recurrent (Gated-DeltaNet) state is each pass. A model without recurrent state does not depend on it.",
    ),
    Term(
        "streams.append",
        "share of memory.bandwidth sustained on a long read with rows appended (KV cache, log, conv ring)",
        "`streams.append`: the share of `memory.bandwidth` sustained on a long read while new rows are appended, as "
        "a KV cache is read whole and grows by one row a token.",
    ),
    Term(
        "streams.*",
        "the shares of memory.bandwidth each kind of memory traffic sustains",
        "The `streams.*` facts (`streams.read`, `streams.rewrite`, `streams.append`) are shares in (0, 1] of "
        "`memory.bandwidth`: a card's peak is not reached by every access pattern, so each kind of traffic is "
        "priced at its own sustained share.",
        ("streams",),
    ),
    Term(
        "on chip",
        "on-chip memory holding the batch's token-rows through a layer",
        "`on_chip.capacity`: the on-chip memory (SRAM, shared memory, L2) that must hold the batch's token-rows "
        "while they cross a layer; a batch whose rows do not fit is refused. Prefill chunks are bounded by it.",
        ("on_chip", "on-chip"),
    ),
    Term(
        "held",
        "bytes resident in card memory: the weights once, plus each sequence's caches and states",
        "Held bytes: what card memory must hold for the pass — the weights and embedding table once, and each "
        "sequence's KV cache (at its limit, or its pages), recurrent state and conv ring. passprice counts no "
        "headroom for a runtime's workspace, activations or fragmentation: a batch filling 99.9 % of memory fits "
        "only on paper.",
        ("held bytes", "headroom"),
    ),
    Term(
        "KV cache",
        "each attention layer's cached keys and values, one row a position",
        "The KV cache: each attention layer keeps the key and value of every position a sequence has reached, "
        "read whole each pass. Its bytes a position are layers × KV heads × (key + value width) × `--kv-bytes`; "
        "GQA shares a KV head among query heads, a sliding window caps a layer's positions.",
        ("kv", "KV"),
    ),
    Term(
        "kv-rotated",
        "cached key and value heads are Walsh–Hadamard rotated before their int8 codes: the rotations are priced",
        "`--kv-rotated`: each cached key and value head row is rotated by a Walsh–Hadamard transform before it is "
        "coded to int8 (as QuaRot-style quantized caches are), the queries are rotated alike and every head's "
        "weighted sum rotated back; each transform of n elements is n·log2 n additions a token-row, priced on the "
        "vector units. It does not change the cache's bytes (that is `--kv-bytes`).",
        ("kv rotated", "rotated KV"),
    ),
    Term(
        "paged KV",
        "a KV cache in pages of N positions, holding what a sequence reached (contiguous: its whole limit)",
        "`--kv-page N`: the KV cache is paged (as vLLM's PagedAttention), so a sequence holds the pages it reached, "
        "half a page wasted on average; a contiguous cache (the default) holds each sequence's whole limit.",
        ("kv-page", "--kv-page", "paged"),
    ),
    Term(
        "shared prefix",
        "positions every sequence shares (a system prompt), held once with a paged cache",
        "`--shared-prefix N`: the first N positions of every sequence are the same (a system prompt); with a paged "
        "cache their pages are held once for the batch, and with `--prefix-read-once` read once a pass. Those "
        "bytes are then counted with the weights, shared by the batch.",
        ("prefix", "--shared-prefix", "prefix-read-once"),
    ),
    Term(
        "provenance",
        "how a fact is known: published > measured > derived > estimated > assumed",
        "Every fact's provenance, strongest first: `published` (a datasheet or paper says so), `measured` (a public, "
        "reproducible measurement), `derived` (computed from other facts by a stated formula), `estimated` (an "
        "engineering estimate, basis stated), `assumed` (a placeholder). A price is as strong as its weakest fact.",
        ("weakest", "published", "measured", "derived", "estimated", "assumed"),
    ),
    Term(
        "source",
        "the document a fact cites: a record in sources/, with a locator within it",
        "Every fact names its source by id (`sources/ID.toml`: title, publisher or authors, date, address, how it was "
        "read, all stated or said to be unknown) and a locator within it (table, row, column, quoted figure). "
        "`passprice sources` lists them; `passprice audit --source ID` shows every fact citing one, the servings and "
        "locks resting on those, and which locks break their floors if it is withdrawn.",
        ("sources", "locator", "citation", "cite"),
    ),
    Term(
        "derivation",
        "how a computed fact follows from its inputs: a formula over facts, figures and constants",
        "A fact's derivation names its inputs (other facts of the same card with the value each had, figures read "
        "from a source, constants with units) and a formula passprice evaluates itself, exactly and with units. "
        "`check` recomputes it: a fact whose input has changed since is stale, named with that input; `fact set` "
        "warns which facts an edit leaves stale, and `diff` lists them and fails, marking each lock whose price "
        "rests on one.",
        ("derivations", "stale", "formula"),
    ),
    Term(
        "rests on",
        "the facts a price used; * marks the binding term's",
        "The facts a price rests on: the card facts (and drafting acceptances) its arithmetic read — no "
        "`streams.rewrite` without recurrent state, no `host.*` without sequences in host memory, never "
        "`on_chip.bandwidth`. A lock floors exactly these; `audit` gives each one's citation and elasticity.",
        ("rests_on",),
    ),
    Term(
        "lock",
        "a file pinning what a price is a function of, its floors and the price itself",
        "A lock (`locks/NAME.lock.toml`) pins what a price is a function of, each by digest: the facts it rests on, "
        "the checkpoint's content, the serving and the pricing model's code; the floors it allows (made without "
        "flags, each fact at its provenance when locked); and the price. Every pricing command of a locked serving "
        "prices under its locks (`--no-lock` opts out); `reproduce` re-prices it from what it pinned bit for bit; "
        "`check` and `diff` judge it against today's inputs.",
        ("locks", "floor", "floors"),
    ),
    Term(
        "elasticity",
        "% change of tokens/s for a +1 % change of a fact",
        "A fact's elasticity: the % change of tokens/s when the fact is 1 % higher, by re-pricing. A memory-bound "
        "price has ≈ +1 in `memory.bandwidth`; 0 means the price does not depend on the fact.",
        ("elasticities",),
    ),
    Term(
        "refusal",
        "a price the model will not make, by name, with what to change",
        "A refusal names what passprice cannot price and what to change: `NotResident` (the batch does not fit), "
        "`Undecoded` (a tensor type neither the array nor the vector units read), `Routed` (a mixture of experts "
        "without a routing record: which experts a pass reads depends on routing), `ContextBeyondModel`, "
        "`BadDraft`, `LockFloor` … Exit status 1.",
        ("refused", "Routed", "NotResident", "Undecoded"),
    ),
    Term(
        "routing",
        "how a mixture of experts' tokens route: a routing record's facts",
        "A mixture of experts (MoE) routes each token to k of its E experts, so which experts a pass reads depends "
        "on its rows: one sequence reads its k experts a layer, many read nearly all. A routing record "
        "(`facts/routing/NAME.toml`, `--routing NAME`) gives it as facts: a hot set of `hot_experts` of the experts "
        "takes `hot_share` of the routed token-slots (1 and 1: uniform, `uniform.toml`, an assumption). A pass of T "
        "token-rows reads Σ_e 1 − (1 − p_e)^T experts a layer, expected; a price rests on `routing.hot_experts` and "
        "`routing.hot_share`, which a lock can floor. How many sequences fit does not depend on it (`max-batch` and "
        "`kv` need no record); a dense checkpoint takes none (`BadRouting`).",
        ("routing record", "mixture of experts", "moe", "experts", "expert", "hot_experts", "hot_share"),
    ),
    Term(
        "MLA",
        "multi-head latent attention: a KV cache of one latent and one rope key a position",
        "DeepSeek's multi-head latent attention caches, once a position for every head, a compressed latent "
        "(`kv_lora_rank` elements) and a rope key (`rope.dimension_count`): DeepSeek-V3 holds 61 × (512 + 64) × 2 = "
        "70,272 bytes a position at 2-byte elements, where multi-head attention would hold 4,997,120.",
        ("multi-head latent attention", "latent"),
    ),
    Term(
        "MXFP4",
        "4-bit float weights in blocks of 32 with one shared scale (gpt-oss's experts)",
        "MXFP4 (GGML type 39): 32 E2M1 weights and one E8M0 scale in 17 bytes; NVFP4 (type 40): 64 weights and four "
        "E4M3 scales in 36 bytes. passprice reads both on the integer array (each code an int8 table value, two "
        "passes) with their scales on the block-scale lanes.",
        ("nvfp4", "fp4"),
    ),
    Term(
        "ridge",
        "work per byte at which a datapath takes as long as the memory",
        "A ridge point (roofline model): a datapath's rate over the memory's read rate, in MAC/B (or cycle/B). A "
        "pass whose work per byte is below a datapath's ridge is memory-bound for that datapath.",
        ("ridge point", "roofline", "ops:byte"),
    ),
    Term(
        "stack",
        "a serving runtime of a build range, and what it delivers of the card's limit",
        "A serving stack (facts/stacks/NAME.toml) is a runtime of a build range (llama.cpp CUDA, vLLM, TensorRT-LLM "
        "...) described by cited facts: fixed seconds a pass and a layer, the share of each card rate its kernels "
        "reach, whether its terms overlap or add (terms.serial), and the memory it keeps for itself. The price without "
        "a stack is the card's limit; --stack S prints the stack's expected price beside it, and the ratio. passprice "
        "calibrate fits a stack's facts to measured runs (registry/measurements/), reporting its error on cards and "
        "checkpoints it held out; passprice validate prices every measured run both ways. Its facts hold only where "
        "its runs were measured (range.rows: token-rows a pass; range.position: cached positions): a price outside is "
        "refused (BeyondStack), and best --stack seeks its best batch only inside.",
        ("serving stack", "expected", "expected price", "limit", "calibrate", "validate"),
    ),
    Term(
        "tensor.f16",
        "a card's dense F16 tensor-core rate: F16 matrices ride it instead of the vector units",
        "tensor.f16, tensor.bf16, tensor.f8: a card's dense float-matrix rates (MAC/s), from its datasheet. Where a "
        "card has the rate for a matrix's type, the matrix rides it (its seconds join the array term, the matrix "
        "datapath; the price shows them as float_matrix_macs); where it has none, the vector units.",
        ("tensor.bf16", "tensor.f8", "tensor cores", "tensor", "float_matrix_macs"),
    ),
)

#: Every term by its name.
TERMS: dict[str, Term] = {t.name: t for t in _TERMS}


def _key(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", text.strip().lower().lstrip("-"))


_INDEX: dict[str, Term] = {}
for _t in _TERMS:
    for _name in (_t.name, *_t.aliases):
        _INDEX.setdefault(_key(_name), _t)


def lookup(text: str) -> Term:
    """The term ``text`` names (its name or an alias, case, ``-``/``_`` and a leading ``--`` ignored). Raises
    :class:`InputError` naming the closest terms when none matches."""
    found = _INDEX.get(_key(text))
    if found is not None:
        return found
    close = difflib.get_close_matches(_key(text), list(_INDEX), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(_INDEX[c].name for c in close)}?" if close else ""
    raise InputError(f"explain: {text!r} is not a term passprice defines{hint} (passprice explain lists them)")


def text(term: Term) -> str:
    """One term for ``passprice explain TERM``: the name, its one line, then the definition."""
    also = f"  (also: {', '.join(term.aliases)})" if term.aliases else ""
    return f"{term.name}: {term.short}{also}\n\n{term.long}"


def listing() -> str:
    """Every term with its one line, for ``passprice explain`` without a term."""
    width = max(len(t.name) for t in _TERMS)
    return "\n".join(f"{t.name.ljust(width)}  {t.short}" for t in _TERMS)


def markdown() -> str:
    """The README's glossary: one bullet a term, its name in bold, then the definition."""
    return "\n".join(f"- **{t.name}**: {t.long}" for t in _TERMS)


def legend(*names: str) -> str:
    """The one-line legend under a table: each of ``names`` with its short definition, ``;``-separated, then where
    the rest is (``passprice explain TERM``)."""
    parts = [f"{TERMS[n].name} = {TERMS[n].tag or TERMS[n].short}" for n in names]
    return " · ".join(parts) + " (passprice explain TERM)"
