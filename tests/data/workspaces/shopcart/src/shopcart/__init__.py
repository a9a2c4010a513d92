"""shopcart: carts, line items and pricing."""

from shopcart.cart import Cart, LineItem
from shopcart.pricing import apply_discount

__version__ = "0.4.1"
__all__ = ["Cart", "LineItem", "apply_discount"]
