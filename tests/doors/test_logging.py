"""The logging door: error records that carry a traceback get the explanation, once.

Real loggers, handlers and configurations throughout; the SGLang pattern (format the
traceback, log it as text, no ``exc_info``) also runs in a real child process.
"""

from __future__ import annotations

import copy
import importlib
import io
import logging
import logging.config
import logging.handlers
import pickle
import queue
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import RunPy
from errhints._doors import log_records as _logging
from errhints._doors.log_records import install as install_logging
from errhints._doors.log_records import uninstall as uninstall_logging
from standins import CONTEXT_BODY, server_error


def installed() -> bool:
    return _logging.state() == "on"


TITLE = "errhints: llamafactory.sglang-server-error"


@pytest.fixture
def clean_logging() -> Iterator[None]:
    """Start without the logging door (another test may have left ``install()`` on) and put
    the record factory and the root logger back as they were."""
    uninstall_logging()
    factory = logging.getLogRecordFactory()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    uninstall_logging()
    logging.setLogRecordFactory(factory)
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def capture(clean_logging: None) -> Callable[[str], tuple[logging.Logger, io.StringIO]]:
    """A logger of its own writing to a StringIO through a real handler and formatter."""

    def make(name: str) -> tuple[logging.Logger, io.StringIO]:
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter("[%(asctime)s TP0] %(levelname)s %(message)s"))
        logger = logging.getLogger(f"errhints.tests.{name}")
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(logging.DEBUG)
        return logger, stream

    return make


def server_error_traceback(standins: Path) -> str:
    """The text of a real LlamaFactory SGLang-engine failure, as ``format_exc`` gives it."""
    engine = importlib.import_module("llamafactory.chat.sglang_engine")
    try:
        engine.SGLangEngine(400, CONTEXT_BODY)._generate()
    except RuntimeError:
        return traceback.format_exc()
    raise AssertionError("the stand-in did not raise")


def test_sglang_pattern_in_a_real_process(run_py: RunPy) -> None:
    """SGLang's scheduler logs ``f"Scheduler hit an exception: {traceback}"`` with no
    exc_info; logging is configured after install; stderr and a log file carry the
    explanation once each, right after the traceback."""
    proc = run_py(
        """
        import logging
        from errhints._doors.log_records import install
        install()
        logging.basicConfig(
            level=logging.INFO, format="[%(asctime)s TP0] %(message)s",
            handlers=[logging.StreamHandler(), logging.FileHandler("server.log")],
        )
        from sglang.srt.managers.scheduler import run_scheduler_process
        from sglang.srt.disaggregation.encoder.server import MMEncoder
        text = run_scheduler_process(lambda: MMEncoder()._validate_embedding_token_count(5, 6))
        assert "errhints" not in text  # the traceback string itself is untouched
        logging.getLogger("sglang.srt.managers.scheduler").info("Received sigquit %s", "x")
        """
    )
    assert proc.returncode == 0, proc.stderr
    log_file = (Path(proc.args[1]).parent / "server.log").read_text(encoding="utf-8")
    for out in (proc.stderr, log_file):
        assert "Scheduler hit an exception: Traceback (most recent call last):" in out
        assert out.count("errhints: sglang.mm-encoder-token-count-mismatch") == 1, out
        last_line = (
            "sglang.srt.disaggregation.encoder.server.InternalError: "
            "Encoder produced 5 tokens, but preprocessor metadata expected 6"
        )
        assert out.index(last_line) < out.index("errhints: sglang.mm-encoder")
        assert out.index("errhints: sglang.mm-encoder") < out.index("Received sigquit x")


