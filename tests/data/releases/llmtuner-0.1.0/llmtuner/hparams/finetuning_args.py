# ruff: noqa
from dataclasses import dataclass
from typing import Optional


@dataclass
class FinetuningArguments:
    finetuning_type: str = "lora"


@dataclass
class ModelArguments:
    quantization_bit: Optional[int] = None
