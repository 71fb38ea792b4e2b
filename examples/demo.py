"""The same LlamaFactory failure, shown without and then with errhints.

Runs a stand-in of LlamaFactory's SGLang engine (same module path, function and failure as
llamafactory 0.9.5) in two child processes, then explains a pasted SGLang scheduler log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAIL = (
    "import asyncio\n"
    "from llamafactory.chat.sglang_engine import SGLangEngine\n"
    "asyncio.run(SGLangEngine(context_length=8192).chat(prompt_tokens=9000))\n"
)


def run(title: str, code: str, *args: str) -> None:
    print(f"\n===== {title} =====", flush=True)
    env = dict(os.environ, PYTHONPATH=str(HERE / "standins"))
    subprocess.run(
        [sys.executable, *args, "-c", code] if code else [sys.executable, *args],
        env=env,
        stderr=subprocess.STDOUT,
        check=False,
    )


def main() -> None:
    run("without errhints", FAIL)
    run("with errhints.install()", "import errhints\nerrhints.install()\n" + FAIL)
    log = HERE / "logs" / "scheduler.log"
    run(
        f"errhints explain {log.relative_to(HERE.parent)}",
        "",
        "-m",
        "errhints",
        "explain",
        str(log),
    )


if __name__ == "__main__":
    main()
