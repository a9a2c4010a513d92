"""Every config path is untrusted, in every command (docs/SECURITY.md: config paths)."""
