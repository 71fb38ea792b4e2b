# ruff: noqa
from dataclasses import dataclass

from sglang.srt.arg_groups.arg_utils import A, Arg


@dataclass
class CacheArgs:
    radix_cache: A[str, Arg(help="on or off", aliases=["--radix"])] = "on"
    page_bytes: A[int, Arg(help="Bytes per page.", cli_name="--page-size-bytes")] = 0
    secret: A[int, Arg(help="Not on the command line.", no_cli=True)] = 0
