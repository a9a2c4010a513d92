"""Tenant identity in a shared store (docs/SECURITY.md: tenant identity)."""
