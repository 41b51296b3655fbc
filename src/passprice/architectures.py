"""A checkpoint is priced by the rules of the architecture its header names, and only of one passprice knows: one
table, :data:`KNOWN`, says which architectures passprice implements and which test pins each; any other
``general.architecture`` is refused by name (:class:`~passprice.decode.UnknownArchitecture`), never priced by the
rules its tensor names resemble.

Why a table and not the tensor names: most of the decode step is read off the tensors (DESIGN.md, The decode step:
``attn_kv_a_mqa`` is latent attention, ``ffn_*_exps`` routed experts, ``ssm_*`` a recurrence), but some of what is
priced is the architecture's alone, and a header does not carry it: which layers slide a window
(:attr:`Architecture.window_period`, llama.cpp's ``hparams.set_swa_pattern``), and what a layer does with the
tensors it holds (an architecture not listed may read them otherwise, or hold state no tensor names). A header
naming ``foo`` whose tensors are llama's was priced as llama, exit 0 (session 36): a guess the user was not told of.

An architecture llama.cpp knows under another name whose layer rules are one passprice knows may be priced as that
one, but only through :data:`ALIASES`, each entry with its citation; it holds none today.

The README's and DESIGN.md's list of known architectures is :func:`markdown`'s text (``python docs/make.py`` writes
it; ``tests/test_architectures.py`` fails when either differs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from passprice.gguf_header import GGUFHeader

#: An int or a float, kept as it is (:func:`windowed_held`).
_N = TypeVar("_N", int, float)

#: The key (architecture prefix left off) a windowed architecture's period applies to: its window in positions.
WINDOW_KEY = "attention.sliding_window"

#: The features read off tensor names (DESIGN.md, The decode step) that only some architectures have: latent
#: attention (``attn_kv_a_mqa``), routed experts (``ffn_*_exps``), the Gated-DeltaNet recurrence (``ssm_*``). A header
#: holding one its architecture lacks is refused (:class:`~passprice.decode.TensorNotInArchitecture`): llama.cpp builds
#: each architecture's tensor list by name and refuses a file holding a tensor its list lacks
#: (``llama_model_loader::done_getting_tensors``, src/llama-model-loader.cpp at c392e5094d, lines 809-811:
#: ``if (n_created != n_tensors) {`` throws ``"%s: wrong number of tensors; expected %d, got %d"``; ``n_tensors`` is
#: the file's tensor count, line 573, and each ``create_tensor`` of the architecture's list counts ``n_created``, lines
#: 774 and 804), so a ``llama`` header holding ``attn_kv_a_mqa`` is no model llama.cpp runs (it was priced with MLA,
#: exit 0: session 36). At a5410f046c, src/llama-model.cpp's ``llama_model::load_tensors`` creates each
#: architecture's tensors in a switch whose ``default:`` throws "unknown architecture", then calls
#: ``ml.done_getting_tensors();`` (tests/test_cite68.py); at c392e5094d the same (src/llama-model.cpp lines 1268,
#: 3420, 3430). c392e5094d is master of 2025-02-20 in a git snapshot of the repository (fetched as
#: ggerganov/llama.cpp, its name before ggml-org), so lines and commit can be read with ``git show``; a5410f046c is
#: later, and no stored copy holds its src/llama-model-loader.cpp (tests/test_cite69.py).
MLA, EXPERTS, RECURRENCE = "latent attention", "routed experts", "recurrence"
FEATURES = (MLA, EXPERTS, RECURRENCE)


@attrs.frozen
class Architecture:
    """One architecture passprice prices: ``name`` its ``general.architecture``; ``models`` the checkpoints it is
    (one line); ``rules`` what of it is priced beyond a dense GQA block (experts, latent attention, windows …);
    ``window_period`` the sliding-window period *p* (layer ``i`` windowed when ``i % p < p − 1``, DESIGN.md, Sliding
    windows), ``None`` when it has no windowed layers; ``needs`` the metadata keys (prefix left off) its rules need
    beyond those every header needs, refused by name when absent (``MissingMetadata``); ``pinned`` what pins its
    prices (registered checkpoints, a test); ``source`` where its rules come from."""

    name: str = attrs.field(validator=attrs.validators.min_len(1))
    models: str
    rules: str
    pinned: str
    source: str
    window_period: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.ge(2))
    )
    needs: tuple[str, ...] = ()
    features: frozenset[str] = attrs.field(
        default=frozenset(), validator=attrs.validators.deep_iterable(attrs.validators.in_(FEATURES))
    )
    #: The window (positions) llama.cpp runs a header without :data:`WINDOW_KEY` with, ``None`` when it refuses such
    #: a header (the key then in :attr:`needs`); ``window_default_source`` cites where llama.cpp sets it.
    window_default: int | None = attrs.field(default=None, validator=attrs.validators.optional(attrs.validators.ge(1)))
    window_default_source: str = ""


#: How a windowed architecture's period and window key are cited. At a5410f046c (the one commit of
#: src/llama-model.cpp the reference search holds) the period is spelled ``hparams.n_swa_pattern = P;``: gemma2's 2 on
#: line 913, gemma3's 6 on line 930, cohere2's 4 on line 1014, each key read on line 916 (optional), 935 and 1016
#: (required); tests/test_cite68.py checks the periods and the reads against those lines. ``set_swa_pattern`` is the
#: later spelling (00342301d0), and gpt-oss is not in a5410f046c: neither is in a stored copy.
_SWA = "llama.cpp src/llama-model.cpp, llama_model::load_hparams: hparams.set_swa_pattern({p}), {key} {read}"

#: Where llama.cpp gives gemma2 a window its header does not name (session 36, arch43): src/llama-model.cpp at
#: a5410f046c, ``llama_model::load_hparams`` (line 406), ``case LLM_ARCH_GEMMA2`` (line 910): line 912
#: ``hparams.n_swa = 4096; // default value of gemma 2`` then line 916
#: ``ml.get_key(LLM_KV_ATTENTION_SLIDING_WINDOW,    hparams.n_swa, false)`` (optional: the 4,096 stands
#: when the key is absent); the same at 00342301d0. gemma3 and cohere2 read the key required at both commits
#: (``get_key`` without ``false``; a5410f046c's ``n_swa_pattern`` 6 and 4), gpt-oss (``LLM_ARCH_OPENAI_MOE``, not yet
#: in a5410f046c) required at 00342301d0: those refuse a header without it, and so does passprice.
GEMMA2_WINDOW_SOURCE = (
    "llama.cpp src/llama-model.cpp at a5410f046c (llama_model::load_hparams, LLM_ARCH_GEMMA2: hparams.n_swa = 4096 "
    "\"default value of gemma 2\", then get_key(LLM_KV_ATTENTION_SLIDING_WINDOW, hparams.n_swa, false): the key "
    "optional)"
)


def _windowed(
    name: str, period: int, models: str, rules: str, pinned: str, source: str, features: frozenset[str] = frozenset(),
    default: int | None = None, default_source: str = "",
) -> Architecture:
    """A windowed architecture: its period, and its window key needed (llama.cpp reads it with ``get_key`` required),
    or, with ``default``, optional: llama.cpp runs a header without it with that window (``default_source``)."""
    read = "required" if default is None else f"optional (default {default})"
    cited = f"{_SWA.format(p=period, key=f'{name}.{WINDOW_KEY}', read=read)}; {source}"
    needs = (WINDOW_KEY,) if default is None else ()
    return Architecture(name, models, rules, pinned, cited, period, needs, features, default, default_source)


#: The architectures passprice prices, by ``general.architecture``: each implemented (DESIGN.md, The decode step)
#: and pinned by a test or by the locks of registered checkpoints. Order: as listed to the user. A ``source`` naming
#: llama.cpp's graph builder (``llm_build_qwen2``) names a struct of src/llama-model.cpp at a5410f046c for llama,
#: qwen2, qwen3, qwen3moe and deepseek2 (tests/test_cite68.py); ``llm_build_qwen3next`` and ``llm_build_qwen35`` came
#: later, and no stored copy of llama.cpp holds them.
KNOWN: Mapping[str, Architecture] = {
    a.name: a
    for a in (
        Architecture(
            "llama",
            "Llama 1-3, Code Llama, Mistral, Mixtral (convert_hf_to_gguf.py writes all of them as llama)",
            "dense GQA; routed experts (Mixtral)",
            "tests/test_serving.py (dense prices by hand); registered llama2-7b, llama3-8b/70b, llama31-8b, "
            "codellama-7b",
            "llama.cpp llm_build_llama",
            features=frozenset({EXPERTS}),
        ),
        Architecture(
            "qwen2",
            "Qwen2, Qwen2.5, DeepSeek-R1-Distill-Qwen",
            "dense GQA, q/k/v biases",
            "locks r1-qwen7b-* (registered deepseek-r1-distill-qwen-7b-q4_k_m)",
            "llama.cpp llm_build_qwen2",
        ),
        Architecture(
            "qwen3",
            "Qwen3 dense",
            "dense GQA, q/k norms",
            "tests/test_architectures.py",
            "llama.cpp llm_build_qwen3",
        ),
        Architecture(
            "qwen3moe",
            "Qwen3 mixtures of experts (Qwen3-30B-A3B …)",
            "GQA, q/k norms, routed experts",
            "lock qwen3-30b-a3b-h200 (registered qwen3-30b-a3b-q4_k_m); tests/test_moe.py",
            "llama.cpp llm_build_qwen3moe",
            features=frozenset({EXPERTS}),
        ),
        Architecture(
            "qwen3next",
            "Qwen3-Next",
            "Gated DeltaNet recurrence and gated attention, routed and shared experts",
            "tests/test_serving.py (the recurrence by hand); registered qwen3next-80b-a3b-like",
            "llama.cpp llm_build_qwen3next",
            features=frozenset({EXPERTS, RECURRENCE}),
        ),
        Architecture(
            "qwen35",
            "Qwen3.5 dense",
            "Gated DeltaNet recurrence and gated attention, MTP draft layers",
            "locks qwen35-27b-* (registered qwen35-27b-like); tests/test_hybrids.py",
            "llama.cpp llm_build_qwen35",
            features=frozenset({RECURRENCE}),
        ),
        Architecture(
            "deepseek2",
            "DeepSeek-V2, -V2-Lite, -V3, -R1",
            "multi-head latent attention (MLA), routed and shared experts, MTP draft layers",
            "tests/test_mla.py (the latent cache by hand); registered deepseek-v2-lite-q4_0, deepseek-v3-q4_k_m",
            "llama.cpp llm_build_deepseek2; arXiv:2405.04434 §2.1",
            features=frozenset({MLA, EXPERTS}),
        ),
        _windowed(
            "gemma2",
            2,
            "Gemma 2",
            "windowed then global layers, alternating; tied head",
            "tests/test_serving.py (a windowed layer beside a full one); tests/test_architectures.py (its default "
            "window)",
            "google/gemma-2 config.json",
            default=4096,
            default_source=GEMMA2_WINDOW_SOURCE,
        ),
        _windowed(
            "gemma3",
            6,
            "Gemma 3",
            "five windowed layers then one global; tied head",
            "lock gemma3-270m-h100 (registered gemma3-270m-q4_k_m)",
            "google/gemma-3 config.json sliding_window_pattern 6",
        ),
        _windowed(
            "cohere2",
            4,
            "Command R7B, Command A",
            "three windowed layers then one global",
            "tests/test_architectures.py",
            "CohereForAI/c4ai-command-r7b config.json sliding_window_pattern 4",
        ),
        _windowed(
            "gpt-oss",
            2,
            "gpt-oss-20b, -120b",
            "windowed then full layers, alternating; attention sinks; routed experts",
            "lock gpt-oss-120b-h100 (registered gpt-oss-20b/120b-mxfp4)",
            "openai/gpt-oss config.json layer_types",
            frozenset({EXPERTS}),
        ),
    )
}

#: An architecture llama.cpp names otherwise whose layer rules are those of one in :data:`KNOWN`: name → (the known
#: architecture, the citation that shows the rules are the same). Empty: none is cited yet, and none is guessed.
ALIASES: Mapping[str, tuple[str, str]] = {}


def rules_of(architecture: str | None) -> Architecture | None:
    """The :class:`Architecture` whose rules price a header naming ``architecture`` (through :data:`ALIASES` when it
    is one), or ``None`` when passprice knows no rules for it. Raises nothing."""
    if architecture is None:
        return None
    known = KNOWN.get(architecture)
    if known is None and architecture in ALIASES:
        known = KNOWN.get(ALIASES[architecture][0])
    return known


def known_names() -> str:
    """The known architectures' names, comma-separated, in :data:`KNOWN`'s order (what a refusal lists)."""
    return ", ".join(KNOWN)


def markdown() -> str:
    """The known architectures as a markdown table (the README's and DESIGN.md's list, between their
    ``architectures: begin`` and ``end`` markers): name, models, what is priced beyond a dense GQA block, the
    window period and the keys it needs (or the window llama.cpp gives a header without its key), what pins it."""
    rows = [
        "| `general.architecture` | checkpoints | priced beyond a dense GQA block | sliding window | needs "
        "| pinned by |",
        "|---|---|---|---|---|---|",
    ]
    for a in KNOWN.values():
        window = f"period {a.window_period}" if a.window_period else "none"
        needs = ", ".join(f"`{a.name}.{k}`" for k in a.needs) or "—"
        if a.window_default is not None:
            needs = (f"— (`{a.name}.{WINDOW_KEY}` optional: without it the window is {a.window_default:,}, "
                     "llama.cpp's default, and the price says so)")
        rows.append(f"| `{a.name}` | {a.models} | {a.rules} | {window} | {needs} | {a.pinned} |")
    for name, (known, source) in ALIASES.items():  # pragma: no cover - none today
        rows.append(f"| `{name}` | priced as `{known}` ({source}) | | | | |")
    return "\n".join(rows)


@attrs.frozen
class DefaultedWindow:
    """A windowed architecture's window priced from llama.cpp's default because the header names none: ``key`` the
    absent metadata key (architecture prefix included), ``window`` the positions priced, ``source`` llama.cpp's line
    that sets it (:attr:`passprice.architectures.Architecture.window_default_source`)."""

    key: str
    window: int
    source: str

    def to_json(self) -> dict[str, Any]:
        """``{"key", "value", "source"}``: what a price's ``--json`` holds under ``defaulted``."""
        return {"key": self.key, "value": self.window, "source": self.source}

    def line(self) -> str:
        """One line for a price's text: the key, the window priced and why."""
        return (f"{self.key} {self.window:,} positions: not in the header, so llama.cpp's default is priced "
                f"({self.source})")


