"""A tiny fake sglang release for the site index tests (never imported)."""
