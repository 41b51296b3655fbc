"""Whether a served cache object holds what its writer always makes hold (issue 13, tests/test_forge132.py).

An entry of passprice's cache (:mod:`passprice.cache`) is read back when its checksum, key, pickle and classes hold.
Its checksum is unkeyed, so whoever can write the cache folder can write an entry that is read back. Most entries of
the wrong shape fail where they are used (a field ``None`` or of another type raises deep in the code), and the
command runs again reading no entry (:func:`passprice.cache.served_again`). What does not fail is a tuple one item
short or long that the code takes for values: a header's tensor table one tensor short (``check``: "its content
changed since the lock"), a pass shape without its expert stream (a mixture of experts priced dense), a serving's
context mix one class long (``price``: "BadContexts: the shares sum to 2"). Those are what is checked here, where an
object is served, by its class's writer rule (:data:`WRITER_RULES`): what the code that builds an object always makes
hold between its fields. A rule reads the object's own fields (a tuple's length, a key set), never walks the objects
it holds field by field: a walk of every field of every object served (a 339-tensor header, a lock's 1,443 runs)
cost a warm ``price`` 4 to 6 % and a warm ``check`` 6.8 % (docs/DESIGN.md, "A forged entry").

What is left, as docs/DESIGN.md says: an entry whose every rule holds is read as written, right-shaped false values
(a card's bandwidth changed, a drafting method of two acceptance figures where its file has three) and a value of
another type that the code answers from without failing alike: the trust of editing ``site-packages``.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable
from typing import Any


def holds(obj: object) -> bool:
    """Whether ``obj`` (an object a cache entry served: one of passprice's attrs classes, or a tuple of them) holds
    its class's writer rule (:data:`WRITER_RULES`; a tuple, each item's; a class without a rule holds). Cost: a dict
    look-up by class, then the rule (each reads its object's own fields: a header's 339 tensors are mapped in C).
    Raises nothing: a rule that raises on the object (a field of another type) is a rule that does not hold."""
    if type(obj) is tuple:
        return all(map(holds, obj))
    rule = _rule(type(obj))
    if rule is None:
        return True
    try:
        return bool(rule(obj))
    except Exception:
        return False


_RULES: dict[type, Callable[[Any], bool] | None] = {}


def _rule(cls: type) -> Callable[[Any], bool] | None:
    """``cls``'s writer rule (:data:`WRITER_RULES`, by its module and name), looked up once a class."""
    try:
        return _RULES[cls]
    except KeyError:
        rule = _RULES[cls] = WRITER_RULES.get(f"{cls.__module__}.{cls.__qualname__}")
        return rule


# --- what each writer always makes hold between the fields it writes ------------------------------------------------


def _header_rule(header: Any) -> bool:
    """:class:`~passprice.gguf_records.GGUFHeader`: its tensor index is its tensor table's (a dict of each tensor
    under its own name, as ``__attrs_post_init__`` builds it: a table one tensor short under the whole table's index
    priced the file as another), and its value types name its metadata's keys."""
    index, tensors = header._index, header.tensors
    return (
        type(index) is dict
        and type(tensors) is tuple
        and len(index) == len(tensors)
        and all(map(operator.is_, map(index.get, map(operator.attrgetter("name"), tensors)), tensors))
        and header.value_types.keys() == header.metadata.keys()
    )


def _step_rule(step: Any) -> bool:
    """:class:`~passprice.decode.DecodeStep`: one held figure of each class, in the classes' order (as ``decode``
    builds it); its layers each of a distinct index, and each stage's layer one of them."""
    held: list[enum.Enum] = [h.held for h in step.held]
    every: list[enum.Enum] = list(type(held[0])) if held else []
    indices = [layer.index for layer in step.layers]
    known = set(indices)
    return (
        bool(held) and held == every
        and len(known) == len(indices)
        and all(s.layer is None or s.layer in known for s in step.stages)
    )


def _spec_rule(spec: Any) -> bool:
    """:class:`~passprice.servings.ServingSpec`: no context mix, or a non-empty tuple that its reader's checks pass
    (``servings._check_contexts``: shares summing to 1, positions within their limits and the shared prefix)."""
    from passprice.servings import _check_contexts

    if spec.contexts is not None and (type(spec.contexts) is not tuple or not spec.contexts):
        return False
    _check_contexts(spec, "")  # raises on a mix the reader refuses: :func:`holds` takes that as not holding
    return True


def _shape_rule(shape: Any) -> bool:
    """:class:`~passprice.serving.PassShape`: its facts the draft's acceptance figures, one for each drafted row
    (``draft.acceptance.1`` … ``rows_per_sequence − 1``), then the routing record's two (``ROUTING_PATHS``) when it
    was priced under one; its float MACs each named once; its expert streams keyed as ``serving.pass_shape`` keys
    them — the main layers' routing every row of a sequence (``rows_per_sequence`` rows, read once), an MTP block's
    one row a drafting step — each key once; and a pass priced under a routing record streams its experts (no stream
    for a routed pass is the dense price of a mixture of experts)."""
    routed: tuple[str, ...] = ()
    if shape.routing_name:  # a pass routed so read its record, and the module: a dense one imports nothing
        from passprice.routing import ROUTING_PATHS

        routed = ROUTING_PATHS
    streams = [(e.rows, e.reads, e.draft) for e in shape.experts]
    rows = float(shape.rows_per_sequence)
    drafts = tuple(f"draft.acceptance.{i}" for i in range(1, shape.rows_per_sequence))
    return (
        tuple(name for name, _ in shape.facts) == drafts + routed
        and len({name for name, _ in shape.float_macs}) == len(shape.float_macs)
        and len(set(streams)) == len(streams)
        and all((r == 1.0 if d else (r == rows and n == 1.0)) for r, n, d in streams)
        and (not shape.routing_name or bool(streams))
    )


def _method_rule(method: Any) -> bool:
    """:class:`~passprice.drafts.DraftMethod`: a tuple of 1 to 64 acceptance figures, as its schema has them."""
    return type(method.acceptance) is tuple and 1 <= len(method.acceptance) <= 64


#: Each class's writer rule by ``module.qualname``: called on an object of the class a cache entry served (a tuple
#: entry's items each); ``False`` (or an exception) and the entry is a miss, built again and stored over.
WRITER_RULES: dict[str, Callable[[Any], bool]] = {
    "passprice.gguf_records.GGUFHeader": _header_rule,
    "passprice.decode.DecodeStep": _step_rule,
    "passprice.servings.ServingSpec": _spec_rule,
    "passprice.serving.PassShape": _shape_rule,
    "passprice.drafts.DraftMethod": _method_rule,
}
