"""Running code nobody here wrote: in sandboxed processes, never the kernel.

:func:`run_tests` and :func:`check_many` run a program and its tests under :class:`Limits` (a wall-clock deadline;
CPU, memory, file-size and process limits; a fresh working directory; none of the caller's environment variables;
output capped at ``output_chars``) and isolated for every user: no network, its own /proc, PID and IPC namespaces, a
read-only world with the user's folders hidden, no capabilities and no kernel keyrings. A check passes only when its
tests returned, by a token the program cannot reach by ordinary means. :attr:`CheckResult.isolation` names the
protections that applied; where they cannot, nothing runs unless the sandbox mode (:data:`SANDBOX_ENV`,
``TOMLIB_SANDBOX``, which the runner sets for every kernel and worker from ``--sandbox`` or the profile) is
``rlimits-only``. :class:`CheckCache` keeps the verdicts.

How it is done (namespaces, the pre-forked launcher, the memory budget, the verdict's path) is described once, in
:mod:`tomlib.sandbox._launch`; what each protection means to a user and what remains is ``docs/generated-code.md``.
"""

from tomlib.sandbox._cache import CheckCache, check_key
from tomlib.sandbox._run import (
    ISOLATION,
    SANDBOX_ENV,
    SANDBOX_MODES,
    CheckResult,
    Limits,
    SandboxUnavailable,
    check_many,
    describe_sandbox,
    isolation_available,
    require_sandbox,
    run_tests,
    sandbox_mode,
)

__all__ = [
    "ISOLATION",
    "SANDBOX_ENV",
    "SANDBOX_MODES",
    "CheckCache",
    "CheckResult",
    "Limits",
    "SandboxUnavailable",
    "check_key",
    "check_many",
    "describe_sandbox",
    "isolation_available",
    "require_sandbox",
    "run_tests",
    "sandbox_mode",
]