def test_traceback_text_in_the_message(
    capture: Callable[..., tuple[logging.Logger, io.StringIO]], standins: Path
) -> None:
    """An f-string message with a traceback gets the note appended after it, once, however
    many times ``getMessage`` is called; the record's msg and args are untouched."""
    install_logging()
    logger, stream = capture("fstring")
    tb = server_error_traceback(standins)
    records: list[logging.LogRecord] = []
    logger.addFilter(lambda r: records.append(r) or True)
    logger.error(f"Scheduler hit an exception: {tb}")
    out = stream.getvalue()
    assert out.count(TITLE) == 1
    assert out.index("RuntimeError: SGLang server error: 400") < out.index(TITLE)
    record = records[0]
    assert record.msg == f"Scheduler hit an exception: {tb}" and record.args == ()
    assert record.getMessage() == record.getMessage()
    assert record.getMessage().count(TITLE) == 1
    assert isinstance(record, logging.LogRecord)


def test_percent_args_keep_working(
    capture: Callable[..., tuple[logging.Logger, io.StringIO]], standins: Path
) -> None:
    """%-style args are formatted as usual; a traceback passed as an arg is explained too."""
    install_logging()
    logger, stream = capture("percent")
    tb = server_error_traceback(standins)
    logger.error("rank %d hit an exception: %s", 3, tb)
    logger.error("plain failure on rank %d: %s", 3, "no traceback here")
    logger.error("mapping %(who)s", {"who": "x"})
    lines = stream.getvalue()
    assert "rank 3 hit an exception: Traceback (most recent call last):" in lines
    assert lines.count(TITLE) == 1
    assert "plain failure on rank 3: no traceback here\n" in lines
    assert "mapping x\n" in lines


def test_ordinary_records_are_untouched(clean_logging: None) -> None:
    """Below ERROR, or at ERROR without a traceback, the record is the factory's own."""
    install_logging()
    factory = logging.getLogRecordFactory()
    info = factory(
        "x", logging.INFO, __file__, 1, "Traceback (most recent call last): %s", ("a",), None
    )
    error = factory("x", logging.ERROR, __file__, 1, "failed %s", ("a",), None)
    assert type(info) is logging.LogRecord and type(error) is logging.LogRecord
    assert info.getMessage() == "Traceback (most recent call last): a"


def test_exc_info_gets_the_pep678_note(
    capture: Callable[..., tuple[logging.Logger, io.StringIO]], standins: Path
) -> None:
    """``logger.exception``: the note goes on the exception, so ``formatException`` prints it
    under the traceback; logging the same exception twice still gives one note."""
    install_logging()
    logger, stream = capture("excinfo")
    exc = server_error()
    try:
        raise exc
    except RuntimeError:
        logger.exception("request failed")
        logger.error("again", exc_info=True)
    out = stream.getvalue()
    assert out.count(TITLE) == 2  # printed under each of the two tracebacks
    assert [n for n in exc.__notes__ if n.startswith("errhints:")] == [exc.__notes__[0]]
    assert out.index("RuntimeError: SGLang server error: 503, overloaded") < out.index(TITLE)
    assert str(exc) == "SGLang server error: 503, overloaded"


def test_configuration_after_install(clean_logging: None, standins: Path) -> None:
    """dictConfig after install (which replaces every handler) does not lose the door."""
    install_logging()
    stream = io.StringIO()
    logging.config.dictConfig(
        {
            "version": 1,
            "formatters": {"plain": {"format": "%(levelname)s:%(name)s:%(message)s"}},
            "handlers": {
                "mem": {"class": "logging.StreamHandler", "formatter": "plain", "stream": stream}
            },
            "root": {"level": "INFO", "handlers": ["mem"]},
        }
    )
    logging.getLogger("sglang.srt.managers.scheduler").error(
        "Scheduler hit an exception: %s", server_error_traceback(standins)
    )
    assert stream.getvalue().startswith("ERROR:sglang.srt.managers.scheduler:Scheduler hit")
    assert stream.getvalue().count(TITLE) == 1


