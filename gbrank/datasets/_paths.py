"""Where the benchmark data lives: the ``GBRANK_DATA`` folder and the names in it."""

from __future__ import annotations

import os
import pathlib

ENV_VAR = "GBRANK_DATA"

# Known dataset name -> what the folder data_home()/name holds.
DATASETS = {
    "mq2008": "LETOR 4.0 MQ2008: Fold1..Fold5 of train/vali/test, 46 features, labels 0-2",
    "mslr-web10k-fold1-sample": "5,000-row excerpts of MSLR-WEB Fold 1, 136 features, labels 0-4",
    "lightgbm-lambdarank-example": "LightGBM's lambdarank example (rank.train/test + .query sizes)",
    "movielens-latest-small": "MovieLens ml-latest-small, 0.5-5 star ratings (ratings.csv)",
    "citeulike-a": "CiteULike-a implicit user->article likes (users.dat)",
}


def _known_names() -> str:
    return ", ".join(sorted(DATASETS))


def data_home() -> pathlib.Path:
    """The folder that holds gbrank's benchmark data, named by ``GBRANK_DATA``.

    Returns
    -------
    pathlib.Path
        ``$GBRANK_DATA`` with ``~`` expanded.  Each known dataset (see ``DATASETS``) is a
        sub-folder of it, e.g. ``$GBRANK_DATA/mq2008/Fold1/train.txt.gz``.

    Raises
    ------
    FileNotFoundError
        If ``GBRANK_DATA`` is unset or empty, or names a folder that does not exist.

    Examples
    --------
    >>> import os
    >>> os.environ["GBRANK_DATA"] = "/work/shared/data"
    >>> data_home()
    PosixPath('/work/shared/data')
    """
    value = os.environ.get(ENV_VAR, "")
    if not value:
        raise FileNotFoundError(
            f"the environment variable {ENV_VAR} is not set, so gbrank cannot find its data "
            f"folder; set {ENV_VAR} to the folder holding the datasets ({_known_names()}), "
            f"e.g. export {ENV_VAR}=../shared/data, or pass a path instead of a name"
        )
    home = pathlib.Path(value).expanduser()
    if not home.is_dir():
        raise FileNotFoundError(
            f"{ENV_VAR}={value!r} is not an existing folder; point {ENV_VAR} at the folder "
            f"holding the datasets ({_known_names()})"
        )
    return home


def resolve(name_or_path: str | os.PathLike) -> pathlib.Path:
    """The path of a dataset given by its name or by a path.

    Parameters
    ----------
    name_or_path : str or path-like
        An existing file or folder (returned as is), or one of the known dataset names
        (``sorted(DATASETS)``), which resolves to ``data_home() / name``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If the path does not exist and is not a known name, or if the name's folder is
        missing under ``GBRANK_DATA`` (or ``GBRANK_DATA`` is unset).  The message lists the
        known names.

    Examples
    --------
    >>> resolve("mq2008")                      # with GBRANK_DATA=/work/shared/data
    PosixPath('/work/shared/data/mq2008')
    >>> resolve("/work/shared/data/mq2008/Fold1/test.txt.gz")
    PosixPath('/work/shared/data/mq2008/Fold1/test.txt.gz')
    """
    path = pathlib.Path(name_or_path).expanduser()
    if path.exists():
        return path
    name = str(name_or_path)
    if name not in DATASETS:
        raise FileNotFoundError(
            f"{name!r} is neither an existing file or folder nor a known dataset name; "
            f"pass a path, or one of: {_known_names()} (found under the folder named by "
            f"{ENV_VAR})"
        )
    try:
        home = data_home()
    except FileNotFoundError as err:
        raise FileNotFoundError(f"cannot locate dataset {name!r}: {err}") from None
    folder = home / name
    if not folder.exists():
        raise FileNotFoundError(
            f"dataset {name!r} was looked for at {folder}, which does not exist; {ENV_VAR} must "
            f"point at the data folder that holds {name}/ (known names: {_known_names()})"
        )
    return folder
