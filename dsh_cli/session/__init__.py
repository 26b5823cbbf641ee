"""A live session's life, below the front doors: ``cli`` and ``chat`` both use it.

    opening.py     open_session: the runtime the agent options ask for, or one error line
    interrupts.py  run_main, session_guard, on_termination: signals end the main task and
                   leave open question batches resumable

Import the module you need directly; this package re-exports nothing.
"""
