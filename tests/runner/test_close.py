"""The end of a run does not wait forever on a worker that never answers the call to close its kernels
(:func:`tomlib.runner._cluster._close_kernels`): the cluster's close ends that worker, and its kernel with it."""

from __future__ import annotations

import threading

import pytest

from tomlib.runner._cluster import _close_kernels

pytestmark = pytest.mark.tier("fast")


class Unanswered:
    """A client whose workers never answer: ``run`` blocks until the test lets it go."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.called = threading.Event()

    def run(self, function: object) -> None:
        self.called.set()
        self.release.wait()


def test_a_worker_that_never_answers_does_not_hold_the_run() -> None:
    client = Unanswered()
    ending = threading.Thread(target=_close_kernels, args=(client, 0.2))
    ending.start()
    ending.join(60)  # far past the 0.2 s it was given: only a wait without a bound could still be running
    try:
        assert client.called.is_set() and not ending.is_alive()
    finally:
        client.release.set()
