"""The sandbox's launcher: how a check is isolated. The one description of the sandbox's internals; the user's view
(what each protection means, what remains) is ``docs/generated-code.md``.

Two ways to start it, with the same isolation:

- ``python -I -S _launch.py --serve FD`` (pre-forked, the default; ``_Launcher``/``_Pool`` in :mod:`._run`): one
  long-lived process per worker thread, idle between checks. It makes the user namespace (when not root), the
  network and mount namespaces and the read-only world once, and imports a few stateless stdlib modules
  (:data:`PRELOAD`). A check arrives on the ``SOCK_SEQPACKET`` socket FD as JSON (limits, required protections, the
  byte where the tests start) with five descriptors passed by ``SCM_RIGHTS`` (program, stdout, stderr, result pipe,
  token pipe); the launcher never reads them, so no program or token stays in its memory.
- ``python -I -S _launch.py SPEC.json`` (one launcher per check, ``_run_launcher``): the same namespaces and world
  made for one check, then the program runs in that launcher's interpreter. Used where the pre-forked launcher
  cannot start or cannot set a check up (the process then switches to it for good), and for
  ``Limits(namespaces=False)``, which is what a machine without namespaces gets and how the tests reach the refusal.

Namespaces. Root enters new network and mount namespaces directly; anyone else first makes a user namespace mapping
only their own uid and gid (the one mapping an unprivileged process may write), which gives them the capabilities
to do the same inside it. In a user namespace the copied mounts are locked: a read-only remount must repeat their
``nosuid``/``nodev``/``noexec``/atime flags (read from ``mountinfo``) or the kernel refuses it.

Per check: launcher -> child (unshares PID, mount, IPC) -> PID 1 of the new PID namespace (ours, never the
program's: a fresh ``/proc`` with ``/proc/sys`` and ``/proc/sysrq-trigger`` read-only, fresh tmpfs over
:data:`WRITABLE`, and any top-level folder made since the launcher started hidden) -> the program's process
(descriptors 1-5, the bounding set dropped, its own uid when root, ``capset`` to zero since nothing is exec'd,
no_new_privs, the keyring seccomp filter, rlimits), which runs the program with ``exec`` as its own ``__main__`` and
leaves with ``os._exit`` after joining threads and running ``atexit`` (no interpreter teardown). Each link has
``PR_SET_PDEATHSIG=SIGKILL`` set by our code, never the program's, so killing the launcher kills a running check;
PID 1's exit makes the kernel kill whatever the check left (a daemon, a process that left its group) before the
launcher reports ``done``. At the deadline the caller sends ``kill``; when the socket closes or the launcher stops
answering, the caller kills it and the next check starts a new one.

Isolation, either way: no network; a /proc of its own that shows only the check's processes (without it, an ordinary
user's check could read ``/proc/<pid>/environ`` of the user's own kernel, its API key); every file system read-only
(remounted) except a private /tmp (its working directory), /var/tmp and /dev/shm; an empty read-only tmpfs over every
top-level folder that is not the system's (:data:`SYSTEM`), so /root, /home, /run, the checkout, /srv, /opt, /mnt, /var
and any data folder are hidden, since a program needs none of them. The interpreter's prefix (under ``/root/.pyenv`` on
these machines) and the check's ``visible`` folders stay: one inside a hidden folder is bound back read-only through a
stash in /dev/shm (the hiding tmpfs is mode 755, so any uid reaches it), one under a writable folder (a checkout in
/tmp) from a handle opened before the fresh tmpfs covered it. Its own SysV IPC; every process it starts dies with it; no
kernel keyring (seccomp denies ``add_key``, ``request_key`` and ``keyctl``, so the caller's session keyring stays out of
reach). The program gets no capability and no_new_privs, so it cannot undo any of that. Root's program runs as a uid of
the check's own, :data:`CHECK_UIDS` + its launcher's pid (set after the bounding set is dropped, which needs root):
without capabilities uid 0 would still own ``/etc/shadow``, and ``nobody`` for every check would share one RLIMIT_NPROC
count, so one check's fork bomb would starve the others. When the check's ``require`` names a protection that could not
be applied, it runs nothing and says what was missing.

The memory budget (:func:`budget`): RLIMIT_AS per process is what the writable tmpfs leave of ``memory_mb``, shared
by ``processes``; RLIMIT_NPROC is ``processes`` plus the launcher's processes the kernel counts with the program's
(0 as root, whose program has a uid of its own; 3 in a pre-forked launcher's user namespace: launcher, the check's
first process and PID 1; 1 with a launcher per check). RLIMIT_NPROC counts threads, and root is not held to it,
which is why root's program must not stay uid 0.

The verdict is out of the program's hands: the program's process writes ``applied ...`` (and ``missing ...`` when a
required protection failed) on descriptor 5 (:data:`STATUS_FD`) and closes it before the program runs; PID 1 adds
``exit <status>``; the launcher relays them in its ``done`` message. :func:`run_program` reads the pass token from
descriptor 4 before the program, binds ``exec``, ``os.write`` and ``sys.settrace`` first, runs the program and then
the tests (compiled apart, the tests' lines numbered as in ``main.py``), and writes the token to descriptor 3 only
when the tests returned. A pass is ``exit 0`` and exactly the token on the result pipe. Bump
``tomlib.sandbox._cache.HARNESS_VERSION`` when any of this changes, so cached verdicts of an older harness are not
reused. Only the standard library is used: it starts with site-packages disabled.

Tested in ``tests/sandbox/test_sandbox.py``, as the user running the tests and again as ``nobody``
(``tests/sandbox/_users.py``: ``setpriv`` drops to uid 65534 and runs a small driver, with an interpreter ``nobody``
can execute, on a world-readable copy of ``tomlib/``; ``setpriv`` exits 0 even when it cannot execute the path it was
given, so the probe checks ``sys.executable`` itself; ``in_turn`` runs several checks through one launcher).
"""

