"""mach, the jsprof driver, as a package of command modules (Servo's mach is one too).

`./mach` at the repository's root puts tools/ on the path and calls `mach.main.main()`. The
modules, lowest first (each imports only modules above it in this list):

    common      ROOT, log, env(), target_dir(), cargo(), apt_install, the cargo argument sets
    cli         argparse's parsers for mach: registration, pass-through arguments, `help`
    collector   the collector's build and npm packages; `./mach ballista`
    servo_tree  the Servo crates' lay-out with our patches, the patch refresher, the Servo build
    wpt         `./mach test-wpt`, `./mach update-wpt`
    build       `./mach bootstrap|doctor|build|run|codegen|check-units`
    servo       `./mach servo build|run|test|refresh-patches`
    test        `./mach test`, `test-multiprocess`, `test-export-readers`, `test-webdriver`
    lint        `./mach lint`, `./mach docs-check`
    bench       `./mach bench` (criterion, the page benchmark, the soak test, --peer)
    fuzz        `./mach fuzz`
    main        the parser of every command, and `main()`

The tests of the argument parsing and of the Servo lay-out are in tests/
(`python3 -m unittest discover -s tools/mach/tests`, also the first step of `./mach test`).
"""
