"""The interactive chat (``dsh chat``): the REPL, its prompt and slash commands.

    app.py       ``dsh chat`` put together: settings, runtime, provider, prompt, renderer
    repl.py      the chat loop: read a message, run a turn, show it as it streams
    prompt.py    where the next message is read: a prompt-toolkit prompt, or plain lines
    commands.py  the slash commands (``/help``, ``/exit``, ``/new``, ``/model``, ...)
    alert.py     the alert when a question appears, for a human who looked away

Nothing is imported here, so ``dsh --help`` never pays for prompt-toolkit.
"""
