"""Traceback paths to package-relative paths: installed, checked out, in containers, on Windows;
and a user's own directory that happens to be called ``sglang`` is left alone."""

from __future__ import annotations

import pytest

from errhints._facts.paths import KNOWN_LAYOUTS, split_path


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        (
            "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py",
            ("sglang/srt/managers/scheduler.py", "sglang"),
        ),
        (
            "/opt/conda/envs/x/lib/python3.11/site-packages/llamafactory/data/loader.py",
            ("llamafactory/data/loader.py", "llamafactory"),
        ),
        (
            "/home/me/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py",
            ("torch/nn/modules/module.py", "torch"),
        ),
        (
            "/home/me/.venv/lib/python3.12/site-packages/transformers/trainer.py",
            ("transformers/trainer.py", "transformers"),
        ),
        ("/opt/conda/lib/python3.11/site-packages/six.py", ("six.py", "six")),
        (
            "/usr/lib/python3/site-packages/peft-0.1-py3.11.egg/peft/tuners/lora.py",
            ("peft/tuners/lora.py", "peft"),
        ),
    ],
)
def test_installed_packages_map_after_site_or_dist_packages(
    filename: str, expected: tuple[str, str]
) -> None:
    """Below site-packages/dist-packages the next segment is the package, for any package."""
    assert split_path(filename) == expected


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        (
            "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py",
            ("sglang/srt/model_executor/model_runner.py", "sglang"),
        ),
        (
            "/home/me/code/sglang/python/sglang/launch_server.py",
            ("sglang/launch_server.py", "sglang"),
        ),
        (
            "/home/me/LLaMA-Factory/src/llamafactory/train/sft/workflow.py",
            ("llamafactory/train/sft/workflow.py", "llamafactory"),
        ),
        (
            "/workspace/LlamaFactory/src/llamafactory/cli.py",
            ("llamafactory/cli.py", "llamafactory"),
        ),
        # A checkout layout with a subpackage not (yet) in the known names still counts.
        (
            "/x/sglang/python/sglang/newpkg/mod.py",
            ("sglang/newpkg/mod.py", "sglang"),
        ),
        # Not after python/ or src/, but the names below are SGLang's real layout.
        (
            "/tmp/ray/session_1/runtime_resources/sglang/srt/layers/linear.py",
            ("sglang/srt/layers/linear.py", "sglang"),
        ),
        ("/work/sglang/bench_one_batch_server.py", ("sglang/bench_one_batch_server.py", "sglang")),
        ("/work/tree/llamafactory/v1/core.py", ("llamafactory/v1/core.py", "llamafactory")),
    ],
)
def test_source_checkouts_and_containers(filename: str, expected: tuple[str, str]) -> None:
    """``.../python/sglang/...`` and ``.../src/llamafactory/...`` and real layouts map."""
    assert split_path(filename) == expected


@pytest.mark.parametrize(
    "filename",
    [
        "/home/me/sglang/run.py",
        "/home/me/projects/sglang/test.py",
        "/home/me/llamafactory/train_my_model.py",
        "/home/me/src/llamafactory/run.py",
        "/home/me/sglang/notes/x.py",
        "run.py",
        "",
    ],
)
def test_a_users_directory_named_like_the_package_is_not_the_package(filename: str) -> None:
    """A user directory called ``sglang`` whose contents are not SGLang's layout maps to nothing."""
    assert split_path(filename) == (None, None)


def test_windows_paths() -> None:
    """Backslashes and drive letters, site-packages in any letter case."""
    assert split_path(
        r"C:\Users\me\AppData\Local\Programs\Python\Python311\Lib\site-packages"
        r"\llamafactory\chat\hf_engine.py"
    ) == ("llamafactory/chat/hf_engine.py", "llamafactory")
    assert split_path(r"D:\code\LLaMA-Factory\src\llamafactory\webui\runner.py") == (
        "llamafactory/webui/runner.py",
        "llamafactory",
    )
    assert split_path(r"C:\Users\me\sglang\run.py") == (None, None)


def test_frozen_and_pseudo_files() -> None:
    """``<frozen importlib._bootstrap>`` names a stdlib module; ``<string>`` names nothing."""
    assert split_path("<frozen importlib._bootstrap>") == ("importlib/_bootstrap.py", "importlib")
    assert split_path("<frozen runpy>") == ("runpy.py", "runpy")
    assert split_path("<string>") == (None, None)
    assert split_path("<stdin>") == (None, None)
    assert split_path("<eval_with_key>.5") == (None, None)


def test_standard_library_paths() -> None:
    """``lib/python3.X/...`` outside site-packages is the standard library."""
    assert split_path("/usr/lib/python3.11/concurrent/futures/thread.py") == (
        "concurrent/futures/thread.py",
        "concurrent",
    )
    assert split_path("/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py") == (
        "threading.py",
        "threading",
    )


def test_known_layouts_follow_the_released_packages() -> None:
    """The top-level names we trust include what the released wheels ship."""
    for name in ("srt/", "lang/", "multimodal_gen/", "test/", "launch_server.py", "utils.py"):
        assert name in KNOWN_LAYOUTS["sglang"]
    for name in ("data/", "model/", "train/", "chat/", "hparams/", "cli.py", "launcher.py", "v1/"):
        assert name in KNOWN_LAYOUTS["llamafactory"]
