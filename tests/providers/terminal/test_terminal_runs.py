"""``runs``: the fragments a line ends with, marked ``RUN``, drawn as one screen cell each.

The window is drawn onto a real prompt-toolkit ``Screen``, as its renderer would draw it;
frames on a terminal are checked in ``test_terminal_preview.py``.
"""

from __future__ import annotations

from prompt_toolkit.layout import FormattedTextControl
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen, WritePosition

from dsh_cli.providers.terminal.runs import RunWindow, take_runs
from dsh_cli.providers.terminal.text import CURSOR, RUN


def draw(lines, width: int, height: int = 5) -> Screen:
    """``lines`` drawn by a ``RunWindow`` into a ``width`` × ``height`` screen."""
    window: RunWindow

    def fragments():
        window.runs.clear()
        out = []
        for number, line in enumerate(lines):
            if number:
                out.append(("", "\n"))
            out.extend(take_runs(line, number, window.runs))
        return out

    window = RunWindow(FormattedTextControl(fragments), wrap_lines=False)
    screen = Screen()
    window.write_to_screen(screen, MouseHandlers(), WritePosition(0, 0, width, height), "",
                           False, None)
    return screen


def test_the_fragments_a_line_ends_with_are_one_cell_each_and_the_row_ends_where_they_do():
    screen = draw([[("", "› 1."), (f"{RUN} class:more", "   │ "), (f"{RUN} ", "端口 x")]], 40)
    row = screen.data_buffer[0]
    assert "".join(row[x].char for x in range(4)) == "› 1."
    assert (row[4].char, row[4].style, row[4].width) == ("   │ ", "class:more", 5)
    assert (row[9].char, row[9].width) == ("端口 x", 6)
    assert row[14].char == ""  # the run's last cell is marked: the row ends at column 14
    assert all(x not in row for x in (5, 10, 13))  # and nothing else under it is written


def test_a_line_with_no_run_is_the_window_s_own_text():
    line = [("", "plain"), (f"{RUN} ", "run"), ("", " after")]  # a run not at the end
    assert take_runs(line, 0, runs := []) is line and runs == []
    row = draw([line], 40).data_buffer[0]
    assert "".join(row[x].char for x in range(14)) == "plainrun after"


def test_a_run_cut_by_the_window_s_edge_is_drawn_a_cell_a_character_up_to_it():
    row = draw([[("", "ab"), (f"{RUN} ", "cdef端")]], 7).data_buffer[0]
    assert [row[x].char for x in range(6)] == ["a", "b", "c", "d", "e", "f"]
    assert 6 not in row  # the wide character does not fit in the last cell: left out


def test_an_empty_run_draws_nothing():
    row = draw([[("", "ab"), (f"{RUN} ", "")]], 10).data_buffer[0]
    assert sorted(row) == [0, 1]


def test_runs_follow_the_window_s_scroll_and_rows_outside_it_are_not_drawn():
    lines = [[(f"{RUN} ", f"line {n}")] for n in range(6)]
    lines[5].insert(0, CURSOR)  # the window scrolls to keep the cursor in view
    screen = draw(lines, 20, height=3)
    assert [screen.data_buffer[y][0].char for y in range(3)] == ["line 3", "line 4", "line 5"]
    assert 3 not in screen.data_buffer  # nothing below the window
