"""Machine-learning tools (group `ml`): prediction models, feature importance, segments, PCA and
anomalies.

The implementations live in `ml_models` (regression model, classifier), `ml_importance`
(permutation importance) and `ml_unsupervised` (k-means, PCA, isolation forest), with shared
feature handling in `ml_common`; this module is the registry's entry point.
"""

from __future__ import annotations

from .ml_importance import feature_importance
from .ml_models import train_classifier, train_regression_model
from .ml_unsupervised import anomaly_detection, cluster_segments, pca_analysis

__all__ = [
    "anomaly_detection",
    "cluster_segments",
    "feature_importance",
    "pca_analysis",
    "train_classifier",
    "train_regression_model",
]
