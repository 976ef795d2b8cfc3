"""Non-finite scores in every torch loss: a -inf, +inf or NaN score on a real entry raises a
ValueError that names it; on a padded (masked) entry it is ignored: the loss and its
gradient are finite and equal those of the same batch with a finite score there."""

from __future__ import annotations

import pytest

import gbrank.metrics as _record

torch = pytest.importorskip("torch")

from gbrank.torch import LOSSES, make_loss  # noqa: E402
from gbrank.torch._bounded import BOUNDED_METRIC  # noqa: E402

F64 = torch.float64
# every registry loss (with a persistence where it needs one) and every bounding of the listwise ones
ALL = ([n + ("@0.9" if LOSSES[n].needs_p else "") for n in sorted(LOSSES)]
       + [f"{n}+{b}" for n in sorted(BOUNDED_METRIC) for b in sorted(_record.BOUNDINGS)])
BAD = (float("-inf"), float("inf"), float("nan"))


def _batch(seed=0, b=3, n=8):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(b, n, generator=g, dtype=F64)
    labels = torch.randint(0, 3, (b, n), generator=g).to(F64)
    labels[:, 0], labels[:, 1] = 1.0, 0.0
    mask = torch.ones(b, n, dtype=torch.bool)
    mask[0, -2:] = False
    mask[2, -1] = False
    return scores, labels, mask


def _value_and_grad(name, scores, labels, mask):
    scores = scores.clone().requires_grad_(True)
    loss = make_loss(name)(scores, labels, mask, generator=torch.Generator().manual_seed(3))
    loss.sum().backward()
    return loss.detach(), scores.grad


def test_every_loss_is_covered():
    assert {n.split("@")[0] for n in ALL} >= set(LOSSES)


@pytest.mark.parametrize("bad", BAD, ids=["-inf", "+inf", "nan"])
@pytest.mark.parametrize("name", ALL)
def test_non_finite_score_on_a_real_entry_raises(name, bad):
    scores, labels, mask = _batch()
    for at in ((0, 0), (1, 3), (2, 1)):  # a relevant item, an arbitrary one, a non-relevant one
        s = scores.clone()
        s[at] = bad
        with pytest.raises(ValueError, match=r"NaN or infinite score.*list %d, position %d" % at):
            make_loss(name)(s, labels, mask, generator=torch.Generator().manual_seed(3))


@pytest.mark.parametrize("bad", BAD, ids=["-inf", "+inf", "nan"])
@pytest.mark.parametrize("name", ALL)
def test_non_finite_score_on_a_padded_entry_is_masked(name, bad):
    scores, labels, mask = _batch()
    ref_value, ref_grad = _value_and_grad(name, scores, labels, mask)
    s = scores.clone()
    s[0, -2:] = bad  # both padded entries of list 0
    s[2, -1] = bad
    value, grad = _value_and_grad(name, s, labels, mask)
    assert torch.isfinite(value).all() and torch.isfinite(grad).all()
    torch.testing.assert_close(value, ref_value)
    torch.testing.assert_close(grad, ref_grad)
    assert (grad[~mask] == 0).all()


@pytest.mark.parametrize("name", ALL)
def test_non_finite_label_on_a_padded_entry_is_masked(name):
    scores, labels, mask = _batch()
    ref_value, ref_grad = _value_and_grad(name, scores, labels, mask)
    y = labels.clone()
    y[0, -2], y[0, -1], y[2, -1] = float("nan"), float("inf"), float("-inf")
    value, grad = _value_and_grad(name, scores, y, mask)
    torch.testing.assert_close(value, ref_value)
    torch.testing.assert_close(grad, ref_grad)


@pytest.mark.parametrize("name", ["listwise_rr", "listwise_ap", "listwise_ndcg", "listwise_nrbp", "lambda_ndcg",
                                  "lambda_rr", "bpr", "warp", "kos_auc"])
def test_huge_finite_scores_give_a_finite_loss_and_gradient(name):
    """Scores of a badly scaled model (|s| up to 1e30) must not turn into a NaN loss."""
    scores, labels, mask = _batch()
    scores = scores * 1e30
    value, grad = _value_and_grad(name, scores, labels, mask)
    assert torch.isfinite(value).all() and torch.isfinite(grad).all()
