"""Core of the demo package."""


class Session:
    """A session."""

    def merge_setting(self, key, value):
        return {key: value}