import atexit
import builtins
import contextlib
import ctypes
import dataclasses
import fcntl
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import types
from collections.abc import Callable, Sequence

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1,
    2,
    4,
    8,
    32,
    4096,
    16384,
    1 << 18,
)
# a mount copied into a user namespace keeps these locked: a read-only remount must repeat them or it is refused
LOCKED_OPTIONS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": 1 << 10,
    "nodiratime": 1 << 11,
    "relatime": 1 << 21,
    "strictatime": 1 << 24,
}
PR_SET_PDEATHSIG, PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 22, 24, 38
SECCOMP_MODE_FILTER, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, EPERM = 2, 0x7FFF0000, 0x00050000, 1
KEYRING_CALLS = {  # audit arch, then add_key, request_key and keyctl for that arch's system call table
    "x86_64": (0xC000003E, (248, 249, 250)),
    "aarch64": (0xC00000B7, (217, 218, 219)),
    "riscv64": (0xC00000F3, (217, 218, 219)),
}
CAP_VERSION_3 = 0x20080522
CHECK_UIDS = 0x7E000000
"""Root's program runs as ``CHECK_UIDS + the launcher's pid``: a uid nobody else has, so its process count is its
own (a launcher runs one check at a time, and a pid is unique while the launcher lives). Above systemd's container
ranges and below 2**31."""
REFUSED = 97  # exit code: required isolation missing, the program was not run
WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")
SYSTEM = ("/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/sys", "/tmp", "/usr")
"""Top-level folders a program may read; every other one is hidden under an empty tmpfs."""
ORDER = (
    "rlimits",
    "fresh-cwd",
    "clean-env",
    "user-namespace",
    "no-network",
    "pid-namespace",
    "own-ipc",
    "own-proc",
    "read-only-fs",
    "home-hidden",
    "no-capabilities",
    "no-keyrings",
    "not-root",
    "own-process-limit",
    "memory-per-check",
)
"""The order protections are reported in, whichever launcher applied them."""
WORK = "/tmp/check"
PROGRAM_FDS = (1, 2, 3, 4)  # the program's stdout, stderr, result pipe and token pipe (see run_program)
STATUS_FD = 5  # to the launcher: what applied, what was missing, how the program ended; closed before it runs
TMPFS_FILES = 1  # each writable tmpfs holds at most file_mb * TMPFS_FILES: it is memory the budget must count
PRELOAD = ("typing", "re", "math", "collections", "itertools", "functools", "heapq", "string")
"""Imported once by the pre-forked launcher (no per-process state), so a check does not pay for them."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    if hasattr(libc, "prctl"):
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return libc


def _hidden() -> list[str]:
    """Every top-level folder outside :data:`SYSTEM` (a symlink such as /bin -> usr/bin is followed, not hidden)."""
    return sorted(
        p
        for p in (os.path.join("/", e) for e in os.listdir("/"))
        if os.path.isdir(p) and not os.path.islink(p) and p not in SYSTEM
    )


def _mount(
    libc: ctypes.CDLL, src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> bool:
    enc = lambda s: s.encode() if isinstance(s, str) else s  # noqa: E731
    return libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) == 0


def _unescape(field: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes come as octal escapes."""
    for esc, ch in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(esc, ch)
    return field


