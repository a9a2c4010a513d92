"""Discounts and totals."""

from __future__ import annotations

from shopcart.cart import Cart
from shopcart.settings import MAX_DISCOUNT_PERCENT


def apply_discount(cart: Cart, percent: int) -> int:
    """The cart total after a percentage discount, in cents."""
    percent = min(percent, MAX_DISCOUNT_PERCENT)
    return cart.total_cents() * (100 - percent) // 100
