"""Templates: parsing f-string-shaped messages and matching them in linear time."""

from __future__ import annotations

import time

import pytest

from errhints._core.template import TemplateError, parse_template


def test_placeholders_keep_their_expressions() -> None:
    """A placeholder runs to its matching brace, so nested expressions survive."""
    t = parse_template(
        "expected {len(prompts)} outputs, got "
        "{len(data) if isinstance(data, list) else type(data).__name__}."
    )
    assert t.literals == ("expected ", " outputs, got ", ".")
    assert t.names == (
        "len(prompts)",
        "len(data) if isinstance(data, list) else type(data).__name__",
    )


def test_doubled_braces_are_literal() -> None:
    """``{{`` and ``}}`` stand for literal braces, as in f-strings."""
    t = parse_template("bad body {{'a': {x}}}")
    assert t.literals == ("bad body {'a': ", "}")
    assert t.match("bad body {'a': 1}") == ("1",)


def test_a_self_documenting_placeholder_prints_its_expression() -> None:
    """``{x=}`` prints ``x=`` before the value, so that text is literal (dev/735's watchdog)."""
    t = parse_template(
        "{self.debug_name} watchdog timeout ({self.watchdog_timeout=}, {self.soft=})"
    )
    assert t.literals == ("", " watchdog timeout (self.watchdog_timeout=", ", self.soft=", ")")
    assert t.names == ("self.debug_name", "self.watchdog_timeout", "self.soft")
    assert t.literal_rich
    message = "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)"
    assert t.match(message) == ("Scheduler", "300", "False")
    assert parse_template("{n = !r}, {x:.2f}").literals == ("n = ", ", ", "")
    # comparisons and a fill character of ``=`` are expressions, not self-documenting
    assert parse_template("{a == b}|{a != b}|{x:=^9}").literals == ("", "|", "|", "")


def test_a_message_its_writer_cut_with_an_ellipsis_fits_its_head() -> None:
    """dev/836: ``... Please add `--is-embedding`...``: what is left before the ellipsis is
    the template's start and holds twice a whole template's distinctive text."""
    t = parse_template(
        "This model does not appear to be an embedding model by default. Please add"
        " `--is-embedding` when launching the server or try another model."
    )
    cited = (
        "This model does not appear to be an embedding model by default. Please add"
        " `--is-embedding`..."
    )
    assert t.match_head(cited) == ()
    assert t.match_head(cited.replace("...", "\u2026")) == ()
    assert t.match_head("This model does not appear...") is None  # too little of it
    assert t.match_head(cited.replace("Please", "Kindly")) is None  # other words
    # cut inside a literal after a value
    with_value = parse_template(
        "Cannot find valid samples in {path}, check `data/README.md` for the data format."
    )
    assert with_value.match_head(
        "Cannot find valid samples in data/x.json, check `data/README.md` for the da..."
    ) == ("data/x.json",)
    assert with_value.match_head("Cannot find valid samples in data/x.json, chec...") is None


@pytest.mark.parametrize("source", ["oops {unclosed", "stray } brace"])
def test_unbalanced_braces_are_rejected(source: str) -> None:
    """A template with an unbalanced brace is an error naming the offset."""
    with pytest.raises(TemplateError, match="offset"):
        parse_template(source)


def test_match_returns_placeholder_values() -> None:
    """A fitting message yields the text each placeholder took."""
    t = parse_template("SGLang server error: {response.status_code}, {response.text}")
    assert t.match('SGLang server error: 400, {"a": 1, "b": 2}') == ("400", '{"a": 1, "b": 2}')


@pytest.mark.parametrize(
    "message",
    [
        "SGLang server error 400, x",  # missing colon
        "prefix SGLang server error: 400, x",  # not at the start
        "SGLang server error: 400",  # missing the comma
    ],
)
def test_match_requires_every_literal_in_place(message: str) -> None:
    """Literals must all appear, in order, anchored at both ends."""
    t = parse_template("SGLang server error: {status}, {text}")
    assert t.match(message) is None


def test_a_message_that_starts_with_a_line_break_fits_but_not_one_that_starts_with_spaces() -> None:
    """holdout/862: bitsandbytes writes its message as a triple-quoted string, so it starts
    with a line break (and the indentation after it). Spaces alone before the first literal
    are something else (the fuzz oracle's ``':{A} '`` against ``' :'``)."""
    t = parse_template("The installed version of bitsandbytes was compiled without GPU {what}.")
    message = "\n    The installed version of bitsandbytes was compiled without GPU support."
    assert t.match(message) == ("support",)
    assert parse_template(":{A} ").match(" :") is None
    assert parse_template(":{A} ").match("\n :") == ("",)


