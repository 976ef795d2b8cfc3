"""The newcomer tour: every shell command shown in README.md, CONTRIBUTING.md and docs/*.md
runs, as a newcomer would run it, so that no page shows a command that does not work.

``tests/tour.py`` finds the commands (its docstring defines precisely what counts as one) and
runs each in a fresh temporary folder: output to files (not a terminal), stdin closed,
``.venv/bin`` first on ``PATH``, the repository's ``scripts/``, ``benchmarks/`` and
``examples/`` reached by absolute paths, so that outputs stay in the temporary folder.  A
command fails the test on an unexpected exit status, a ``Traceback`` in its output or a
timeout; the message names the page and line (the test id, ``page:line``), the command run
and the end of its output.

:data:`RULES` is the one table that says what the tour does with each command: the first
rule whose ``pattern`` matches the whole (normalised) command decides.  A rule either runs the
command in its CI form (the same command, with ``--quick`` or on small data where the real
one takes minutes) or skips it, giving the reason.  A command no rule matches fails
``test_every_documented_command_is_classified``: a new documented command must be added to
the table.  Commands that take more than about 30 s are marked ``slow`` (``bash
scripts/test.sh -m slow`` runs them); those that read a real data set under ``GBRANK_DATA``
skip, saying why, when it is absent.  The fenced ``python`` blocks of README.md run too.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import tour  # noqa: E402  (tests/ is not a package)

ROOT = tour.ROOT

# an optional prefix of environment assignments and `nice -n N`, as the pages write them
ENV = r"(?:[A-Z_]+=(?:\$\([^)]*\)|\S+) )*(?:nice (?:-n \d+ )?)?"
# `gbrank`, or the same program reached through the venv or `python -m gbrank.cli`
GBRANK = r"(?:gbrank|\.venv/bin/gbrank|(?:\.venv/bin/)?python -m gbrank\.cli)"
PYTHON = r"(?:\.venv/bin/)?python"

# CI forms shared by several rules
LETOR_QUICK = " --quick --rounds 3 --patience 2 --jobs 1 --threads 1"
MF_QUICK = " --quick --nsr 1 --splits 1 --epochs 1 --patience 1 --jobs 1 --threads 1"
TOUR_FILES = (("RUN", "run.txt"), ("QRELS", "qrels.txt"))


@dataclasses.dataclass(frozen=True)
class Rule:
    """What the tour does with the documented commands ``pattern`` matches.

    Attributes
    ----------
    pattern : str
        Regular expression matched against the whole normalised command.
    why : str
        Why it is skipped, or how its CI form differs from the documented command and why.
    run : bool
        False: skipped, with ``why`` as the reason.
    replace : tuple of (str, str)
        ``re.sub`` pairs applied in order to the command; ``{root}`` in a replacement is the
        repository root.
    append : str
        Arguments added at the end (argparse keeps the last value of a repeated option).
    slow : bool
        Takes more than about 30 s: marked ``slow``.
    data : tuple of str
        Data sets under ``GBRANK_DATA`` it reads (skipped when one is absent).
    needs : tuple of str
        Python modules it needs (skipped when one is not installed).
    returncode : int or tuple of int
        The exit status expected (or the statuses accepted).
    options_in_output : bool
        Every ``-x`` / ``--xx`` word of the documented command must appear in the output (a
        synopsis checked against ``--help``).
    timeout : float
        Seconds before the command is killed and the test fails.
    """

    pattern: str
    why: str
    run: bool = True
    replace: tuple = ()
    append: str = ""
    slow: bool = False
    data: tuple = ()
    needs: tuple = ()
    returncode: int | tuple = 0
    options_in_output: bool = False
    timeout: float = 120.0

    def ci_command(self, text: str) -> str:
        """The command the tour runs for the documented ``text``."""
        for pattern, replacement in self.replace:
            text = re.sub(pattern, replacement.replace("{root}", str(ROOT)), text)
        return text + self.append


def skip(pattern: str, why: str) -> Rule:
    """A rule for commands the tour does not run, and why."""
    return Rule(pattern, why, run=False)


RULES = (
    # ---- set-up, the suite itself, other programs: not run here
    skip(r"bash scripts/test\.sh(?: -m slow)?",
         "the test suite itself: CI runs it (.ci/run), so this tour runs inside it"),
    skip(r"pip install .*",
         "installs from a package index: scripts/setup.sh, which bash scripts/test.sh runs before "
         "the tests, does the install"),
    skip(r"bash scripts/setup\.sh",
         "creates .venv and installs gbrank: bash scripts/test.sh has just run it, and a second "
         "run would reinstall gbrank into the .venv these tests are using"),
    skip(r"(?:\.venv/bin/)?mkdocs serve",
         "a web server that runs until it is stopped; tests/test_docs_site.py builds the same site"),
    skip(r"(?:\.venv/bin/)?mkdocs build --strict",
         "tests/test_docs_site.py runs it (into a temporary --site-dir)"),
    skip(r"trec_eval .*",
         "trec_eval itself, shown for comparison and not installed; tests/test_evaluate_run.py "
         "checks gbrank against pytrec_eval, trec_eval's own code"),
    skip(ENV + PYTHON + r" -m pytest .*",
         "tests of this suite: bash scripts/test.sh (-m slow) runs them"),
    Rule(r"export GBRANK_DATA=\S+", "as shown"),
    # ---- gbrank evaluate: on a small run and qrels written by the tour
    Rule(r"gbrank evaluate RUN QRELS(?: [^\[]*)?", "RUN and QRELS are a small run and qrels of the tour",
         replace=((r"\bRUN\b", "run.txt"), (r"\bQRELS\b", "qrels.txt"))),
    Rule(r"gbrank evaluate RUN QRELS \[.*",
         "a synopsis, not one command: its options must be those gbrank evaluate --help lists",
         replace=((r"^.*$", "gbrank evaluate --help"),), options_in_output=True),
    skip(r"gbrank (?:evaluate -m|bench mf --data)",
         "a sub-command and one option without its value: the option named in prose"),
    skip(r"gbrank .*,\.\.\.", "an elided list (`...`), not a complete command"),
    Rule(r"gbrank evaluate \.\.\. -q \| head -1",
         "on the tour's run and qrels, with pipefail so that gbrank's own exit status shows: 0 when "
         "it wrote everything before head closed the pipe, 141 when the pipe closed first",
         replace=((r"^gbrank evaluate \.\.\.", "set -o pipefail; gbrank evaluate run.txt qrels.txt"),),
         returncode=(0, 141)),
    Rule(r"gbrank evaluate -q --ties trec_eval",
         "the options an example uses, shown without files: run on the tour's run and qrels",
         replace=((r"^gbrank evaluate", "gbrank evaluate run.txt qrels.txt"),)),
    Rule(r"gbrank bench <benchmark>", "a synopsis: gbrank bench --help lists the benchmarks",
         replace=((r"^.*$", "gbrank bench --help"),)),
    Rule(r"gbrank COMMAND --help", "COMMAND: every sub-command",
         replace=((r"^.*$", "gbrank evaluate --help && gbrank bench letor --help && gbrank bench mf --help"),)),
    # ---- gbrank bench letor
    Rule(r"gbrank bench letor --list-contenders", "as shown"),
    Rule(r"gbrank bench letor(?: --quick)?", "--quick: the smoke run on the bundled example data",
         replace=((r"^gbrank bench letor(?: --quick)?$", "gbrank bench letor --quick --threads 1"),), slow=True,
         needs=("catboost",), timeout=600),
    Rule(GBRANK + r" bench letor --data path/to/MSLR-WEB10K .*",
         "path/to/MSLR-WEB10K: three small synthetic LETOR folds written by the tour; --quick, 3 rounds",
         replace=((r"path/to/MSLR-WEB10K", "letor-folds"),), append=LETOR_QUICK, needs=("catboost",), timeout=300),
    Rule(ENV + GBRANK + r" bench letor --data mq2008 .*", "--quick (first fold), 3 rounds",
         append=LETOR_QUICK, slow=True, data=("mq2008",), needs=("catboost",), timeout=1200),
    Rule(ENV + GBRANK + r" bench letor --data mslr-web10k-fold1-sample .*", "--quick, 3 rounds",
         append=LETOR_QUICK, slow=True, data=("mslr-web10k-fold1-sample",), needs=("catboost",),
         timeout=600),
    Rule(r"bash scripts/main\.sh",
         "--quick with its 20 rounds and patience 5 given explicitly (main.sh passes --rounds 100 "
         "--patience 20, which --quick does not override; arguments after them do), the report in "
         "the temporary folder; main.sh runs scripts/setup.sh first",
         append=' --quick --rounds 20 --patience 5 --out "$PWD/runs/bench-letor-example"', slow=True, needs=("catboost",),
         timeout=600),
    # ---- gbrank bench mf
    Rule(ENV + GBRANK + r" bench mf --data my_ratings\.csv .*",
         "my_ratings.csv: a small ratings file written by the tour; --quick",
         append=" --quick", needs=("torch",)),
    Rule(ENV + GBRANK + r" bench mf --quick", "as shown (MovieLens, four losses, 3 epochs)",
         slow=True, data=("movielens-latest-small",), needs=("torch",), timeout=900),
    Rule(ENV + GBRANK + r" bench mf(?: --data movielens)?(?! --data)(?: .*)?",
         "one split, NSR 1, one epoch, the documented losses; without --report-only (a fresh "
         "folder has no runs to report)",
         replace=((r" --report-only", ""), (r" \[(--negatives \w+)\]", r" \1")), append=MF_QUICK,
         slow=True, data=("movielens-latest-small",), needs=("torch",), timeout=900),
    Rule(ENV + GBRANK + r" bench mf --data citeulike .*",
         "one split, NSR 1, one epoch, the documented losses", append=MF_QUICK, slow=True,
         data=("citeulike-a",), needs=("torch",), timeout=900),
    Rule(ENV + GBRANK + r" bench mf --data citeulike-paper .*",
         "the first fold, NSR 1, one epoch, the documented losses; without --report-only (a fresh "
         "folder has no runs to report)",
         replace=((r" --report-only", ""),), append=MF_QUICK, slow=True,
         data=("citeulike-a-paper-splits",), needs=("torch",), timeout=900),
    # ---- scripts
    Rule(PYTHON + r" scripts/warmup\.py", "as shown (fills the numba cache; quick when it is warm)", timeout=300),
    Rule(PYTHON + r" scripts/(?:results_page|cli_reference)\.py --write",
         "--check instead of --write: the same page computed, compared and not written into the "
         "repository", replace=((r"--write", "--check"),)),
    Rule(PYTHON + r" -c \"from gbrank\.bench import write_findings; write_findings\('docs/results/([\w-]+)'\)\"",
         "on a copy of the committed report in the temporary folder",
         replace=((r"^(.*'docs/results/([\w-]+)'.*)$",
                   r"mkdir -p docs/results && cp -r {root}/docs/results/\2 docs/results/ && \1"),)),
    Rule(PYTHON + r" scripts/active_users\.py runs/[\w-]+",
         "on a small gbrank bench mf report made first (the committed reports keep no per-query "
         "scores), with its four losses", slow=True, needs=("torch",), timeout=600,
         replace=((r"^(.*) runs/([\w-]+)$",
                   r"gbrank bench mf --data my_ratings.csv --quick --losses listwise_nrbp,listwise_ndcg,"
                   r"listwise_ap,lambda_ndcg --out runs/\2 && \1 runs/\2"),)),
    Rule(PYTHON + r" scripts/patience_study\.py runs/[\w-]+ .*",
         "on a small gbrank bench mf report made first (its stored runs are not committed)",
         slow=True, needs=("torch",), timeout=600,
         replace=((r"^(.*?) runs/([\w-]+) (.*)$",
                   r"gbrank bench mf --data my_ratings.csv --quick --epochs 4 --out runs/\2 && \1 runs/\2 \3"),)),
    Rule(ENV + PYTHON + r" scripts/unbiased_experiment\.py .*",
         "one fold, one click seed, 5 rounds, 2 sessions",
         append=" --folds 1 --click-seeds 0 --update-rounds 1 --rounds 5 --sessions 2 --threads 1",
         slow=True, data=("mq2008",), timeout=600),
    Rule(ENV + PYTHON + r" scripts/measure_equivalence\.py .*", "2 rounds", append=" --rounds 2",
         slow=True, data=("mq2008",), timeout=600),
    # ---- examples
    Rule(r"\.venv/bin/python examples/quick_start\.py --quick",
         "as shown, its figures in the temporary folder (not docs/gallery/)", append=" --out ."),
    skip(PYTHON + r" examples/\w+\.py(?: --quick)?",
         "tests/test_examples.py runs every example with --quick (and --out in a temporary folder)"),
    # ---- benchmarks: their smallest settings
    Rule(ENV + PYTHON + r" benchmarks/bench_bounds\.py \[--all-queries\] \[--save FILE\]",
         "the synopsis's options filled in; fewer samples and one repeat",
         replace=((r"\[(--all-queries)\] \[--save FILE\]", r"\1 --save bounds.json"),),
         append=" --grid 17 --n-samples 200 --repeat 1", slow=True, data=("mq2008",), timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_dask_workers\.py.*",
         "200 queries, 5 rounds, one and two workers, LightGBM",
         append=" --queries 200 --docs 20 --features 10 --rounds 5 --workers 1 2 --backends lightgbm",
         slow=True, needs=("dask", "distributed"), timeout=600),
    Rule(ENV + PYTHON + r"(?: -W ignore)? benchmarks/bench_evaluate\.py.*", "200 lists, one repeat",
         append=" --lists 200 --items 20 --repeats 1", slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_trec_files\.py.*", "200 queries, one repeat",
         append=" --queries 200 --docs 50 --judged 20 --repeats 1", slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_pair_weights\.py.*", "--quick, one repeat",
         append=" --quick --repeats 1", slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_against_commit\.py.*",
         "against HEAD in a temporary checkout, 50 lists, one call and one 2-round training run of each "
         "(no --worktree, no --save: the recorded figures stay as measured)",
         replace=((r" --worktree \S+", ""), (r" --save \S+", "")),
         append=" --base HEAD --parts calls,training --queries 50 --calls 1 --repeats 1 --rounds 2",
         slow=True, needs=("lightgbm",), timeout=900),
    Rule(ENV + PYTHON + r" benchmarks/bench_objective_speed\.py.*", "--quick (300 lists, 10 rounds, 1 repeat)",
         append=" --quick --repeats 1", slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_xgboost_device\.py .*",
         "--quick on the CPU (CI has no CUDA device)", append=" --quick --device cpu --repeats 1",
         slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_recommend\.py.*", "100 users, 500 items, one repeat",
         append=" --users 100 --items 500 --repeats 1", slow=True, needs=("implicit",), timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_first_use\.py.*",
         "the import and first evaluate only; an empty cache in the temporary folder, not $(mktemp -d)",
         replace=((r"\$\(mktemp -d\)", "./numba-cache"),), append=" --only import evaluate",
         slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_listwise_speed\.py.*", "--quick (200 lists, a 300-list training of 5 rounds)",
         append=" --quick", slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/listwise_hessian\.py.*", "fold 1, one family, 5 rounds",
         append=" --folds 1 --families listwise_ndcg --rounds 5", slow=True, data=("mq2008",), timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_scale\.py.*",
         "the tiny size, LightGBM only, 2 rounds (the full sizes write GB of data)",
         append=" --sizes tiny --backends lightgbm --tasks fit predict evaluate --rounds 2 --repeats 1",
         slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_dask_scale\.py.*",
         "200 queries, 2 rounds, 20 features, 4 files (the full size writes 3.8 M rows)",
         append=" --queries 200 --rounds 2 --features 20 --files 4", slow=True,
         needs=("dask", "distributed", "pyarrow"), timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_load_letor\.py.*",
         "a 40-list file in the temporary folder, two loaders, one run each",
         append=" --queries 40 --repeats 1 --loaders sklearn-noqid-csr,letor-dense-f32 --file letor40.txt",
         slow=True, timeout=600),
    Rule(ENV + PYTHON + r" benchmarks/bench_torch_epoch\.py.*", "one loss, NSR 1, one epoch",
         append=" --losses listwise_ndcg --nsr 1 --epochs 1 --out torch_epoch.json", slow=True,
         data=("movielens-latest-small",), needs=("torch",), timeout=600),
)


def rule_for(command: tour.Command) -> Rule | None:
    """The first rule whose pattern matches the whole command, or None."""
    return next((r for r in RULES if re.fullmatch(r.pattern, command.text)), None)


COMMANDS = tour.all_commands()


def _first_runs() -> dict:
    """CI command -> the first documented command (page order) that runs it: a command shown
    on several pages runs once."""
    first = {}
    for command in COMMANDS:
        rule = rule_for(command)
        if rule is not None and rule.run:
            first.setdefault(rule.ci_command(command.text), command)
    return first


FIRST_RUNS = _first_runs()


def _param(command: tour.Command):
    rule = rule_for(command)
    marks = [pytest.mark.slow] if rule is not None and rule.slow else []
    return pytest.param(command, id=command.id, marks=marks)


def _data_folder():
    """The folder of the real data sets (as bash scripts/test.sh finds it), or None."""
    folder = os.environ.get("GBRANK_DATA") or (ROOT.parent / "shared" / "data")
    return str(folder) if os.path.isdir(folder) else None


def write_tour_files(folder) -> None:
    """The small inputs the CI forms name: a TREC run and qrels (``run.txt``,
    ``qrels.txt``), a ratings file (``my_ratings.csv``: 40 users x 300 items, 80 ratings 2-5
    each) and three synthetic LETOR folds (``letor-folds/Fold1..3``)."""
    from sklearn.datasets import dump_svmlight_file

    from gbrank.datasets import make_letor

    rng = np.random.default_rng(0)
    run, qrels = [], []
    for q in range(1, 6):
        docs = [f"d{q}{i:02d}" for i in range(12)]
        scores = np.round(rng.normal(size=12), 2)  # some ties
        run += [f"q{q} Q0 {d} {r + 1} {s} tour" for r, (d, s) in
                enumerate(sorted(zip(docs, scores), key=lambda p: -p[1]))]
        qrels += [f"q{q} 0 {d} {int(rng.integers(0, 3))}" for d in docs[:9]]
    qrels += ["q6 0 d601 1"]  # a query without run lines
    (folder / "run.txt").write_text("\n".join(run) + "\n")
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    lines = ["user,item,rating"]
    for user in range(40):  # ~50 ratings >= 4 (the default threshold) of 80, 220 items unrated
        for item in rng.choice(300, size=80, replace=False):
            lines.append(f"u{user},i{item},{int(rng.choice([2, 3, 4, 4, 5, 5]))}")
    (folder / "my_ratings.csv").write_text("\n".join(lines) + "\n")
    for k in (1, 2, 3):
        fold = folder / "letor-folds" / f"Fold{k}"
        fold.mkdir(parents=True)
        for i, split in enumerate(("train", "vali", "test")):
            X, y, qid = make_letor(n_queries=30 if split == "train" else 12, docs_per_query=(5, 15),
                                   n_features=8, max_label=2, random_state=10 * k + i)
            dump_svmlight_file(X, y, str(fold / f"{split}.txt"), query_id=qid, zero_based=False)


def test_every_documented_command_is_classified():
    unknown = [f"{c.id}: {c.text}" for c in COMMANDS if rule_for(c) is None]
    assert not unknown, ("these documented commands match no rule of RULES in "
                         "tests/test_newcomer_tour.py; add one (a CI form, or a skip with its reason):\n"
                         + "\n".join(unknown))


def test_every_rule_matches_a_documented_command():
    used = {id(rule_for(c)) for c in COMMANDS}
    stale = [r.pattern for r in RULES if id(r) not in used]
    assert not stale, f"these rules match no documented command any more; remove them: {stale}"


def test_the_tour_finds_the_readme_commands():
    readme = [c.text for c in COMMANDS if c.page == "README.md"]
    for text in ("bash scripts/main.sh", "bash scripts/test.sh",
                 "gbrank bench letor --data mq2008 --contenders all"):
        assert text in readme, (text, readme)


@pytest.mark.parametrize("command", [_param(c) for c in COMMANDS])
def test_documented_command_works(command, tmp_path, dataset_path):
    rule = rule_for(command)
    if rule is None:
        pytest.fail(f"{command.id}: no rule of RULES matches {command.text!r}; add one")
    if not rule.run:
        pytest.skip(f"{command.id}: {rule.why}")
    first = FIRST_RUNS[rule.ci_command(command.text)]
    if first is not command:
        pytest.skip(f"{command.id}: the same command as {first.id}, which runs it")
    from gbrank.datasets import DATASETS

    for name in rule.data:
        if name in DATASETS:
            dataset_path(name)  # skips, saying why, when GBRANK_DATA lacks it
        elif _data_folder() is None or not os.path.isdir(os.path.join(_data_folder(), name)):
            pytest.skip(f"{command.id} reads {name!r} under GBRANK_DATA, which is not there")
    absent = [m for m in rule.needs if importlib.util.find_spec(m) is None]
    if absent:
        pytest.skip(f"{command.id} needs {', '.join(absent)}, not installed")
    write_tour_files(tmp_path)
    data = _data_folder()
    text = tour.ci_form(rule.ci_command(command.text), data=data)
    env = dict(os.environ)
    if data:
        env["GBRANK_DATA"] = data
    done = tour.run_command(text, tmp_path, timeout=rule.timeout, env=env)
    tour.log_outcome(command.id, done)
    where = f"{command.id} shows `{command.text}`; the tour ran it as:\n{done.tail()}"
    assert not done.timed_out, f"timed out after {rule.timeout:.0f} s: {where}"
    assert "Traceback (most recent call last)" not in done.output, f"a traceback: {where}"
    expected = rule.returncode if isinstance(rule.returncode, tuple) else (rule.returncode,)
    assert done.returncode in expected, f"exit status {done.returncode}, not {rule.returncode}: {where}"
    if rule.options_in_output:
        options = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", command.text))
        missing = sorted(o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", done.output))
        assert not missing, f"{command.id} shows options that --help does not know: {missing}\n{where}"


@pytest.mark.parametrize("block", tour.python_blocks(ROOT / "README.md"), ids=lambda b: b[0])
def test_readme_python_block_runs(block, tmp_path):
    where, code = block
    (tmp_path / "block.py").write_text(code + "\n")
    done = tour.run_command(f"python block.py", tmp_path, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.output, f"{where}:\n{done.tail()}"
    assert done.output.strip(), f"{where} printed nothing"


# ------------------------------------------------------------------ the extraction rules

PAGE = """\
# A page

