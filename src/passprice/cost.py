"""A pass's cost is one formula: bytes over the rates the card's memory and host link sustain, work over the rates
its datapaths reach, five terms that overlap so the pass takes the largest.

This module is that formula, written once with ``+ * /`` (and an elementwise maximum) so it prices a float and a
NumPy array alike: :func:`pass_terms` gives the five terms of the seed's ``PassShape::cost`` (``serving.rs``),
:func:`pass_seconds` combines them. The scalar pricer (:meth:`passprice.serving.PassShape.cost`), the batch searches'
bounds (:mod:`passprice.batching`), the sweep on arrays (:mod:`passprice.sweep`), the step pricer
(:mod:`passprice.steps`) and the roofline's coefficients (:mod:`passprice.roofline`) all call it, so a term added or
changed here (a serving stack's shares and overheads, a tensor-core rate) reaches every one of them.

The rates a pass divides by are a :class:`Pricing`: for the card's **limit** (the seed's price), each card rate as the
card's facts give it, no fixed cost, every term overlapping. The arithmetic is the seed's, operation for operation, so
the limit stays bit for bit what it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from passprice.cards import Card

#: The order of the five terms (the seed's ``ServingBind`` order): index 0 … 4.
TERMS = ("memory", "host", "array", "vector", "scale")


def maximum(a: Any, b: Any) -> Any:
    """The larger of ``a`` and ``b``: Python's ``max`` for two floats, ``numpy.maximum`` elementwise when either is
    an array (both give the same double)."""
    if hasattr(a, "shape") or hasattr(b, "shape"):
        import numpy as np

        return np.maximum(a, b)
    return max(a, b)


@attrs.frozen
class Pricing:
    """What a pass is priced against: the rates its terms divide by and the memory that holds it, base units.

    Rates: ``read``, ``rewrite``, ``append`` (B/s: ``memory.bandwidth`` × ``streams.*``), ``host_read``,
    ``host_write`` (B/s: ``host.read`` / ``host.write`` × ``host.stream``; infinite without a host link, so a pass
    with no host sequences pays exactly 0 there), ``array``, ``vector`` (MAC/s), ``scale`` (cycle/s). Capacities:
    ``capacity`` (card memory the serving may fill, B), ``host_capacity`` (B; 0 without a host link),
    ``on_chip`` (B). ``fixed_s``: seconds every pass pays whatever its terms (0 for the limit); ``serial``: the share
    of the non-binding terms that adds to the binding one (0: the terms overlap, the seed's rule; 1: they run one
    after another). ``float_rates``: (GGML type name, MAC/s, the card fact path of the rate) of the float matrices
    that ride a matrix rate (a card's tensor cores, DESIGN.md, or a stack's float-matrix kernels); a float matrix of
    another type stays on the vector units, as the seed's ``is_float`` puts it.
    """

    read: float
    rewrite: float
    append: float
    host_read: float
    host_write: float
    array: float
    vector: float
    scale: float
    capacity: float
    host_capacity: float
    on_chip: float
    fixed_s: float = 0.0
    serial: float = 0.0
    float_rates: tuple[tuple[str, float, str], ...] = ()

    def float_rate(self, ty: str) -> float | None:
        """The matrix rate (MAC/s) a float matrix of GGML type ``ty`` rides, or ``None`` (the vector units)."""
        for name, rate, _ in self.float_rates:
            if name == ty:
                return rate
        return None

    def float_path(self, ty: str) -> str | None:
        """The card fact path of the rate a float matrix of GGML type ``ty`` rides (``tensor.f16``, or ``vector`` for
        a stack whose float-matrix kernels run on the vector units), or ``None``."""
        for name, _, path in self.float_rates:
            if name == ty:
                return path
        return None

    @classmethod
    def limit(cls, card: Card) -> Pricing:
        """The card's limit: every rate as its facts give it (seed ``PassShape::cost``: ``bandwidth × share`` for
        each stream, the link rate × ``host.stream``), its own capacities, no fixed cost, terms overlapping; a float
        matrix of a format the card has a ``tensor.*`` rate for rides it (DESIGN.md, Tensor cores)."""
        from passprice.cards import TENSOR_FORMATS

        bandwidth = card.memory.bandwidth.value
        streams = card.streams
        host = card.host
        return cls(
            read=bandwidth * streams.read.value,
            rewrite=bandwidth * streams.rewrite.value,
            append=bandwidth * streams.append.value,
            host_read=host.read.value * host.stream.value if host is not None else float("inf"),
            host_write=host.write.value * host.stream.value if host is not None else float("inf"),
            array=card.array.value,
            vector=card.vector.value,
            scale=card.scale.value,
            capacity=card.memory.capacity.value,
            host_capacity=host.capacity.value if host is not None else 0.0,
            on_chip=card.on_chip.capacity.value,
            float_rates=tuple((ty, card.tensor[p].value, p) for ty, p in TENSOR_FORMATS.items() if p in card.tensor),
        )


@attrs.frozen
class Terms:
    """The five terms of a pass, seconds (floats, or arrays of one shape): ``memory_s`` (card memory), ``host_s``
    (host link, the slower direction), ``array_s`` (integer array), ``vector_s`` (f32 vector units), ``scale_s``
    (block-scale lanes), in the seed's ``ServingBind`` order."""

    memory_s: Any
    host_s: Any
    array_s: Any
    vector_s: Any
    scale_s: Any

    def as_tuple(self) -> tuple[Any, Any, Any, Any, Any]:
        """The terms in the seed's order: memory, host, array, vector, scale."""
        return (self.memory_s, self.host_s, self.array_s, self.vector_s, self.scale_s)

    def binding(self, labels: Sequence[Any]) -> tuple[float, Any]:
        """The binding term of floats (the largest, the last of equal maxima: :func:`binding`) and its label, the
        five ``labels`` given in the seed's order (``tuple(ServingBind)``, or ``range(5)`` for an index)."""
        return binding(list(zip(self.as_tuple(), labels, strict=True)))


