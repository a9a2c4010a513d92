"""The task lead (docs/SCHEME.md, "The task lead"): what a task text names (``mentions``), the
workspace ranked against it (``ranker``), and the offer once per session (``offer``)."""
