"""The ``gbrank`` command line as its ecosystem's users expect it: the names asked for are
the names printed (trec_eval's in, trec_eval's out), every name ``gbrank.evaluate_run``
takes is taken by ``-m``, a pipe closed early ends quietly, every option has one help text
and its default once, messages count in the right number, one query has no spread; and
sparse matrices given to the array validators are named with the fix."""

from __future__ import annotations

import argparse
import io
import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import gbrank
import gbrank.lambdas
from gbrank import cli
from gbrank.evaluation import DEFAULT_RUN_METRICS
from gbrank.metrics import METRICS

SCRIPT = pathlib.Path(sys.executable).parent / "gbrank"


def _command() -> list[str]:
    """The installed ``gbrank`` script next to this interpreter, else the module."""
    return [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gbrank.cli"]


def _run_cli(*argv):
    out = io.StringIO()
    status = cli.main([str(a) for a in argv], out=out)
    return status, out.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A run and qrels of 40 queries: graded grades, unjudged and unretrieved documents, ties."""
    tmp = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(7)
    run, qrels = [], []
    for q in range(40):
        for d in range(30):
            run.append(f"q{q} Q0 d{d} {d + 1} {rng.integers(0, 12) / 4:.2f} sys")
            if rng.random() < 0.7:
                qrels.append(f"q{q} 0 d{d} {rng.integers(0, 3) * (rng.random() < 0.4)}")
        qrels.append(f"q{q} 0 unretrieved{q} {q % 3}")
    (tmp / "run").write_text("\n".join(run) + "\n")
    (tmp / "qrels").write_text("\n".join(qrels) + "\n")
    return tmp / "run", tmp / "qrels"


# ---------------------------------------------------------------------------------------
# 1. the names asked for are the names printed


TREC_IN_OUT = [("map", "map"), ("ndcg_cut.10", "ndcg_cut_10"), ("P.5", "P_5")]


def _names_in_every_format(files, asked, n):
    """{format: the metric names it prints} for ``-m asked...`` (n metrics)."""
    run, qrels = files
    flags = [a for name in asked for a in ("-m", name)]
    seen = {}
    _, text = _run_cli("evaluate", run, qrels, *flags, "--per-query")
    table, per_query = text.split("\n\n")
    seen["text"] = [line.split()[0] for line in table.splitlines()[3:]]
    seen["text --per-query"] = per_query.splitlines()[0].split()[:n]
    _, text = _run_cli("evaluate", run, qrels, *flags, "--format", "csv")
    seen["csv"] = pd.read_csv(io.StringIO(text), index_col="metric").index.tolist()
    _, text = _run_cli("evaluate", run, qrels, *flags, "--format", "csv", "--per-query")
    seen["csv --per-query"] = pd.read_csv(io.StringIO(text), index_col="qid").columns.tolist()[:n]
    _, text = _run_cli("evaluate", run, qrels, *flags, "--format", "json", "--per-query")
    doc = json.loads(text)
    seen["json"] = list(doc["summary"])
    seen["json --per-query"] = list(doc["per_query"]["q0"])[:n]
    _, text = _run_cli("evaluate", run, qrels, *flags, "--format", "trec")
    seen["trec"] = [line.split()[0] for line in text.splitlines()]
    _, text = _run_cli("evaluate", run, qrels, *flags, "-q")
    lines = [line.split() for line in text.splitlines()]
    seen["-q"] = [m for m, q, _ in lines if q == "q0"]
    seen["-q all"] = [m for m, q, _ in lines if q == "all"]
    return seen


@pytest.mark.parametrize("asked, printed", [
    ([a for a, _ in TREC_IN_OUT], [p for _, p in TREC_IN_OUT]),             # trec_eval's in, trec_eval's out
    (["ndcg@10", "ap", "p@5", "rbp@0.9"], ["ndcg@10", "ap", "p@5", "rbp@0.9"]),  # gbrank's
    (["mrr", "map@10", "hit_rate@10", "precision@5"], ["mrr", "map@10", "hit_rate@10", "precision@5"]),  # ranx's
    (["P.5,10", "recall.100"], ["P_5", "P_10", "recall_100"]),                # trec_eval's list form
    (["NDCG@10", "Rprec"], ["NDCG@10", "Rprec"]),                            # as typed
])
def test_every_format_prints_the_names_asked_for(files, asked, printed):
    for fmt, names in _names_in_every_format(files, asked, len(printed)).items():
        assert names == printed, fmt


def test_the_default_list_of_the_help_is_what_is_printed(files):
    help_text = " ".join(cli.build_parser()._subparsers._group_actions[0].choices["evaluate"]
                         .format_help().split())
    listed = re.search(r"\(default: ([^)]*)\)", help_text[help_text.index("-m NAME, --metric NAME"):]).group(1)
    assert listed.split() == list(DEFAULT_RUN_METRICS)
    _, text = _run_cli("evaluate", *files, "--format", "csv")
    assert pd.read_csv(io.StringIO(text), index_col="metric").index.tolist() == list(DEFAULT_RUN_METRICS)


def test_display_names_of_columns_the_evaluator_expands():
    """A trec_eval family or set expanded by the evaluator (``-m P``, ``-m all_trec``) is
    printed with trec_eval's names; a measure known only by its trec_eval name keeps it."""
    assert cli._display_names(["P"], ["p@5", "p@10"]) == ["P_5", "P_10"]
    assert cli._display_names(["all_trec"], ["ap", "ndcg@10", "rr", "rprec", "r@100", "f1", "success@1",
                                             "ap@5", "num_ret"]) == \
        ["map", "ndcg_cut_10", "recip_rank", "Rprec", "recall_100", "set_F", "success_1", "map_cut_5", "num_ret"]
    assert cli._display_names(["rr@3", "ndcg"], ["rr@3", "ndcg"]) == ["rr@3", "ndcg"]


# ---------------------------------------------------------------------------------------
# 2. every name evaluate_run takes, the command line takes, with the same values


def _gbrank_names():
    """Every family of gbrank.metrics, with a parameter where it takes one."""
    names = []
    for family, record in sorted(METRICS.items()):
        if record.param == "k?":
            names += [family, f"{family}@5"]
        elif record.param == "k":
            names.append(f"{family}@5")
        elif record.param == "p":
            names.append(f"{family}@0.9")
        else:
            names.append(family)
    return names


def _alias_names():
    """Every alias of every family (trec_eval's, ranx's), with a parameter where it takes one."""
    names = []
    for family, record in sorted(METRICS.items()):
        for alias in record.aliases:
            if alias.endswith("_"):
                names.append(alias + "5")
            elif record.param == "k":
                names.append(f"{alias}@5")
            elif record.param == "k?":
                names += [alias, f"{alias}@5"]
            else:
                names.append(alias)
    return names


TREC_EVAL_NAMES = ["map", "map_cut_10", "ndcg", "ndcg_cut_10", "recip_rank", "P_5", "recall_100", "Rprec",
                   "bpref", "success_1", "set_F"]
TREC_EVAL_DOT = {"P.5": ["P_5"], "P.5,10": ["P_5", "P_10"], "recall.10,100": ["recall_10", "recall_100"],
                 "map_cut.10": ["map_cut_10"], "ndcg_cut.3,10": ["ndcg_cut_3", "ndcg_cut_10"],
                 "success.1,5": ["success_1", "success_5"]}
RANX_NAMES = ["mrr", "map", "map@10", "ndcg@10", "hit_rate@10", "precision@5", "recall@10", "r-precision",
              "f1@10", "mrr@3"]


@pytest.mark.parametrize("name", sorted(set(_gbrank_names() + _alias_names() + TREC_EVAL_NAMES + RANX_NAMES)
                                        | set(TREC_EVAL_DOT)))
def test_every_name_evaluate_run_takes_the_command_line_takes(files, name, capsys):
    run, qrels = files
    expanded = TREC_EVAL_DOT.get(name, [name])
    try:
        direct = gbrank.evaluate_run(run, qrels, expanded)
    except ValueError as exc:  # the rank statistics, refused for runs: refused alike, as an error line
        assert "need every relevant document ranked" in str(exc)
        status, _ = _run_cli("evaluate", run, qrels, "-m", name)
        err = capsys.readouterr().err
        assert status == 2 and err.startswith("gbrank evaluate: error: ") and "need every relevant" in err
        return
    status, text = _run_cli("evaluate", run, qrels, "-m", name, "--format", "json", "--per-query")
    assert status == 0, capsys.readouterr().err
    doc = json.loads(text)
    if len(direct.metrics) == len(expanded):  # one column per name: printed as asked
        printed = expanded
    else:  # a bare trec_eval family (success: success_1, _5, _10): printed with trec_eval's names
        printed = cli._display_names(expanded, direct.metrics)
        assert all(p.startswith(f"{name}_") for p in printed), printed
    assert list(doc["summary"]) == printed
    for shown, column in zip(printed, direct.metrics):
        ours = [doc["per_query"][str(q)][shown] for q in direct.per_query.index]
        np.testing.assert_array_equal(ours, direct.per_query[column].to_numpy(), err_msg=name)


def test_the_names_of_the_help_and_the_issue(files):
    """The examples of ``gbrank evaluate --help`` and the names of issue 26, one run each."""
    run, qrels = files
    for name in ("rbp@0.9", "nrbp@0.95", "ndcg@10", "ap", "rr", "p@5", "bpref", "err@20", "map", "ndcg_cut.10",
                 "P.5,10", "recall.100", "recip_rank", "Rprec", "success.1", "set_F", "mrr", "map@10",
                 "hit_rate@10", "f1@10"):
        status, _ = _run_cli("evaluate", run, qrels, "-m", name)
        assert status == 0, name


@pytest.mark.parametrize("given, expanded", [
    (["P.5,10"], ["P_5", "P_10"]),
    (["recall.100", "map_cut.5"], ["recall_100", "map_cut_5"]),
    (["rbp@0.9", "nrbp@0.95", "rbp_graded@0.8"], ["rbp@0.9", "nrbp@0.95", "rbp_graded@0.8"]),
    (["map@10", "ndcg@10", "ndcg", "map"], ["map@10", "ndcg@10", "ndcg", "map"]),
    (["iprec_at_recall.0,0.5,1"], ["iprec_at_recall_0.00", "iprec_at_recall_0.50", "iprec_at_recall_1.00"]),
    (["Rprec_mult.0.2"], ["Rprec_mult_0.20"]),
    (["ndcg.10", "P.x", "P."], ["ndcg.10", "P.x", "P."]),  # not trec_eval's cutoff form: the parser says why
])
def test_only_trec_evals_dot_form_of_its_families_is_expanded(given, expanded):
    assert cli._trec_names(given) == expanded


def test_a_bad_name_is_an_error_line(files, capsys):
    status, _ = _run_cli("evaluate", *files, "-m", "rbp@1.5")
    err = capsys.readouterr().err
    assert status == 2 and "the persistence of 'rbp@1.5' must lie strictly between 0 and 1" in err


# ---------------------------------------------------------------------------------------
# 3. a pipe closed early ends quietly


def test_a_pipe_closed_early_ends_quietly(tmp_path):
    """``gbrank evaluate ... -q | head -1`` through a real shell pipe, output far larger than
    the pipe's buffer: no traceback, exit status 141 (128 + SIGPIPE) or 0."""
    lines = [f"q{q} Q0 d{d} {d + 1} {1 - d / 100:.3f} s" for q in range(3000) for d in range(5)]
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 d{q % 5} 1\n" for q in range(3000)))
    command = " ".join(_command()) + " evaluate run qrels -q -m map -m P.5 -m ndcg_cut.10"
    done = subprocess.run(["bash", "-c", f"{command} | head -1; echo \"status=${{PIPESTATUS[0]}}\" >&2"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.stdout.split()[:2] == ["map", "q0"] and len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert re.search(r"status=(141|0)\b", done.stderr), done.stderr
    # the same through a pipe this process closes after one line
    proc = subprocess.Popen([*_command(), "evaluate", "run", "qrels", "-q", "-m", "map"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().split()[:2] == ["map", "q0"]
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=300) == cli.EXIT_BROKEN_PIPE
    assert err == "", err


def test_output_to_a_pipe_read_to_the_end_is_whole(files):
    done = subprocess.run([*_command(), "evaluate", *map(str, files), "-q", "-m", "rbp@0.9", "-m", "P.5"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert len(done.stdout.splitlines()) == 2 * 40 + 2 and done.stdout.splitlines()[-1].startswith("P_5")


# ---------------------------------------------------------------------------------------
# 4. every option: one help text, its default once


def _parsers():
    """(prog, parser) of the command line and every sub-command, depth first."""
    todo = [cli.build_parser()]
    while todo:
        parser = todo.pop(0)
        yield parser.prog, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())


def _option_helps():
    for prog, parser in _parsers():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            text = formatter._expand_help(action) if action.help else ""
            yield f"{prog} {'/'.join(action.option_strings) or action.dest}", action, " ".join(text.split())


def test_the_parsers_walked_are_every_sub_command():
    assert {prog for prog, _ in _parsers()} == {"gbrank", "gbrank evaluate", "gbrank bench", "gbrank bench letor",
                                                "gbrank bench mf"}


@pytest.mark.parametrize("where, action, text", [pytest.param(*h, id=h[0]) for h in _option_helps()])
def test_every_option_has_one_help_text_and_its_default_once(where, action, text):
    assert text.strip(), f"{where} has no help"
    assert text.count("(default:") <= 1 and text.count("(default") <= 1, text
    for bad in ("default: None", "default: True", "default: False", "(default: [])"):
        assert bad not in text, f"{where}: {text}"
    if not action.option_strings:
        return
    if action.nargs == 0:  # a flag: the flag is the setting; no default to show
        assert "(default" not in text, f"{where}: {text}"
    elif action.default is not None:
        assert f"(default: {action.default})" in text, f"{where}: {text}"
    else:  # None means "chosen by --quick, the data or another option": the help says how
        assert "default" in text, f"{where} does not say what happens without it: {text}"


def test_the_full_help_pages_as_printed(tmp_path):
    """``--help`` of every sub-command, run as a program: no repeated or meaningless default."""
    for args in (["--help"], ["evaluate", "--help"], ["bench", "--help"], ["bench", "letor", "--help"],
                 ["bench", "mf", "--help"]):
        done = subprocess.run([*_command(), *args], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0 and done.stderr == ""
        page = " ".join(done.stdout.split())
        for bad in ("(default: None)", "(default: True)", "(default: False)"):
            assert bad not in page, (args, bad)
        assert not re.search(r"\(default[^()]*\) \(default", page), args  # "(default: all) (default: None)"
    assert "--learning-rate LEARNING_RATE learning rate" in " ".join(
        subprocess.run([*_command(), "bench", "letor", "--help"], capture_output=True, text=True,
                       timeout=300).stdout.split())


# ---------------------------------------------------------------------------------------
# 5. messages: the flags and the right number


def _counting_files(tmp_path, n):
    """n queries of each kind: only in the run, only in the qrels, without a relevant document;
    plus two ordinary queries."""
    run = [f"ok{i} Q0 d1 1 0.9 s\nok{i} Q0 d2 2 0.8 s" for i in range(2)]
    qrels = [f"ok{i} 0 d1 1" for i in range(2)]
    for i in range(n):
        run.append(f"runonly{i} Q0 d1 1 0.5 s")
        qrels.append(f"qrelsonly{i} 0 d1 1")
        run.append(f"norel{i} Q0 d1 1 0.5 s")
        qrels.append(f"norel{i} 0 d1 0")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    return tmp_path / "run", tmp_path / "qrels"


@pytest.mark.parametrize("n, words", [
    (1, ["1 run query has no qrels line and was left out",
         "1 qrels query has no run line: left out (-c scores them as empty runs)",
         "1 query has no relevant document in the qrels (scored by --empty zero)"]),
    (2, ["2 run queries have no qrels line and were left out",
         "2 qrels queries have no run line: left out (-c scores them as empty runs)",
         "2 queries have no relevant document in the qrels (scored by --empty zero)"]),
])
def test_notes_count_in_the_right_number(tmp_path, capsys, n, words):
    status, text = _run_cli("evaluate", *_counting_files(tmp_path, n), "-m", "map")
    err = capsys.readouterr().err
    assert status == 0
    for line in words:
        assert f"gbrank evaluate: note: {line}\n" in err, err
    assert text.startswith(f"# {2 + n} queries;")


def test_errors_name_the_flags(files, capsys):
    for flags, message in ((["-l", "0"], "-l (relevance level) must be a positive number"),
                           (["-l", "nan"], "-l (relevance level) must be a positive number"),
                           (["-M", "0"], "-M (depth) must be a positive integer"),
                           (["--confidence", "1"], "--confidence must lie strictly between 0 and 1"),
                           (["--digits", "17"], "--digits must be an integer from 0 to 16")):
        status, _ = _run_cli("evaluate", *files, *flags)
        assert status == 2 and f"gbrank evaluate: error: {message}" in capsys.readouterr().err, flags


# ---------------------------------------------------------------------------------------
# 6. one query: no spread, no interval


def test_one_query_has_no_spread(tmp_path, capsys):
    (tmp_path / "run").write_text("q1 Q0 a 1 0.5 s\nq1 Q0 b 2 0.4 s\n")
    (tmp_path / "qrels").write_text("q1 0 b 1\n")
    run, qrels = tmp_path / "run", tmp_path / "qrels"
    note = "one query: no spread, no interval"
    status, text = _run_cli("evaluate", run, qrels, "-m", "map", "-m", "P.5")
    assert status == 0 and text.startswith("# 1 query;")
    assert note in capsys.readouterr().err
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[3:] if not line.startswith("#")}
    assert rows == {"map": ["0.5000", "n/a", "n/a", "n/a", "1"], "P_5": ["0.2000", "n/a", "n/a", "n/a", "1"]}
    assert "inf" not in text and "0.0000" not in text and f"# {note}" in text
    status, text = _run_cli("evaluate", run, qrels, "-m", "map", "--format", "json")
    doc = json.loads(text)
    assert doc["summary"]["map"] == {"mean": 0.5, "std": None, "ci_low": None, "ci_high": None, "n": 1}
    assert any(n.startswith(note) for n in doc["notes"])
    status, text = _run_cli("evaluate", run, qrels, "-m", "map", "--format", "csv")
    assert text.splitlines()[1] == "map,0.500000,,,,1"
    capsys.readouterr()
    status, text = _run_cli("evaluate", run, qrels, "-m", "map", "-q")  # trec_eval's layout: no spread to miss
    assert text.split() == ["map", "q1", "0.5000", "map", "all", "0.5000"]
    assert note not in capsys.readouterr().err


def test_summary_of_one_list_has_nan_spread_and_two_lists_do_not():
    one = gbrank.evaluate([1, 0], [0.2, 0.1], [1, 1], ["ndcg", "ap"]).summary()
    assert one[["std", "ci_low", "ci_high"]].isna().all().all() and (one["n"] == 1).all()
    two = gbrank.evaluate([1, 0, 0, 1], [0.2, 0.1, 0.2, 0.1], [1, 1, 2, 2], ["ap"]).summary()
    assert two.loc["ap", "std"] > 0 and np.isfinite(two.loc["ap", ["ci_low", "ci_high"]].to_numpy(float)).all()


# ---------------------------------------------------------------------------------------
# 7. a scipy.sparse matrix where a dense array is expected


@pytest.mark.parametrize("kind", ["csr_matrix", "csr_array", "coo_matrix"])
def test_swap_deltas_names_a_sparse_input_and_the_fix(kind):
    make = getattr(sparse, kind)
    row = make(np.array([[0.0, 1.0, 2.0]]))
    with pytest.raises(TypeError, match=r"labels is a scipy\.sparse matrix of shape \(1, 3\); pass a dense 1-D "
                                        r"array, e\.g\. labels\.toarray\(\)\.ravel\(\)"):
        gbrank.lambdas.swap_deltas("ndcg", [0.3, 0.2, 0.1], row)
    with pytest.raises(TypeError, match=r"scores is a scipy\.sparse matrix of shape \(3, 1\)"):
        gbrank.lambdas.swap_deltas("ndcg", make(np.array([[0.3], [0.2], [0.1]])), [0, 1, 2])
    dense = gbrank.lambdas.swap_deltas("ndcg", [0.3, 0.2, 0.1], row.toarray().ravel())  # the fix works
    assert dense.shape == (3, 3) and dense[0, 2] > 0


def _validators():
    from gbrank import _validation as v

    row = sparse.csr_matrix(np.array([[1.0, 0.0, 2.0]]))
    square = sparse.csr_matrix(np.eye(3))
    return [
        ("as_1d_float", lambda: v.as_1d_float(row, "y"), r"y is a scipy\.sparse matrix .* y\.toarray\(\)\.ravel\(\)"),
        ("as_1d_float 2-d", lambda: v.as_1d_float(square, "y"), r"y is a scipy\.sparse matrix of shape \(3, 3\); "
                                                                r"pass a dense 1-D array with one value per row"),
        ("check_labels", lambda: v.check_labels(row), r"labels is a scipy\.sparse matrix"),
        ("check_same_length", lambda: v.check_same_length(X=square, y=[1, 2, 3]),
         r"X is a scipy\.sparse matrix of shape \(3, 3\); pass a dense 2-D array, e\.g\. X\.toarray\(\)"),
        ("group_by_qid", lambda: v.group_by_qid(row), r"qid is a scipy\.sparse matrix"),
        ("contiguous_groups", lambda: v.contiguous_groups(row), r"qid is a scipy\.sparse matrix"),
        ("check_group_ptr", lambda: v.check_group_ptr(sparse.csr_matrix(np.array([[0, 3]])), 3),
         r"group_ptr is a scipy\.sparse matrix"),
        ("check_query_ids", lambda: v.check_query_ids(row), r"qid is a scipy\.sparse matrix"),
        ("check_feature_matrix", lambda: v.check_feature_matrix(square),
         r"X is a scipy\.sparse matrix .* X\.toarray\(\)"),
        ("evaluate y_true", lambda: gbrank.evaluate(row, [0.1, 0.2, 0.3], [1, 1, 1]), r"y_true is a scipy\.sparse"),
        ("evaluate qid", lambda: gbrank.evaluate([1, 0, 2], [0.1, 0.2, 0.3], row), r"qid is a scipy\.sparse"),
        ("objective gradients", lambda: gbrank.lambdas.LambdaObjective("ndcg").gradients(row, [1.0, 0.0, 2.0], [0, 3]),
         r"scores is a scipy\.sparse matrix"),
    ]


@pytest.mark.parametrize("what, call, match", _validators(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_array_validators_name_a_sparse_input(what, call, match):
    with pytest.raises(TypeError, match=match) as info:
        call()
    assert "shape ()" not in str(info.value)