def defaulted_window(header: GGUFHeader) -> DefaultedWindow | None:
    """The window ``header`` is priced with though it names none (its architecture's
    :attr:`~passprice.architectures.Architecture.window_default`: gemma2's 4,096, which llama.cpp runs such a header
    with), or ``None`` when the header names its window or its architecture gives none by default (those that need
    the key are refused without it: :func:`passprice.decode.architecture_refusal`). Raises nothing."""
    rules = rules_of(header.architecture)
    if rules is None or rules.window_default is None or header.meta(WINDOW_KEY) is not None:
        return None
    return DefaultedWindow(f"{rules.name}.{WINDOW_KEY}", rules.window_default, rules.window_default_source)


# --- what a windowed layer attends and holds -------------------------------------------------------------------

#: Where the count a windowed layer attends comes from (session 39, window55). Both say ``window`` positions, the
#: row's own included:
#: llama.cpp src/llama-context.cpp at c392e5094d (``llama_set_inputs``, the KQ masks): line 163 masks a cell whose
#: ``pos > pos`` of the row (causal), line 179 masks it in the sliding-window mask ``if (pos - kv_self.cells[i].pos >=
#: (int32_t)hparams.n_swa)``, so a row at ``p`` attends ``p − n_swa < p0 <= p``; ``llama_hparams::is_masked_swa`` in
#: src/llama-hparams.cpp at 01b77b5793 (``LLAMA_SWA_TYPE_STANDARD``: masked when ``p1 - p0 >= n_swa``) says the same.
#: Transformers src/transformers/masking_utils.py at 00c4411cbe: ``causal_mask_function`` (``kv_idx <= q_idx``) and
#: ``sliding_window_overlay`` (``kv_idx > q_idx - sliding_window``), and-ed by
#: ``sliding_window_causal_mask_function``. (Its older ``AttentionMaskConverter._make_causal_mask`` in
#: modeling_attn_mask_utils.py at 000b2cd5cd masked ``col <= row + past − sliding_window − 1``: ``window + 1``
#: positions, passprice's rule until session 39; masking_utils replaced it.)
#: What each holds for a windowed layer: Transformers' ``StaticSlidingWindowLayer`` (cache_utils.py at 004999d972)
#: allocates ``min(max_cache_len, sliding_window)`` positions; its ``DynamicSlidingWindowLayer`` keeps the last
#: ``sliding_window − 1`` and holds ``window`` while a row is scored; llama.cpp's ``llama_kv_cache_iswa`` gives the
#: windowed layers ``n_swa`` cells a sequence plus one micro-batch (padded to 256); at c392e5094d llama.cpp had no
#: windowed cache yet (src/llama-kv-cache.cpp lines 94-95 allocate ``kv_size`` cells for every layer, src/llama.cpp
#: line 9682 ``kv_size = cparams.n_ctx``).
WINDOW_SOURCE = (
    "llama.cpp src/llama-context.cpp at c392e5094d, lines 163 and 179 (a row at p attends p - n_swa < p0 <= p; "
    "llama_hparams::is_masked_swa at 01b77b5793: masked when p1 - p0 >= n_swa); Transformers masking_utils.py at "
    "00c4411cbe (causal_mask_function kv_idx <= q_idx and sliding_window_overlay kv_idx > q_idx - sliding_window): "
    "window positions, the row's own included; held: Transformers cache_utils.py at 004999d972 "
    "(StaticSlidingWindowLayer: min(max_cache_len, sliding_window))"
)