def test_queue_handler_copies_are_plain(clean_logging: None, standins: Path) -> None:
    """QueueHandler formats a record then copies it: the listener prints the note once; copies
    and pickles of an explained record are plain ``LogRecord`` objects."""
    install_logging()
    q: queue.Queue[logging.LogRecord] = queue.Queue()
    stream = io.StringIO()
    target = logging.StreamHandler(stream)
    listener = logging.handlers.QueueListener(q, target)
    logger = logging.getLogger("errhints.tests.queue")
    logger.handlers[:] = [logging.handlers.QueueHandler(q)]
    logger.propagate = False
    listener.start()
    try:
        logger.error("hit: %s", server_error_traceback(standins))
    finally:
        listener.stop()
    assert stream.getvalue().count(TITLE) == 1

    record = logging.getLogRecordFactory()(
        "x", logging.ERROR, __file__, 1, "hit: %s", (server_error_traceback(standins),), None
    )
    assert type(record) is not logging.LogRecord and TITLE in record.getMessage()
    for twin in (copy.copy(record), pickle.loads(pickle.dumps(record))):
        assert type(twin) is logging.LogRecord
        assert twin.msg == record.msg and twin.args == record.args
        assert TITLE not in twin.getMessage()


def test_custom_record_classes_are_kept(clean_logging: None, standins: Path) -> None:
    """A factory that makes its own LogRecord subclass: the explained record is still one."""

    class TaggedRecord(logging.LogRecord):
        def getMessage(self) -> str:
            return "[tagged] " + super().getMessage()

    logging.setLogRecordFactory(TaggedRecord)
    install_logging()
    record = logging.getLogRecordFactory()(
        "x", logging.ERROR, __file__, 1, "%s", (server_error_traceback(standins),), None
    )
    assert isinstance(record, TaggedRecord)
    message = record.getMessage()
    assert message.startswith("[tagged] Traceback") and message.count(TITLE) == 1


def test_install_and_uninstall(clean_logging: None, standins: Path) -> None:
    """Idempotent install; uninstall restores the previous factory when ours is on top, and
    otherwise switches ours off in place; installing again never explains a record twice."""
    original = logging.getLogRecordFactory()
    install_logging()
    ours = logging.getLogRecordFactory()
    install_logging()
    assert logging.getLogRecordFactory() is ours and installed()
    uninstall_logging()
    assert logging.getLogRecordFactory() is original and not installed()
    uninstall_logging()  # a second uninstall is harmless

    install_logging()
    ours = logging.getLogRecordFactory()

    def wrapper(*args: object, **kwargs: object) -> logging.LogRecord:
        return ours(*args, **kwargs)

    logging.setLogRecordFactory(wrapper)
    uninstall_logging()
    assert logging.getLogRecordFactory() is wrapper  # theirs stays, ours is off inside it
    tb = server_error_traceback(standins)
    record = wrapper("x", logging.ERROR, __file__, 1, "%s", (tb,), None)
    assert TITLE not in record.getMessage()

    install_logging()  # on top of the wrapper, with the buried copy still off
    record = logging.getLogRecordFactory()("x", logging.ERROR, __file__, 1, "%s", (tb,), None)
    assert record.getMessage().count(TITLE) == 1


@pytest.mark.internal_errors
def test_internal_failures_leave_the_plain_message(
    clean_logging: None, standins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If explaining fails (here: the catalog cannot be loaded), logging goes on unchanged."""
    install_logging()
    tb = server_error_traceback(standins)

    def broken(*args: object) -> None:
        raise OSError("catalog unreadable")

    monkeypatch.setattr("errhints._core.state.get_index", broken)
    record = logging.getLogRecordFactory()("x", logging.ERROR, __file__, 1, "%s", (tb,), None)
    assert record.getMessage() == tb


def test_bad_args_fail_as_logging_always_did(clean_logging: None) -> None:
    """A record whose %-args do not fit raises from getMessage exactly as without errhints
    (logging's handlers report that through ``handleError``)."""
    install_logging()
    record = logging.getLogRecordFactory()(
        "x", logging.ERROR, __file__, 1, "Traceback (most recent call last): %d", ("x",), None
    )
    with pytest.raises(TypeError):
        record.getMessage()
