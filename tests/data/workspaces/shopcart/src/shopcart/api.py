"""The HTTP-facing checkout function."""

from __future__ import annotations

from shopcart.cart import Cart
from shopcart.pricing import apply_discount
from shopcart.settings import CURRENCY


def checkout(cart: Cart, coupon_percent: int = 0) -> dict[str, object]:
    merged = cart.merge_items()
    return {"lines": len(merged), "total": apply_discount(cart, coupon_percent), "currency": CURRENCY}
