"""Host side of the guest agent protocol (images/agent/netvm-agent.c).

Frames: u8 type | u32 big-endian length | payload.  One TCP connection per
command; see the agent's source or docs/cluster.md for the frame types.
"""
import os
import signal
import socket
import struct
import sys
import threading
import time


class AgentError(Exception):
    pass


class DeadlinePassed(AgentError):
    """run()'s deadline came before the command ended."""


class OutputClosed(Exception):
    """The host's stdout/stderr was closed while the command ran."""


def _send(sock, ftype, payload=b""):
    if isinstance(payload, str):
        payload = payload.encode()
    sock.sendall(struct.pack(">cI", ftype.encode(), len(payload)) + payload)


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _recv(sock):
    hdr = _recv_exact(sock, 5)
    if hdr is None:
        return None, None
    ftype, n = struct.unpack(">cI", hdr)
    data = _recv_exact(sock, n) if n else b""
    if data is None:
        return None, None
    return ftype.decode(), data


def connect(port, timeout=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def ping(port, timeout=2.0):
    """The agent's greeting ("netvm-agent 1 node=N"), or None if it does not
    answer (QEMU's port forward accepts even when the guest is not up yet)."""
    try:
        with connect(port, timeout) as s:
            s.settimeout(timeout)
            _send(s, "p")
            ftype, data = _recv(s)
    except OSError:
        return None
    if ftype != "p":
        return None
    return data.decode(errors="replace")


def run(port, argv, env=(), cwd=None, stdin=None, out=None, err=None, timeout=None, deadline=None):
    """Runs argv in the guest; streams its stdout/stderr to out/err (binary
    files, default the host's) as it comes.  stdin: a binary file to forward,
    or None for an empty stdin.  timeout: seconds without a word from the
    agent; deadline: time.monotonic() by which the command must have ended
    (whatever it prints).  Returns the exit status, shell style (128+N if
    killed by signal N)."""
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr.buffer
    try:
        s = connect(port)
    except OSError as e:
        raise AgentError("cannot reach the guest agent on port %d: %s" % (port, e))
    with s:
        s.settimeout(None if timeout is None else timeout)
        for a in argv:
            _send(s, "a", a)
        for e in env:
            _send(s, "e", e)
        if cwd:
            _send(s, "d", cwd)
        _send(s, "x")
        if stdin is None:
            _send(s, "I")
        else:
            threading.Thread(target=_pump_stdin, args=(s, stdin), daemon=True).start()
        interrupted = False
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DeadlinePassed("command did not end by its deadline")
                s.settimeout(left if timeout is None else min(left, timeout))
            try:
                ftype, data = _recv(s)
            except KeyboardInterrupt:
                if interrupted:
                    return 130  # closing the connection kills the command
                interrupted = True
                try:
                    _send(s, "k", bytes([signal.SIGINT]))
                except OSError:
                    return 130
                continue
            except socket.timeout:
                if deadline is not None and deadline <= time.monotonic():
                    raise DeadlinePassed("command did not end by its deadline")
                raise AgentError("command timed out after %s s" % timeout)
            except OSError as e:
                raise AgentError("connection to the guest agent lost: %s" % e)
            if ftype is None:
                raise AgentError("the guest agent closed the connection (guest down?)")
            try:
                if ftype == "o":
                    out.write(data)
                    out.flush()
                elif ftype == "r":
                    err.write(data)
                    err.flush()
            except BrokenPipeError:
                # nobody reads our output any more (e.g. `| head`): closing
                # the connection makes the agent kill the command
                raise OutputClosed()
            if ftype == "f":
                err.write(b"netvm-agent: " + data + b"\n")
                err.flush()
            elif ftype == "x":
                (status,) = struct.unpack(">i", data)
                return status if status >= 0 else 128 - status


def _pump_stdin(s, f):
    try:
        fd = f.fileno()
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            _send(s, "i", data)
        _send(s, "I")
    except OSError:
        pass


def capture(port, argv, timeout=60):
    """Runs argv; returns (status, stdout bytes, stderr bytes)."""
    import io
    o, e = io.BytesIO(), io.BytesIO()
    st = run(port, argv, out=o, err=e, timeout=timeout)
    return st, o.getvalue(), e.getvalue()
