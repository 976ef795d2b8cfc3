"""Every default the documentation quotes is the code's.

Two ways: docs/cli.md, the command-line reference, is generated from
``gbrank.cli.build_parser()`` (``python scripts/cli_reference.py --write``) and must equal
that output; and each default quoted in prose (docs/*.md, README.md) is a row of
``QUOTED``: (file, the quoted text, where the code holds the value, the value the text
states). A row fails when the code's value changed (fix the doc) or the text is gone (fix
the row). Help texts that state the default of an option whose parser default is ``None``
(decided when the command runs) are checked against the code's constant in ``HELP``."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _parser(*path: str) -> argparse.ArgumentParser:
    from gbrank.cli import build_parser

    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def _option(path: tuple[str, ...], option: str) -> argparse.Action:
    parser = _parser(*path)
    for action in parser._actions:
        if option in action.option_strings:
            return action
    raise KeyError(f"gbrank {' '.join(path)} has no option {option}")


def cli(*path_and_option: str):
    """The parser default of ``gbrank <path> <option>``."""
    *path, option = path_and_option
    return lambda: _option(tuple(path), option).default


def param(dotted: str, name: str):
    """The default of parameter ``name`` of the function or class ``dotted``."""
    def get():
        module, _, attr = dotted.rpartition(".")
        obj = getattr(importlib.import_module(module), attr)
        return inspect.signature(obj).parameters[name].default
    return get


def const(dotted: str):
    def get():
        module, _, attr = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attr)
    return get


def _mf_adam_rates():
    """The learning rate each loss of ``gbrank bench mf``'s default group trains at under Adam."""
    from gbrank.bench.mf._plan import LOSS_GROUPS, default_learning_rate

    return {default_learning_rate(loss, "adam") for loss in LOSS_GROUPS["default"]}


def _sgd_rate(loss):
    def get():
        from gbrank.torch import make_loss

        return make_loss(loss).default_learning_rate("sgd")
    return get


