"""Real exceptions from the released LlamaFactory and SGLang code, raised on CPU.

Opt-in: runs only where the released packages are installed (the ``.venvs/released-cpu``
venv, see README.md beside this file); everywhere else the module is skipped.

Each case calls into the installed package the way a user would (a bad config dict, a bad
request, bad server arguments...), so the traceback carries the package's own frames. The
test asserts that the case raises and that ``errhints.explain`` explains it; for cases whose
entry is known, that the best match is that entry. Cases without a catalog entry yet are
strict xfails: the table doubles as the catalog writers' to-do list
(``scripts/released_cpu_report.py`` prints it).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import importlib.metadata
import inspect
import json
import os
import shutil
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def _require(dist: str) -> None:
    """Skip the module unless the real, released distribution is installed."""
    try:
        importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{dist} is not installed (released-cpu venv only)", allow_module_level=True)
    pytest.importorskip(dist)


# The releases the cases and their expected entries were written against. Under other releases
# the test is skipped; scripts/released_cpu_report.py still measures them (it sets the variable).
REFERENCE = {"llamafactory": "0.9.5", "sglang": "0.5.23"}
ANY_VERSION_ENV = "ERRHINTS_RELEASED_CPU_ANY_VERSION"

_require("llamafactory")
_require("sglang")
if not os.environ.get(ANY_VERSION_ENV):
    for _dist, _version in REFERENCE.items():
        if importlib.metadata.version(_dist) != _version:
            pytest.skip(
                f"the cases are written for {_dist} {_version}, not "
                f"{importlib.metadata.version(_dist)} (use scripts/released_cpu_report.py)",
                allow_module_level=True,
            )

import errhints  # noqa: E402

pytestmark = pytest.mark.released_cpu


# --------------------------------------------------------------------------------------------
# A workspace: a tiny local model (config + tokenizer, no weights) and a dataset directory.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workspace:
    root: Path
    model: str  # a llama-shaped config.json and a word-level tokenizer
    data: str  # dataset_dir with dataset_info.json
    out: str  # an empty output dir


@functools.cache
def workspace() -> Workspace:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, PreTrainedTokenizerFast

    root = Path(tempfile.mkdtemp(prefix="errhints-released-cpu-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    model = root / "tiny-llama"
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for word in "hello world how are you the a of to and user assistant".split():
        vocab[word] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    ).save_pretrained(model)
    LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=128,
        architectures=["LlamaForCausalLM"],
    ).save_pretrained(model)

    data = root / "data"
    data.mkdir()
    (data / "tiny.json").write_text(
        json.dumps([{"instruction": "hello", "input": "", "output": "world"}] * 4)
    )
    (data / "empty_rows.json").write_text(
        json.dumps([{"instruction": "", "input": "", "output": ""}] * 4)
    )
    (data / "pairs.json").write_text(
        json.dumps([{"instruction": "hi", "chosen": "a", "rejected": "b"}] * 4)
    )
    (data / "notes.txt").write_text("hello world\n")
    (data / "bad_roles.json").write_text(
        json.dumps(
            [{"conversations": [{"from": "wizard", "value": "hi"}, {"from": "gpt", "value": "x"}]}]
            * 4
        )
    )
    (data / "oddext").mkdir()
    (data / "oddext" / "part.xyz").write_text("{}")
    info = {
        "tiny": {"file_name": "tiny.json"},
        "empty_rows": {"file_name": "empty_rows.json"},
        "missing_file": {"file_name": "does_not_exist.json"},
        "pairs": {
            "file_name": "pairs.json",
            "ranking": True,
            "columns": {"prompt": "instruction", "chosen": "chosen", "rejected": "rejected"},
        },
        "badext": {"file_name": "notes.txt"},
        "bad_formatting": {"file_name": "tiny.json", "formatting": "nonexistent"},
        "bad_roles": {"file_name": "bad_roles.json", "formatting": "sharegpt"},
        "oddext": {"file_name": "oddext"},
    }
    (data / "dataset_info.json").write_text(json.dumps(info))
    (root / "broken_info").mkdir()
    (root / "broken_info" / "dataset_info.json").write_text("{not json")
    (root / "out").mkdir()
    (root / "existing_out").mkdir()
    (root / "existing_out" / "file.txt").write_text("x")
    (root / "old_run").mkdir()
    (root / "old_run" / "model.safetensors").write_text("x")
    (root / "lora_no_config").mkdir()
    return Workspace(root, str(model), str(data), str(root / "out"))


# --------------------------------------------------------------------------------------------
# LlamaFactory helpers
# --------------------------------------------------------------------------------------------

_DROP = object()


def _args(base: dict[str, Any], kw: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **kw}
    return {k: v for k, v in merged.items() if v is not _DROP}


def _train_base() -> dict[str, Any]:
    ws = workspace()
    return {
        "model_name_or_path": ws.model,
        "stage": "sft",
        "do_train": True,
        "finetuning_type": "lora",
        "dataset": "tiny",
        "dataset_dir": ws.data,
        "template": "default",
        "output_dir": ws.out,
        "report_to": "none",
    }


def lf_train(**kw: Any) -> object:
    from llamafactory.hparams import get_train_args

    return get_train_args(_args(_train_base(), kw))


def lf_train_cli(*argv: str) -> object:
    from llamafactory.hparams import get_train_args

    ws = workspace()
    base = [
        "--model_name_or_path",
        ws.model,
        "--stage",
        "sft",
        "--do_train",
        "--output_dir",
        ws.out,
        "--dataset",
        "tiny",
        "--dataset_dir",
        ws.data,
        "--template",
        "default",
        "--report_to",
        "none",
    ]
    return get_train_args([*base, *argv])


def lf_infer(**kw: Any) -> object:
    from llamafactory.hparams import get_infer_args

    ws = workspace()
    return get_infer_args(_args({"model_name_or_path": ws.model, "template": "default"}, kw))


def lf_eval(**kw: Any) -> object:
    from llamafactory.hparams import get_eval_args

    ws = workspace()
    base = {"model_name_or_path": ws.model, "template": "default", "task": "mmlu_test"}
    return get_eval_args(_args(base, kw))


def lf_export(**kw: Any) -> object:
    from llamafactory.train.tuner import export_model

    ws = workspace()
    return export_model(_args({"model_name_or_path": ws.model, "template": "default"}, kw))


def lf_chat_model(**kw: Any) -> object:
    from llamafactory.chat import ChatModel

    ws = workspace()
    return ChatModel(_args({"model_name_or_path": ws.model, "template": "default"}, kw))


def _lf_data_args(**kw: Any) -> Any:
    from llamafactory.hparams import DataArguments

    ws = workspace()
    return DataArguments(**{"dataset_dir": ws.data, "template": "default", **kw})


def lf_template(**kw: Any) -> object:
    from llamafactory.data import get_template_and_fix_tokenizer
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(workspace().model)
    return get_template_and_fix_tokenizer(tokenizer, _lf_data_args(**kw))


def lf_dataset_list(names: list[str], dataset_dir: str | None = None) -> object:
    from llamafactory.data.parser import get_dataset_list

    return get_dataset_list(names, dataset_dir or workspace().data)


def lf_get_dataset(stage: str = "sft", **kw: Any) -> object:
    """The whole data pipeline, up to tokenized samples, with the tiny tokenizer."""
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args
    from transformers import AutoTokenizer

    ws = workspace()
    with _fake_distributed():
        model_args, data_args, training_args, _, _ = get_train_args(
            _args(_train_base(), {"stage": stage, **kw})
        )
    tokenizer = AutoTokenizer.from_pretrained(ws.model)
    template = get_template_and_fix_tokenizer(tokenizer, data_args)
    return get_dataset(template, model_args, data_args, training_args, stage, tokenizer=tokenizer)


class _fake_distributed:
    """Let get_train_args past its 'launch with torchrun' check (a one-process torchrun)."""

    def __enter__(self) -> None:
        import transformers

        self._prop = transformers.TrainingArguments.parallel_mode
        transformers.TrainingArguments.parallel_mode = property(  # type: ignore[method-assign,assignment]
            lambda self: transformers.training_args.ParallelMode.DISTRIBUTED
        )

    def __exit__(self, *exc: object) -> None:
        import transformers

        transformers.TrainingArguments.parallel_mode = self._prop  # type: ignore[method-assign]


def lf_train_dist(**kw: Any) -> object:
    """get_train_args as under torchrun: reaches the checks after the launch check."""
    with _fake_distributed():
        return lf_train(**kw)


def lf_chat_request(messages: list[dict[str, Any]], *, stream: bool = False, **kw: Any) -> object:
    from llamafactory.api.chat import (
        _process_request,
        create_stream_chat_completion_response,
    )
    from llamafactory.api.protocol import ChatCompletionRequest

    request = ChatCompletionRequest(model="tiny", messages=messages, **kw)
    if stream:
        return create_stream_chat_completion_response(request, chat_model=None)  # type: ignore[arg-type]
    return _process_request(request)


def lf_score_request() -> object:
    from llamafactory.api.chat import create_score_evaluation_response
    from llamafactory.api.protocol import ScoreEvaluationRequest

    return create_score_evaluation_response(
        ScoreEvaluationRequest(model="tiny", messages=[]),
        chat_model=None,  # type: ignore[arg-type]
    )


def _image(url: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]


# --------------------------------------------------------------------------------------------
# SGLang helpers
# --------------------------------------------------------------------------------------------


def sg_sampling(**kw: Any) -> object:
    from sglang.srt.sampling.sampling_params import SamplingParams

    params = SamplingParams(**kw)
    if "vocab_size" in inspect.signature(params.verify).parameters:
        params.verify(vocab_size=64)
    else:  # sglang < 0.5
        params.verify()
    return params


def sg_sampling_normalize(**kw: Any) -> object:
    from sglang.srt.sampling.sampling_params import SamplingParams

    params = SamplingParams(**kw)
    params.normalize(None)
    return params


def sg_server_args(**kw: Any) -> object:
    from sglang.srt.server_args import ServerArgs

    args = ServerArgs(**{"model_path": workspace().model, "device": "cpu", **kw})
    if hasattr(args, "resolve_once"):  # sglang >= 0.5.x; older releases check in __post_init__
        args.resolve_once()
    args.check_server_args()
    return args


def sg_server_args_twice(**kw: Any) -> object:
    from sglang.srt.server_args import ServerArgs

    args = ServerArgs(**{"model_path": workspace().model, "device": "cpu", **kw})
    try:
        args.resolve_once()
        args.check_server_args()
    except Exception:
        pass
    args.resolve_once()
    return args


def sg_cli(*argv: str) -> object:
    from sglang.srt.server_args import prepare_server_args

    return prepare_server_args(["--model-path", workspace().model, "--device", "cpu", *argv])


def sg_chat(**kw: Any) -> object:
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], **kw}
    return ChatCompletionRequest(**body)


def sg_completion(**kw: Any) -> object:
    from sglang.srt.entrypoints.openai.protocol import CompletionRequest

    return CompletionRequest(**{"model": "tiny", "prompt": "hi", **kw})


def sg_protocol(cls_name: str, **kw: Any) -> object:
    from sglang.srt.entrypoints.openai import protocol

    return getattr(protocol, cls_name)(**kw)


_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "the weather",
        "parameters": {"type": "object", "properties": {}},
    },
}


def sg_tool_parser(name: str) -> object:
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    return FunctionCallParser([Tool(**_TOOL)], name)


def sg_reasoning_parser(name: str | None) -> object:
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    return ReasoningParser(name)


def sg_runtime_endpoint() -> object:
    import sglang as sgl

    return sgl.RuntimeEndpoint("http://127.0.0.1:9")  # nothing listens on the discard port


def sg_lang_no_backend() -> object:
    import sglang as sgl

    @sgl.function
    def qa(s: Any, question: str) -> None:
        s += question + sgl.gen("answer", max_tokens=4)

    sgl.set_default_backend(None)  # type: ignore[arg-type]
    return qa.run(question="hi")


def sg_lang_bad_signature() -> object:
    import sglang as sgl

    @sgl.function
    def qa(state: Any, question: str) -> None:
        state += question

    return qa


def sg_lang_batch_mismatch() -> object:
    import sglang as sgl

    @sgl.function
    def qa(s: Any, question: str) -> None:
        s += question

    return qa.run_batch([("a", "too", "many")])


def sg_lang_nested_role() -> object:
    import sglang as sgl
    from sglang.lang.interpreter import StreamExecutor

    class _Backend:
        def get_chat_template(self) -> Any:
            from sglang.lang.chat_template import get_chat_template

            return get_chat_template("default")

        def end_program(self, *args: Any) -> None:
            pass

    ex = StreamExecutor(
        _Backend(),
        {},
        default_sampling_para=None,
        chat_template=None,
        stream=False,
        use_thread=False,
    )  # type: ignore[arg-type]
    ex._execute_role_begin(sgl.user_begin())  # type: ignore[attr-defined]
    ex._execute_role_begin(sgl.user_begin())  # type: ignore[attr-defined]
    return ex


def sg_lora_config_missing() -> object:
    from sglang.srt.lora.lora_config import LoRAConfig

    return LoRAConfig(str(workspace().root / "lora_no_config"))


def sg_eviction_policy() -> object:
    from sglang.srt.lora.eviction_policy import get_eviction_policy

    return get_eviction_policy("random")


def sg_lora_ref(**kw: Any) -> object:
    from sglang.srt.lora.lora_registry import LoRARef

    return LoRARef(**kw)


def sg_json_schema(schema: dict[str, Any]) -> object:
    """The check SGLang runs on a request's json_schema before handing it to XGrammar."""
    from sglang.srt.constrained.json_schema_validation import validate_xgrammar_json_schema

    return validate_xgrammar_json_schema(schema)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    run: Callable[[], object]
    expected: str | None  # the catalog entry that should explain it; None: no entry yet
    family: str
    not_ids: tuple[str, ...] = ()  # entries that match today but are wrong for this case
    gap: str | None = None  # the entry exists but errhints misses it today: why (strict xfail)

    @property
    def package(self) -> str:
        return self.id.split(".", 1)[0]


