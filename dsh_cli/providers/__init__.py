"""Question providers: the UIs and answer sources behind the seam.

    terminal/            the interactive question UI on a terminal (prompt-toolkit)
    plain.py             PlainProvider: line mode (``--plain``, ``TERM=dumb``, screen readers)
    plain_permission.py  permission requests as numbered plain lines
    line_reader.py       LineReader: lines of a blocking stream, for asyncio code
    pipe_writer.py       PipeWriter: bytes to a descriptor; a write never blocks the loop
    relay.py             JsonLinesRelay: a program answers over JSON lines (``spec/relay.md``)
    frames.py            the frames a controller sends, parsed and dispatched by one set of rules
    web/                 the browser surface: the question composer and the chat
    answers_file.py      answers by question id from a JSON file (``--answers FILE``)

Each provider module imports only what its own surface needs (prompt-toolkit only in the
terminal provider), so importing one never drags in the others.
"""
