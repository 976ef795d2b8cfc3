"""The newcomer tour: find every shell command the documentation shows, and run one.

``tests/test_newcomer_tour.py`` runs (or skips, saying why) every command this module finds
in the pages a newcomer reads (:data:`PAGES`: ``README.md``, ``CONTRIBUTING.md`` and
``docs/*.md``), so that no page shows a command that does not work.

What counts as a shell command
------------------------------
A page is read line by line, outside and inside code blocks:

1. **Fenced blocks** (```` ``` ```` or ``~~~``).  A block tagged ``bash``, ``sh``, ``shell``
   or ``zsh`` is shell: every command of it counts.  A ``console`` block is a transcript:
   only its lines that begin with ``$ `` are commands (the prompt is removed).  An
   *untagged* fence is read like an indented block (rule 2).  Any other tag (``python``,
   ``text``, ``toml``, ...) is not shell.
2. **Indented code blocks**: lines indented by four or more spaces that follow a blank line
   (or the start of the page), outside a fence, up to the next line that is neither blank nor
   indented by four spaces.  Such a block is shell when its first command (rule 4) starts
   with a known program (:func:`starts_with_program`); otherwise it is something else
   (Python, a formula, a diagram, a message) and is not read.
3. **Inline code spans** (single backticks, possibly across a line break) outside code
   blocks: a span is a command when it starts with a known program, optionally after
   ``NAME=value`` assignments and ``nice [-n N]``, and it is not merely a name (a program
   followed by lower-case words only, as in ```gbrank bench letor```, ```pip install``` or
   ```bash```, names a command or a step) nor a message ``gbrank`` prints (one of the
   lower-case words right after the program ends in ``:``, as in ```gbrank evaluate: error:
   ...``` or ```gbrank bench mf: 12 of 117 runs done```).  The inline programs
   are fewer than the block ones (:data:`INLINE_PROGRAMS`): prose names ``trec_eval``,
   ``mkdocs`` and ``export`` without showing a command.
4. **Commands inside a block**: one command per line; a line ending in ``\\`` and every
   line indented deeper than the block's first line continue the command before them (a
   wrapped command or a wrapped usage synopsis); lines that are blank or start with ``#``
   are skipped; a trailing ``# comment`` is removed (shell quoting respected).

Every command is normalised: continuation lines joined with single spaces, the comment
removed, runs of white space collapsed.  It is named ``page:line`` (the line of its first
word), which the test uses as its id.

Running a command
-----------------
:func:`run_command` runs one command in ``bash`` with ``cwd`` a fresh folder, stdin closed
(``/dev/null``), stdout and stderr written to files (never a terminal), the repository's
``.venv/bin`` first on ``PATH`` and a timeout.  Before that, :func:`ci_form` points the
command at the repository: the words ``scripts/...``, ``benchmarks/...``, ``examples/...``
and ``.venv/bin/...`` become absolute paths, and ``GBRANK_DATA=...`` takes the data folder
the tests use, so relative outputs (``--out runs/...``, ``--save docs/results/x.json``)
land in the temporary folder and not in the repository.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import json
import re
import resource
import shlex
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: the pages a newcomer reads, relative to the repository root (docs/*.md by glob)
TOP_PAGES = ("README.md", "CONTRIBUTING.md")

#: programs that open a shell command in a code block
BLOCK_PROGRAMS = frozenset({"gbrank", "python", "python3", "bash", "sh", "pip", "pip3", "mkdocs",
                            "pytest", "trec_eval", "export", "git"})
#: programs that open a shell command in an inline code span
INLINE_PROGRAMS = frozenset({"gbrank", "python", "python3", "bash", "pip", "pip3"})
#: fence tags whose every command is shell; "console" is a transcript ("$ " lines)
SHELL_TAGS = frozenset({"bash", "sh", "shell", "zsh"})

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_PLAIN_WORD = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclasses.dataclass(frozen=True)
class Command:
    """One shell command shown by a page.

    Attributes
    ----------
    page : str
        The page, relative to the repository root (``"docs/bench.md"``).
    line : int
        1-based line of the command's first word.
    text : str
        The command, normalised (continuations joined, comment removed, one space between
        words).
    where : str
        ``"fence"``, ``"indented"`` or ``"inline"``.
    """

    page: str
    line: int
    text: str
    where: str

    @property
    def id(self) -> str:
        """``page:line``, e.g. ``"README.md:59"``."""
        return f"{self.page}:{self.line}"


def pages(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """The pages the tour reads: :data:`TOP_PAGES` and ``docs/*.md``, sorted."""
    found = [root / name for name in TOP_PAGES if (root / name).is_file()]
    return found + sorted((root / "docs").glob("*.md"))


def _words(text: str) -> list[str] | None:
    """The shell words of ``text`` (comments dropped), or None when it does not split."""
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return None


def program_words(words: list[str]) -> list[str]:
    """``words`` without leading ``NAME=value`` assignments and ``nice [-n N]``.

    Examples
    --------
    >>> program_words(["GBRANK_DATA=../data", "nice", "-n", "10", "gbrank", "bench", "mf"])
    ['gbrank', 'bench', 'mf']
    """
    i = 0
    while i < len(words) and _ASSIGNMENT.match(words[i]):
        i += 1
    if i < len(words) and words[i] == "nice":
        i += 1
        if i < len(words) and words[i] == "-n":
            i += 2
        elif i < len(words) and re.fullmatch(r"-\d+", words[i]):
            i += 1
    return words[i:]


def starts_with_program(text: str, programs=BLOCK_PROGRAMS) -> bool:
    """Whether ``text`` begins (after assignments and ``nice``) with one of ``programs`` or a
    ``.venv/bin/`` program."""
    words = _words(text)
    rest = program_words(words) if words else []
    if not rest:
        return False
    return rest[0] in programs or rest[0].startswith(".venv/bin/")


def is_inline_command(span: str) -> bool:
    """Whether an inline code span shows a command (rule 3 of the module docstring).

    Examples
    --------
    >>> is_inline_command("bash scripts/test.sh -m slow")
    True
    >>> is_inline_command("gbrank bench letor")          # names the sub-command
    False
    >>> is_inline_command("gbrank evaluate: error: ...")  # a message it prints
    False
    >>> is_inline_command("gbrank bench mf: 2 of 6 runs done")
    False
    >>> is_inline_command("nice -n 10")
    False
    """
    if not starts_with_program(span, INLINE_PROGRAMS):
        return False
    rest = program_words(_words(span))
    for word in rest[1:]:  # `gbrank bench mf: 12 of 117 runs done`: a message it prints
        if re.fullmatch(r"[a-z][a-z0-9_-]*:", word):
            return False
        if not _PLAIN_WORD.match(word):
            break
    if all(_PLAIN_WORD.match(w) for w in rest[1:]):  # `gbrank bench letor`, `pip install`, `bash`
        return False
    return True


def normalise(text: str) -> str:
    """Join continuation lines, drop a trailing comment, collapse white space.

    Examples
    --------
    >>> normalise("gbrank bench mf --data x \\\\\\n    --epochs 8   # eight")
    'gbrank bench mf --data x --epochs 8'
    """
    text = re.sub(r"\\\n", " ", text).replace("\n", " ")
    quote = None
    for i, ch in enumerate(text):  # an unquoted '#' opening a word starts the comment
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            text = text[:i]
            break
    return " ".join(text.split())


def _block_commands(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Commands of a code block given as (line number, text) pairs (rule 4)."""
    lines = [(n, t.rstrip()) for n, t in lines]
    body = [(n, t) for n, t in lines if t.strip()]
    if not body:
        return []
    base = min(len(t) - len(t.lstrip()) for _, t in body)
    commands: list[list] = []
    continued = False
    for n, t in body:
        indent = len(t) - len(t.lstrip())
        if commands and (continued or indent > base):
            commands[-1][1] += "\n" + t.strip()
        elif t.strip().startswith("#"):
            continued = False
            continue
        else:
            commands.append([n, t.strip()])
        continued = t.endswith("\\")
    return [(n, normalise(t)) for n, t in commands if normalise(t)]


def _blocks(lines: list[str]):
    """Yield (kind, tag, [(line number, text)]) for every code block of a page, and mark
    the lines they cover; kind is "fence" or "indented"."""
    i = 0
    previous_blank = True
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            marker, tag = fence.group(2), fence.group(3).lower()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(marker[0] * len(marker)):
                j += 1
            yield "fence", tag, [(k + 1, lines[k]) for k in range(i + 1, min(j, len(lines)))], (i, j)
            i = j + 1
            previous_blank = False
            continue
        if previous_blank and line.startswith("    ") and line.strip():
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            yield "indented", "", [(k + 1, lines[k]) for k in range(i, j)], (i, j - 1)
            i = j
            previous_blank = True
            continue
        previous_blank = not line.strip()
        i += 1


def commands_of(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[Command]:
    """Every shell command the page at ``path`` shows, in page order (module docstring)."""
    page = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Command] = []
    prose = list(lines)
    for kind, tag, block, (start, end) in _blocks(lines):
        for k in range(start, min(end + 1, len(lines))):
            prose[k] = ""
        if kind == "fence" and tag == "console":
            found += [Command(page, n, normalise(t.strip()[2:]), kind) for n, t in block
                      if t.strip().startswith("$ ")]
            continue
        if kind == "fence" and tag and tag not in SHELL_TAGS:
            continue
        commands = _block_commands(block)
        if not commands:
            continue
        if tag not in SHELL_TAGS and not starts_with_program(commands[0][1]):
            continue
        found += [Command(page, n, text, kind) for n, text in commands]
    text = "\n".join(prose)
    for match in _SPAN.finditer(text):
        span = " ".join(match.group(1).split())
        if is_inline_command(span):
            found.append(Command(page, text.count("\n", 0, match.start()) + 1, span, "inline"))
    return sorted(found, key=lambda c: c.line)


def all_commands(root: pathlib.Path = ROOT) -> list[Command]:
    """The commands of every page of :func:`pages`."""
    return [c for path in pages(root) for c in commands_of(path, root)]


def python_blocks(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[tuple[str, str]]:
    """The fenced ``python`` blocks of a page as (``page:line``, code) pairs."""
    page = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(f"{page}:{block[0][0] if block else 0}", "\n".join(t for _, t in block))
            for kind, tag, block, _ in _blocks(lines) if kind == "fence" and tag in ("python", "py")]


# ------------------------------------------------------------------------------ running

_REPO_WORD = re.compile(r"(?<![\w./-])(scripts|benchmarks|examples|\.venv/bin)/")


def ci_form(text: str, *, root: pathlib.Path = ROOT, data: str | None = None) -> str:
    """``text`` pointed at the repository (module docstring, "Running a command").

    Examples
    --------
    >>> ci_form("GBRANK_DATA=../shared/data python scripts/x.py --save docs/y.json",
    ...         root=pathlib.Path("/r"), data="/d")
    'GBRANK_DATA=/d python /r/scripts/x.py --save docs/y.json'
    """
    text = _REPO_WORD.sub(lambda m: f"{root}/{m.group(1)}/", text)
    if data is not None:
        text = re.sub(r"(?<![\w])GBRANK_DATA=\S+", f"GBRANK_DATA={shlex.quote(data)}", text)
    return text


def output_parents(text: str) -> list[str]:
    """Relative parent folders of the files a command writes (``--save``, ``--figure``,
    ``--out`` arguments), which the temporary folder must have before it runs."""
    words = _words(text) or []
    parents = []
    for flag, value in zip(words, words[1:]):
        if flag in ("--save", "--figure", "--out") and not value.startswith(("/", "-", "$")):
            parent = pathlib.PurePosixPath(value).parent
            if str(parent) != ".":
                parents.append(str(parent))
    return parents


@dataclasses.dataclass
class Outcome:
    """What a command did: its exit status, output (stdout then stderr), wall-clock seconds
    and CPU seconds (user + system, of the command and the children it waited for)."""

    command: str
    returncode: int | None
    output: str
    seconds: float
    timed_out: bool = False
    cpu_seconds: float = float("nan")

    def tail(self, chars: int = 4000) -> str:
        """The command and the end of its output, for a failure message."""
        return f"$ {self.command}\n(exit status {self.returncode}, {self.seconds:.1f} s, " \
               f"{self.cpu_seconds:.1f} s CPU)\n" \
               f"...{self.output[-chars:]}"


def run_command(text: str, cwd: pathlib.Path, *, timeout: float, env: dict | None = None,
                root: pathlib.Path = ROOT) -> Outcome:
    """Run ``text`` with ``bash -c`` in ``cwd`` as a newcomer would, without a terminal.

    stdin is ``/dev/null``; stdout and stderr go to ``cwd/stdout.txt`` and
    ``cwd/stderr.txt``; ``root/.venv/bin`` comes first on ``PATH`` (as after ``source
    .venv/bin/activate``); ``MPLBACKEND=Agg``; after ``timeout`` seconds the command's process
    group is killed.
    """
    environ = dict(os.environ if env is None else env)
    venv = root / ".venv" / "bin"
    environ["PATH"] = f"{venv}{os.pathsep}{environ.get('PATH', '')}"
    environ["VIRTUAL_ENV"] = str(venv.parent)
    environ.setdefault("MPLBACKEND", "Agg")
    environ.pop("PYTHONPATH", None)
    for parent in output_parents(text):
        (cwd / parent).mkdir(parents=True, exist_ok=True)
    out_path, err_path = cwd / "stdout.txt", cwd / "stderr.txt"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        process = subprocess.Popen(["bash", "-c", text], cwd=cwd, env=environ, stdin=subprocess.DEVNULL,
                                   stdout=out, stderr=err, start_new_session=True)
        try:
            code = process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            code = process.wait()
            timed_out = True
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    output = out_path.read_text(errors="replace") + err_path.read_text(errors="replace")
    return Outcome(text, code, output, seconds, timed_out, cpu)


def log_outcome(name: str, outcome: Outcome) -> None:
    """Append one JSON line (name, exit status, seconds, CPU seconds, command) to the file
    named by ``GBRANK_TOUR_LOG``, when it is set: the tour's cost, command by command."""
    path = os.environ.get("GBRANK_TOUR_LOG")
    if path:
        with open(path, "a") as log:
            log.write(json.dumps({"id": name, "returncode": outcome.returncode, "seconds": round(outcome.seconds, 1),
                                  "cpu_seconds": round(outcome.cpu_seconds, 1), "command": outcome.command}) + "\n")
