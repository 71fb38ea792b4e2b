"""errhints' start-up entry point: installs errhints when ``ERRHINTS=1``, else does nothing.

Shipped at the root of site-packages next to ``errhints-startup.pth`` and
``errhints-startup.start`` (PEP 829). A top-level module of its own so that Python 3.15+,
which imports the ``.start`` entry point in every process, pays for this small file only,
not for importing the errhints package.
"""

import os

# errhints._config.ENV_ENABLE, ENV_DEBUG, TRUE_VALUES and FALSE_VALUES, written out so that
# this file imports nothing (tests/doors/test_startup.py checks that they agree).
_TRUE = ("1", "true", "yes", "on", "y", "t")
_FALSE = ("", "0", "false", "no", "off", "n", "f")
_warned: list[str] = []  # an unknown value is reported once per process


def activate() -> None:
    """Install errhints in this process if ``ERRHINTS`` is on; silent and harmless otherwise.

    ``1``, ``true``, ``yes`` and ``on`` (any case) turn it on; an unknown value is reported
    once on stderr and leaves errhints off.
    """
    value = os.environ.get("ERRHINTS", "").strip().lower()
    if value in _FALSE:
        return
    if value not in _TRUE:
        if not _warned:
            _warned.append(value)
            import sys

            raw = os.environ.get("ERRHINTS")
            sys.stderr.write(f"errhints: ignoring ERRHINTS={raw!r}: use 1/true/yes/on or 0/false\n")
        return
    try:
        from errhints._startup import activate as install_now
    except Exception as err:  # errhints removed or broken: start-up must go on regardless
        if os.environ.get("ERRHINTS_DEBUG", "").strip().lower() in _TRUE:
            import sys

            print(f"errhints: start-up hook could not import errhints: {err!r}", file=sys.stderr)
        return
    install_now()
