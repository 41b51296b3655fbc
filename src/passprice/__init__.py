"""passprice: price one decode pass of a large language model on one accelerator card.

Every figure a price rests on is a cited fact with a provenance; a price is only as strong as its weakest fact.

The first thing this package's import does, in the ``passprice`` console script (or ``python -m passprice``) alone,
is put passprice's Ctrl-C handling in place (:func:`passprice.entry.early`): a Ctrl-C from then on exits 130 with one
line. Before it, from the moment ``site`` reads the environment's ``.pth`` files, ``passprice_sigint.pth`` does the
same (session 27: the script's own ``import re`` is covered); the interpreter's start-up before that is out of reach.
"""

from passprice import entry as _entry

_entry.early()

__version__ = "0.1.0"

#: Version of the pricing model (the port of the seed ``serving.rs``). A lock records it; when it differs at
#: reproduction, ``passprice reproduce`` shows which terms moved.
PRICING_MODEL_VERSION = "1"
