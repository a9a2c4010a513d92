"""Recorded agent runs as dsh/postExecute sequences: the converters (one per agent family, over
the shared ``core``) and their data (``README.md``)."""
