"""The interactive chat (``dsh chat``): the REPL, its prompt and slash commands.

Nothing is imported here, so ``dsh --help`` never pays for prompt-toolkit.
"""
