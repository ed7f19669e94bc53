"""Tool output is data. Text in it that reads like an instruction is flagged, never obeyed.

Replies are built from fields, not from free text, and the model view wraps tool results as
data; this module finds the instruction-like text so the audit can show the attempt.
"""

from __future__ import annotations

import re
from typing import Any

_PATTERNS = [
    r"ignore (all |any )?(previous|prior|above) (instructions|messages|rules)",
    r"disregard (all |the )?(previous|prior|above|system)",
    r"you are now",
    r"new instructions?:",
    r"system prompt",
    r"(call|use|invoke) the \w+ tool",
    r"忽略(之前|以上|前面)的?(所有)?(指令|规则|提示)",
    r"你现在是",
    r"新的指令",
    r"(立即|马上)(调用|执行)",
]
_INJECTION = re.compile("|".join(_PATTERNS), re.IGNORECASE)


def find_injections(value: Any, path: str = "") -> list[str]:
    """Return the paths of strings in ``value`` that look like instructions to the agent."""
    found: list[str] = []
    if isinstance(value, str):
        if _INJECTION.search(value):
            found.append(path or "(value)")
    elif isinstance(value, dict):
        for key, item in value.items():
            found.extend(find_injections(item, f"{path}.{key}" if path else str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(find_injections(item, f"{path}[{index}]"))
    return found
