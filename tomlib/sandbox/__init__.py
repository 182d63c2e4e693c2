"""Running code nobody here wrote: one subprocess per check, never the kernel.

Each check gets a wall-clock deadline; CPU, memory, file-size and process limits; a fresh temporary directory as
its working directory; an environment with none of the caller's variables (so no keys); and its output in files
capped by the file-size limit, of which the first ``output_chars`` are kept. As root it also has no network
(a network namespace), a private /tmp, its own PID namespace (a fork bomb dies with it) and runs as ``nobody``.
``CheckResult.isolation`` says which protections applied.

A check passes only when the tests ran to their end: the harness emits a one-time token on a private pipe after the
last test, so ``sys.exit(0)`` before the asserts, a patched ``print`` or ``sys.exit``, or an early ``os._exit(0)``
all fail. Code written to defeat the harness from the inside (reading its closure) is out of scope, as for any
in-process checker.
"""

from tomlib.sandbox._cache import CheckCache, check_key
from tomlib.sandbox._run import CheckResult, Limits, check_many, isolation_available, run_tests

__all__ = ["CheckCache", "CheckResult", "Limits", "check_key", "check_many", "isolation_available", "run_tests"]
