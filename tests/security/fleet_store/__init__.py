"""The fleet store's contents are untrusted (docs/SECURITY.md: the fleet store)."""