def test_literal_only_template_needs_equality() -> None:
    """A template without placeholders matches only its exact text."""
    t = parse_template("Cannot find valid samples.")
    assert t.match("Cannot find valid samples.") == ()
    assert t.match("Cannot find valid samples. really") is None


def test_literal_richness() -> None:
    """Placeholder-heavy templates are not literal-rich; sentences are."""
    assert not parse_template("{failure_msg}: {error_msg}").literal_rich
    assert parse_template("Prefill out of memory. Try to lower your batch size.").literal_rich


def test_search_finds_an_embedded_template() -> None:
    """``search`` locates a template inside larger text and returns its span."""
    t = parse_template("Capture cuda graph failed: {e}.")
    text = "xx Capture cuda graph failed: CUDA OOM. trailing"
    found = t.search(text)
    assert found is not None
    start, end, values = found
    assert text[start:end] == "Capture cuda graph failed: CUDA OOM."
    assert values == ("CUDA OOM",)


def _time_match(t: object, message: str) -> float:
    start = time.perf_counter()
    for _ in range(3):
        t.match(message)  # type: ignore[attr-defined]
    return time.perf_counter() - start


def test_match_is_linear_on_a_huge_adversarial_message() -> None:
    """A message built to defeat backtracking: 10x the input costs about 10x, not 100x."""
    t = parse_template("a{x}a{y}a{z}ab")
    small, large = "a" * 1_000_000, "a" * 10_000_000
    assert t.match(large) is None
    assert t.match(large + "b") is not None
    ratio = _time_match(t, large) / max(_time_match(t, small), 1e-6)
    assert ratio < 40, f"10x input took {ratio:.1f}x the time"


def test_trailing_white_space_is_ignored() -> None:
    """A message read back from a log has lost its trailing space or newline; it still fits."""
    t = parse_template("Capture failed: {e}\nOpen an issue \n")
    assert t.match("Capture failed: OOM\nOpen an issue") == ("OOM",)
    assert t.match("Capture failed: OOM\nOpen an issue \n") == ("OOM",)
    assert parse_template("Done. ").match("Done.") == ()
    assert parse_template("x {a}\n").match("x y\n\n") == ("y\n",)  # an exact fit comes first


def test_a_message_without_the_templates_final_full_stop_fits() -> None:
    """A title or retyped message drops the final '.'; LlamaFactory 0.9.0 words it without."""
    template = parse_template("Undefined dataset {name} in dataset_info.json.")
    assert template.match("Undefined dataset foo in dataset_info.json") == ("foo",)
    assert template.match("Undefined dataset foo in dataset_info.json  ") == ("foo",)
    assert template.match("Undefined dataset foo in dataset_info.json.") == ("foo",)
    assert template.match("Undefined dataset foo in dataset_info.yaml") is None
    assert parse_template("Bad value {x}.").match("Bad value 3") == ("3",)
    # only a full stop is optional, and only the message's lack of one
    assert parse_template("Bad value {x}!").match("Bad value 3") is None


def test_the_first_lines_of_a_multi_line_message_fit_its_template() -> None:
    """dev/101: a paste kept two of the seven lines of SGLang's capture failure."""
    template = parse_template(
        "Capture cuda graph failed: {e}\nPossible solutions:\n"
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    )
    cut = "Capture cuda graph failed: RuntimeError: boom\nPossible solutions:\n1. set --mem-f"
    assert template.match(cut) is None
    assert template.match_head(cut) == ("RuntimeError: boom",)
    assert template.match_head("Capture cuda graph failed: x") == ("x",)
    assert template.match_head("Capture cuda graph") is None
    # heads with little literal text never fit a cut message
    assert parse_template("Not enough memory {x} here").match_head("Not enough memory") is None
    assert parse_template("Bad: {x}\nmore text here").match_head("Bad: y") is None


def test_a_one_line_template_fits_the_first_line_of_a_longer_message() -> None:
    """dev/515: the user's own sentence under the quoted error was read as the message's
    second line; what the code wrote is the first line, and it fits."""
    template = parse_template("The model's max seq len ({n}) is larger than the KV cache ({m}).")
    two = "The model's max seq len (4096) is larger than the KV cache (1216).\n运行 chat 模式时没有此问题"
    assert template.match(two) == ("4096", "1216")
    # the first line has to fit on its own; a template of several lines never splits
    assert template.match("The model's max seq len (4096) is\nlarger than the KV (1).") is None
    assert parse_template("Bad: {x}\nmore text here").match("Bad: y\nother text") is None