# (file, quoted text, the code's value, the value the text states)
QUOTED = [
    # gbrank bench letor
    ("docs/bench.md", "`example` (default; LightGBM's lambdarank example, bundled)",
     cli("bench", "letor", "--data"), "example"),
    ("docs/bench.md", "The baseline (`--baseline`, default `lightgbm:lambdarank`)",
     cli("bench", "letor", "--baseline"), "lightgbm:lambdarank"),
    ("docs/bench.md", "holds out `--vali-fraction` (0.2)", cli("bench", "letor", "--vali-fraction"), 0.2),
    ("docs/bench.md", "training stops after `--patience` (50) rounds",
     const("gbrank.bench.letor._plan.DEFAULT_PATIENCE"), 50),
    ("docs/bench.md", "or at `--rounds` (1000)", const("gbrank.bench.letor._plan.DEFAULT_ROUNDS"), 1000),
    ("docs/bench.md", "`--learning-rate` 0.05", cli("bench", "letor", "--learning-rate"), 0.05),
    ("docs/bench.md", "`--num-leaves` 31", cli("bench", "letor", "--num-leaves"), 31),
    ("docs/bench.md", "`--depth` 6", cli("bench", "letor", "--depth"), 6),
    ("docs/bench.md", "seed `--seed` 0", cli("bench", "letor", "--seed"), 0),
    ("docs/bench.md", "(`--tune {none,grid,random}`, default `none`", cli("bench", "letor", "--tune"), "none"),
    ("docs/bench.md", "`--tune random --tune-budget N` (default 8)",
     const("gbrank.bench.letor._tune.DEFAULT_BUDGET"), 8),
    # gbrank bench mf
    ("docs/bench.md", "up to 3000 epochs (patience 50)", const("gbrank.bench.mf._plan.PAPER_EPOCHS"), 3000),
    ("docs/bench.md", "up to 3000 epochs (patience 50)", const("gbrank.bench.mf._plan.DEFAULT_PATIENCE"), 50),
    ("docs/bench.md", "`--epochs` defaults to the paper's 3000", const("gbrank.bench.mf._plan.PAPER_EPOCHS"), 3000),
    ("docs/bench.md", "`--patience` to 50 evaluated epochs", const("gbrank.bench.mf._plan.DEFAULT_PATIENCE"), 50),
    ("docs/bench.md", "32 factors, batches of 32 users", cli("bench", "mf", "--n-factors"), 32),
    ("docs/bench.md", "32 factors, batches of 32 users", cli("bench", "mf", "--batch-size"), 32),
    ("docs/bench.md", "Adam 0.01 by default", cli("bench", "mf", "--optimizer"), "adam"),
    ("docs/bench.md", "Adam 0.01 by default", _mf_adam_rates, {0.01}),
    ("docs/bench.md", "`--min-positives` (25)", cli("bench", "mf", "--min-positives"), 25),
    ("docs/bench.md", "`--validation-size` (10 %)", cli("bench", "mf", "--validation-size"), 0.1),
    ("docs/bench.md", "default `unrated`: only items the user never rated", cli("bench", "mf", "--negatives"),
     "unrated"),
    ("docs/bench.md", "default `validation`", cli("bench", "mf", "--epoch-on"), "validation"),
    ("docs/bench.md", "`--baseline` (`listwise_nrbp`)", cli("bench", "mf", "--baseline"), "listwise_nrbp"),
    ("docs/bench.md", "(`--baselines popularity,random`, default both", cli("bench", "mf", "--baselines"),
     "popularity,random"),
    # evaluation
    ("docs/metrics.md", "the `relevance_threshold` (default 1)", param("gbrank.evaluation.evaluate",
                                                                     "relevance_threshold"), 1),
    ("docs/metrics.md", "(`gain=\"exp\"`, default)", param("gbrank.evaluation.evaluate", "gain"), "exp"),
    ("docs/metrics.md", "`max_grade=None` (default)", param("gbrank.evaluation.evaluate", "max_grade"), None),
    ("docs/metrics.md", "`\"zero\"` (default)", param("gbrank.evaluation.evaluate", "empty"), "zero"),
    ("docs/metrics.md", "| `\"average\"` (default) |", param("gbrank.evaluation.evaluate", "ties"), "average"),
    ("docs/metrics.md", "grade >= `relevance_level` (default 1)",
     param("gbrank.evaluation.evaluate_run", "relevance_level"), 1),
    ("docs/metrics.md", "`-l` (default 1)", cli("evaluate", "-l"), 1.0),
    ("docs/metrics.md", "the grade (`gain=\"linear\"`, default)", param("gbrank.evaluation.evaluate_run", "gain"),
     "linear"),
    ("docs/metrics.md", "`ties=\"average\"` (exact mean over the tied orders, default)",
     param("gbrank.evaluation.evaluate_run", "ties"), "average"),
    ("docs/metrics.md", "`empty=\"zero\"` (default)", param("gbrank.evaluation.evaluate_run", "empty"), "zero"),
    ("docs/metrics.md", "`n_resamples` draws (default 9999)", param("gbrank.evaluation.compare", "n_resamples"), 9999),
    ("docs/metrics.md", "seeded by `random_state` (default 0)", param("gbrank.evaluation.compare", "random_state"), 0),
    ("docs/metrics.md", "`p_adjusted < alpha` (default 0.05)", param("gbrank.evaluation.compare", "alpha"), 0.05),
    ("docs/bad-inputs.md", "**scored by `empty`** (0 by default)", param("gbrank.evaluation.evaluate", "empty"),
     "zero"),
    ("README.md", "ties (exact expectation over tied orders by default)",
     param("gbrank.evaluation.evaluate", "ties"), "average"),
    # objectives and bounds
    ("docs/objectives.md", "`relevance_threshold` (default 1)",
     param("gbrank.lambdas.LambdaObjective", "relevance_threshold"), 1),
    ("docs/objectives.md", "The default (None) updates after every round",
     param("gbrank.lambdas.UnbiasedLambdaObjective", "update_rounds"), None),
    ("docs/bounds.md", "`exact_limit` (default 20,000)", param("gbrank.bounds.distribution", "exact_limit"), 20_000),
    ("docs/bounds.md", "`grid` (default 257)", param("gbrank.bounds.prepare", "grid"), 257),
    # datasets
    ("docs/datasets.md", "dense by default; `dense=False`", param("gbrank.datasets.load_letor", "dense"), True),
    ("docs/datasets.md", "`\"nonlinear\"` (default)", param("gbrank.datasets.make_letor", "relevance"), "nonlinear"),
    # the torch path
    ("docs/torch.md", "with a temperature T, default 1", param("gbrank.torch.smooth_ranks", "temperature"), 1.0),
    ("docs/torch.md", "K = `n_positives` (default 5)", param("gbrank.torch.kos_loss", "n_positives"), 5),
    ("docs/torch.md", "position `k` (default 5", param("gbrank.torch.kos_loss", "k"), 5),
    ("docs/torch.md", "The default `\"auto\"` takes the loss's", param("gbrank.torch.MFRanker", "positives_per_list"),
     "auto"),
    ("docs/torch.md", "`validation_size` (default 0.1)", param("gbrank.torch.MFRanker", "validation_size"), 0.1),
    ("docs/torch.md", "`MFRanker`'s default `None` takes the loss's default",
     param("gbrank.torch.MFRanker", "optimizer"), None),
    ("docs/torch.md", "(the thesis', default of `NetRanker`)", param("gbrank.torch.NetRanker", "optimizer"), "adam"),
    ("docs/torch.md", "| `verbose` | 0 (default)", param("gbrank.torch.MFRanker", "verbose"), 0),
    ("docs/torch.md", "The bounded nRBP loss takes SGD learning rate 1000 by default",
     _sgd_rate("listwise_nrbp+minmax"), 1000.0),
]