def _mounts() -> list[tuple[str, int]]:
    """Every mount point of this mount namespace with the flags a read-only remount must keep."""
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            keep = 0
            for opt in fields[5].split(","):
                keep |= LOCKED_OPTIONS.get(opt, 0)
            out.append((_unescape(fields[4]), keep))
    return out


def _map_ids(uid: int, gid: int) -> bool:
    """Be the same user and group inside the new user namespace (the only mapping an unprivileged user may write)."""
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError:
        return False
    return True


def _enter_user_namespace(libc: ctypes.CDLL, applied: list) -> bool:
    """Root needs none; anyone else gets the capabilities to make the other namespaces inside a new one."""
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        return True
    if libc.unshare(CLONE_NEWUSER) != 0 or not _map_ids(uid, gid):
        return False
    applied.append("user-namespace")
    return True


def _world(libc: ctypes.CDLL, applied: list, visible: Sequence[str] = ()) -> list[str]:
    """In a new mount namespace: everything read-only, tmpfs where programs may write, every folder outside the
    system's hidden but the interpreter's prefix and the ``visible`` folders, bound back read-only. Returns the hidden
    folders."""
    if not _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE):
        return []
    hidden = _hidden()
    inside = lambda p, tops: any(p == t or p.startswith(t + "/") for t in tops)  # noqa: E731
    keeps = [k for k in dict.fromkeys(os.path.realpath(p) for p in (sys.base_prefix, *visible)) if os.path.isdir(k)]
    keeps = [k for k in keeps if not any(k != o and inside(k, [o]) for o in keeps)]  # a folder inside another comes too
    stashed = [k for k in keeps if inside(k, hidden)]
    if os.path.isdir("/dev/shm"):
        _mount(libc, "tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    stashes = [f"/dev/shm/.tomlib-keep-{i}" for i in range(len(stashed))]
    for keep, stash in zip(stashed, stashes, strict=True):
        os.makedirs(stash)
        _mount(libc, keep, stash, None, MS_BIND | MS_REC)
    covered = [_mount(libc, "tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755") for h in hidden]
    for path in WRITABLE:  # /var/tmp comes back, empty, inside the hidden /var
        if path != "/dev/shm" and (os.path.isdir(path) or os.path.dirname(path) in hidden):
            os.makedirs(path, exist_ok=True)
            _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    for keep, stash in zip(stashed, stashes, strict=True):
        os.makedirs(keep, exist_ok=True)
        _mount(libc, stash, keep, None, MS_BIND | MS_REC)
    ok = True
    for mp, flags in _mounts():
        if mp in WRITABLE or inside(mp, ["/proc"]):
            continue  # each check gets its own /proc and fresh tmpfs there (_check_mounts)
        if inside(mp, hidden) and not inside(mp, stashed):
            continue  # out of sight under a tmpfs (the hidden folder itself is a fresh tmpfs, remounted below)
        done = _mount(libc, None, mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        # pseudo file systems the kernel keeps as they are (a container's /dev, /sys) are no place to write to
        ok &= done or mp.startswith(("/dev", "/sys"))
    for h, made in zip(hidden, covered, strict=True):  # the empty tmpfs over a hidden folder: read-only too
        if made and h not in WRITABLE:
            ok &= _mount(libc, None, h, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    if ok:
        applied.append("read-only-fs")
    if all(covered) and all(os.path.isdir(k) for k in stashed):
        applied.append("home-hidden")
    return hidden


def _own_proc(libc: ctypes.CDLL, applied: list) -> None:
    """A /proc of the new PID namespace: no other process (and its environment) can be read from it."""
    plain = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if _mount(libc, "proc", "/proc", "proc", plain):
        # the kernel's knobs and the SysRq trigger stay read-only, whoever the program runs as
        knobs = [k for k in ("/proc/sys", "/proc/sysrq-trigger") if os.path.exists(k)]
        if all(
            _mount(libc, k, k, None, MS_BIND) and _mount(libc, None, k, None, MS_REMOUNT | MS_BIND | MS_RDONLY | plain)
            for k in knobs
        ):
            applied.append("own-proc")
    elif _mount(libc, "tmpfs", "/proc", "tmpfs", plain, "size=1m,mode=555"):
        applied.append("own-proc")  # no procfs allowed here: then no /proc at all


def _under_writable(visible: Sequence[str]) -> list[tuple[str, int]]:
    """The ``visible`` folders a fresh tmpfs will cover (a checkout in /tmp), each with a handle opened now, before
    any tmpfs is mounted, to bind it back from afterwards (:func:`_check_mounts`)."""
    inside = lambda p: any(p == t or p.startswith(t + "/") for t in WRITABLE)  # noqa: E731
    real = [os.path.realpath(v) for v in visible]
    return [(v, os.open(v, os.O_PATH | os.O_DIRECTORY)) for v in real if inside(v) and os.path.isdir(v)]


def _check_mounts(
    libc: ctypes.CDLL, applied: list, hidden: list[str], limits: dict, covered: Sequence[tuple[str, int]] = ()
) -> None:
    """What each check gets of its own, as PID 1 of its namespaces: /proc, and fresh tmpfs wherever it may write (so
    nothing a check wrote is there for the next), each of ``file_mb`` (memory the budget counts). A visible folder
    those cover (``covered``: :func:`_under_writable`) is bound back into the fresh tmpfs, read-only. A top-level
    folder made since ``hidden`` was listed is hidden."""
    _own_proc(libc, applied)
    for path in WRITABLE:
        size = f"size={limits['file_mb'] * TMPFS_FILES}m,mode=1777"
        if os.path.isdir(path) and not _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, size):
            raise OSError(f"could not mount a fresh tmpfs on {path}")
    for path, fd in covered:
        os.makedirs(path, exist_ok=True)
        if not _mount(libc, f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC):
            raise OSError(f"could not show {path} to the check")
        os.close(fd)
        flags = next((f for mp, f in reversed(_mounts()) if mp == path), 0)
        if not _mount(libc, None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags):
            raise OSError(f"could not make {path} read-only for the check")
    for h in _hidden():
        if h not in hidden and not _mount(libc, "tmpfs", h, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=1m"):
            raise OSError(f"could not hide {h}")


def _place(code: bytes) -> str:
    """The program in a fresh /tmp/check, which becomes the working directory."""
    os.makedirs(WORK)
    target = os.path.join(WORK, "main.py")
    with open(target, "wb") as fh:
        fh.write(code)
    os.chdir(WORK)
    return target


def _no_capabilities(libc: ctypes.CDLL) -> bool:
    """Empty the capability sets held now (the bounding set is dropped before, while it still can be)."""

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    if libc.capset(ctypes.byref(Header(CAP_VERSION_3, 0)), (Data * 2)()) != 0:
        return False
    try:
        with open("/proc/self/status") as fh:
            status = dict(line.split(":", 1) for line in fh if ":" in line)
        return not any(int(status[k], 16) for k in ("CapEff", "CapPrm", "CapInh", "CapBnd"))
    except (OSError, KeyError, ValueError):
        return True  # no procfs here: the calls succeeded


def _deny_keyrings(libc: ctypes.CDLL) -> bool:
    """A seccomp filter refusing add_key, request_key and keyctl, and every call made through a foreign system-call
    ABI (x32, or 32-bit calls on a 64-bit kernel, where those calls have other numbers). The program inherits the
    caller's session keyring, and possessing a keyring is enough to read the keys in it (an API key among them).
    Needs no_new_privs."""
    known = KEYRING_CALLS.get(os.uname().machine)
    if known is None:
        return False
    arch, calls = known
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    deny = 5 + len(calls)  # the index of the last instruction
    prog = [(ld, 0, 0, 4), (jeq, 0, deny - 2, arch), (ld, 0, 0, 0), (jge, deny - 4, 0, 0x40000000)]
    prog += [(jeq, deny - (4 + i) - 1, 0, nr) for i, nr in enumerate(calls)]
    prog += [(ret, 0, 0, SECCOMP_RET_ALLOW), (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM)]
    raw = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *ins) for ins in prog))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Program(len(prog), ctypes.addressof(raw))
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0


