"""The metric record: one definition per family, every registry, parser and message
derived from it, and dispatch that raises on what it does not know."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from numba import njit

import gbrank
import gbrank.metrics as M
from gbrank.bounds import BOUND_METRICS
from gbrank.lambdas import DELTA_METRICS, LambdaObjective
from gbrank.lambdas._deltas import delta, delta_codes, prepare
from gbrank.lambdas._kernels import BOUND_NONE, list_gradients
from gbrank.lambdas._settings import settings
from gbrank.metrics import EXTERNAL, METRICS, Metric, parse, register, with_bounds, with_delta


@njit
def _top1(gains, rel, groups, k, p):
    """Toy metric: is the (expected) first item relevant?  nan without a relevant item."""
    if rel.sum() == 0.0:
        return np.nan
    first = groups[1]  # the first tie group holds positions 0 .. groups[1] - 1
    return rel[:first].sum() / first


TOY = Metric("top1", EXTERNAL, "", True, True, False, "1 if the first item is relevant", kernel=_top1,
             aliases=("first_hit",))


@pytest.fixture
def toy(monkeypatch):
    """Register the toy metric in a temporary copy of the registry."""
    monkeypatch.setattr(M._record, "METRICS", dict(METRICS))
    monkeypatch.setattr(M, "METRICS", M._record.METRICS)
    register(TOY)
    yield TOY


def test_toy_metric_registered_through_the_record_reaches_parser_evaluator_and_messages(toy):
    assert str(parse("TOP1")) == "top1" and str(parse("first_hit")) == "top1"
    with pytest.raises(ValueError, match="known metrics: .*top1"):
        parse("nope")
    with pytest.raises(ValueError, match="takes no parameter"):
        gbrank.evaluate([1, 0], [1.0, 0.0], [0, 0], ["top1@3"])
    y = [1, 0, 0, 0, 1, 0, 0, 0, 0]
    s = [0.1, 0.9, 0.2, 0.1, 0.9, 0.2, 0.5, 0.5, 0.1]
    q = [1, 1, 1, 2, 2, 2, 3, 3, 3]
    r = gbrank.evaluate(y, s, q, ["top1", "ap"], empty="zero")
    # q1: top is not relevant; q2: top relevant; q3: no relevant item -> empty policy
    assert r.per_query["top1"].tolist() == [0.0, 1.0, 0.0]
    assert r.per_query["n_relevant"].tolist() == [1, 1, 0]
    tied = gbrank.evaluate([1, 0], [0.5, 0.5], [0, 0], ["top1"])  # one tie group of two
    assert tied.per_query["top1"].iloc[0] == 0.5
    # not an objective, not bounded: the derived views and their messages know it
    assert "top1" not in with_delta() and "top1" not in with_bounds()
    with pytest.raises(ValueError, match="known objective metrics"):
        LambdaObjective("top1")


def test_registering_a_taken_name_or_an_inconsistent_record_raises(toy):
    with pytest.raises(ValueError, match="already registered"):
        register(TOY)
    with pytest.raises(ValueError, match="no gbrank kernel code"):
        Metric("x", EXTERNAL, "", True, True, False, "x")
    with pytest.raises(ValueError, match="delta must be None or one of"):
        Metric("x", 0, "", True, True, False, "x", delta="quadratic")
    with pytest.raises(ValueError, match="param must be one of"):
        Metric("x", 0, "q", True, True, False, "x")


def test_a_code_no_kernel_computes_is_refused_before_the_parallel_loop(toy):
    M._record.METRICS["bogus"] = Metric("bogus", 77, "", True, True, False, "a code nobody computes")
    with pytest.raises(ValueError, match="kernel code 77"):
        gbrank.evaluate([1, 0], [1.0, 0.0], [0, 0], ["bogus"])


def test_every_registry_is_a_view_of_the_record():
    assert DELTA_METRICS == {n: m.code for n, m in METRICS.items() if m.delta}
    assert BOUND_METRICS == {n: m.code for n, m in METRICS.items() if m.bounds}
    assert set(M.with_listwise()) <= set(with_delta())
    for rec in METRICS.values():
        if rec.listwise:
            assert METRICS[rec.listwise].bounds, f"{rec.name}'s listwise loss metric has no bounds"
        if rec.code != EXTERNAL:
            assert rec.code in M.KERNEL_CODES


def test_one_parser_for_every_kind_of_name():
    s = parse("lambda_nrbp@0.9+minmax", bounding=True, paradigm=True, role="loss")
    assert (s.paradigm, s.name, s.p, s.bounding, str(s)) == ("lambda", "nrbp", 0.9, "minmax",
                                                             "lambda_nrbp@0.9+minmax")
    assert str(parse("ap+minmax", bounding=True)) == "ap+minmax"
    assert parse("ndcg@10").k == 10 and parse("nrbp@0.95").p == 0.95
    with pytest.raises(ValueError, match="no '\\+bounding' suffix"):
        parse("ap+minmax")
    with pytest.raises(ValueError, match="unknown bounding"):
        parse("ap+zscore", bounding=True)
    with pytest.raises(ValueError, match="starts with one of"):
        parse("ndcg", paradigm=True, role="loss")
    with pytest.raises(ValueError, match="ends with '@'"):
        parse("ndcg@")
    with pytest.raises(TypeError, match="named by a string"):
        parse(3)


@pytest.mark.parametrize("name", sorted(with_delta()))
def test_objective_dispatch_comes_from_the_record(name):
    code, form = delta_codes(name)
    assert code == METRICS[name].code
    obj = LambdaObjective(name, p=0.9 if METRICS[name].param == "p" else None)
    g, _ = obj.gradients([0.2, 0.5, 0.1], [1, 0, 0], [0, 3])
    assert g[0] < 0 < g[1]


def test_unknown_codes_and_forms_raise_in_the_kernels():
    lab = np.array([1.0, 0.0, 1.0])
    aux = np.empty((5, 3))
    with pytest.raises(ValueError, match="no swap delta"):
        prepare(METRICS["auc"].code, lab, 0, 1.0, 0.0, 0, aux)
    with pytest.raises(ValueError, match="unknown swap-delta form"):
        delta(9, 0, 1, aux, 1.0, 0, 2)
    grad, hess = np.empty(3), np.empty(3)
    with pytest.raises(ValueError, match="unknown swap-delta form"):
        cfg = settings(METRICS["ndcg"].code, 9, 0.0, 1.0, 0, False, 0.01, False, 0, False, 0, 1.0, BOUND_NONE)
        list_gradients(np.array([0.3, 0.2, 0.1]), lab, cfg, 1.0, np.zeros(2), 0.0, 1.0, grad, hess)
    with pytest.raises(ValueError, match="unknown metric code"):
        M.metric_value(99, 0, 0.0, lab, lab, lab, np.arange(4), 0, 0.0)
    with pytest.raises(ValueError, match="'auc' has no LambdaRank swap delta; objectives exist for"):
        delta_codes("auc")


def test_expectation_is_the_kernels_tie_average_over_one_group():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 7))
        lab = rng.integers(0, 3, n).astype(float)
        gains = 2.0 ** lab - 1.0
        rel = (lab >= 1).astype(float)
        import itertools

        for name in ("ndcg", "ap", "rr", "auc", "nrbp_loss", "err", "bpref", "rprec"):
            code = METRICS[name].code
            vals = [M.metric_value(code, 0, 0.0, gains[list(o)], rel[list(o)], np.ones(n), np.arange(n + 1), 0,
                                   gains.max())
                    for o in itertools.permutations(range(n))]
            want = np.mean(vals)
            got = M.expectation(code, 0, 0.0, gains, rel, 0)
            assert (np.isnan(want) and np.isnan(got)) or abs(want - got) < 1e-12, (name, lab)


# ----------------------------------------------------------------------------------------
# a family added to the record reaches every place that must follow it, with no other edit


def _objective_name(rec) -> str:
    return f"{rec.name}@0.9" if rec.param == "p" else rec.name


@pytest.fixture
def twins():
    """Every family with a swap delta registered again under a new name, ``<name>_twin``, with
    its record's kernel code and fields: a new metric that reuses an existing definition.

    The modules whose public tables (``DELTA_METRICS``, ``DELTAS``) are snapshots of the record
    taken at import are imported first, so the twins never leak into them whatever the test order."""
    import importlib.util

    import gbrank.lambdas  # noqa: F401
    if importlib.util.find_spec("torch") is not None:
        import gbrank.torch  # noqa: F401
    added = {}
    try:
        for rec in list(with_delta().values()):
            added[rec.name] = register(replace(rec, name=f"{rec.name}_twin", aliases=()))
        yield added
    finally:
        for twin in added.values():
            METRICS.pop(twin.name, None)


@pytest.mark.parametrize("name", sorted(with_delta()))
def test_a_family_registered_at_run_time_reaches_objectives_torch_bounds_and_messages(twins, name):
    from gbrank.lambdas import swap_deltas

    torch = pytest.importorskip("torch")
    from gbrank.torch import lambda_loss
    from gbrank.torch._boosting import PaddedLists, lambda_gradients

    rec, twin = METRICS[name], twins[name]
    rng = np.random.default_rng(11)
    ptr = np.array([0, 7, 8, 15, 24])
    labels = rng.integers(0, 4, ptr[-1]).astype(float)
    labels[15:] = np.minimum(labels[15:], 2.0)  # a list without the top grade: ERR's parameter is the data's
    scores = np.round(rng.normal(size=ptr[-1]), 1)
    # objective: the kernels dispatch on the record's code, the parameter comes from the record's rule
    obj, ref = LambdaObjective(_objective_name(twin)), LambdaObjective(_objective_name(rec))
    assert obj.name == ref.name.replace(name, twin.name, 1)
    assert obj.kernel_parameter(labels) == ref.kernel_parameter(labels)
    g, h = obj.gradients(scores, labels, ptr)
    g0, h0 = ref.gradients(scores, labels, ptr)
    assert np.array_equal(g, g0) and np.array_equal(h, h0) and np.abs(g).max() > 0
    p = 0.9 if twin.param == "p" else None
    assert np.array_equal(swap_deltas(twin.name, scores[:7], labels[:7], p=p),
                          swap_deltas(name, scores[:7], labels[:7], p=p))
    # the torch path: the device gradients and the lambda loss
    lists = PaddedLists(labels, ptr)
    g1, h1 = lambda_gradients(obj, torch.tensor(scores), lists, parameter=obj.kernel_parameter(labels))
    np.testing.assert_allclose(g1.numpy(), g, rtol=0, atol=1e-12)
    np.testing.assert_allclose(h1.numpy(), h, rtol=0, atol=1e-12)
    s, y = torch.tensor(scores[:14].reshape(2, 7)), torch.tensor(labels[:14].reshape(2, 7))
    assert torch.equal(lambda_loss(s, y, metric=twin.name, p=p), lambda_loss(s, y, metric=name, p=p))
    # the messages that list objective metrics name it
    with pytest.raises(ValueError, match=f"known objective metrics.*: .*{twin.name}"):
        LambdaObjective("nope")
    with pytest.raises(ValueError, match=f"known: .*{twin.name}"):
        lambda_loss(s, y, metric="nope")
    # the bounds and the bounded objectives
    if not rec.bounds:
        return
    lb, lb0 = gbrank.bounds.prepare(twin.name, labels, ptr, p=p), gbrank.bounds.prepare(name, labels, ptr, p=p)
    for field_name in ("minimum", "maximum", "expectation", "degenerate"):
        assert np.array_equal(getattr(lb, field_name), getattr(lb0, field_name))
    gb, hb = LambdaObjective(_objective_name(twin) + "+minmax").gradients(scores, labels, ptr)
    gb0, hb0 = LambdaObjective(_objective_name(rec) + "+minmax").gradients(scores, labels, ptr)
    assert np.array_equal(gb, gb0) and np.array_equal(hb, hb0)
    with pytest.raises(ValueError, match=f"known metrics with bounds.*{twin.name}"):
        gbrank.bounds.prepare("nope", labels, ptr)


def test_contributing_names_every_file_that_holds_per_metric_code():
    """A file that dispatches on the families' kernel codes (it binds them by name, or imports
    them from the record) needs a branch for a new metric: CONTRIBUTING.md's recipes name it."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    recipe = (root / "CONTRIBUTING.md").read_text()
    per_metric = re.compile(r"METRICS\[\w+\]\.code for \w+ in \(|from \._record import \([^)]*\bNDCG\b")
    holders = sorted(str(f.relative_to(root)) for f in (root / "gbrank").rglob("*.py")
                     if per_metric.search(f.read_text()))
    assert "gbrank/lambdas/_deltas.py" in holders and "gbrank/bounds/_kernels.py" in holders
    missing = [f for f in holders + ["gbrank/metrics/_record.py", "gbrank/lambdas/_swap.py"] if f"`{f}`" not in recipe]
    assert not missing, f"CONTRIBUTING.md's recipes do not name {missing}"


