"""Maintenance: everything that downloads released sources or reads them. Never at run time.

:mod:`.releases` downloads and caches released wheels; :mod:`.verify` checks the catalog's
facts against them; :mod:`.index` builds the site index shipped in the wheel. Only the
command line (``errhints catalog ...``) imports this layer: ``import errhints``,
``install()``, a hook firing and ``errhints explain`` never do.
"""
