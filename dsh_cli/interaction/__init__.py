"""The question seam: provider-neutral vocabulary, validation, errors and the registry.

    vocabulary.py   the request and answer vocabulary (``spec/questions.md``), as pydantic models
    validation.py   request and answer validation, done once here
    constraints.py  typed free text: how a typed answer is checked and converted
    pending.py      the pending-question table: every batch being shown, by its ``rpc_id``
    service.py      UserInteraction: the seam a tool calls to ask the human
    traits.py       a provider's optional traits, one Protocol each, read by isinstance
    later.py        questions that don't block (``delivery: "async"``): tickets and answers
    agents.py       a minimal agent registry: who may ask the human
    scripted.py     ScriptedProvider: answers given up front or computed

It imports nothing from UIs, models, tools or the CLI.
"""

from dsh_cli.core.errors import (
    ASK_ABORTED,
    ASK_CANCELLED,
    ASK_DECLINED,
    ASK_TIMEOUT,
    CALLER_NOT_LIVE,
    DELEGATED_CALLER,
    DUPLICATE_PROVIDER,
    EMPTY_QUESTIONS,
    INVALID_ANSWER,
    INVALID_QUESTIONS,
    NO_PROVIDER,
    HarnessError,
    UserInteractionError,
)
from dsh_cli.core.recommended import display_label, is_recommended
from dsh_cli.core.sanitize import display_width, sanitize, sanitize_line
from dsh_cli.core.signal import AbortSignal
from dsh_cli.interaction.agents import Agent, AgentRegistry
from dsh_cli.interaction.constraints import TextRule
from dsh_cli.interaction.pending import (
    BAD_RESPONSE,
    NOT_PENDING,
    WRONG_SESSION,
    PendingEntry,
    PendingQuestions,
)
from dsh_cli.interaction.scripted import ScriptedProvider
from dsh_cli.interaction.service import UserInteraction, UserInteractionProvider
from dsh_cli.interaction.validation import (
    LIMITS,
    check_questions,
    problem_with,
    validate_answer,
)
from dsh_cli.interaction.vocabulary import (
    ELICITATION_FIELDS,
    AskContext,
    AskDefault,
    AskSource,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Deadline,
)

__all__ = [
    "ASK_ABORTED",
    "ASK_CANCELLED",
    "ASK_DECLINED",
    "ASK_TIMEOUT",
    "BAD_RESPONSE",
    "CALLER_NOT_LIVE",
    "DELEGATED_CALLER",
    "DUPLICATE_PROVIDER",
    "ELICITATION_FIELDS",
    "EMPTY_QUESTIONS",
    "INVALID_ANSWER",
    "INVALID_QUESTIONS",
    "LIMITS",
    "NOT_PENDING",
    "NO_PROVIDER",
    "WRONG_SESSION",
    "AbortSignal",
    "Agent",
    "AgentRegistry",
    "AskContext",
    "AskDefault",
    "AskSource",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "Deadline",
    "HarnessError",
    "PendingEntry",
    "PendingQuestions",
    "ScriptedProvider",
    "TextRule",
    "UserInteraction",
    "UserInteractionError",
    "UserInteractionProvider",
    "check_questions",
    "display_label",
    "display_width",
    "is_recommended",
    "problem_with",
    "sanitize",
    "sanitize_line",
    "validate_answer",
]
