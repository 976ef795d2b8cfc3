"""Two fused pairwise kernels with hand-written backward passes (the hot paths of the losses).

Autograd on ``sigmoid(s_j - s_i)`` over ``[B, P, L]`` pair blocks stores several
intermediates and runs batched matrix-vector products that are slow on the CPU; these
functions keep one ``[B, P, L]`` tensor for the backward pass and reduce with plain sums.
Their gradients are checked against finite differences in the tests (``gradcheck``).
"""

from __future__ import annotations

import torch


class SmoothRankSums(torch.autograd.Function):
    """``out[b, i, k] = sum_j W_k[b, j] * sigmoid((s_cols[b, j] - s_rows[b, i]) / T)``.

    ``weights`` is ``[K, B, L]`` (no gradient); ``weights[0]`` must be the column mask
    (1 on real entries, 0 on padding): it is applied to the stored sigmoid matrix.
    """

    @staticmethod
    def forward(ctx, s_rows, s_cols, weights, temperature):
        sig = s_cols[:, None, :] - s_rows[:, :, None]
        if temperature != 1.0:
            sig.div_(temperature)
        sig.sigmoid_().mul_(weights[0][:, None, :])
        outs = [sig.sum(dim=2)]
        for w in weights[1:]:
            outs.append((sig * w[:, None, :]).sum(dim=2))
        ctx.save_for_backward(sig, weights)
        ctx.temperature = temperature
        return torch.stack(outs, dim=2)

    @staticmethod
    def backward(ctx, grad_out):
        sig, weights = ctx.saved_tensors
        q = sig * (1.0 - sig)  # sigmoid' (zero on padded columns)
        if ctx.temperature != 1.0:
            q.div_(ctx.temperature)
        grad_rows = torch.zeros_like(grad_out[..., 0])
        grad_cols = torch.zeros_like(weights[0])
        for k in range(weights.shape[0]):
            g = grad_out[..., k]
            qw = q if k == 0 else q * weights[k][:, None, :]
            grad_rows -= g * qw.sum(dim=2)
            grad_cols += weights[k] * (q * g[:, :, None]).sum(dim=1)
        return grad_rows, grad_cols, None, None


def smooth_rank_sums(s_rows, s_cols, weights, temperature: float) -> torch.Tensor:
    """See :class:`SmoothRankSums`; ``weights`` is a list of ``[B, L]`` tensors."""
    return SmoothRankSums.apply(s_rows, s_cols, torch.stack(list(weights), dim=0).detach(), float(temperature))


class WeightedPairSoftplus(torch.autograd.Function):
    """``loss[b] = sum_{i, j} W[b, i, j] * log(1 + exp(-sigma (s_rows[b, i] - s_cols[b, j])))``.

    ``W`` (no gradient) is the pair weight, zero on pairs that do not count.
    """

    @staticmethod
    def forward(ctx, s_rows, s_cols, pair_weights, sigma):
        z = s_cols[:, None, :] - s_rows[:, :, None]  # -(s_i - s_j)
        if sigma != 1.0:
            z.mul_(sigma)
        loss = (torch.nn.functional.softplus(z) * pair_weights).sum(dim=(1, 2))
        rho = z.sigmoid_().mul_(pair_weights)  # |dL/dz| per pair
        ctx.save_for_backward(rho)
        ctx.sigma = sigma
        return loss

    @staticmethod
    def backward(ctx, grad_out):
        (rho,) = ctx.saved_tensors
        g = grad_out[:, None] * ctx.sigma
        return -g * rho.sum(dim=2), g * rho.sum(dim=1), None, None


def weighted_pair_softplus(s_rows, s_cols, pair_weights, sigma: float = 1.0) -> torch.Tensor:
    """See :class:`WeightedPairSoftplus`."""
    return WeightedPairSoftplus.apply(s_rows, s_cols, pair_weights.detach(), float(sigma))