def pass_terms(
    pricing: Pricing,
    *,
    batch: Any,
    card_sequences: Any,
    host_sequences: Any,
    shared_bytes: Any,
    read_bytes: Any,
    write_bytes: Any,
    rewrite_bytes: Any,
    array_macs: Any,
    vector_macs: Any,
    scale_cycles: Any,
    float_macs: Sequence[tuple[str, Any]] = (),
) -> Terms:
    """The five terms of a pass of ``batch`` sequences, ``card_sequences`` of them held in card memory and
    ``host_sequences`` in host memory (seed ``PassShape::cost``; floats or arrays, elementwise).

    ``shared_bytes``: bytes the pass streams once for the whole batch (weights, embedding rows, a prefix read once;
    B, at ``read``). Per sequence: ``read_bytes`` and ``write_bytes`` (its own cache, state, log and ring traffic, B),
    ``rewrite_bytes`` (of those, read and written back in place, at ``rewrite``; the rest at ``append``),
    ``array_macs``, ``vector_macs`` (MAC) and ``scale_cycles`` (cycles); ``float_macs``: (GGML type name, MAC) of
    the float matrices among ``vector_macs``. Formula (seed, with the tensor-core path of DESIGN.md):

    - memory = shared / read + card_sequences × (rewrite / rewrite_rate + (read + write − rewrite) / append_rate)
    - host = max(host_sequences × read / host_read, host_sequences × write / host_write)
    - array = (batch × array MACs) / array rate + Σ (batch × float-matrix MACs) / its matrix rate, over the float
      matrices that ride one (the matrix datapath does both); vector = (batch × (vector MACs − those)) / vector rate;
      scale = (batch × cycles) / scale rate. With no float matrix riding a matrix rate, this is the seed's formula to
      the bit (``x − 0.0`` and ``x + 0.0`` are ``x``).
    """
    # A factor of the float 1.0, or a term of the float 0.0, is left out: 1.0 × x and x − 0.0 are x, and so is
    # x + 0.0 for the x ≥ 0 these sums hold; the step pricer's arrays of steps pay a NumPy call less for each.
    one = isinstance(card_sequences, float) and card_sequences == 1.0
    sequence_bytes = read_bytes + write_bytes
    own_s = rewrite_bytes / pricing.rewrite + (sequence_bytes - rewrite_bytes) / pricing.append
    memory_s = shared_bytes / pricing.read + (own_s if one else card_sequences * own_s)
    host_s = maximum(
        host_sequences * read_bytes / pricing.host_read,
        host_sequences * write_bytes / pricing.host_write,
    )
    riding: Any = 0.0
    matrix_s: Any = 0.0
    for ty, macs in float_macs:
        rate = pricing.float_rate(ty)
        if rate is not None:
            riding = riding + macs
            matrix_s = matrix_s + (batch * macs) / rate
    unit = isinstance(batch, float) and batch == 1.0
    array_s = (array_macs if unit else batch * array_macs) / pricing.array
    vector = vector_macs if _nothing(riding) else vector_macs - riding
    return Terms(
        memory_s=memory_s,
        host_s=host_s,
        array_s=array_s if _nothing(matrix_s) else array_s + matrix_s,
        vector_s=(vector if unit else batch * vector) / pricing.vector,
        scale_s=(scale_cycles if unit else batch * scale_cycles) / pricing.scale,
    )