NEEDS_TORCH = ("docs/torch.md",)


@pytest.mark.parametrize("doc, quote, code, stated", QUOTED,
                         ids=[f"{d}:{q[:40]}" for d, q, _, _ in QUOTED])
def test_quoted_default_is_the_codes(doc, quote, code, stated):
    if (doc in NEEDS_TORCH or code is _mf_adam_rates) and importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch")
    text = _flat((ROOT / doc).read_text())
    assert _flat(quote) in text, (f"{doc} no longer says {quote!r}: update the row of QUOTED in "
                                  "tests/test_docs_defaults.py (or point the doc to docs/cli.md)")
    value = code()
    assert value == stated, f"{doc} says {quote!r}, but the code's default is {value!r}: fix {doc}"


# (sub-command path, option, the code's value): the help text says "default <value>"
HELP = [
    (("bench", "mf"), "--epochs", const("gbrank.bench.mf._plan.PAPER_EPOCHS")),
    (("bench", "mf"), "--patience", const("gbrank.bench.mf._plan.DEFAULT_PATIENCE")),
    (("bench", "letor"), "--rounds", const("gbrank.bench.letor._plan.DEFAULT_ROUNDS")),
    (("bench", "letor"), "--patience", const("gbrank.bench.letor._plan.DEFAULT_PATIENCE")),
    (("bench", "letor"), "--tune-budget", const("gbrank.bench.letor._tune.DEFAULT_BUDGET")),
]


@pytest.mark.parametrize("path, option, code", HELP, ids=[f"{' '.join(p)} {o}" for p, o, _ in HELP])
def test_help_text_states_the_codes_default(path, option, code):
    action = _option(path, option)
    assert action.default is None  # decided when the command runs: the help text is all a user sees
    found = re.search(r"(?:default|left out,)\s+(\d[\d,]*)", action.help or "")
    assert found, f"the help of gbrank {' '.join(path)} {option} states no default: {action.help!r}"
    assert int(found.group(1).replace(",", "")) == code(), (
        f"the help of gbrank {' '.join(path)} {option} says {found.group(0)!r}, the code's default is {code()}")


def test_no_doc_quotes_forty_mf_epochs():
    """The MF default was once 40 epochs; it is the paper's 3000 (with early stopping)."""
    for page in [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]:
        text = _flat(page.read_text())
        assert "default losses, 40 epochs" not in text and "the 40 of the default" not in text, page.name


@pytest.fixture(scope="module")
def cli_reference():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_current(cli_reference):
    committed = (ROOT / "docs" / "cli.md").read_text()
    assert committed == cli_reference.render(), (
        f"docs/cli.md differs from gbrank.cli.build_parser() in {cli_reference.differing_sections(committed)}; "
        "run `python scripts/cli_reference.py --write`")


def test_cli_reference_lists_every_option_with_its_default(cli_reference):
    page = cli_reference.render()
    for path in [("evaluate",), ("bench", "letor"), ("bench", "mf")]:
        parser = _parser(*path)
        section = page.split(f"## {parser.prog}\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or not action.option_strings:
                continue
            row = next((line for line in section.splitlines()
                        if line.startswith(f"| `{action.option_strings[0]}")), None)
            assert row is not None, f"docs/cli.md misses {parser.prog} {action.option_strings[0]}"
            if action.nargs == 0:  # a flag: "off" until given
                assert "| off |" in row, (parser.prog, action.option_strings[0], row)
            elif action.default is not None:
                assert f"`{action.default}`" in row, (parser.prog, action.option_strings[0], row)


def test_cli_reference_check_names_the_stale_section(cli_reference):
    page = cli_reference.render()
    stale = page.replace("| `--epochs EPOCHS` | see help |", "| `--epochs EPOCHS` | `40` |")
    assert stale != page
    assert cli_reference.differing_sections(stale) == ["gbrank bench mf"]
    assert cli_reference.differing_sections(page) == []
