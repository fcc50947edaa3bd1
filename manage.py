#!/usr/bin/env python
"""Django's command-line utility for a source checkout (an installed site has `arena-manage`)."""

from arena_site.manage import main

if __name__ == "__main__":
    main()
