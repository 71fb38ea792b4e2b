# ruff: noqa
# A look-alike project: the same words as sglang 0.2.0's check, and one message of its own.


def check(tp):
    if tp < 1:
        raise ValueError(f"tp_size must be positive, got {tp}")
    raise RuntimeError("vLLM-only words that no other project prints anywhere")
