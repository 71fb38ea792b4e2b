"""Core: the catalog, templates, release ranges, matching, rendering, notes and the pipeline.

Stands on :mod:`errhints._facts` and the leaves (``_config``, ``_packages``). The doors reach
it through two modules only: :mod:`.notes` (attach a note to a live exception) and
:mod:`.pipeline` (text and facts to matches). The catalog loads on the first failure;
the site index (:mod:`.siteindex`) only when no entry explains one.
"""