def _drop_privileges(libc: ctypes.CDLL, applied: list, program: str, owner: int) -> None:
    """No capabilities, no_new_privs, no keyrings, and a uid of the check's own when root: the program cannot undo
    any of the isolation. ``owner`` is the launcher's pid, which names that uid."""
    # the bounding set caps what an exec can give back; dropping it needs a capability, so it goes first
    dropped = [libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0 for cap in range(64)]
    if os.geteuid() == 0:
        if _become_check_user(program, CHECK_UIDS + owner):
            applied += ["not-root", "own-process-limit"]
    elif "user-namespace" in applied:
        applied.append("own-process-limit")  # the launcher's user namespace serves this check alone, and so its count
    cleared = _no_capabilities(libc)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 and any(dropped) and cleared:
        applied.append("no-capabilities")
        if _deny_keyrings(libc):
            applied.append("no-keyrings")


def _become_check_user(program: str, uid: int) -> bool:
    """Root's program runs as ``uid``: without capabilities uid 0 still owns every root file (/etc/shadow), and a uid
    shared between checks (``nobody``) would share its process count, so a fork bomb in one starves the others."""
    try:
        for path in (os.path.dirname(program), program):
            os.chown(path, uid, uid)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    except OSError:
        return False
    return os.getuid() == os.geteuid() == uid


