"""Runnable examples: `python -m nuvec.examples.<name>`."""
