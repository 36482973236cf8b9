"""Subcommands of ./netvm as their modules declare them (docs/frontdoor.md).

A module that implements commands lists them in COMMANDS: each a Command
with its name, its one-line help (also the head of its --help), the
parser keywords it needs (usage=...) and setup(parser), which adds its
arguments and sets the handler with parser.set_defaults(func=handler).
cli.py only wires the lists into one parser; main() then calls
handler(args, cluster), cluster being the Cluster that --cluster or
NETVM_CLUSTER names, and exits with what the handler returns (None: 0).
"""
import argparse

CLUSTER_HELP = "cluster to act on (default: $NETVM_CLUSTER or 'default')"


class Command:
    def __init__(self, name, help_, setup, **parser_kw):
        self.name = name
        self.help = help_
        self.setup = setup
        self.parser_kw = parser_kw

    def add_to(self, sub):
        """Adds this command's parser to the subparsers action sub."""
        sp = sub.add_parser(self.name, help=self.help, description=self.help, **self.parser_kw)
        # also after the command; SUPPRESS keeps a --cluster given before it
        sp.add_argument("--cluster", metavar="NAME", default=argparse.SUPPRESS, help=CLUSTER_HELP)
        self.setup(sp)
        if sp.get_default("func") is None:
            raise AssertionError("command %r sets no handler (set_defaults(func=...))" % self.name)
        return sp
