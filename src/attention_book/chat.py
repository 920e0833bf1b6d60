"""Chat templates: how a conversation becomes the one text a decoder continues (chapter 10).

A chat model is still a next-token predictor. Its conversation is written out as text with
special tokens that mark who speaks; SmolLM2 uses ChatML (OpenAI's "Chat Markup
Language")::

    <|im_start|>system
    You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
    <|im_start|>user
    What is the capital of France?<|im_end|>
    <|im_start|>assistant

and the model writes the assistant's turn, ending it with ``<|im_end|>``. The model file
declares its template (GGUF ``tokenizer.chat_template``, a Jinja program);
:func:`chatml` computes the same text in Python, and :func:`chatml_default_system` reads the
system message the template adds when a conversation has none. The book's tests render the
file's own template with Jinja and with ``transformers`` and compare.

This module needs only the standard library.
"""

from __future__ import annotations

import re

__all__ = ["IM_START", "IM_END", "ROLES", "chatml", "chatml_default_system", "is_chatml"]

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
#: The roles a message may have.
ROLES = ("system", "user", "assistant")

#: SmolLM2's template adds this system turn when the first message is not one.
_DEFAULT_SYSTEM = re.compile(
    r"messages\[0\]\['role'\] != 'system' %\}\{\{ '<\|im_start\|>system\n(.*?)<\|im_end\|>",
    re.S)


def is_chatml(template: str) -> bool:
    """Whether a Jinja chat template writes ChatML (both markers and the role header)."""
    return (isinstance(template, str) and IM_START in template and IM_END in template
            and "message['role']" in template)


def chatml_default_system(template: str) -> str | None:
    """The system message a ChatML template adds to a conversation that has none, or None.

    Parameters
    ----------
    template : str
        The model's Jinja template (GGUF ``tokenizer.chat_template``).
    """
    if not is_chatml(template):
        raise ValueError("this chat template is not ChatML (no <|im_start|>/<|im_end|> "
                         "turns): the book renders ChatML only")
    found = _DEFAULT_SYSTEM.search(template)
    return None if found is None else found.group(1)


def chatml(messages, *, add_generation_prompt: bool = True, default_system: str | None = None
           ) -> str:
    """A conversation as ChatML text.

    Parameters
    ----------
    messages : sequence of dict
        ``{"role": "system" | "user" | "assistant", "content": str}``, in order.
    add_generation_prompt : bool
        End with ``<|im_start|>assistant\\n``: the model's turn to write.
    default_system : str, optional
        A system message to put first when the first message is not one (SmolLM2's
        template does this: :func:`chatml_default_system`).

    Returns
    -------
    str
    """
    if isinstance(messages, (str, dict)) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...}")
    turns = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(
                m.get("content"), str):
            raise ValueError(f"each message must be {{'role': one of {list(ROLES)}, "
                             f"'content': text}}, got {m!r}")
        turns.append((m["role"], m["content"]))
    if default_system is not None and turns[0][0] != "system":
        turns.insert(0, ("system", default_system))
    text = "".join(f"{IM_START}{role}\n{content}{IM_END}\n" for role, content in turns)
    return text + (f"{IM_START}assistant\n" if add_generation_prompt else "")
