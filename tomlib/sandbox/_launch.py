"""The sandbox's launcher: ``python -I -S _launch.py SPEC.json``. Applies the isolation, then runs the program.

Run as its own process, so nothing here happens between fork and exec of a threaded parent. As root it puts the
program in new network, mount and PID namespaces: no network; every file system read-only except a private
/tmp (its working directory), /var/tmp and /dev/shm; /root and /home hidden (the interpreter stays visible); every
process it starts dies with it. It then drops every capability, so the program cannot undo any of that. Everywhere
it sets resource limits. It uses only the standard library: it starts with site-packages disabled.
"""

import contextlib
import ctypes
import json
import os
import resource
import sys

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
PR_CAPBSET_DROP = 24


def _mount(libc, src, target, fstype, flags, data=None):  # type: ignore[no-untyped-def]
    enc = lambda s: s.encode() if isinstance(s, str) else s  # noqa: E731
    return libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) == 0


def _read_only_world(libc, program: str, applied: list) -> str:  # type: ignore[no-untyped-def]
    """Private mounts: everything read-only, fresh tmpfs where programs may write, /root and /home hidden."""
    if not _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE):
        return program
    keep = os.path.realpath(sys.base_prefix)
    stash = "/dev/shm/.tomlib-python"
    hidden = [h for h in ("/root", "/home") if os.path.isdir(h)]
    need_stash = any(keep == h or keep.startswith(h + "/") for h in hidden)
    with open(program, "rb") as fh:
        code = fh.read()
    for path in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(path):
            _mount(libc, "tmpfs", path, "tmpfs", 0, "size=64m,mode=1777")
    if need_stash:
        os.makedirs(stash)
        _mount(libc, keep, stash, None, MS_BIND | MS_REC)
    for h in hidden:
        _mount(libc, "tmpfs", h, "tmpfs", 0, "size=1m,mode=755")
    if need_stash:
        os.makedirs(keep, exist_ok=True)
        _mount(libc, stash, keep, None, MS_BIND | MS_REC)
    writable = {"/tmp", "/var/tmp", "/dev/shm"}
    ok = True
    with open("/proc/self/mountinfo") as fh:
        mounts = [line.split()[4].replace("\\040", " ") for line in fh]
    for mp in mounts:
        if mp in writable or mp.startswith("/proc") or mp.startswith("/sys"):
            continue
        ok &= _mount(libc, None, mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY) or mp.startswith("/dev")
    if ok:
        applied.append("read-only-fs")
    if not need_stash or os.path.isdir(keep):
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
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                n += os.stat(f"/proc/{pid}").st_uid == uid
    return n


def main() -> None:
    with open(sys.argv[1]) as fh:
        spec = json.load(fh)
    program = spec["program"]
    # the real interpreter, not a venv's link to it: a checkout (and its .venv) may live under /tmp, which the
    # program gets a private, empty copy of; with -I -S nothing of the venv is used anyway
    interpreter = os.path.realpath(sys.executable)
    applied = ["rlimits", "fresh-cwd", "clean-env"]
    root = os.geteuid() == 0
    if root and spec["namespaces"]:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID) == 0:
            applied += ["no-network", "pid-namespace"]
            child = os.fork()  # PID 1 of the new namespace: when it exits, every process it left is killed
            if child:
                os.close(spec["report_fd"])
                _, status = os.waitpid(child, 0)
                os._exit(
                    os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
                )
            program = _read_only_world(libc, program, applied)
            libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
            dropped = [libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0 for cap in range(64)]
            if any(dropped):
                applied.append("no-capabilities")
    limits = spec["limits"]
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_mb"] << 20,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_mb"] << 20,) * 2)
    nproc = _processes_of(os.geteuid()) + limits["processes"]
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    os.write(spec["report_fd"], (",".join(applied) + "\n").encode())  # the program's harness writes the token next
    os.execve(interpreter, [interpreter, "-I", "-S", program], spec["env"])


if __name__ == "__main__":
    main()
