# ruff: noqa
from dataclasses import dataclass

from sglang.srt.arg_groups.arg_utils import A, Arg


@dataclass
class CacheArgs:
    disable_radix: A[bool, "Turn the radix cache off."] = False
    _internal: int = 0
