"""Running code nobody here wrote: one subprocess per check, never the kernel.

Each check gets a wall-clock deadline; CPU, memory, file-size and process limits; a fresh temporary directory as
its working directory; an environment with none of the caller's variables (so no keys); and its output in files
capped by the file-size limit, of which the first ``output_chars`` are kept. It is isolated for every user (root,
or anyone through a user namespace): no network, a /proc of its own, a read-only world with a private /tmp and
/root, /home and /run hidden, its own PID namespace (a fork bomb dies with it) and no capabilities.
``CheckResult.isolation`` says which protections applied. Where that isolation is impossible, nothing runs unless
the sandbox mode (``TOMLIB_SANDBOX``) is ``rlimits-only``.

A check passes only when the tests ran to their end: the harness emits a one-time token on a private pipe after the
last test, so ``sys.exit(0)`` before the asserts, a patched ``print`` or ``sys.exit``, or an early ``os._exit(0)``
all fail. Code written to defeat the harness from the inside (reading its closure) is out of scope, as for any
in-process checker.
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
