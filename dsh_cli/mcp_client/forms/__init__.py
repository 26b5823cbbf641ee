"""The MCP client's forms: elicitation, URL consents, continuation.

    elicitation.py  an elicitation form as questions, and the answers as its content
    asking.py       a server's elicitations, asked through the seam of the calling tool
    url_mode.py     URL-mode elicitation: consent to open a server's page, and the opening
    resume.py       what a 2026-07-28 input-required round stores, so a resume continues it
"""