def C(
    case_id: str,
    run: Callable[[], object],
    expected: str | None,
    family: str,
    *not_ids: str,
    gap: str | None = None,
) -> Case:
    return Case(case_id, run, expected, family, tuple(not_ids), gap)


LF, SG = "llamafactory", "sglang"

CASES: list[Case] = [
    # ---- LlamaFactory: hparams (get_train_args / get_infer_args / get_eval_args) ----
    C(
        "llamafactory.no-model-path",
        lambda: lf_train(model_name_or_path=_DROP),
        "llamafactory.model-name-or-path-missing",
        "hparams",
    ),
    C(
        "llamafactory.val-size-without-dataset",
        lambda: lf_train(dataset=_DROP, do_train=False, val_size=0.1),
        "llamafactory.val-size-without-dataset",
        "hparams",
    ),
    C(
        "llamafactory.val-size-with-eval-dataset",
        lambda: lf_train(eval_dataset="tiny", val_size=0.1),
        "llamafactory.val-size-with-eval-dataset",
        "hparams",
    ),
    C(
        "llamafactory.interleave-probs-with-concat",
        lambda: lf_train(interleave_probs="0.5"),
        "llamafactory.interleave-probs-with-concat",
        "hparams",
    ),
    C(
        "llamafactory.interleave-probs-length",
        lambda: lf_train(mix_strategy="interleave_under", interleave_probs="0.5,0.5"),
        "llamafactory.interleave-probs-length-mismatch",
        "hparams",
    ),
    C(
        "llamafactory.streaming-fractional-val-size",
        lambda: lf_train(streaming=True, val_size=0.1),
        "llamafactory.streaming-fractional-val-size",
        "hparams",
    ),
    C(
        "llamafactory.streaming-max-samples",
        lambda: lf_train(streaming=True, max_samples=10),
        "llamafactory.max-samples-with-streaming",
        "hparams",
    ),
    C(
        "llamafactory.mask-history-with-train-on-prompt",
        lambda: lf_train(mask_history=True, train_on_prompt=True),
        "llamafactory.mask-history-with-train-on-prompt",
        "hparams",
    ),
    C(
        "llamafactory.invalid-finetuning-type",
        lambda: lf_train(finetuning_type="qlora"),
        "llamafactory.invalid-finetuning-type",
        "hparams",
    ),
    C(
        "llamafactory.ref-model-quantization-bit",
        lambda: lf_train(ref_model_quantization_bit=2),
        "llamafactory.ref-reward-quantization-bit-not-4-or-8",
        "hparams",
    ),
    C(
        "llamafactory.ppo-needs-reward-model",
        lambda: lf_train(stage="ppo"),
        "llamafactory.ppo-needs-reward-model",
        "hparams",
    ),
    C(
        "llamafactory.full-ppo-lora-reward",
        lambda: lf_train(
            stage="ppo", finetuning_type="full", reward_model="x", reward_model_type="lora"
        ),
        "llamafactory.lora-reward-model-for-full-ppo",
        "hparams",
    ),
    C(
        "llamafactory.full-ppo-oft-reward",
        lambda: lf_train(
            stage="ppo", finetuning_type="full", reward_model="x", reward_model_type="oft"
        ),
        "llamafactory.oft-reward-model-for-full-ppo",
        "hparams",
    ),
    C(
        "llamafactory.dpo-label-smoothing",
        lambda: lf_train(stage="dpo", pref_loss="ipo", dpo_label_smoothing=0.1),
        "llamafactory.dpo-label-smoothing-non-sigmoid",
        "hparams",
    ),
    C(
        "llamafactory.llama-pro-full",
        lambda: lf_train(finetuning_type="full", use_llama_pro=True),
        "llamafactory.llama-pro-with-full-tuning",
        "hparams",
    ),
    C(
        "llamafactory.lora-with-galore",
        lambda: lf_train(use_galore=True),
        "llamafactory.lora-with-galore-apollo-badam",
        "hparams",
    ),
    C(
        "llamafactory.galore-with-badam",
        lambda: lf_train(finetuning_type="full", use_galore=True, use_badam=True),
        "llamafactory.galore-apollo-badam-together",
        "hparams",
    ),
    C(
        "llamafactory.pissa-wrong-stage",
        lambda: lf_train(stage="ppo", reward_model="x", pissa_init=True),
        "llamafactory.pissa-unsupported-stage",
        "hparams",
    ),
    C(
        "llamafactory.loraplus-needs-lora",
        lambda: lf_train(finetuning_type="full", loraplus_lr_ratio=16.0),
        "llamafactory.loraplus-needs-lora",
        "hparams",
    ),
    C(
        "llamafactory.rslora-needs-lora",
        lambda: lf_train(finetuning_type="full", use_rslora=True),
        "llamafactory.rslora-needs-lora",
        "hparams",
    ),
    C(
        "llamafactory.dora-needs-lora",
        lambda: lf_train(finetuning_type="freeze", use_dora=True),
        "llamafactory.dora-needs-lora",
        "hparams",
    ),
    C(
        "llamafactory.pissa-needs-lora",
        lambda: lf_train(finetuning_type="full", pissa_init=True),
        "llamafactory.pissa-init-needs-lora",
        "hparams",
    ),
    C(
        "llamafactory.image-max-below-min",
        lambda: lf_train(image_max_pixels=100, image_min_pixels=1000),
        "llamafactory.image-max-pixels-below-min",
        "hparams",
    ),
    C(
        "llamafactory.video-max-below-min",
        lambda: lf_train(video_max_pixels=100, video_min_pixels=1000),
        "llamafactory.video-max-pixels-below-min",
        "hparams",
    ),
    C(
        "llamafactory.unknown-yaml-key",
        lambda: lf_train(learning_rat=1e-4),
        "llamafactory.hf-unused-yaml-keys",
        "hparams",
    ),
    C(
        "llamafactory.unknown-cli-arg",
        lambda: lf_train_cli("--no_such_option", "1"),
        "llamafactory.unused-cli-arguments",
        "hparams",
    ),
    C(
        "llamafactory.load-best-strategy-mismatch",
        lambda: lf_train(
            load_best_model_at_end=True, eval_strategy="steps", save_strategy="epoch", val_size=0.1
        ),
        "llamafactory.hf-load-best-model-strategy-mismatch-except-best",
        "hparams",
    ),
    C(
        "llamafactory.predict-with-generate-non-sft",
        lambda: lf_train(stage="rm", predict_with_generate=True),
        "llamafactory.predict-with-generate-non-sft",
        "hparams",
    ),
    C(
        "llamafactory.neat-packing-non-sft",
        lambda: lf_train(stage="pt", neat_packing=True),
        "llamafactory.neat-packing-non-sft",
        "hparams",
    ),
    C(
        "llamafactory.train-on-prompt-non-sft",
        lambda: lf_train(stage="dpo", train_on_prompt=True),
        "llamafactory.train-on-prompt-non-sft",
        "hparams",
    ),
    C(
        "llamafactory.predict-needs-generate",
        lambda: lf_train(do_train=False, do_predict=True, eval_dataset="tiny"),
        "llamafactory.predict-requires-generate",
        "hparams",
    ),
    C(
        "llamafactory.ppo-without-do-train",
        lambda: lf_train(stage="ppo", reward_model="x", do_train=False),
        "llamafactory.ppo-without-do-train",
        "hparams",
    ),
    C(
        "llamafactory.ppo-shift-attn",
        lambda: lf_train(stage="ppo", reward_model="x", shift_attn=True),
        "llamafactory.ppo-with-shift-attn",
        "hparams",
    ),
    C(
        "llamafactory.streaming-needs-max-steps",
        lambda: lf_train_dist(streaming=True),
        "llamafactory.streaming-needs-max-steps",
        "hparams",
    ),
    C(
        "llamafactory.dataset-required",
        lambda: lf_train_dist(dataset=_DROP),
        "llamafactory.dataset-required-for-training",
        "hparams",
    ),
    C(
        "llamafactory.eval-dataset-or-val-size",
        lambda: lf_train_dist(do_eval=True, eval_strategy="no"),
        "llamafactory.eval-dataset-or-val-size-required",
        "hparams",
    ),
    C(
        "llamafactory.predict-generate-compute-accuracy",
        lambda: lf_train_dist(predict_with_generate=True, compute_accuracy=True, val_size=0.1),
        "llamafactory.predict-with-generate-compute-accuracy",
        "hparams",
    ),
    C(
        "llamafactory.quantized-device-map-training",
        lambda: lf_train_dist(quantization_bit=4, quantization_device_map="auto"),
        "llamafactory.quantized-device-map-in-training",
        "hparams",
    ),
    C(
        "llamafactory.pure-bf16-cpu",
        lambda: lf_train_dist(pure_bf16=True),
        "llamafactory.pure-bf16-unsupported-device",
        "hparams",
    ),
    C(
        "llamafactory.layerwise-galore-distributed",
        lambda: lf_train_dist(finetuning_type="full", use_galore=True, galore_layerwise=True),
        "llamafactory.layerwise-galore-distributed",
        "hparams",
    ),
    C(
        "llamafactory.ratio-badam-distributed",
        lambda: lf_train_dist(finetuning_type="full", use_badam=True, badam_mode="ratio"),
        "llamafactory.ratio-badam-distributed",
        "hparams",
    ),
    C(
        "llamafactory.train-with-vllm-backend",
        lambda: lf_train_dist(infer_backend="vllm"),
        "llamafactory.hf-backend-only-for-train-eval",
        "hparams",
    ),
    C(
        "llamafactory.adapter-only-for-lora",
        lambda: lf_train_dist(finetuning_type="full", adapter_name_or_path="x"),
        "llamafactory.adapter-only-for-lora",
        "hparams",
    ),
    C(
        "llamafactory.quantization-needs-lora",
        lambda: lf_train_dist(finetuning_type="full", quantization_bit=4),
        "llamafactory.quantization-needs-lora-or-oft",
        "hparams",
    ),
    C(
        "llamafactory.resize-vocab-quantized",
        lambda: lf_train_dist(quantization_bit=4, resize_vocab=True),
        "llamafactory.resize-vocab-quantized",
        "hparams",
    ),
    C(
        "llamafactory.quantized-multi-adapter",
        lambda: lf_train_dist(quantization_bit=4, adapter_name_or_path="a,b"),
        "llamafactory.quantized-single-adapter",
        "hparams",
    ),
    C(
        "llamafactory.output-dir-not-empty",
        lambda: lf_train_dist(output_dir=str(workspace().root / "old_run")),
        "llamafactory.output-dir-not-empty",
        "hparams",
    ),
    C(
        "llamafactory.infer-vllm-bnb",
        lambda: lf_infer(infer_backend="vllm", quantization_bit=4),
        "llamafactory.vllm-bnb-quantization",
        "hparams",
    ),
    C(
        "llamafactory.infer-vllm-multi-adapter",
        lambda: lf_infer(infer_backend="vllm", adapter_name_or_path="a,b"),
        "llamafactory.vllm-single-adapter",
        "hparams",
    ),
    C(
        "llamafactory.infer-vllm-rope",
        lambda: lf_infer(infer_backend="vllm", rope_scaling="linear"),
        "llamafactory.vllm-rope-scaling",
        "hparams",
    ),
    C(
        "llamafactory.eval-save-dir-exists",
        lambda: lf_eval(save_dir=str(workspace().root / "existing_out")),
        "llamafactory.eval-save-dir-exists",
        "hparams",
    ),
    C(
        "llamafactory.eval-vllm-backend",
        lambda: lf_eval(infer_backend="vllm"),
        "llamafactory.hf-backend-only-for-train-eval",
        "hparams",
    ),
    # ---- LlamaFactory: export / chat model ----
    C(
        "llamafactory.export-dir-required",
        lambda: lf_export(),
        "llamafactory.export-dir-required",
        "export",
    ),
    C(
        "llamafactory.export-quantization-dataset",
        lambda: lf_export(export_dir="x", export_quantization_bit=4),
        "llamafactory.export-quantization-dataset-required",
        "export",
    ),
    C(
        "llamafactory.export-merge-before-quantize",
        lambda: lf_export(
            export_dir="x",
            adapter_name_or_path="a",
            export_quantization_bit=4,
            export_quantization_dataset="d",
        ),
        "llamafactory.merge-adapters-before-quantizing",
        "export",
    ),
    C(
        "llamafactory.export-bitsandbytes-missing",
        lambda: lf_export(export_dir="x", adapter_name_or_path="a", quantization_bit=4),
        "llamafactory.required-package-not-installed",
        "export",
    ),
    C(
        "llamafactory.chat-vllm-not-installed",
        lambda: lf_chat_model(infer_backend="vllm"),
        "llamafactory.required-package-not-installed",
        "chat",
    ),
    # ---- LlamaFactory: data ----
    C(
        "llamafactory.template-does-not-exist",
        lambda: lf_template(template="no-such-template"),
        "llamafactory.template-does-not-exist",
        "data",
    ),
    C(
        "llamafactory.template-no-train-on-prompt",
        lambda: lf_template(template="bailing", train_on_prompt=True),
        "llamafactory.template-no-train-on-prompt",
        "data",
    ),
    C(
        "llamafactory.undefined-dataset",
        lambda: lf_dataset_list(["no_such_dataset"]),
        "llamafactory.undefined-dataset",
        "data",
    ),
    C(
        "llamafactory.cannot-open-dataset-info",
        lambda: lf_dataset_list(["tiny"], str(workspace().root / "broken_info")),
        "llamafactory.cannot-open-dataset-info",
        "data",
    ),
    C(
        "llamafactory.dataset-file-not-found",
        lambda: lf_get_dataset(dataset="missing_file"),
        "llamafactory.dataset-file-not-found",
        "data",
    ),
    C(
        "llamafactory.dataset-txt-as-alpaca",
        lambda: lf_get_dataset(dataset="badext"),
        "llamafactory.alpaca-instruction-column-missing",
        "data",
    ),
    C(
        "llamafactory.dataset-file-type",
        lambda: lf_get_dataset(dataset="oddext"),
        "llamafactory.dataset-file-type-not-allowed",
        "data",
    ),
    C(
        "llamafactory.dataset-not-for-stage",
        lambda: lf_get_dataset(dataset="pairs"),
        "llamafactory.dataset-not-applicable-to-stage",
        "data",
    ),
    C(
        "llamafactory.no-valid-samples",
        lambda: lf_get_dataset(dataset="bad_roles"),
        "llamafactory.cannot-find-valid-samples",
        "data",
    ),
    C(
        "llamafactory.converter-not-found",
        lambda: lf_get_dataset(dataset="bad_formatting"),
        "llamafactory.dataset-converter-not-found",
        "data",
    ),
    C(
        "llamafactory.unknown-mix-strategy",
        lambda: _lf_merge("shuffle"),
        "llamafactory.unknown-mix-strategy",
        "data",
    ),
    C(
        "llamafactory.tool-utils-not-found",
        lambda: _lf_call("llamafactory.data.tool_utils", "get_tool_utils", "no_such_tools"),
        "llamafactory.tool-format-not-found",
        "data",
    ),
    C(
        "llamafactory.string-formatter-no-placeholder",
        lambda: _lf_call("llamafactory.data.formatter", "StringFormatter", slots=["hello"]),
        "llamafactory.string-formatter-no-placeholder",
        "data",
    ),
    C(
        "llamafactory.empty-formatter-placeholder",
        lambda: _lf_call("llamafactory.data.formatter", "EmptyFormatter", slots=["{{content}}"]),
        "llamafactory.empty-formatter-placeholder",
        "data",
    ),
    C(
        "llamafactory.function-formatter-bad-json",
        lambda: _lf_formatter(
            "FunctionFormatter", "{not json", slots=["{{content}}"], tool_format="default"
        ),
        "llamafactory.invalid-json-function-message",
        "data",
    ),
    C(
        "llamafactory.tool-formatter-bad-json",
        lambda: _lf_formatter("ToolFormatter", "{not json", tool_format="default"),
        "llamafactory.invalid-json-tool-description",
        "data",
    ),
    C(
        "llamafactory.glm4-parallel-functions",
        lambda: _lf_call("llamafactory.data.tool_utils", "GLM4ToolUtils").function_formatter(
            [("a", "{}"), ("b", "{}")]
        ),
        "llamafactory.glm4-parallel-function-calls",
        "data",
    ),
    C(
        "llamafactory.cloud-path-protocol",
        lambda: _lf_call("llamafactory.data.data_utils", "setup_fs", "ftp://bucket/data.json"),
        "llamafactory.cloud-file-unsupported-protocol",
        "data",
    ),
    C(
        "llamafactory.split-val-with-eval",
        lambda: _lf_split(),
        "llamafactory.val-size-with-eval-dataset",
        "data",
    ),
    # ---- LlamaFactory: the OpenAI-compatible API server ----
    C(
        "llamafactory.api-empty-messages",
        lambda: lf_chat_request([]),
        "llamafactory.api-empty-messages",
        "api",
    ),
    C(
        "llamafactory.api-not-alternating",
        lambda: lf_chat_request(
            [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
        ),
        "llamafactory.api-messages-not-alternating",
        "api",
    ),
    C(
        "llamafactory.api-invalid-role",
        lambda: lf_chat_request([{"role": "assistant", "content": "a"}]),
        "llamafactory.api-invalid-role",
        "api",
    ),
    C(
        "llamafactory.api-stream-tools",
        lambda: _drain(
            lf_chat_request([{"role": "user", "content": "a"}], stream=True, tools=[_TOOL])
        ),
        "llamafactory.api-cannot-stream-tools",
        "api",
    ),
    C(
        "llamafactory.api-stream-multiple",
        lambda: _drain(lf_chat_request([{"role": "user", "content": "a"}], stream=True, n=2)),
        "llamafactory.api-cannot-stream-multiple",
        "api",
    ),
    C(
        "llamafactory.api-only-http-urls",
        lambda: lf_chat_request(_image("ftp://example.invalid/a.png")),
        "llamafactory.api-invalid-url",  # the URL check's refusal, wrapped by the catch-all
        "api",
    ),
    C(
        "llamafactory.api-private-address",
        lambda: lf_chat_request(_image("http://127.0.0.1:9/a.png")),
        "llamafactory.api-invalid-url",  # the URL check's refusal, wrapped by the catch-all
        "api",
    ),
    C(
        "llamafactory.api-local-file",
        lambda: lf_chat_request(_image(str(workspace().root / "existing_out" / "file.txt"))),
        "llamafactory.api-invalid-file-path",
        "api",
    ),
    C(
        "llamafactory.api-score-empty",
        lambda: lf_score_request(),
        "llamafactory.api-score-empty-messages",
        "api",
    ),
    # ---- SGLang: sampling parameters ----
    C(
        "sglang.sampling-temperature",
        lambda: sg_sampling(temperature=-1.0),
        "sglang.temperature-invalid",
        "sampling",
    ),
    C(
        "sglang.sampling-top-p",
        lambda: sg_sampling(top_p=0.0),
        "sglang.top-p-out-of-range",
        "sampling",
    ),
    C(
        "sglang.sampling-min-p",
        lambda: sg_sampling(min_p=1.5),
        "sglang.min-p-out-of-range",
        "sampling",
    ),
    C("sglang.sampling-top-k", lambda: sg_sampling(top_k=0), "sglang.top-k-invalid", "sampling"),
    C(
        "sglang.sampling-frequency-penalty",
        lambda: sg_sampling(frequency_penalty=3.0),
        "sglang.frequency-penalty-out-of-range",
        "sampling",
    ),
    C(
        "sglang.sampling-presence-penalty",
        lambda: sg_sampling(presence_penalty=-3.0),
        "sglang.presence-penalty-out-of-range",
        "sampling",
    ),
    C(
        "sglang.sampling-repetition-penalty",
        lambda: sg_sampling(repetition_penalty=3.0),
        "sglang.repetition-penalty-out-of-range",
        "sampling",
    ),
    C(
        "sglang.sampling-min-new-tokens",
        lambda: sg_sampling(min_new_tokens=-1),
        "sglang.min-new-tokens-negative",
        "sampling",
    ),
    C(
        "sglang.sampling-max-new-tokens",
        lambda: sg_sampling(max_new_tokens=-1),
        "sglang.max-new-tokens-negative",
        "sampling",
    ),
    C(
        "sglang.sampling-min-over-max",
        lambda: sg_sampling(min_new_tokens=10, max_new_tokens=5),
        "sglang.min-new-tokens-above-max",
        "sampling",
    ),
    C(
        "sglang.sampling-logit-bias",
        lambda: sg_sampling(logit_bias={"100": 1.0}),
        "sglang.logit-bias-token-out-of-vocab",
        "sampling",
    ),
    C(
        "sglang.sampling-two-grammars",
        lambda: sg_sampling(json_schema="{}", regex="a+"),
        "sglang.multiple-grammar-constraints",
        "sampling",
    ),
    C(
        "sglang.sampling-beam-width",
        lambda: sg_sampling(beam_width=0),
        "sglang.beam-width-invalid",
        "sampling",
    ),
    C(
        "sglang.sampling-seed-type",
        lambda: sg_sampling(sampling_seed=1.5),
        "sglang.sampling-seed-not-integer",
        "sampling",
    ),
    C(
        "sglang.sampling-too-many-stops",
        lambda: sg_sampling_normalize(stop=[str(i) for i in range(1000)]),
        "sglang.too-many-stop-strings",
        "sampling",
    ),
    # ---- SGLang: OpenAI-compatible protocol ----
    C(
        "sglang.openai-max-tokens",
        lambda: sg_completion(max_tokens=0),
        "sglang.completions-max-tokens-not-positive",
        "openai",
    ),
    C(
        "sglang.openai-bad-role",
        lambda: sg_chat(messages=[{"role": "wizard", "content": "hi"}]),
        "sglang.chat-message-role-invalid",
        "openai",
    ),
    C(
        "sglang.openai-role-not-string",
        lambda: sg_chat(messages=[{"role": 3, "content": "hi"}]),
        "sglang.chat-message-role-not-string",
        "openai",
    ),
    C(
        "sglang.openai-reasoning-effort-bool",
        lambda: sg_chat(reasoning_effort=True),
        "sglang.chat-reasoning-effort-boolean",
        "openai",
    ),
    C(
        "sglang.openai-reasoning-effort-invalid",
        lambda: sg_chat(reasoning_effort="extreme"),
        None,
        "openai",
    ),
    C(
        "sglang.openai-thinking-in-user",
        lambda: sg_chat(
            messages=[{"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}]
        ),
        "sglang.chat-thinking-part-outside-assistant",
        "openai",
    ),
    C(
        "sglang.openai-rerank-top-n",
        lambda: sg_protocol("V1RerankReqInput", query="q", documents=["d"], top_n=0),
        "sglang.rerank-top-n-not-positive",
        "openai",
    ),
    C(
        "sglang.openai-tokenize-both",
        lambda: sg_protocol(
            "TokenizeRequest", model="tiny", prompt="a", messages=[{"role": "user", "content": "b"}]
        ),
        "sglang.tokenize-prompt-or-messages",
        "openai",
    ),
    C(
        "sglang.openai-response-tool-no-name",
        lambda: sg_protocol("ResponseTool", type="function"),
        "sglang.responses-function-tool-without-name",
        "openai",
    ),
    C(
        "sglang.openai-missing-messages",
        lambda: sg_protocol("ChatCompletionRequest", model="tiny"),
        None,
        "openai",
    ),
    # ---- SGLang: server arguments ----
    C(
        "sglang.server-served-model-name-colon",
        lambda: sg_server_args(served_model_name="org:model"),
        "sglang.served-model-name-contains-colon",
        "server_args",
    ),
    C(
        "sglang.server-base-gpu-id",
        lambda: sg_server_args(base_gpu_id=-1),
        "sglang.base-gpu-id-negative",
        "server_args",
    ),
    C(
        "sglang.server-gpu-id-step",
        lambda: sg_server_args(gpu_id_step=0),
        "sglang.gpu-id-step-not-positive",
        "server_args",
    ),
    C(
        "sglang.server-tokenizer-workers",
        lambda: sg_server_args(tokenizer_worker_num=0),
        "sglang.tokenizer-worker-num-below-one",
        "server_args",
    ),
    C(
        "sglang.server-schedule-conservativeness",
        lambda: sg_server_args(schedule_conservativeness=-1.0),
        "sglang.schedule-conservativeness-negative",
        "server_args",
    ),
    C(
        "sglang.server-dp-multinode",
        lambda: sg_server_args(dp_size=2, tp_size=2, nnodes=2),
        "sglang.multi-node-dp-replicas-not-supported",
        "server_args",
    ),
    C(
        "sglang.server-graph-padding-compile",
        lambda: sg_server_args(disable_cuda_graph_padding=True, enable_torch_compile=True),
        "sglang.cuda-graph-padding-disabled-with-torch-compile",
        "server_args",
    ),
    C(
        "sglang.server-pp-micro-batch",
        lambda: sg_server_args(pp_max_micro_batch_size=0),
        "sglang.pp-max-micro-batch-size-invalid",
        "server_args",
    ),
    C(
        "sglang.server-detokenizer-workers",
        lambda: sg_server_args(detokenizer_worker_num=0),
        "sglang.detokenizer-worker-num-invalid",
        "server_args",
    ),
    C(
        "sglang.server-moe-dense-tp",
        lambda: sg_server_args(moe_dense_tp_size=3),
        "sglang.moe-dense-tp-size-invalid",
        "server_args",
    ),
    C(
        "sglang.server-tp-nnodes",
        lambda: sg_server_args(tp_size=3, nnodes=2),
        "sglang.tp-size-not-divisible-by-nnodes",
        "server_args",
    ),
    C(
        "sglang.server-chunked-prefill-page-size",
        lambda: sg_server_args(chunked_prefill_size=100, page_size=64),
        "sglang.chunked-prefill-size-not-divisible-by-page-size",
        "server_args",
    ),
    C(
        "sglang.server-watermark-config",
        lambda: sg_server_args(watermark_config="{}"),
        "sglang.watermark-config-without-enable-watermark",
        "server_args",
    ),
    C(
        "sglang.server-prefill-decode-interval",
        lambda: sg_server_args(prefill_decode_interval=-1),
        "sglang.prefill-decode-interval-negative",
        "server_args",
    ),
    C(
        "sglang.server-missing-model-path",
        lambda: sg_server_args(model_path=str(workspace().root / "no-such-model")),
        "sglang.hf-repo-id-invalid",
        "server_args",
    ),
    C(
        "sglang.server-resolve-twice",
        lambda: sg_server_args_twice(prefill_decode_interval=-1),
        None,
        "server_args",
    ),
    C("sglang.cli-unknown-flag", lambda: sg_cli("--no-such-flag"), None, "server_args"),
    C("sglang.cli-bad-choice", lambda: sg_cli("--tool-call-parser", "nope"), None, "server_args"),
    C("sglang.cli-bad-int", lambda: sg_cli("--tp-size", "two"), None, "server_args"),
    # ---- SGLang: parsers, LoRA, grammar ----
    C(
        "sglang.tool-call-parser-unknown",
        lambda: sg_tool_parser("nope"),
        "sglang.unsupported-tool-call-parser",
        "parsers",
    ),
    C(
        "sglang.reasoning-parser-unknown",
        lambda: sg_reasoning_parser("nope"),
        "sglang.reasoning-parser-unsupported",
        "parsers",
    ),
    C(
        "sglang.reasoning-parser-none",
        lambda: sg_reasoning_parser(None),
        "sglang.reasoning-parser-not-specified",
        "parsers",
    ),
    C(
        "sglang.lora-config-missing",
        lambda: sg_lora_config_missing(),
        "sglang.lora-adapter-config-missing",
        "lora",
    ),
    C(
        "sglang.lora-eviction-policy",
        lambda: sg_eviction_policy(),
        "sglang.lora-eviction-policy-unknown",
        "lora",
    ),
    C(
        "sglang.grammar-unsupported-keyword",
        lambda: sg_json_schema({"type": "array", "contains": {"type": "string"}}),
        "sglang.json-schema-unsupported-by-grammar-backend",
        "grammar",
    ),
    C(
        "sglang.grammar-unsupported-format",
        lambda: sg_json_schema({"type": "string", "format": "ipv9"}),
        "sglang.json-schema-unsupported-by-grammar-backend",
        "grammar",
    ),
    # ---- SGLang: frontend language ----
    C(
        "sglang.lang-endpoint-refused",
        lambda: sg_runtime_endpoint(),
        "sglang.frontend-endpoint-unreachable",
        "lang",
    ),
    C("sglang.lang-no-backend", lambda: sg_lang_no_backend(), "sglang.lang-no-backend", "lang"),
    C(
        "sglang.lang-bad-first-arg",
        lambda: sg_lang_bad_signature(),
        "sglang.lang-first-arg-must-be-s",
        "lang",
    ),
    C(
        "sglang.lang-batch-arg-mismatch",
        lambda: sg_lang_batch_mismatch(),
        "sglang.lang-run-batch-argument-mismatch",
        "lang",
    ),
    C("sglang.lang-nested-role", lambda: sg_lang_nested_role(), "sglang.lang-nested-roles", "lang"),
]


def _lf_call(module: str, name: str, *args: Any, **kw: Any) -> Any:
    import importlib

    return getattr(importlib.import_module(module), name)(*args, **kw)


def _lf_formatter(cls: str, content: str, **kw: Any) -> object:
    formatter = _lf_call("llamafactory.data.formatter", cls, **kw)
    return formatter.apply(content=content)


def _lf_merge(strategy: str) -> object:
    from datasets import Dataset
    from llamafactory.data.data_utils import merge_dataset
    from transformers import Seq2SeqTrainingArguments

    ds = Dataset.from_list([{"a": 1}])
    data_args = _lf_data_args(mix_strategy="concat")
    object.__setattr__(data_args, "mix_strategy", strategy)
    return merge_dataset([ds, ds], data_args, Seq2SeqTrainingArguments(output_dir=workspace().out))


def _lf_split() -> object:
    from datasets import Dataset
    from llamafactory.data.data_utils import split_dataset

    ds = Dataset.from_list([{"a": 1}] * 4)
    data_args = _lf_data_args(dataset="tiny", val_size=0.5)
    return split_dataset(ds, {"validation": ds}, data_args, seed=0)


def _drain(obj: object) -> object:
    """Run a coroutine or drain an async generator, as the server would."""

    async def go() -> object:
        if inspect.isasyncgen(obj):
            return [item async for item in obj]
        return await obj  # type: ignore[misc]

    return asyncio.run(go())


# --------------------------------------------------------------------------------------------
# Running a case (shared with scripts/released_cpu_report.py)
# --------------------------------------------------------------------------------------------


def run_case(case: Case) -> BaseException | None:
    """Run one case; the exception it raised, or None."""
    try:
        result = case.run()
        if inspect.iscoroutine(result) or inspect.isasyncgen(result):
            _drain(result)
    except (Exception, SystemExit) as exc:  # argparse errors are SystemExit
        return exc
    return None


def site_of(exc: BaseException) -> str:
    """The innermost frame as ``package/relative/path.py:function``."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    last = frames[-1]
    path = last.filename.replace(os.sep, "/")
    for marker in ("site-packages/", "dist-packages/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{last.name}"


def describe(exc: BaseException, limit: int = 200) -> str:
    message = " ".join(str(exc).split())
    if len(message) > limit:
        message = message[: limit - 3] + "..."
    return f"{type(exc).__name__}: {message} @ {site_of(exc)}"


# --------------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------------


def _param(case: Case) -> Any:
    marks = [pytest.mark.released_cpu]
    if case.expected is None:
        marks.append(pytest.mark.xfail(strict=True, reason="no catalog entry yet"))
    elif case.gap is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=f"entry not matched: {case.gap}"))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_released_exception_is_explained(case: Case) -> None:
    exc = run_case(case)
    assert exc is not None, f"{case.id}: did not raise"
    # "identified" matches name the raise site only (no catalog entry): not an explanation here
    matches = [m for m in errhints.explain(exc) if m.confidence != "identified"]
    assert matches, f"not explained: {describe(exc)}"
    best = matches[0]
    assert best.id not in case.not_ids, f"explained by the wrong entry {best.id}: {describe(exc)}"
    if case.expected is not None:
        assert best.id == case.expected, (
            f"best match {best.id} ({best.confidence}): {describe(exc)}"
        )


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
