"""Everything that reaches the model's context is escaped, on every surface (docs/SECURITY.md)."""
