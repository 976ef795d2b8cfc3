"""scripts/patience_study.py: the replayed stopping rule against the trainer's own, and the
cost table on histories whose answer is known."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def patience_study(repo_module):
    return repo_module("scripts/patience_study.py")


def _trainer_rule(validation, patience):
    """gbrank.torch._training.train's rule, stated directly: an epoch's staleness is its
    distance from the first epoch holding the running maximum (only a strict improvement
    resets it); training stops at the first epoch whose staleness reaches ``patience``."""
    validation = np.asarray(validation)
    for t in range(len(validation)):
        best_at = int(np.argmax(validation[: t + 1]))
        if t - best_at >= patience:
            return best_at, t
    return int(np.argmax(validation)), len(validation) - 1


@pytest.mark.parametrize("patience", [1, 2, 3, 5, 10])
def test_replay_is_the_trainers_rule(patience, patience_study):
    rng = np.random.default_rng(patience)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        curve = np.cumsum(rng.normal(0.01, 0.02, n)).round(3)  # plateaus, dips and ties
        assert patience_study.replay(curve, patience) == _trainer_rule(curve, patience)


def test_study_measures_what_a_short_patience_loses(patience_study):
    # a plateau of 4 epochs, then a rise: patience <= 4 stops on the plateau
    validation = [0.1, 0.2, 0.3, 0.3, 0.29, 0.3, 0.3, 0.5, 0.6, 0.6]
    test = [0.0, 0.1, 0.2, 0.2, 0.2, 0.2, 0.2, 0.45, 0.55, 0.5]
    steady = [0.1, 0.2, 0.3, 0.4, 0.5]
    runs = [({"eval_metric": "ap"}, {"ap": validation, "test:ap": test}),
            ({"eval_metric": "ap"}, {"ap": steady, "test:ap": steady})]
    rows = {r["patience"]: r for r in patience_study.study(runs, [2, 4, 5])}
    for p in (2, 4):
        assert rows[p]["stopped_early"] == 1
        assert rows[p]["validation_lost_max"] == pytest.approx(0.6 - 0.3)
        assert rows[p]["test_lost_max"] == pytest.approx(0.55 - 0.2)
        assert rows[p]["test_lost_mean"] == pytest.approx((0.55 - 0.2) / 2)
    assert rows[2]["epochs_saved_mean"] == pytest.approx((9 - 4) / 2)
    assert rows[5]["stopped_early"] == 0 and rows[5]["test_lost_max"] == 0.0
    assert rows[5]["ended_on_ceiling"] == 1  # the steady run's best epoch is its last


def test_a_folder_without_runs_is_refused(tmp_path, patience_study):
    with pytest.raises(SystemExit, match="no trained run with a per-epoch history"):
        patience_study.load_histories(str(tmp_path))