Run `gbrank bench letor` (a name) or `bash scripts/main.sh --quick` (a command); prose
`gbrank evaluate: error: ...` is a message, `nice -n 10` a fragment, and `GBRANK_DATA=x
python scripts/y.py --save z.json` a command across a line break.

    gbrank bench mf --data movielens --epochs 8 \\
        --jobs 2          # two processes
    # a comment line
    gbrank bench letor --quick

and in Python:

    import gbrank         # an indented Python block: not shell

```bash
export A=1
```

```console
$ gbrank evaluate run qrels
map all 0.5
```

```python
print("not shell")
```

```
gbrank evaluate RUN QRELS [-m NAME]...
       [--ties average|trec_eval]
```
"""


def test_the_extraction_rules(tmp_path):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(PAGE)
    found = [(c.line, c.where, c.text) for c in tour.commands_of(page, tmp_path)]
    assert found == [
        (3, "inline", "bash scripts/main.sh --quick"),
        (4, "inline", "GBRANK_DATA=x python scripts/y.py --save z.json"),
        (7, "indented", "gbrank bench mf --data movielens --epochs 8 --jobs 2"),
        (10, "indented", "gbrank bench letor --quick"),
        (17, "fence", "export A=1"),
        (21, "fence", "gbrank evaluate run qrels"),
        (30, "fence", "gbrank evaluate RUN QRELS [-m NAME]... [--ties average|trec_eval]"),
    ], found
    assert tour.python_blocks(page, tmp_path) == [("docs/page.md:26", 'print("not shell")')]


def test_a_command_runs_without_a_terminal_in_its_folder(tmp_path):
    done = tour.run_command("test -t 0 || test -t 1 || echo no-terminal; pwd; cat", tmp_path, timeout=30)
    assert done.returncode == 0
    assert done.output.split()[:2] == ["no-terminal", str(tmp_path)]
    assert (tmp_path / "stdout.txt").is_file()
    slow = tour.run_command("sleep 30", tmp_path, timeout=1)
    assert slow.timed_out and slow.seconds < 20