def _nothing(value: Any) -> bool:
    """Whether ``value`` is the float 0.0 (not an array)."""
    return isinstance(value, float) and value == 0.0


@attrs.frozen
class Lines:
    """A pass's terms as lines in the batch, seconds, from :func:`pass_terms` at one sequence: ``shared_s`` the
    pass pays once (its shared stream), ``embed_s`` per sequence of the batch (its embedding rows, on the shared
    stream), ``sequence_s`` per sequence held in card memory (its own bytes), ``host_s`` per sequence held in host
    memory (0 when ``host`` is false), ``array_s``, ``vector_s``, ``scale_s`` per sequence (its work).

    The memory term of a pass of b sequences, all in card memory, is ``shared_s + b × (embed_s + sequence_s)`` to
    rounding (the formula groups the sums differently), and each arithmetic term is b × its coefficient exactly."""

    shared_s: float
    embed_s: float
    sequence_s: float
    host_s: float
    array_s: float
    vector_s: float
    scale_s: float

    @classmethod
    def of(cls, pricing: Pricing, shape: Any, host: bool = False) -> Lines:
        """The lines of ``shape`` (a :class:`~passprice.serving.PassShape`, or anything with its byte and work
        fields: ``weight_bytes``, ``embed_bytes``, ``read_bytes``, ``write_bytes``, ``rewrite_bytes``,
        ``array_macs``, ``vector_macs``, ``scale_cycles``, and ``float_macs`` when it has them) at ``pricing``;
        ``host``: price the host link's line."""
        per = {
            "read_bytes": shape.read_bytes,
            "write_bytes": shape.write_bytes,
            "rewrite_bytes": shape.rewrite_bytes,
            "array_macs": shape.array_macs,
            "vector_macs": shape.vector_macs,
            "scale_cycles": shape.scale_cycles,
        }
        none: dict[str, Any] = dict.fromkeys(per, 0.0)
        per["float_macs"] = getattr(shape, "float_macs", ())
        shared = pass_terms(
            pricing, batch=0.0, card_sequences=0.0, host_sequences=0.0, shared_bytes=shape.weight_bytes, **none
        )
        embed = pass_terms(
            pricing, batch=0.0, card_sequences=0.0, host_sequences=0.0, shared_bytes=shape.embed_bytes, **none
        )
        one = pass_terms(
            pricing, batch=1.0, card_sequences=1.0, host_sequences=1.0 if host else 0.0, shared_bytes=0.0, **per
        )
        return cls(
            shared_s=shared.memory_s,
            embed_s=embed.memory_s,
            sequence_s=one.memory_s,
            host_s=one.host_s,
            array_s=one.array_s,
            vector_s=one.vector_s,
            scale_s=one.scale_s,
        )


def binding(terms: Sequence[tuple[float, Any]]) -> tuple[float, Any]:
    """The largest term, and on a tie the *last* of the equal maxima, as Rust's ``Iterator::max_by`` with
    ``f64::total_cmp`` picks it in the seed's ``cost``. ``terms``: (seconds, label) pairs."""
    best = terms[0]
    for term in terms[1:]:
        if term[0] >= best[0]:
            best = term
    return best


def binding_index(stacked: Any) -> Any:
    """For arrays of terms stacked along a first axis of five (memory, host, array, vector, scale): the index
    (0 … 4) of each element's binding term, the last of equal maxima as :func:`binding` picks it."""
    import numpy as np

    return len(TERMS) - 1 - np.argmax(stacked[::-1], axis=0)


def pass_seconds(pricing: Pricing, terms: Terms, binding_s: Any) -> Any:
    """A pass's seconds from its terms and the binding one (``binding_s``, the largest): the fixed cost, plus the
    binding term, plus ``serial`` × the other terms (which a stack that does not overlap them pays too). For the
    limit (no fixed cost, ``serial`` 0) this is ``binding_s`` itself, bit for bit."""
    if pricing.fixed_s == 0.0 and pricing.serial == 0.0:
        return binding_s
    rest = terms.memory_s + terms.host_s + terms.array_s + terms.vector_s + terms.scale_s - binding_s
    return pricing.fixed_s + binding_s + pricing.serial * rest
