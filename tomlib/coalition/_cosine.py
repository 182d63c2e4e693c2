"""Appendix A's alignment without a self-evaluation: cosine similarity of embedded trajectories (ICLR draft).

For agents whose beliefs can be compared with what others did without asking a model, Appendix A scores agent i's
belief about j against j's actual trajectory τ_j as A_ij = cos(φ(b_i(τ_j)), φ(τ_j)), with φ a feature extractor.
Here φ is a bag-of-tokens embedding from scikit-learn that runs offline: ``tfidf`` (TF-IDF fitted on the texts being
compared) or ``hashing`` (a fixed hashing vectorizer, nothing fitted). A trajectory is either text (a belief and an
action description, as in the LLM teams) or a sequence of (state, action) pairs, each pair one token. Both
embeddings are non-negative, so A lies in [0, 1], a sub-range of Appendix A's [-1, 1] self-evaluation scale; an
empty trajectory has no direction and scores 0.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

Embedding = Literal["tfidf", "hashing"]
EMBEDDINGS: tuple[str, ...] = ("tfidf", "hashing")
Trajectory = str | Sequence[tuple[Hashable, Hashable]]
_WORD = re.compile(r"[a-z0-9_]{2,}")


def tokens(trajectory: Trajectory) -> list[str]:
    """Words of two or more letters or digits of a text (lower case), or one token per (state, action) pair."""
    if isinstance(trajectory, str):
        return _WORD.findall(trajectory.lower())
    return [f"s={s!r}|a={a!r}" for s, a in trajectory]


def cosine_alignment(
    beliefs: Sequence[Trajectory], actual: Sequence[Trajectory], *, embedding: Embedding = "tfidf"
) -> np.ndarray:
    """A_j = cos(φ(beliefs[j]), φ(actual[j])) for each j (Appendix A), in [0, 1].

    Args:
        beliefs: the believed trajectory b_i(τ_j) of each agent j: text, or a sequence of (state, action) pairs.
        actual: j's actual trajectory τ_j, in the same order and form as ``beliefs``.
        embedding: φ, ``tfidf`` (fitted on the texts compared) or ``hashing`` (nothing fitted); the draft leaves φ
            open, and both run offline.
    """
    if len(beliefs) != len(actual):
        raise ValueError(f"one belief per actual trajectory: got {len(beliefs)} beliefs and {len(actual)} actual")
    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {', '.join(EMBEDDINGS)}; got {embedding!r}")
    if not beliefs:
        return np.zeros(0)
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer

    docs = [tokens(t) for t in (*beliefs, *actual)]
    if not any(docs):
        return np.zeros(len(beliefs))
    vec = (
        TfidfVectorizer(analyzer=lambda d: d)
        if embedding == "tfidf"
        else HashingVectorizer(analyzer=lambda d: d, alternate_sign=False, n_features=2**18)
    )
    x = vec.fit_transform(docs)
    x = x.multiply(1.0 / np.maximum(np.sqrt(x.multiply(x).sum(axis=1)), 1e-12)).tocsr()  # rows of unit length
    b, a = x[: len(beliefs)], x[len(beliefs) :]
    return np.asarray(b.multiply(a).sum(axis=1)).ravel().clip(0.0, 1.0)
