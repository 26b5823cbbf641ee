"""The results table: ratios of medians, budgets judged on medians, min and max shown."""

from __future__ import annotations

from bench.table import Row, above, at_least, at_most, format_table


def test_ratio_and_budget_use_the_medians_of_both_sides():
    row = Row("start-up", "ms", [10.0, 12.0, 50.0], [10.0, 9.0, 11.0], "floor",
              "≤ 1.3 × floor", at_most(1.3))
    assert row.ratio == 12.0 / 10.0
    assert row.met is True
    assert Row("x", "ms", [14.0], [10.0], "floor", "", at_most(1.3)).met is False


def test_throughput_budgets_are_floors_and_absolute_rows_need_no_base():
    assert Row("k", "keys/s", [3000.0], [1000.0], "peer", "", at_least(3)).met is True
    assert Row("k", "keys/s", [2999.0], [1000.0], "peer", "", at_least(3)).met is False
    assert Row("r", "batches/s", [999.0], check=above(1000)).met is False
    assert Row("r", "batches/s", [999.0]).met is None  # shown for context only


def test_a_paired_row_takes_the_median_of_each_runs_own_ratio():
    # the machine got twice as slow from the third run on, whose floor was taken just before
    dsh, base = [10.5, 10.5, 21.0, 21.0, 21.0], [10.0, 10.0, 10.0, 20.0, 20.0]
    unpaired = Row("frame", "ms", dsh, base, "none", "", at_most(1.1))
    paired = Row("frame", "ms", dsh, base, "none", "", at_most(1.1), paired=True)
    assert unpaired.ratio == 2.1 and unpaired.met is False
    assert paired.ratio == 1.05 and paired.met is True
    assert Row("f", "ms", [12.0, 12.0], [10.0, 10.0], "none", "", at_most(1.1),
               paired=True).met is False
    assert "1.05× paired" in format_table([paired])


def test_a_missing_peer_never_counts_as_met():
    assert Row("k", "keys/s", [5000.0], [], "peer", "", at_least(3)).met is False


def test_table_shows_median_min_max_ratio_budget_and_verdict():
    table = format_table([
        Row("dsh --help", "ms", [50.0, 60.0, 55.0], [45.0, 50.0, 40.0], "click --help",
            "≤ 1.3 × floor", at_most(1.3)),
        Row("memory", "MB", [41.0], [40.0], "floor", "≤ 1.1 × floor", at_most(1.0)),
        Row("context", "ms", [1.0]),
    ])
    lines = table.splitlines()
    assert lines[0].split()[:2] == ["measure", "dsh"]
    assert "55.0 ms [50.0–60.0]" in lines[2] and "click --help: 45.0 ms [40.0–50.0]" in lines[2]
    assert "1.22×" in lines[2] and lines[2].endswith("met")
    assert lines[3].endswith("NOT MET") and lines[4].endswith("(info)")
