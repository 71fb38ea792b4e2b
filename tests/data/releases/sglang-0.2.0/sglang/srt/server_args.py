# ruff: noqa
# Release 0.2.0 adds a comment line here.
import dataclasses
import logging
import os

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    mem_fraction_static: float = 0.9
    port: int = 30000

    def __post_init__(self):
        if self.tp_size < 1:
            raise ValueError(f"tp_size must be positive, got {self.tp_size}")
        if self.mem_fraction_static > 0.95:
            logger.warning("mem_fraction_static %s is very high", self.mem_fraction_static)
        else:
            assert self.mem_fraction_static > 0, "mem_fraction_static must be above zero"
        assert self.model_path

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str)
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, dest="tp_size")
        parser.add_argument("--mem-fraction-static", type=float)
        parser.add_argument("--port", type=int)


def prepare_server_args(args, parser):
    if os.environ.get("SGLANG_STRICT_PORT") and args.port == 0:
        parser.error("--port cannot be 0 when SGLANG_STRICT_PORT is set")
