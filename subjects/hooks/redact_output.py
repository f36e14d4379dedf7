#!/usr/bin/env python3
"""hook-redact: a Claude Code PostToolUse hook that scrubs secret-looking
values from tool output.

Claude Code runs it after every tool call with the call and its result on
stdin (JSON: tool_name, tool_input, tool_response, ...). It rewrites every
string inside tool_response, keeping the response's own shape (Bash:
stdout, stderr, ...; Read: file.content; Grep: content; Edit: the patch),
and, when anything changed, prints
  {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                          "updatedToolOutput": <the rewritten response>}}
which Claude Code 2.1.332 puts in place of the result, on the wire and in
the transcript. A value of another shape is ignored by Claude Code, so the
shape is never changed, only strings.

What counts as secret-looking (see PATTERNS): values assigned to keys that
name a password, secret, token, credential or key (KEY=VALUE, key: value,
"key": "value", --password VALUE), the password in a URL
(scheme://user:PASSWORD@host), bearer/basic credentials, well-known token
formats (Stripe, OpenAI, Anthropic, GitHub, Slack, AWS, Google, GitLab, npm,
JWTs) and PEM private key bodies. Each is replaced by [REDACTED].

What it cannot see, by design of a pattern matcher: a secret printed on its
own with no key and no known format, and any encoding of a secret (base64,
hex, ...). The suite's scenarios measure exactly those gaps.

On input it cannot parse it exits 1 (a non-blocking error: a PostToolUse
hook cannot withhold a result that already exists).
"""
import re
import sys

try:
    import json
except ImportError:  # Debian's python3-minimal has no json module
    import minijson as json

MASK = "[REDACTED]"

# Key names that announce a secret: contain one of these words, or end in
# "key" (API_KEY, stripeKey, aws_secret_access_key).
_KEYWORD = r"(?:pass|pwd|secret|token|credential|auth(?!or)|dsn|database_url|conn_?str|private)"
_KEYNAME = rf"[A-Za-z0-9_.-]*(?:{_KEYWORD}[A-Za-z0-9_.-]*|key)"
# A value: a mask already in place, a double-quoted string with escapes,
# a single-quoted one, or a bare word.
_VALUE = r"\[REDACTED\]|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[^\s,;'\"}\])]+"

# key = value, key: value, "key": "value", key => value; a "path:12:"
# prefix of grep output is not an assignment (the lookahead after ':').
ASSIGNMENT = re.compile(
    rf"(?i)(?<![A-Za-z0-9_.-])(?P<key>{_KEYNAME})(?P<sep>[\"']?[ \t]*(?:=>|=|:(?!\d+[:-]))[ \t]*)(?P<val>{_VALUE})")
FLAG = re.compile(
    rf"(?i)(?P<key>--?[A-Za-z0-9-]*(?:pass|secret|token|key)[A-Za-z0-9-]*)(?P<sep>[ =])(?P<val>{_VALUE})")
URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@'\"]*:)([^@\s/'\"]+)(@)")
BEARER = re.compile(r"(?i)\b(bearer|basic)([ \t]+)([A-Za-z0-9._~+/=-]{8,})")
TOKENS = re.compile("|".join([
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}",
    r"\bsk-[A-Za-z0-9_-]{16,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_-]{35}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\bnpm_[A-Za-z0-9]{36}",
    r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
]))
PEM = re.compile(r"(-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----)[\s\S]*?(-----END \2PRIVATE KEY-----)")

# Values after a secret-looking key that are not secrets: booleans, empty
# strings, references to the environment.
_HARMLESS = re.compile(
    r"(?i)^(?:[\"']{2}|true|false|null|none|nil|yes|no|\[REDACTED\]|\$.*|os\.environ.*|process\.env.*|ENV\[.*)$")


def _mask_value(val):
    """VAL masked, its quotes kept; VAL itself when it is harmless."""
    if _HARMLESS.match(val) or MASK in val:
        return val
    if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
        inner = val[1:-1]
        if not inner or _HARMLESS.match(inner):
            return val
        return val[0] + MASK + val[0]
    return MASK


def _assignment(m):
    return m.group("key") + m.group("sep") + _mask_value(m.group("val"))


def redact(text):
    """TEXT with every secret-looking value replaced by [REDACTED]."""
    text = PEM.sub(lambda m: m.group(1) + "\n" + MASK + "\n" + m.group(3), text)
    text = URL_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    text = BEARER.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    text = TOKENS.sub(MASK, text)
    text = ASSIGNMENT.sub(_assignment, text)
    text = FLAG.sub(_assignment, text)
    return text


def redact_value(value):
    """VALUE (any JSON value) with every string redacted; same shape."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value


def main():
    try:
        event = json.load(sys.stdin)
        response = event["tool_response"]
        name = event.get("hook_event_name") or "PostToolUse"
    except (ValueError, KeyError, TypeError) as e:
        print(f"hook-redact: cannot read the hook input ({e}): the output is not redacted", file=sys.stderr)
        return 1
    updated = redact_value(response)
    if updated != response:
        json.dump({"hookSpecificOutput": {"hookEventName": name, "updatedToolOutput": updated}},
                  sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