def test_a_message_a_terminal_wrapped_at_its_width_fits_joined() -> None:
    """dev/593: the terminal cut the message inside a word (``8-bit mode`` / ``l, please``)."""
    template = parse_template("if you want to fine-tune an 8-bit model, please make sure.")
    assert template.match("if you want to fine-tune an 8-bit mode\nl, please make sure.") == ()
    fully_literal = parse_template("Empty dataset!")
    assert fully_literal.match("Empty dataset!\nthen my own words") == ()


def test_a_message_wrapped_where_a_space_was_fits_with_the_space_back() -> None:
    """held-back/357: an editor's soft wrap put the line break in place of a space
    (``... of this module,`` / ``but found transformers==5.5.0.``)."""
    template = parse_template(
        "{requirement} is required for a normal functioning of this module, but found "
        "{pkg}=={got_ver}.{hint}"
    )
    wrapped = (
        "transformers>=4.55.0,<=5.2.0 is required for a normal functioning of this module,\n"
        "but found transformers==5.5.0.\nTo fix: run `pip install transformers>=4.55.0,<=5.2.0`"
    )
    values = template.match(wrapped)
    assert values is not None
    assert values[:2] == ("transformers>=4.55.0,<=5.2.0", "transformers")
    two = parse_template("The model's max seq len ({n}) is larger than the KV cache ({m}).")
    assert two.match("The model's max seq len (4096) is\nlarger than the KV cache (1).") == (
        "4096",
        "1",
    )


def test_a_retyped_message_fits_without_its_punctuation_and_case() -> None:
    """held-back/478: ``Processor was not found please check and update your model file``;
    a literal of punctuation alone between placeholders still has to be there."""
    template = parse_template("Processor was not found, please check and update your model file.")
    assert template.match("processor was not found please check and update your model file") == ()
    assert template.match("Processor was not found, please check your model file.") is None
    separated = parse_template("Adapter {name} failed to load: {reason}, {details}")
    assert separated.match("Adapter a failed to load: x y") is None


def test_a_message_running_into_words_in_another_script_fits() -> None:
    """dev/583: ``...access to localhost.请大佬们执教``: the user's words glued to the message."""
    template = parse_template("Please set share=True or check your proxy settings to allow {x}.")
    glued = "Please set share=True or check your proxy settings to allow localhost.请大佬们执教"
    assert template.match(glued) == ("localhost",)
    # the words glued on may hold ASCII ones, fewer than their CJK characters (dev/879)
    lora_only = parse_template("RM and PPO training can only be performed with the LoRA method.")
    asked = "RM and PPO training can only be performed with the LoRA method.只能使用lora吗，不可以使用full的方式吗？"
    assert lora_only.match(asked) == ()
    assert lora_only.match(asked.replace("只能使用lora吗", "only lora is allowed here")) is None
    # text in another script inside the message is the message's own
    assert parse_template("Undefined dataset {name} in dataset_info.json.").match(
        "Undefined dataset 数据集 in dataset_info.json."
    ) == ("数据集",)


def test_a_one_line_message_cut_inside_its_last_value_fits_its_template() -> None:
    """dev/344: the paste stops inside the messages list, before the template's final '.'."""
    new = parse_template(
        "The number of images does not match the number of {IMAGE_PLACEHOLDER} tokens in "
        "{messages}."
    )
    old = parse_template(
        "The number of images does not match the number of {IMAGE_PLACEHOLDER} tokens."
    )
    cut = (
        "The number of images does not match the number of <image> tokens in "
        "[{'content': '<image>hi', 'role': 'use"
    )
    assert new.match_head(cut) == ("<image>", "[{'content': '<image>hi', 'role': 'use")
    longer = parse_template("Cannot read the request body {body} as JSON here.")
    assert longer.match("Cannot read the request body {'a': [1, 2") is None
    assert longer.match_head("Cannot read the request body {'a': [1, 2") == ("{'a': [1, 2",)
    # the old wording's value would run over its own last literal ("tokens"): not a cut
    assert old.match_head(cut) is None
    # a value that closes what it opens is not visibly cut: the message ended there
    assert new.match_head(cut.replace("'role': 'use", "'role': 'user'}]")) is None
    assert new.match_head(cut.replace("'role': 'use", "'role': 'user'}] tail")) is None
    # too little literal text before the cut value
    assert parse_template("bad value {x}.").match_head("bad value [1, 2") is None


