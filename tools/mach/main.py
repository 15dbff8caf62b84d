"""mach's entry point: the parser of every command (each command module registers its own) and
main(), which `./mach` calls. `./mach`, `./mach -h` and `./mach help` list the commands, one
line each; `./mach help CMD [SUB]` and `./mach CMD --help` show one.
"""

import sys

from . import bench, build, cli, collector, fuzz, lint, servo, test, wpt

DESCRIPTION = "mach: the jsprof driver, Servo-style."

EPILOG = """\
One cargo profile (release) serves build, run, test and bench, and the target directory is
persistent ($JSPROF_TARGET_DIR, default ~/.cache/jsprof/target), because SpiderMonkey's
build script takes ~30 minutes on 2 cores and runs once per profile and target directory.

Environment: JSPROF_TARGET_DIR (the target dir), JSPROF_CARGO_TIMINGS=1 (cargo --timings),
JSPROF_SERVO_DIR, JSPROF_FUZZ_TARGET_DIR, JSPROF_BALLISTA_DIR, and the tools' caches
JSPROF_WPT_TOOLS, JSPROF_WEBDRIVER_TOOLS, JSPROF_EXPORT_TOOLS, JSPROF_BENCH_TOOLS,
JSPROF_COLLECTOR_SDK, JSPROF_PAGE_TOOLS (all under ~/.cache/jsprof by default)."""

# The order of `./mach help`: a newcomer's order.
MODULES = (build, test, wpt, lint, bench, fuzz, servo, collector)


def build_parser():
    parser = cli.top_parser(DESCRIPTION, EPILOG)
    commands = cli.group(parser)
    p = cli.command(commands, "help", "list the commands, or show one: ./mach help CMD [SUBCOMMAND]",
                    lambda ns: show_help(parser, ns.names), usage="./mach help [CMD [SUBCOMMAND]]")
    p.add_argument("names", nargs="*", metavar="CMD", help="a command, and a subcommand of servo or ballista")
    for module in MODULES:
        module.register(commands)
    return parser


def show_help(parser, names):
    """`./mach help [CMD [SUB]]`: 0, or 2 for a command that does not exist."""
    found = cli.find(parser, names)
    if found is None:
        print(f"mach: no command {' '.join(names)!r}; ./mach help lists them", file=sys.stderr)
        return 2
    sys.stdout.write(found.format_help())
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if not argv or argv[0] in ("-h", "--help"):
        return show_help(parser, [])
    try:
        command, ns = cli.resolve(parser, argv)
    except cli.Help as h:
        sys.stdout.write(h.parser.format_help())
        return 0
    return command.mach_func(ns)
