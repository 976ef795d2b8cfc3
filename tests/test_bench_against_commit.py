"""``benchmarks/bench_against_commit.py``: the before/after speed of a change.

The alternating order, the ratios, the refusals of a bad ``--base`` or ``--parts``, the
renamed copy of the base package (its imports point at itself), and every case of the
gradient-call part run through the current API on a tiny set (a renamed argument must fail
here, not in the middle of a half-hour measurement)."""

from __future__ import annotations

import numpy as np
import pytest

SCRIPT = "benchmarks/bench_against_commit.py"


@pytest.fixture(scope="module")
def against(repo_module):
    return repo_module(SCRIPT)


def test_the_order_alternates_so_that_none_always_runs_first(against):
    seen = []
    times = against._interleaved({n: (lambda n=n: seen.append(n) or 1.0) for n in ("a", "b", "c")}, 4)
    assert seen == list("abc" "cba" "abc" "cba")
    assert times == {n: [1.0] * 4 for n in "abc"}


def test_rows_are_ratios_of_medians_with_the_quartiles_of_adjacent_ratios(against):
    times = {"base": {"x": [1.0, 2.0, 4.0]}, "new": {"x": [3.0, 2.0, 4.0]}}
    row = against.paired_rows(times, ["x"])["x"]
    assert row["base_s"] == 2.0 and row["new_s"] == 3.0
    assert row["ratio"] == pytest.approx(1.5)
    assert row["pair_quartiles"] == pytest.approx([1.0, 2.0])  # of the ratios 3, 1, 1


def test_a_base_that_is_not_a_commit_is_refused_by_name(against):
    with pytest.raises(SystemExit, match="--base 'no-such-ref-x1' is not a commit"):
        against.main(["--base", "no-such-ref-x1", "--parts", "calls"])


def test_an_unknown_part_is_refused_with_the_choices(against, capsys):
    with pytest.raises(SystemExit) as err:
        against.main(["--parts", "calls,speedy"])
    assert err.value.code == 2
    assert "unknown part(s) speedy; choose among calls, training, compile" in capsys.readouterr().err


def test_an_unknown_call_case_is_refused_with_the_choices(against, capsys):
    with pytest.raises(SystemExit) as err:
        against.main(["--parts", "calls", "--cases", "ndcg", "ndgc"])
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert "unknown call case(s) ndgc; choose among ndcg | ap | rr" in message


def test_the_compile_part_runs_the_metrics_asked_for(against, capsys):
    child = against.compile_child(["err"])
    assert 'for m in ("err",):' in child and "ndcg" not in child
    assert against.compile_child() == against.COMPILE_CHILD  # the snippet of bench_objective_speed.py as it is
    with pytest.raises(SystemExit) as err:
        against.main(["--parts", "compile", "--compile-metrics", "ndcg", "ndgc"])
    assert err.value.code == 2
    assert "--compile-metrics 'ndgc': unknown" in capsys.readouterr().err


def test_the_base_copy_imports_itself_not_the_working_tree(against, tmp_path):
    pkg = tmp_path / "gbrank"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('import gbrank.sub\nLAZY = {"x": "gbrank.sub:x"}\nNOTE = "gbrank here"\n')
    (pkg / "sub" / "__init__.py").write_text("from gbrank import LAZY\n    from gbrank.sub import y\n")
    home = against.renamed_copy(tmp_path)
    base = home / against.BASE_PACKAGE
    assert (base / "__init__.py").read_text() == ('import gbrank_base.sub\nLAZY = {"x": "gbrank_base.sub:x"}\n'
                                                  'NOTE = "gbrank here"\n')
    assert (base / "sub" / "__init__.py").read_text() == ("from gbrank_base import LAZY\n"
                                                          "    from gbrank_base.sub import y\n")
    assert (pkg / "__init__.py").read_text().startswith("import gbrank.sub")  # the checkout is left as it was


def test_every_call_case_runs_on_the_current_api(against):
    import gbrank
    import gbrank.backends
    import gbrank.evaluation
    import gbrank.lambdas

    rng = np.random.default_rng(0)
    sizes = np.array([5, 9, 3, 12])
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(0, 5, ptr[-1]).astype(float)
    times = against.gradient_calls({"base": gbrank, "new": gbrank}, y, ptr, rng.normal(size=ptr[-1]), 2)
    for tree in ("base", "new"):
        assert set(times[tree]) == set(against.CALL_CASES)
        assert all(len(ts) == 2 and all(0.0 < s < 60.0 for s in ts) for ts in times[tree].values())
