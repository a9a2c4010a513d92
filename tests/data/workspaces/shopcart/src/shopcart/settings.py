"""Runtime settings, read from the environment."""

import os

MAX_DISCOUNT_PERCENT = int(os.environ.get("SHOPCART_MAX_DISCOUNT", "50"))
CURRENCY = os.environ.get("SHOPCART_CURRENCY", "EUR")