# Comparisons with a family's name outside gbrank/metrics/ that are not about gbrank's
# metrics: (file under gbrank/, the comparison as ast.unparse writes it) -> why
NAME_COMPARISONS_ELSEWHERE = {
    ("evaluation/_trec_measures.py", "family.name in ('ndcg', 'ndcg_rel', 'Rndcg', 'G')"):
        "trec_eval's own measure names (its gain parameters), not gbrank families",
    ("torch/_sampled.py", "step not in ('warp', 'auc')"): "the two steps of the sampled SGD, not metrics",
    ("lambdas/_listwise.py", "k not in ('metric', 'p', 'bounding')"): "parameter names of get_params",
}


def _family_name_comparisons(source: str, names) -> list[str]:
    """The comparisons in ``source`` with a metric family's name as one operand (a string, or
    a tuple, list or set holding one), but for those with a record's ``.param`` (whose values
    are parameter names such as 'p', RBP's persistence, not families)."""
    import ast

    def strings(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        return set()

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if any(isinstance(o, ast.Attribute) and o.attr == "param" for o in operands):
            continue
        if any(strings(o) & names for o in operands):
            found.append(ast.unparse(node))
    return found


def test_no_module_outside_metrics_compares_a_value_with_a_family_name():
    """The record is the only word on what a metric is: code elsewhere asks the record
    (``param``, ``graded``, ``higher_is_better``, ``delta``, ...) rather than testing names."""
    from pathlib import Path

    pkg = Path(gbrank.__file__).resolve().parent
    names = set(METRICS)
    assert _family_name_comparisons("if objective.metric in ('nrbp', 'err'): pass", names)  # the scan sees one
    assert not _family_name_comparisons("if METRICS[m].param == 'p': pass", names)
    found = {(str(f.relative_to(pkg)), text) for f in sorted(pkg.rglob("*.py")) if f.parent.name != "metrics"
             or f.parent.parent != pkg for text in _family_name_comparisons(f.read_text(), names)}
    assert found - set(NAME_COMPARISONS_ELSEWHERE) == set(), "compare with the record's fields instead"
    assert set(NAME_COMPARISONS_ELSEWHERE) <= found, "an allowed comparison is gone: drop it from the list"
