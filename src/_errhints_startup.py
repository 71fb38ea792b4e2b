"""errhints' start-up entry point: installs errhints when ``ERRHINTS=1``, else does nothing.

Shipped at the root of site-packages next to ``errhints-startup.pth`` and
``errhints-startup.start`` (PEP 829). A top-level module of its own so that Python 3.15+,
which imports the ``.start`` entry point in every process, pays for this small file only,
not for importing the errhints package.
"""

import os

# errhints._config.ENV_ENABLE and ENV_DEBUG, written out so that this file imports nothing
# (tests/doors/test_startup.py checks that they agree).


def activate() -> None:
    """Install errhints in this process if ``ERRHINTS=1``; silent and harmless otherwise."""
    if os.environ.get("ERRHINTS") != "1":
        return
    try:
        from errhints._startup import activate as install_now
    except Exception as err:  # errhints removed or broken: start-up must go on regardless
        if os.environ.get("ERRHINTS_DEBUG") == "1":
            import sys

            print(f"errhints: start-up hook could not import errhints: {err!r}", file=sys.stderr)
        return
    install_now()
