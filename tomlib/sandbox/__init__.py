"""Running code nobody here wrote: in sandboxed processes, never the kernel.

Each check gets a wall-clock deadline; CPU, memory, file-size and process limits; a fresh temporary directory as
its working directory; an environment with none of the caller's variables (so no keys); and its output in files
capped by the file-size limit, of which the first ``output_chars`` are kept. It is isolated for every user (root,
or anyone through a user namespace): no network, a /proc of its own, a read-only world with a private /tmp and
/root, /home and /run hidden, its own PID and IPC namespaces (a fork bomb, a daemon or a SysV segment dies with it),
no capabilities and no kernel keyrings. Its processes share ``memory_mb`` and have a process count of their own
(root's program runs as a uid of its own). ``CheckResult.isolation`` says which protections applied. Where that
isolation is impossible, nothing runs unless the sandbox mode (``TOMLIB_SANDBOX``) is ``rlimits-only``.

Checks start from a pre-forked launcher per worker, which sets the network and mount namespaces up once; every
check still gets fresh PID, mount and IPC namespaces, a fresh /tmp, /var/tmp and /dev/shm, and its own limits, and
nothing of it survives into the next check. A launcher that dies is replaced. Where no launcher can be pre-forked,
each check gets a launcher process of its own, with the same isolation (:func:`describe_sandbox` says which).

A check passes only when its tests returned: the harness writes a one-time token, read before the program started,
after the tests, and learns what applied on a descriptor the program never holds. So ``sys.exit(0)`` or
``os._exit(0)`` before the asserts, a patched ``exec`` or trace hook, or anything written to the program's
descriptors all fail. Code that reads the harness's frame or memory can still find the token, as in any checker that
runs tests in-process (``test_code_that_reads_the_harness_frame_can_still_forge_a_pass``).
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
