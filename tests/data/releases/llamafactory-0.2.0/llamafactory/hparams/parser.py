# ruff: noqa
import logging

logger = logging.getLogger(__name__)


def get_train_args(model_args, finetuning_args):
    if finetuning_args.finetuning_type != "lora" and model_args.quantization_bit is not None:
        raise ValueError("Quantization is only compatible with the LoRA method.")
    if model_args.quantization_bit is not None:
        logger.warning_rank0(
            "Quantized training of {} bits is experimental.".format(model_args.quantization_bit)
        )
