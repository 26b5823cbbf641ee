"""dsh's benchmark suite: every row of ``spec/performance.md`` against a floor or peer.

Run ``python -m bench`` (a few minutes on 2 cores) or ``python -m bench --smoke`` (each
measure once, tiny sizes, a few seconds: it only checks that the measures work).
"""