def window_reach(window: int) -> int:
    """The most cached (earlier) positions a row of a windowed layer reads: ``window − 1`` (int, ``window`` ≥ 1: a
    window of 0 is refused, :data:`passprice.decode.ZERO_WINDOW_SOURCE`). With the row's own key and value, written
    this pass, it attends ``window`` positions, as llama.cpp's and Transformers' masks do (:data:`WINDOW_SOURCE`).
    The one place the rule is written: every reader of a windowed layer's positions (the serving pricer, the sweep,
    the step pricer, stretches, the simulator, the decode step) goes through this function or the two below it.
    Raises nothing."""
    return window - 1


def windowed_reads(position: _N, window: int) -> _N:
    """Cached positions a windowed layer's row at ``position`` (cached positions before it) reads, scores and sums:
    ``min(position, window − 1)`` (:func:`window_reach`; a full layer reads ``position``), an int for an int, a float
    for a float. Raises nothing."""
    return min(position, type(position)(window_reach(window)))


def windowed_reads_array(positions: npt.NDArray[np.float64], window: int) -> npt.NDArray[np.float64]:
    """:func:`windowed_reads` elementwise over ``positions`` (a float array, any shape; the same doubles the scalar
    form gives: the tests check it). Raises nothing."""
    import numpy as np

    result: npt.NDArray[np.float64] = np.minimum(positions, float(window_reach(window)))
    return result


