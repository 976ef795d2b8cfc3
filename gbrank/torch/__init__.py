"""The PyTorch path of gbrank: ranking losses, matrix factorisation and a network ranker.

This is the only part of gbrank that imports torch.

* Losses on padded batches of lists (``scores``, ``labels``, ``mask`` of shape [B, L]),
  one value per list: smoothed listwise nDCG, AP, RR and nRBP (Li et al. SIGIR 2021,
  Eqs 11-19), LambdaRank with dnDCG, dAP, dRR, dnRBP(p) weights (``_deltas``, the torch
  twin of the numba swap deltas of ``gbrank.lambdas``) and the RankNet log-loss, k-OS
  (Weston et al. RecSys 2013), WARP and BPR; :func:`make_loss` builds any of them by name
  (the metric-based names come from the metric record, ``gbrank.metrics``).
* The recommendation protocol of the paper: :func:`split_interactions` (from the
  torch-free ``gbrank.interactions``, re-exported here), :func:`evaluate_recommender`
  (``"sampled"`` or ``"full"`` catalogue).
* Estimators with scikit-learn conventions: :class:`MFRanker` (user, item) and
  :class:`NetRanker` (features, query ids); ``save``/``load``.
* LambdaRank gradients of a gradient-boosting objective on the device where the library
  keeps its predictions (:class:`DeviceLambdaGradients`: XGBoost on a GPU without a host
  round trip per round).
* Data-parallel training (DistributedDataParallel, users split over processes):
  ``MFRanker(distributed=True)`` under ``torchrun``, :func:`fit_distributed`,
  :func:`launch_local`.
"""

from ..interactions import InteractionSplit, NotEnoughNegatives, split_interactions
from ._boosting import DeviceLambdaGradients, Margins, device_array, device_objective_problems
from ._device import resolve_device
from ._distributed import DistributedTrainingError, fit_distributed, launch_local
from ._lambda import DELTAS, lambda_loss, lambda_weights
from ._listwise import (gains, listwise_ap_loss, listwise_ndcg_loss, listwise_nrbp_loss, listwise_rr_loss,
                        smooth_ranks)
from ._losses import LOSSES, RankingLoss, make_loss
from ._mf import MatrixFactorization, MFRanker
from ._net import NetRanker, RankingNet
from ._protocol import PROTOCOLS, evaluate_recommender
from ._sampled import bpr_loss, harmonic, kos_loss, warp_loss

__all__ = [
    "LOSSES", "RankingLoss", "make_loss",
    "smooth_ranks", "gains", "listwise_ndcg_loss", "listwise_ap_loss", "listwise_rr_loss", "listwise_nrbp_loss",
    "DELTAS", "lambda_weights", "lambda_loss",
    "kos_loss", "warp_loss", "bpr_loss", "harmonic",
    "InteractionSplit", "NotEnoughNegatives", "split_interactions", "PROTOCOLS", "evaluate_recommender",
    "MatrixFactorization", "MFRanker", "RankingNet", "NetRanker",
    "resolve_device", "DeviceLambdaGradients", "Margins", "device_array", "device_objective_problems",
    "fit_distributed", "launch_local", "DistributedTrainingError",
]
