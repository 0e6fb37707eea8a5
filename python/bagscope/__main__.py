"""The ``bagscope`` command: the command line and the desktop app, run by the native module
(``bagscope info run.bag``, ``bagscope run.bag``, ``python -m bagscope --help``)."""

import signal
import sys


def main() -> None:
    from ._bagscope import _main

    # Ctrl-C ends the command as it ends the executable (the verbs that finish cleanly on it,
    # play, record and serve, install their own handler).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_main(["bagscope", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
