"""dsh: a terminal agent harness built around structured human-in-the-loop questions."""

__version__ = "0.1.0"
