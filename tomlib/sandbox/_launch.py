"""The sandbox's launcher: ``python -I -S _launch.py SPEC.json``. Applies the isolation, then runs the program.

Run as its own process, so nothing here happens between fork and exec of a threaded parent. It puts the program in
new network, mount and PID namespaces; a user who is not root gets them inside a new user namespace, which Linux
lets unprivileged users create (unless the system forbids it), so every user gets the same isolation: no network; a
/proc of its own that shows only its processes, with /proc/sys read-only; every file system read-only except a
private /tmp (its working directory), /var/tmp and /dev/shm; every top-level folder that is not the system's
(/usr, /etc, /lib…) hidden: /root, /home and /run, and also the checkout, /srv, /opt, /mnt, /var and any data
folder, since a program needs none of them (the interpreter stays visible); every process it starts dies with it.
It then drops every capability and sets no_new_privs, so the program cannot undo any of that; root's program runs as
``nobody`` besides. Everywhere it sets resource limits. When the spec's ``require`` names a protection that could not
be applied, it runs nothing and says what was missing. It uses only the standard library: it starts with
site-packages disabled.
"""

import contextlib
import ctypes
import json
import os
import resource
import sys

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
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
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38
NOBODY = 65534
REFUSED = 97  # exit code: required isolation missing, the program was not run
WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")
SYSTEM = ("/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/sys", "/tmp", "/usr")
"""Top-level folders a program may read; every other one is hidden under an empty tmpfs."""


def _hidden() -> list[str]:
    """Every top-level folder outside :data:`SYSTEM` (a symlink such as /bin -> usr/bin is followed, not hidden)."""
    return sorted(
        p
        for p in (os.path.join("/", e) for e in os.listdir("/"))
        if os.path.isdir(p) and not os.path.islink(p) and p not in SYSTEM
    )


def _mount(libc, src, target, fstype, flags, data=None):  # type: ignore[no-untyped-def]
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


def _own_proc(libc, applied: list) -> None:  # type: ignore[no-untyped-def]
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


def _read_only_world(libc, program: str, applied: list) -> str:  # type: ignore[no-untyped-def]
    """Private mounts: everything read-only, fresh tmpfs where programs may write, every folder outside the system's
    hidden (the interpreter's prefix bound back)."""
    if not _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE):
        return program
    keep = os.path.realpath(sys.base_prefix)
    stash = "/dev/shm/.tomlib-python"
    hidden = _hidden()
    need_stash = any(keep == h or keep.startswith(h + "/") for h in hidden)
    with open(program, "rb") as fh:
        code = fh.read()
    if os.path.isdir("/dev/shm"):
        _mount(libc, "tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    if need_stash:
        os.makedirs(stash)
        _mount(libc, keep, stash, None, MS_BIND | MS_REC)
    covered = [_mount(libc, "tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755") for h in hidden]
    for path in WRITABLE:  # /var/tmp comes back, empty, inside the hidden /var
        if path != "/dev/shm" and (os.path.isdir(path) or os.path.dirname(path) in hidden):
            os.makedirs(path, exist_ok=True)
            _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    if need_stash:
        os.makedirs(keep, exist_ok=True)
        _mount(libc, stash, keep, None, MS_BIND | MS_REC)
    mounts = _mounts()  # read before /proc is replaced, so a /proc that could not be replaced does not matter
    _own_proc(libc, applied)
    under = lambda mp, tops: any(mp == t or mp.startswith(t + "/") for t in tops)  # noqa: E731
    ok = True
    for mp, flags in mounts:
        if mp in WRITABLE or under(mp, ["/proc"]):
            continue
        if under(mp, hidden) and not under(mp, [keep]):
            continue  # out of sight under a tmpfs (the hidden folder itself is a fresh tmpfs, remounted below)
        done = _mount(libc, None, mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        # pseudo file systems the kernel keeps as they are (a container's /dev, /sys) are no place to write to
        ok &= done or mp.startswith(("/dev", "/sys"))
    for h, made in zip(hidden, covered, strict=True):  # the empty tmpfs over a hidden folder: read-only too
        if made and h not in WRITABLE:
            ok &= _mount(libc, None, h, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    if ok:
        applied.append("read-only-fs")
    if all(covered) and (not need_stash or os.path.isdir(keep)):
        applied.append("home-hidden")
    work = "/tmp/check"
    os.makedirs(work)
    target = os.path.join(work, "main.py")
    with open(target, "wb") as fh:
        fh.write(code)
    os.chdir(work)
    return target


def _processes_of(uid: int) -> int:
    n = 0
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if pid.isdigit():
            with contextlib.suppress(OSError):
                n += os.stat(f"/proc/{pid}").st_uid == uid
    return n


def _namespaces(spec: dict, program: str, applied: list) -> str:
    """Enter the namespaces (a user namespace first when not root); the caller continues as PID 1 of the new one."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not sys.platform.startswith("linux") or not hasattr(libc, "unshare"):
        return program  # namespaces are Linux's
    uid, gid = os.geteuid(), os.getegid()
    if uid != 0:
        if libc.unshare(CLONE_NEWUSER) != 0 or not _map_ids(uid, gid):
            return program
        applied.append("user-namespace")
    if libc.unshare(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID) != 0:
        return program
    applied += ["no-network", "pid-namespace"]
    child = os.fork()  # PID 1 of the new namespace: when it exits, every process it left is killed
    if child:
        os.close(spec["report_fd"])
        _, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
    program = _read_only_world(libc, program, applied)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    dropped = [libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0 for cap in range(64)]
    no_new_privs = libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    # the bounding set caps what an exec can give back; a program that is not uid 0 then keeps no capability
    if any(dropped) and no_new_privs:
        applied.append("no-capabilities")
    if uid == 0 and _become_nobody(program):
        applied.append("not-root")
    return program


def _become_nobody(program: str) -> bool:
    """Root's program runs as ``nobody``: without capabilities uid 0 still owns every root file (/etc/shadow)."""
    try:
        for path in (os.path.dirname(program), program):
            os.chown(path, NOBODY, NOBODY)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    except OSError:
        return False
    return os.getuid() == os.geteuid() == NOBODY


def main() -> None:
    with open(sys.argv[1]) as fh:
        spec = json.load(fh)
    program = spec["program"]
    # the real interpreter, not a venv's link to it: a checkout (and its .venv) may live under /tmp, which the
    # program gets a private, empty copy of; with -I -S nothing of the venv is used anyway
    interpreter = os.path.realpath(sys.executable)
    applied = ["rlimits", "fresh-cwd", "clean-env"]
    if spec["namespaces"]:
        program = _namespaces(spec, program, applied)
    missing = [p for p in spec.get("require", ()) if p not in applied]
    report = ",".join(applied) + "\n"
    if missing:
        os.write(spec["report_fd"], (report + "missing:" + ",".join(missing) + "\n").encode())
        os._exit(REFUSED)
    limits = spec["limits"]
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_mb"] << 20,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_mb"] << 20,) * 2)
    # counted where the limit is enforced: in a user namespace, the processes of this user inside it
    nproc = _processes_of(os.geteuid()) + limits["processes"]
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    os.write(spec["report_fd"], report.encode())  # the program's harness writes the token next
    os.execve(interpreter, [interpreter, "-I", "-S", program], spec["env"])


if __name__ == "__main__":
    main()
