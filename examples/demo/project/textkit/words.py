"""Counting words."""


def word_count(text):
    """Return the number of whitespace-separated words in ``text``."""
    return len(text.split())
