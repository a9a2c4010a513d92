"""Built-in intent packs (YAML), shipped as package data of ``dsh_packs``."""