def paged_cap(limit: int, page: int) -> int:
    """The most positions a sequence's paged cache can hold: the whole pages its ``limit`` needs,
    ``⌈limit / page⌉ × page`` (positions; a cache allocates whole pages, and a sequence never reaches past its
    limit: DESIGN.md, Contexts). Raises nothing for ``page`` ≥ 1."""
    return -(-limit // page) * page


def paged_held(position: float, page: int, limit: int) -> float:
    """Positions a full layer's paged cache holds for a class at mean ``position`` of ``limit``: the seed's
    ``position + page / 2`` (its own length and half a page on average), at most :func:`paged_cap` — the seed's
    half page, added to a class whose sequences are all at their last position (``position`` = limit − 1), held
    pages past the limit (``sweep qwen3-30b-a3b-h200 --positions 4096`` held 4,104 positions of a 4,096 limit).
    Raises nothing for ``page`` ≥ 1."""
    return min(position + page / 2.0, float(paged_cap(limit, page)))


def windowed_held(positions: _N, window: int) -> _N:
    """Positions a windowed layer's cache holds for a sequence that would hold ``positions`` in a full layer (its
    limit in a contiguous cache, its position and half a page in a paged one): ``min(positions, window)``, an int
    for an int, a float for a float — the ``window`` positions a row attends (:data:`WINDOW_SOURCE`: Transformers'
    static sliding cache allocates ``min(max_cache_len, sliding_window)``). Raises nothing."""
    return min(positions, type(positions)(window))


def windowed_held_array(positions: npt.NDArray[np.float64], window: int) -> npt.NDArray[np.float64]:
    """:func:`windowed_held` elementwise over ``positions`` (a float array). Raises nothing."""
    import numpy as np

    result: npt.NDArray[np.float64] = np.minimum(positions, float(window))
    return result