def _processes_of(uid: int) -> int:
    n = 0
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if pid.isdigit():
            with contextlib.suppress(OSError):
                n += os.stat(f"/proc/{pid}").st_uid == uid
    return n


def budget(limits: dict) -> tuple[int, int]:
    """How a check's ``memory_mb`` is shared: (processes, MB of address space each). The writable tmpfs are memory
    too, and threads count as processes (RLIMIT_NPROC counts tasks), so processes × MB each plus the tmpfs stay within
    ``memory_mb`` however the program forks."""
    tmpfs = len(WRITABLE) * limits["file_mb"] * TMPFS_FILES
    return limits["processes"], (limits["memory_mb"] - tmpfs) // limits["processes"]


def _set_limits(limits: dict, others: int, applied: list) -> None:
    """The check's resource limits. ``others`` are the processes the kernel counts with the program's under
    RLIMIT_NPROC that are not the program's (the launcher's chain inside its user namespace)."""
    processes, each_mb = budget(limits)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    resource.setrlimit(resource.RLIMIT_AS, (each_mb << 20,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_mb"] << 20,) * 2)
    nproc = others + processes
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if os.geteuid() != 0 and "own-process-limit" in applied:  # root is not held to RLIMIT_NPROC
        applied.append("memory-per-check")


def _start(spec: dict, applied: list, others: int) -> None:
    """The last step before the program: its limits, then what applied (and what was missing) to the launcher on
    STATUS_FD, which closes. A check missing a required protection ends here, having run nothing."""
    _set_limits(spec["limits"], others, applied)
    missing = [p for p in spec["require"] if p not in applied]
    os.write(STATUS_FD, f"applied {','.join(sorted(set(applied), key=ORDER.index))}\n".encode())
    if missing:
        os.write(STATUS_FD, f"missing {','.join(missing)}\n".encode())
        os._exit(REFUSED)
    os.close(STATUS_FD)  # from here on, whatever happens is the program's


def _arrange_fds(fds: list[int]) -> None:
    """Put the program's descriptors at :data:`PROGRAM_FDS` and the status pipe at :data:`STATUS_FD`; close the rest."""
    high = [fcntl.fcntl(f, fcntl.F_DUPFD, 256) for f in fds]
    for target, f in zip([*PROGRAM_FDS, STATUS_FD], high, strict=True):
        os.dup2(f, target)
    os.closerange(STATUS_FD + 1, max(os.sysconf("SC_OPEN_MAX"), 1024))


# ---- one launcher per check ---------------------------------------------------------------------------------------


def _namespaces(spec: dict, program: str, applied: list, owner: int) -> str:
    """Enter the namespaces (a user namespace first when not root); the caller continues as PID 1 of the new one."""
    libc = _libc()
    if not sys.platform.startswith("linux") or not hasattr(libc, "unshare"):
        return program  # namespaces are Linux's
    if not _enter_user_namespace(libc, applied):
        return program
    if libc.unshare(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC) == 0:
        applied.append("own-ipc")
    elif libc.unshare(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID) != 0:
        return program
    applied += ["no-network", "pid-namespace"]
    child = os.fork()  # PID 1 of the new namespace: when it exits, every process it left is killed
    if child:
        os.closerange(3, STATUS_FD + 1)
        _, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
    with open(program, "rb") as fh:  # read before /tmp is replaced
        code = fh.read()
    covered = _under_writable(spec.get("visible", ()))
    hidden = _world(libc, applied, spec.get("visible", ()))
    _check_mounts(libc, applied, hidden, spec["limits"], covered)
    program = _place(code)
    _drop_privileges(libc, applied, program, owner)
    return program


def main() -> None:
    with open(sys.argv[1]) as fh:
        spec = json.load(fh)
    program, owner = spec["program"], os.getpid()
    applied = ["rlimits", "fresh-cwd", "clean-env"]
    _arrange_fds([1, 2, spec["result_fd"], spec["token_fd"], spec["status_fd"]])
    if spec["namespaces"]:
        program = _namespaces(spec, program, applied, owner)  # from here on, PID 1 of the check's namespaces
        others = 0 if "not-root" in applied else 1  # in a user namespace: the launcher outside PID 1's namespace
    else:
        others = _processes_of(os.geteuid()) - 1  # every process of this user counts: only more are the check's
    _start(spec, applied, others)
    run_program(program, spec["split"])


# ---- the pre-forked launcher --------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Check:
    """What a check's processes carry from the launcher: its request and descriptors, and the world's facts."""

    libc: ctypes.CDLL
    spec: dict
    fds: list[int]  # the program (read), stdout, stderr, the result pipe, the token pipe
    applied: list[str]
    hidden: list[str]
    status_w: int  # to the launcher: "applied …", "missing …", "exit <wait status>" or "error <why>"
    owner: int  # the launcher's pid


def _send(sock: socket.socket, kind: str, **fields: object) -> None:
    sock.send(kind.encode() + b" " + json.dumps(fields).encode())


def serve(fd: int) -> tuple[str, int]:
    """Set up the world once, then run checks from the socket ``fd`` until it closes. Returns only in a check's
    program process, with the path of the program to run and where its tests start."""
    sock = socket.socket(fileno=fd)
    applied = ["rlimits", "fresh-cwd", "clean-env"]
    libc = _libc()
    why = ""
    if not sys.platform.startswith("linux") or not hasattr(libc, "unshare"):
        why = "namespaces are Linux's"
    elif not _enter_user_namespace(libc, applied):
        why = "this user may not create a user namespace"
    elif libc.unshare(CLONE_NEWNET | CLONE_NEWNS) != 0:
        why = f"unshare(network, mount) failed: {os.strerror(ctypes.get_errno())}"
    if why:
        _send(sock, "ready", usable=False, why=why)
        os._exit(0)
    applied.append("no-network")
    hidden = _world(libc, applied)
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            __import__(name)
    _send(sock, "ready", usable=True, why="", applied=applied)
    launcher = os.getpid()
    while True:
        msg, fds, _, _ = socket.recv_fds(sock, 65536, 8)
        if not msg:
            os._exit(0)  # the caller is gone
        if not msg.startswith(b"check ") or len(fds) != 5:
            for f in fds:
                os.close(f)
            continue  # a kill that came after its check ended
        status_r, status_w = os.pipe()
        check = _Check(libc, json.loads(msg[6:]), fds, list(applied), hidden, status_w, launcher)
        child = os.fork()
        if child == 0:
            sock.close()
            os.close(status_r)
            return _guarded(_check_process, check)
        _relay(sock, check, child, status_r)


def _guarded(step: Callable[[_Check], tuple[str, int]], check: _Check) -> tuple[str, int]:
    """Run one of a check's processes; a failure of ours is reported to the launcher, never returned into its loop."""
    try:
        return step(check)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.write(check.status_w, f"error {type(exc).__name__}: {exc}\n".encode())
        os._exit(1)


def _relay(sock: socket.socket, check: _Check, child: int, status_r: int) -> None:
    """In the launcher: wait for the check (killing it on request or when the caller goes), then report it."""
    os.close(check.status_w)
    for f in check.fds:
        os.close(f)
    out = b""
    while True:
        ready, _, _ = select.select([sock, status_r], [], [])
        if sock in ready:
            msg = sock.recv(65536)
            if not msg:  # the caller is gone: the check dies with this launcher (parent-death signals)
                os.kill(child, signal.SIGKILL)
                os._exit(0)
            if msg == b"kill":  # past the deadline
                os.kill(child, signal.SIGKILL)
        if status_r in ready:
            chunk = os.read(status_r, 4096)
            if not chunk:  # every process of the check is gone
                break
            out += chunk
    os.close(status_r)
    said: dict[str, list[str]] = {}
    for line in out.decode(errors="replace").splitlines():
        kind, _, rest = line.partition(" ")
        said.setdefault(kind, []).append(rest)
    exits = [int(x) for x in said.get("exit", [])]
    _send(
        sock,
        "done",
        status=exits[-1] if exits else None,
        error=said["error"][0] if "error" in said else None,
        applied=said["applied"][0].split(",") if "applied" in said else [],
        missing=said["missing"][0].split(",") if "missing" in said else [],
    )
    os.waitpid(child, 0)  # its namespaces are torn down while the caller reads the result


def _check_process(check: _Check) -> tuple[str, int]:
    """The check's first process: fresh PID, mount and IPC namespaces; it waits for PID 1 of them."""
    libc = check.libc
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != check.owner:  # the launcher died before the signal was asked for
        os._exit(1)
    if libc.unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC) != 0:
        raise OSError(f"unshare(pid, mount, ipc) failed: {os.strerror(ctypes.get_errno())}")
    check.applied += ["pid-namespace", "own-ipc"]
    alive_r, alive_w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(alive_w)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # getppid() is 0 across the namespace: the pipe's end-of-file says the first process died meanwhile
        if select.select([alive_r], [], [], 0)[0]:
            os._exit(1)
        os.close(alive_r)
        return _guarded(_init, check)
    for f in check.fds:
        os.close(f)
    os.waitpid(init, 0)  # when PID 1 is gone, so is every process of the check
    os._exit(0)


def _init(check: _Check) -> tuple[str, int]:
    """PID 1 of the check's namespaces: its own mounts, the program's process, and that process's exit status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the program may signal PID 1, which must not die of it
    _check_mounts(check.libc, check.applied, check.hidden, check.spec["limits"])
    program_fd, *check.fds = check.fds
    with os.fdopen(program_fd, "rb") as fh:
        program = _place(fh.read())
    child = os.fork()
    if child == 0:
        return _program_process(check, program)
    for f in check.fds:
        os.close(f)
    while True:  # PID 1 reaps every orphan of the namespace
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    os.write(check.status_w, f"exit {status}\n".encode())
    os._exit(0)  # the kernel kills every process the program left


def _program_process(check: _Check, program: str) -> tuple[str, int]:
    """The program's process: its file descriptors, no privileges, its limits; returns the program to run."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _arrange_fds([*check.fds, check.status_w])
    check.status_w = STATUS_FD
    _drop_privileges(check.libc, check.applied, program, check.owner)
    # counted with the program's in the launcher's user namespace: the launcher, the check's first process, PID 1
    _start(check.spec, check.applied, 0 if "not-root" in check.applied else 3)
    check.status_w = -1
    return program, check.spec["split"]


def run_program(path: str, split: int) -> None:
    """Run the program (``path`` up to byte ``split``), then its tests (the rest), as ``python -I -S path`` would run
    the file, in this interpreter: its own ``__main__``, the traceback of an uncaught exception, ``sys.exit`` codes,
    threads joined and ``atexit`` run; then exit without tearing down.

    The verdict is not the program's to give: the pass token is read from its pipe before the program starts and is
    written to the result pipe only when the tests' code returned, through functions bound before the program could
    replace them. No name the program can reach and no descriptor it can write to makes a pass; code that reads this
    frame (``sys._getframe``, ``gc``) or the process's memory can, as in any checker that runs tests in-process."""
    read, write, run, settrace, setprofile = os.read, os.write, exec, sys.settrace, sys.setprofile
    token = read(PROGRAM_FDS[3], 64)
    os.close(PROGRAM_FDS[3])
    with open(path, "rb") as fh:
        source = fh.read()
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update(__file__=path, __builtins__=builtins, __cached__=None)
    sys.modules["__main__"] = main_module
    sys.argv[:] = [path]
    sys.orig_argv[:] = [sys.executable, "-I", "-S", path]
    code = 0
    try:
        # compiled apart, with the tests' lines numbered as in the file, so a hook the program sets can be undone
        program = compile(source[:split], path, "exec", dont_inherit=True, optimize=0)
        lines = b"\n" * source[:split].count(b"\n")
        tests = compile(lines + source[split:], path, "exec", dont_inherit=True, optimize=0)
        run(program, main_module.__dict__)
        settrace(None)
        setprofile(None)
        run(tests, main_module.__dict__)
        write(PROGRAM_FDS[2], token)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # the program's frames, not this one
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        code = 1
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = 120  # what the interpreter exits with when it cannot flush
    os._exit(code)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        run_program(*serve(int(sys.argv[2])))
    else:
        main()
