"""Stop `make run` at once, before migrating, when HOST:PORT is taken or cannot be bound."""

from __future__ import annotations

import errno
import socket
import sys


def main() -> int:
    host, port = sys.argv[1], int(sys.argv[2])
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((host.strip("[]"), port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                print(
                    f"make run: port {port} on {host} is already in use; "
                    f"pick another with `make run PORT={port + 1}`.",
                    file=sys.stderr,
                )
            else:
                print(f"make run: cannot listen on {host}:{port}: {exc.strerror}.", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
