"""Carts and their line items."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LineItem:
    sku: str
    quantity: int
    unit_cents: int


@dataclass
class Cart:
    items: list[LineItem] = field(default_factory=list)

    def add(self, item: LineItem) -> None:
        self.items.append(item)

    def merge_items(self) -> list[LineItem]:
        """One line per SKU, quantities summed."""
        merged: dict[str, LineItem] = {}
        for item in self.items:
            if item.sku in merged:
                merged[item.sku].quantity += item.quantity
            else:
                merged[item.sku] = LineItem(item.sku, item.quantity, item.unit_cents)
        return list(merged.values())

    def total_cents(self) -> int:
        return sum(i.quantity * i.unit_cents for i in self.merge_items())
