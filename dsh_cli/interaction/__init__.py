"""The question seam: provider-neutral vocabulary, validation, errors and the registry.

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
