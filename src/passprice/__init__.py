"""passprice: price one decode pass of a large language model on one accelerator card.

Every figure a price rests on is a cited fact with a provenance; a price is only as strong as its weakest fact.
"""

__version__ = "0.1.0"

#: Version of the pricing model (the port of the seed ``serving.rs``). A lock records it; when it differs at
#: reproduction, ``passprice reproduce`` shows which terms moved.
PRICING_MODEL_VERSION = "1"