def test_the_first_sentences_of_a_long_message_fit_its_template() -> None:
    """dev/404 quotes the headline of SGLang's KV-cache check; dev/405's client printed the
    first two sentences of the context-length error on one line and the third on the next."""
    kv = parse_template(
        "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static="
        "{fraction}. Raise --mem-fraction-static above {suggested:.3f} (minimum viable = "
        "{minimum:.4f})."
    )
    headline = "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.1"
    assert kv.match(headline) is None
    assert kv.match_head(headline) == ("0.1",)
    assert kv.match_head(headline + ".") == ("0.1",)
    # a value that runs on in words is not a headline cut after it
    assert kv.match_head(headline + " and more") is None
    tokens = parse_template(
        "Requested token count exceeds the model's maximum context length of {n} tokens. "
        "You requested a total of {total} tokens: {inp} tokens from the input messages and "
        "{out} tokens for the completion. Please reduce the number of tokens."
    )
    two = (
        "Requested token count exceeds the model's maximum context length of 8 tokens. "
        "You requested a total of 9 tokens: 5 tokens from the input messages and 4 tokens "
        "for the completion."
    )
    assert tokens.match_head(two) == ("8", "9", "5", "4")
    # the literal text a headline holds must be twice as distinctive as a whole template's
    short = parse_template("Bad value {x}. Use a number between {low} and {high}.")
    assert short.match_head("Bad value 7") is None


def test_starts_says_a_message_is_the_template_cut_short() -> None:
    """dev/435: ``ValueError: Processor was not found, plea`` under its raise site."""
    processor = parse_template("Processor was not found, please check and update your model file.")
    assert processor.starts("Processor was not found, plea")
    assert not processor.starts("Processor")  # too little to say
    assert not processor.starts("Processor was found after all")
    template = parse_template("Template {name} does not exist.")
    assert template.starts("Template qwen3_6 does not ex")
    assert not template.starts("The template qwen3_6 does not exist.")


def test_runs_of_spaces_count_as_one_when_nothing_else_fits() -> None:
    """dev/449: ``Can't find 'adapter_config.json'  at '...'`` with a doubled space."""
    template = parse_template("Can't find 'adapter_config.json' at '{model_id}'")
    assert template.match("Can't find 'adapter_config.json'  at 'out/x'") == ("out/x",)
    assert template.match("Can't find 'adapter_config.json' at 'a  b'") == ("a  b",)  # exact first
    assert template.match("Can't find  'config.json'  at 'x'") is None


def test_a_message_after_a_title_in_another_script_fits() -> None:
    """dev/704: ``ChatGLM3B模型微调，模型合并导致报错ChatGLM model is not supported``: an issue
    title's own words glued before the message, which starts after the last CJK character."""
    template = parse_template("ChatGLM model is not supported.")
    assert template.match("ChatGLM3B模型微调，模型合并导致报错ChatGLM model is not supported") == ()
    assert template.match("模型合并报错： ChatGLM model is not supported.") == ()
    # an accented letter is no other script's prose, and the tail must start with a letter
    assert template.match("Modèle ChatGLM model is not supported.") is None
    assert template.match("报错3ChatGLM model is not supported.") is None


def test_the_first_sentence_of_a_literal_message_fits_as_its_head() -> None:
    """dev/671: a quote keeps the headline of a two-sentence message, wrapped by the editor;
    the headline must be twice as distinctive as a whole template."""
    template = parse_template(
        "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100)."
        " Please use a different prefill backend."
    )
    quoted = "TRTLLM MHA backend for prefill is only supported on\nBlackwell GPUs (SM100)."
    assert template.match(quoted) is None
    assert template.match_head(quoted) == ()
    assert template.match_head("TRTLLM MHA backend for prefill is only supported") is None
    short = parse_template("Out of memory. Try to lower your batch size.")
    assert short.match_head("Out of memory.") is None


def test_an_import_error_fits_without_its_location() -> None:
    """dev/1336: ``cannot import name 'x' from 'trl'``, the `` (/path/__init__.py)`` left out."""
    t = parse_template("cannot import name '{name}' from 'trl{module}' ({path})")
    assert t.match("cannot import name 'X' from 'trl'") == ("X", "", "")
    assert t.match("cannot import name 'X' from 'trl' (/a/trl/__init__.py)") == (
        "X",
        "",
        "/a/trl/__init__.py",
    )
    # only a location in parentheses at the end is optional
    assert parse_template("bad {x} (code {n})").match("bad y") is None
    assert t.match("cannot import name 'X' from 'torch'") is None
    # nor any value in parentheses: the template must go on to end with that one
    assert (
        parse_template("Unsupported model {name} ({arch})").match("Unsupported model x; y") is None
    )
    assert t.match("cannot import name 'X' from 'trl' is not what you think") is None
