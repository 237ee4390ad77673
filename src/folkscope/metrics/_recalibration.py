"""Recalibration maps fitted on training rows: Platt scaling and isotonic regression.

Small fit/transform objects in the scikit-learn manner: parameters in
``__init__``, fitted state in attributes ending in ``_``. Fit them on training
(or validation) rows and apply them to test scores, never on the test rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from folkscope.errors import ConfigError, DataError
from folkscope.metrics._validation import (
    FloatArray,
    check_binary_input,
    check_number,
    check_scores,
)

__all__ = ["IsotonicCalibrator", "PlattCalibrator"]


def _fit_input(
    scores: ArrayLike, y_true: ArrayLike, sample_weight: ArrayLike | None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    y, p, w, _ = check_binary_input(y_true, scores, sample_weight, "raise")
    ww = np.ones_like(y) if w is None else w
    if not (ww[y == 1].sum() > 0 and ww[y == 0].sum() > 0):
        raise DataError(
            "A recalibration map needs training rows of both classes; y_true "
            "(with positive weight) holds a single class."
        )
    return p, y, ww


class PlattCalibrator:
    r"""Platt scaling on the logit of the score: :math:`q = \sigma(a\,\mathrm{logit}(r) + b)`.

    ``a`` and ``b`` maximise the (weighted) Bernoulli likelihood, found by
    Newton's method without regularisation. Scores are clipped to
    ``[eps, 1 - eps]`` before the logit, because LLM scores of exactly 0 or 1
    occur and have no finite logit; ``eps`` is explicit and documented.

    Parameters
    ----------
    eps : float in (0, 0.5), default=1e-6
    max_iter : int, default=100

    Attributes
    ----------
    coef_ : float
        Slope ``a`` (1 means no change in spread; < 1 tempers over-confidence).
    intercept_ : float
        Offset ``b``.
    n_iter_ : int

    References
    ----------
    Platt (1999), "Probabilistic outputs for support vector machines".

    Examples
    --------
    >>> cal = PlattCalibrator().fit([0.1, 0.4, 0.6, 0.9, 0.8, 0.3], [0, 1, 0, 1, 1, 0])
    >>> q = cal.transform([0.2, 0.7])
    >>> bool(q[0] < q[1])
    True
    """

    def __init__(self, *, eps: float = 1e-6, max_iter: int = 100) -> None:
        self.eps = eps
        self.max_iter = max_iter

    def _logit(self, p: FloatArray) -> FloatArray:
        q = np.clip(p, self.eps, 1 - self.eps)
        return np.asarray(np.log(q) - np.log1p(-q))

    def fit(self, scores: ArrayLike, y_true: ArrayLike, *, sample_weight: ArrayLike | None = None) -> PlattCalibrator:
        """Fit ``a, b`` on training scores of shape (n_samples,) and labels 0/1."""
        check_number(self.eps, "eps", low=0, high=0.5, low_open=True, high_open=True)
        check_number(self.max_iter, "max_iter", integer=True, low=1)
        p, y, w = _fit_input(scores, y_true, sample_weight)
        x = np.column_stack([self._logit(p), np.ones_like(p)])
        theta = np.array([1.0, 0.0])

        def loss(t: FloatArray) -> float:
            z = x @ t
            return float(np.dot(w, np.logaddexp(0.0, z) - y * z))

        current = loss(theta)
        n_iter = 0
        while n_iter < self.max_iter:
            n_iter += 1
            s = 1.0 / (1.0 + np.exp(-(x @ theta)))
            grad = x.T @ (w * (s - y))
            hess = (x * (w * s * (1 - s))[:, None]).T @ x
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
            scale = 1.0
            while scale > 1e-10:  # backtracking keeps every step a descent step
                cand = theta - scale * step
                new = loss(cand)
                if new <= current:
                    break
                scale /= 2
            else:
                break
            done = current - new <= 1e-12 * max(1.0, abs(current))
            theta, current = cand, new
            if done:
                break
        self.coef_, self.intercept_, self.n_iter_ = float(theta[0]), float(theta[1]), n_iter
        return self

    def transform(self, scores: ArrayLike) -> FloatArray:
        """Recalibrated scores, shape (n_samples,)."""
        if not hasattr(self, "coef_"):
            raise ConfigError(
                "PlattCalibrator is not fitted; call fit(scores, y_true) first.", parameter="self", value=None
            )
        p, _ = check_scores(scores, "scores")
        z = self.coef_ * self._logit(p) + self.intercept_
        return np.asarray(1.0 / (1.0 + np.exp(-z)))

    def fit_transform(
        self, scores: ArrayLike, y_true: ArrayLike, *, sample_weight: ArrayLike | None = None
    ) -> FloatArray:
        """Fit, then transform the same scores."""
        return self.fit(scores, y_true, sample_weight=sample_weight).transform(scores)


class IsotonicCalibrator:
    """Monotone (non-decreasing) step map from scores to positive rates.

    Wraps :class:`sklearn.isotonic.IsotonicRegression` with outputs in [0, 1];
    test scores outside the training range take the value at the nearest end.

    Attributes
    ----------
    model_ : sklearn.isotonic.IsotonicRegression

    Examples
    --------
    >>> cal = IsotonicCalibrator().fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    >>> cal.transform([0.1, 0.25, 0.4]).round(2).tolist()
    [0.0, 0.5, 1.0]
    """

    def fit(
        self, scores: ArrayLike, y_true: ArrayLike, *, sample_weight: ArrayLike | None = None
    ) -> IsotonicCalibrator:
        """Fit on training scores of shape (n_samples,) and labels 0/1."""
        from sklearn.isotonic import IsotonicRegression

        p, y, w = _fit_input(scores, y_true, sample_weight)
        self.model_: Any = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip").fit(
            p, y, sample_weight=w
        )
        return self

    def transform(self, scores: ArrayLike) -> FloatArray:
        """Recalibrated scores, shape (n_samples,)."""
        if not hasattr(self, "model_"):
            raise ConfigError(
                "IsotonicCalibrator is not fitted; call fit(scores, y_true) first.", parameter="self", value=None
            )
        p, _ = check_scores(scores, "scores")
        return np.asarray(self.model_.predict(p), dtype=np.float64)

    def fit_transform(
        self, scores: ArrayLike, y_true: ArrayLike, *, sample_weight: ArrayLike | None = None
    ) -> FloatArray:
        """Fit, then transform the same scores."""
        return self.fit(scores, y_true, sample_weight=sample_weight).transform(scores)
