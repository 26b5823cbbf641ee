"""A live session's life, below the front doors: ``cli`` and ``chat`` both use it.

    opening.py     open_session: the runtime the agent options ask for, or one error line
    tools.py       a session's tools beyond ``ask_user_question``: MCP servers, the gate
    later.py       async batches at the end of a turn: their answers taken up, or what is left
    interrupts.py  run_main, session_guard, on_termination: signals end the main task and
                   leave open question batches resumable

Import the module you need directly; this package re-exports nothing.
"""
