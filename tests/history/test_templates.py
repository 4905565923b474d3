"""Instruction templates and system-prompt composition."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import AIChatError, ConfigurationError, ValidationError, normalize_messages
from ai_chat.history import (
    InstructionComposer,
    InstructionContext,
    InstructionSection,
    InstructionTemplate,
    MissingVariableError,
    TemplateSyntaxError,
    create_test_instruction_context,
    extract_template_variables,
    render_template,
    when_any_tool_available,
    when_metadata,
    when_metadata_present,
    when_step,
    when_tools_available,
)
from ai_chat.types import ChatRequest

# --- templates -------------------------------------------------------------------------


def test_variables_are_replaced() -> None:
    template = InstructionTemplate("You are assisting {{userName}} on step {{ step }}.")
    assert template.render({"userName": "Alice", "step": "1"}) == (
        "You are assisting Alice on step 1."
    )
    assert render_template("Hi {{name}}, {{name}}!", {"name": "Bo"}) == "Hi Bo, Bo!"


def test_variables_are_extracted_once_in_order() -> None:
    assert extract_template_variables("{{b}} {{a}} {{b}} {{ c }}") == ("b", "a", "c")
    assert InstructionTemplate("no variables").variables == ()


def test_a_missing_variable_raises_a_typed_error_by_default() -> None:
    with pytest.raises(MissingVariableError) as caught:
        render_template("Hello {{userName}}, step {{step}}", {"step": "1"})
    error = caught.value
    assert isinstance(error, AIChatError) and isinstance(error, LookupError)
    assert error.variable == "userName"
    assert error.position == 6
    assert error.given == ("step",)
    assert error.section is None
    assert "userName" in str(error) and "missing='leave'" in str(error)


def test_missing_variable_strategies() -> None:
    source = "Hello {{ userName }}!"
    assert render_template(source, {}, missing="leave") == "Hello {{ userName }}!"
    assert render_template(source, {}, missing="empty") == "Hello !"
    with pytest.raises(ConfigurationError) as caught:
        render_template(source, {}, missing="ignore")  # pyright: ignore[reportArgumentType]
    assert caught.value.parameter == "missing"


def test_values_are_inserted_verbatim_and_never_rendered_again() -> None:
    # User input in a value cannot reach other variables.
    rendered = render_template(
        "{{greeting}} {{secret}}", {"greeting": "{{secret}}", "secret": "s3cr3t"}
    )
    assert rendered == "{{secret}} s3cr3t"


@pytest.mark.parametrize(
    ("source", "position", "words"),
    [
        ("Hi {{user name}}", 3, "is not a variable"),
        ("Hi {{userName}", 3, "unclosed"),
        ("Hi {{}}", 3, "is not a variable"),
        ("{{1st}}", 0, "is not a variable"),
        ("ok {{a}} then {{", 14, "unclosed"),
        ("{{{name}}}", 0, "is not a variable"),
    ],
)
def test_malformed_templates_fail_when_made(source: str, position: int, words: str) -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        InstructionTemplate(source)
    assert caught.value.position == position
    assert words in caught.value.reason
    assert isinstance(caught.value, ValueError)


def test_lone_closing_braces_and_single_braces_are_text() -> None:
    source = 'JSON looks like {"a": {"b": 1}} and {single}'
    assert render_template(source) == source


def test_templates_compare_by_source_and_reject_non_strings() -> None:
    assert InstructionTemplate("{{a}}") == InstructionTemplate("{{a}}")
    assert hash(InstructionTemplate("{{a}}")) == hash(InstructionTemplate("{{a}}"))
    assert InstructionTemplate("{{a}}") != InstructionTemplate("{{b}}")
    with pytest.raises(ConfigurationError):
        InstructionTemplate(5)  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigurationError) as caught:
        render_template("{{a}}", {"a": 5})  # pyright: ignore[reportArgumentType]
    assert caught.value.parameter == "variables['a']"


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
TEXT = st.text(st.characters(blacklist_characters="{"), max_size=10)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(TEXT, NAMES), max_size=6), TEXT, st.data())
def test_rendering_substitutes_every_variable(
    pieces: list[tuple[str, str]], tail: str, data: st.DataObject
) -> None:
    source = "".join(f"{text}{{{{{name}}}}}" for text, name in pieces) + tail
    names = list(dict.fromkeys(name for _, name in pieces))
    values = {name: data.draw(st.text(max_size=6), label=name) for name in names}
    template = InstructionTemplate(source)
    assert template.variables == tuple(names)
    expected = "".join(text + values[name] for text, name in pieces) + tail
    assert template.render(values) == expected
    assert template.render({}, missing="leave") == source


# --- composition -----------------------------------------------------------------------


def test_static_sections_render_in_order_as_markdown() -> None:
    composer = InstructionComposer(
        [
            InstructionSection("Role", "You are a helpful assistant."),
            InstructionSection("Rules", "Be concise."),
            InstructionSection(None, "Plain paragraph."),
        ]
    )
    assert composer.render() == (
        "## Role\nYou are a helpful assistant.\n\n## Rules\nBe concise.\n\nPlain paragraph."
    )
    assert InstructionComposer(composer.sections, heading_level=1, separator="\n").render() == (
        "# Role\nYou are a helpful assistant.\n# Rules\nBe concise.\nPlain paragraph."
    )


def conditional() -> InstructionComposer:
    return InstructionComposer(
        [
            when_step(0, InstructionSection("Welcome", "Welcome! Here is how I can help.")),
            when_tools_available(
                ["search", "read-file"],
                InstructionSection("Available tools", "You may search and read files."),
            ),
            when_any_tool_available(InstructionSection("Tools", "You have tools available.")),
            when_any_tool_available(
                InstructionSection("Browsing", "Cite your sources."), names=["search", "browse"]
            ),
            when_metadata("mode", "strict", InstructionSection("Strict", "Follow every rule.")),
            when_metadata_present("locale", InstructionSection("Locale", "Answer in the locale.")),
            when_step(range(1, 3), InstructionSection("Later", "Summarize tool results.")),
        ]
    )


def headings(prompt: str) -> list[str]:
    return [line[3:] for line in prompt.splitlines() if line.startswith("## ")]


def test_conditions_select_sections() -> None:
    composer = conditional()
    assert headings(composer.render()) == ["Welcome"]
    first = create_test_instruction_context(
        step=0, tools=["search", "read-file"], metadata={"mode": "strict"}
    )
    assert headings(composer.render(first)) == [
        "Welcome",
        "Available tools",
        "Tools",
        "Browsing",
        "Strict",
    ]
    later = create_test_instruction_context(step=2, tools=["browse"], metadata={"locale": None})
    assert headings(composer.render(later)) == ["Tools", "Browsing", "Locale", "Later"]
    assert headings(composer.render(create_test_instruction_context(step=3))) == []


def test_metadata_is_compared_as_json() -> None:
    section = when_metadata("strict", True, InstructionSection("S", "x"))
    composer = InstructionComposer([section])
    assert composer.render(create_test_instruction_context(metadata={"strict": True})) != ""
    assert composer.render(create_test_instruction_context(metadata={"strict": 1})) == ""
    nested = when_metadata("plan", {"tier": [1, 2]}, InstructionSection("P", "y"))
    match = create_test_instruction_context(metadata={"plan": {"tier": [1, 2]}})
    assert InstructionComposer([nested]).render(match) == "## P\ny"
    other = create_test_instruction_context(metadata={"plan": {"tier": [1, True]}})
    assert InstructionComposer([nested]).render(other) == ""


def test_conditions_add_up() -> None:
    both = when_step(0, when_metadata("mode", "strict", InstructionSection("Both", "z")))
    composer = InstructionComposer([both])
    assert composer.render(create_test_instruction_context(metadata={"mode": "strict"})) != ""
    assert (
        composer.render(create_test_instruction_context(step=1, metadata={"mode": "strict"})) == ""
    )
    assert composer.render(create_test_instruction_context()) == ""
    custom = InstructionSection("Odd", "odd step", conditions=(lambda c: c.step % 2 == 1,))
    assert InstructionComposer([custom]).render(create_test_instruction_context(step=3)) != ""


def test_templates_and_functions_render_with_the_context() -> None:
    composer = InstructionComposer(
        [
            InstructionSection("User", InstructionTemplate("You help {{name}}.")),
            InstructionSection("Step", lambda context: f"This is step {context.step}."),
            InstructionSection("Empty", lambda context: "  \n"),
        ]
    )
    context = create_test_instruction_context(step=4, variables={"name": "Alice"})
    assert composer.render(context) == "## User\nYou help Alice.\n\n## Step\nThis is step 4."
    assert composer.variables() == ("name",)


def test_a_missing_variable_names_its_section() -> None:
    composer = InstructionComposer([InstructionSection("User", InstructionTemplate("{{name}}"))])
    with pytest.raises(MissingVariableError) as caught:
        composer.render()
    assert caught.value.section == "User"
    assert "in section 'User'" in str(caught.value)
    lenient = InstructionComposer(composer.sections, missing="leave")
    assert lenient.render() == "## User\n{{name}}"


def test_a_content_function_must_return_text() -> None:
    composer = InstructionComposer([InstructionSection("Bad", lambda context: 5)])  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigurationError, match="Bad"):
        composer.render()


def test_the_context_from_a_request_has_its_tools() -> None:
    request: ChatRequest = {
        "messages": normalize_messages(
            [{"id": "1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
        ),
        "tools": ({"name": "search", "inputSchema": {"type": "object"}},),
        "parameters": {},
    }
    context = InstructionContext.from_request(request, step=1, metadata={"mode": "strict"})
    assert context.tools == frozenset({"search"})
    assert context.step == 1
    assert headings(conditional().render(context)) == ["Tools", "Browsing", "Strict", "Later"]


def test_the_test_context_takes_plain_values_and_freezes_them() -> None:
    context = create_test_instruction_context(
        tools=["a", {"name": "b", "inputSchema": {}}], metadata={"list": [1, {"x": 2}]}
    )
    assert context.tools == frozenset({"a", "b"})
    assert context.metadata == {"list": (1, {"x": 2})}
    with pytest.raises(TypeError):
        context.metadata["list"] = 3  # pyright: ignore[reportIndexIssue]
    assert create_test_instruction_context() == InstructionContext()


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: InstructionContext(step=-1), ConfigurationError),
        (lambda: InstructionContext(step=True), ConfigurationError),
        (lambda: InstructionContext(tools={"a"}), ConfigurationError),  # pyright: ignore[reportArgumentType]
        (lambda: InstructionContext(variables={"a": 1}), ConfigurationError),  # pyright: ignore[reportArgumentType]
        (lambda: create_test_instruction_context(metadata={"a": object()}), ValidationError),
        (lambda: when_tools_available([], InstructionSection("a", "b")), ConfigurationError),
        (lambda: when_tools_available("search", InstructionSection("a", "b")), ConfigurationError),
        (
            lambda: when_any_tool_available(InstructionSection("a", "b"), names=[]),
            ConfigurationError,
        ),
        (lambda: when_step("0", InstructionSection("a", "b")), ConfigurationError),  # pyright: ignore[reportArgumentType]
        (lambda: when_step(0, "section"), ConfigurationError),  # pyright: ignore[reportArgumentType]
        (lambda: when_metadata("k", object(), InstructionSection("a", "b")), ValidationError),
        (lambda: InstructionComposer(["x"]), ConfigurationError),  # pyright: ignore[reportArgumentType]
        (lambda: InstructionComposer([], heading_level=7), ConfigurationError),
        (lambda: InstructionComposer([], missing="skip"), ConfigurationError),  # pyright: ignore[reportArgumentType]
    ],
)
def test_bad_arguments_are_typed_errors(make: object, error: type[Exception]) -> None:
    assert callable(make)
    with pytest.raises(error):
        make()
