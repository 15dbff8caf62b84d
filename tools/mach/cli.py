"""argparse for mach: the parser class, how a command module registers its commands, how the
arguments a command passes on to another program (cargo, jsprof, a test runner) are kept
unchanged and in order, and the one-line-per-command listing of `./mach help`.

A command is registered with `command(group, name, help, func, ...)`: `help` is its one line
in the listing, `func(ns)` runs it with the parsed namespace and returns the exit status.

Pass-through (`passthrough=`):
  None         every argument must be one of the command's own: an unknown one exits 2.
  KNOWN        the command's own options are recognised anywhere before a `--`; every other
               argument is passed on in its order, and `--` with all that follows it too.
               (`./mach test [--repeat N] [--load K] [cargo test args]`)
  REMAINDER    the command's own options are recognised only before the first positional
               argument; from there on everything is passed on, and so is every unknown
               option before it. (`./mach run PAGE [jsprof options]`: `./mach run -M
               --pref x=1 PAGE` passes `-M --pref x=1 PAGE`, `./mach run PAGE --help` passes
               --help to jsprof.)
  AFTER_DASHES strict before `--`; what follows `--` (without it) is passed on.
               (`./mach fuzz TARGET -- LIBFUZZER_ARGS`)
The passed-on arguments are in `ns.args`. `-h`/`--help` is mach's own wherever it is
recognised (before `--`; for REMAINDER, before the first positional).

This module imports no other module of mach.
"""

import argparse
import inspect
import re
import sys
import textwrap

KNOWN = "known"
REMAINDER = "remainder"
AFTER_DASHES = "after-dashes"


class Help(Exception):
    """Raised by resolve() for `-h`/`--help` given to a group of commands (`./mach servo -h`)."""

    def __init__(self, parser):
        super().__init__(parser.prog)
        self.parser = parser


class Formatter(argparse.HelpFormatter):
    """Descriptions and epilogs as paragraphs (separated by a blank line), each wrapped to the
    terminal; a paragraph with an indented line (a table) is kept as it is."""

    def _fill_text(self, text, width, indent):
        out = []
        for para in re.split(r"\n\s*\n", text.strip("\n")):
            lines = para.splitlines()
            if any(line[:1].isspace() for line in lines):
                out.append("\n".join(indent + line for line in lines))
            else:
                out.append(textwrap.fill(" ".join(line.strip() for line in lines), width,
                                         initial_indent=indent, subsequent_indent=indent))
        return "\n\n".join(out)


class MachParser(argparse.ArgumentParser):
    """An ArgumentParser with no abbreviated options (`--rep` is not `--repeat`: it is passed
    on), mach's error line, and for a group a listing of its commands, one line each."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)
        self.mach_func = None
        self.mach_passthrough = None
        self.mach_check = None
        self.mach_help = ""
        self.mach_children = {}

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"mach: {self.prog}: {message}", file=sys.stderr, flush=True)
        sys.exit(2)

    def command_rows(self, prefix=""):
        """(name, one line) of every command under this group, subcommands after their group."""
        for name, child in self.mach_children.items():
            yield prefix + name, child.mach_help
            yield from child.command_rows(prefix + name + " ")

    def format_help(self):
        if not self.mach_children:
            return super().format_help()
        rows = list(self.command_rows())
        width = max(len(name) for name, _ in rows)
        formatter = self._get_formatter()
        text = self.format_usage() + "\n"
        if self.description:
            text += formatter._fill_text(self.description, formatter._width, "") + "\n\n"
        text += "commands:\n" + "".join(f"  {name:<{width}}  {line}\n" for name, line in rows)
        if self.epilog:
            text += "\n" + formatter._fill_text(self.epilog, formatter._width, "") + "\n"
        return text


def top_parser(description, epilog):
    return MachParser(prog="./mach", usage="./mach COMMAND [ARGS]  (./mach help [COMMAND])",
                      description=description, epilog=epilog, add_help=False)


def group(parser):
    """The subparsers of a parser that holds commands (the top level, `servo`, `ballista`)."""
    subparsers = parser.add_subparsers(metavar="COMMAND", parser_class=MachParser, prog=parser.prog)
    subparsers.mach_parent = parser
    return subparsers


def command(subparsers, name, help, func=None, description=None, epilog=None, passthrough=None, usage=None,
            check=None):
    """Registers `name` under a group; returns its parser, to add its arguments to. `check(ns)`,
    if given, returns what is wrong with the parsed arguments (an error, exit 2) or None."""
    parser = subparsers.add_parser(name, help=help, description=inspect.cleandoc(description or help),
                                   epilog=epilog, usage=usage)
    parser.mach_help = help
    parser.mach_func = func
    parser.mach_passthrough = passthrough
    parser.mach_check = check
    subparsers.mach_parent.mach_children[name] = parser
    if passthrough == REMAINDER:
        parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    if func is None:
        parser.usage = usage or f"{parser.prog} COMMAND [ARGS]"
    return parser


def whole_number(minimum=0, message=None):
    """An argparse type: a whole number of at least `minimum` (digits only, as mach has always
    taken them: no sign)."""
    def parse(value):
        if not value.isdigit() or int(value) < minimum:
            raise argparse.ArgumentTypeError(message or f"needs a whole number{f' ({minimum} or more)' if minimum else ''}")
        return int(value)
    parse.__name__ = "whole number"
    return parse


def split_dashes(argv):
    """(what comes before the first `--`, `--` and what follows it)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i:]
    return list(argv), []


def find(parser, names):
    """The parser of a command path (["servo", "run"]), or None."""
    for name in names:
        parser = parser.mach_children.get(name)
        if parser is None:
            return None
    return parser


def resolve(parser, argv):
    """(the command's parser, its namespace) for a command line without the program name.
    Exits 2 (through parser.error) on an unknown command or bad arguments; raises Help for a
    group's -h."""
    argv = list(argv)
    while parser.mach_children:
        if argv and argv[0] in parser.mach_children:
            parser = parser.mach_children[argv.pop(0)]
        elif argv and argv[0] in ("-h", "--help"):
            raise Help(parser)
        elif argv:
            parser.error(f"unknown command {argv[0]!r} (commands: {', '.join(parser.mach_children)})")
        else:
            parser.error(f"a command is needed: {', '.join(parser.mach_children)}")
    mode = parser.mach_passthrough
    if mode in (KNOWN, REMAINDER):
        head, tail = split_dashes(argv)
        ns, extras = parser.parse_known_args(head)
        ns.args = extras + list(getattr(ns, "args", None) or []) + tail
    elif mode == AFTER_DASHES:
        head, tail = split_dashes(argv)
        ns = parser.parse_args(head)
        ns.args = tail[1:]
    else:
        ns = parser.parse_args(argv)
    problem = parser.mach_check(ns) if parser.mach_check else None
    if problem:
        parser.error(problem)
    return parser, ns
