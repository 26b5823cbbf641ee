"""Question providers: the UIs and answer sources behind the seam.

Each provider module imports only what its own surface needs (prompt-toolkit only in the
terminal provider), so importing one never drags in the others.
"""
