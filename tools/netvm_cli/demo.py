"""./netvm demo: build, boot 2 nodes, show the NICs exchanging frames, tear down."""
import threading
import time

from . import build as buildmod
from .cluster import Cluster, cluster_name
from .command import Command
from .common import DEFAULT_MEM, DEFAULT_TIMEOUT, NetvmError, Timer, say


def demo(c, no_build):
    t = Timer()
    if not no_build:
        buildmod.build()
    say("--- booting a 2-node cluster '%s' (NIC link: node 0 <-> node 1 over a unix socket)" % c.name)
    c.up(2, "tcg", DEFAULT_MEM, DEFAULT_TIMEOUT)
    try:
        for n in (0, 1):
            say("--- node %d: netvm-info" % n)
            rc = c.run(n, ["netvm-info"], timeout=60)
            if rc != 0:
                raise NetvmError("netvm-info failed on node %d (exit %d)" % (n, rc))
        count, size = 5, 64
        say("--- raw frames: node 1 echoes, node 0 sends %d frames of %d bytes and checks the echoes" % (count, size))
        echo = {}

        def echo_server():
            try:
                echo["rc"] = c.run(1, ["netvm-raw", "echo", str(count)], timeout=120)
            except NetvmError as e:
                echo["err"] = str(e)

        th = threading.Thread(target=echo_server, daemon=True)
        th.start()
        time.sleep(1.0)  # let the echo side open the device
        rc = c.run(0, ["netvm-raw", "ping", str(count), str(size)], timeout=120)
        th.join(130)
        if rc != 0:
            raise NetvmError("netvm-raw ping failed on node 0 (exit %d)" % rc)
        if echo.get("rc") != 0:
            raise NetvmError("netvm-raw echo failed on node 1 (%s)" % echo.get("err", "exit %s" % echo.get("rc")))
        say("--- done: both NICs bound and self-tested; %d frames went 0 -> 1 -> 0 intact" % count)
    finally:
        c.down()
    say("demo finished in %s" % t)
    return 0


def add_demo_args(sp):
    sp.add_argument("--no-build", action="store_true", help="use what is built")
    # its own cluster, so that a user's 'default' one is left alone
    sp.set_defaults(func=lambda a, c: demo(Cluster(cluster_name(getattr(a, "cluster", None) or "demo")),
                                           a.no_build))


COMMANDS = [
    Command("demo", "build, boot 2 nodes, show the NICs exchanging frames, shut down", add_demo_args),
]
