"""A demo package for the suggester tests."""

__version__ = "1.2.3"
