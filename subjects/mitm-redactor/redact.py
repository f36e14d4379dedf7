"""A mitmproxy addon that redacts secrets from what Claude Code sends to
the model provider: the pattern approach of secret scanners (gitleaks-style
rules), with no knowledge of the project.

It rewrites each request body (mitmproxy decodes gzip and deflate first and
encodes again) before it goes upstream, replacing with [REDACTED]:
  - provider keys of the form sk-... (OpenAI, Anthropic: sk-ant-, sk-proj-)
    and Stripe's sk_live_/sk_test_/rk_live_ keys;
  - GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_ and 36 characters;
    github_pat_), Slack tokens (xoxb-, xoxp-, ...), npm tokens (npm_ and 36
    characters), AWS access key ids (AKIA... and 16 upper-case characters);
  - the value of an assignment whose name says secret (..._KEY, ...SECRET...,
    ...TOKEN..., ...PASSWORD..., ...PASSWD..., ...CREDENTIAL...), as in .env
    files and shell output: NAME=value, NAME: value, "name": "value";
  - PEM private key blocks.
The body is matched as the text it is on the wire (JSON, with the tool
results as escaped strings inside it), so a value ends at a quote, a
backslash or white space. Responses stream back untouched (SSE is never
buffered). It never logs a secret: one line per request with a count.
"""
import re

from mitmproxy import ctx, http

RULES = [
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
    re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
]
# NAME=value, NAME: value, "name": "value" (the quotes JSON-escaped or
# not). The name starts where no name character precedes it and is at most
# 64 long, so the search stays linear in the body (an unbounded name
# before and after the secret word backtracks cubically on a long run of
# letters); whether it says secret is checked after the match. A value is
# at most 256 characters (what is longer is redacted in part), so going on
# inside a value that was not a secret's stays linear too.
ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64}(?:\\?[\"'])?\s{0,8}[=:]\s{0,8}(?:\\?[\"'])?)"
    r"([^\s\"'\\,}]{8,256})")
SECRET_NAME = re.compile(r"(?i)key|secret|token|passw(?:or)?d|pwd|credential")
MARK = "[REDACTED]"


def redact(text):
    """Returns (text with every match replaced, number of replacements)."""
    n = 0
    for rule in RULES:
        text, k = rule.subn(MARK, text)
        n += k
    # A name that does not say secret ("text": "DB_KEY=...") is passed
    # over, and the search goes on inside its value.
    out, pos = [], 0
    while True:
        m = ASSIGNMENT.search(text, pos)
        if m is None:
            break
        if m.group(2) == MARK or not SECRET_NAME.search(m.group(1)):
            out.append(text[pos:m.start(2)])
            pos = m.start(2)
            continue
        out.append(text[pos:m.start(2)] + MARK)
        pos = m.end(2)
        n += 1
    out.append(text[pos:])
    return "".join(out), n


def request(flow: http.HTTPFlow) -> None:
    body = flow.request.get_text(strict=False)
    if not body:
        return
    new, n = redact(body)
    if n:
        flow.request.text = new
    ctx.log.info("mitm-redactor: %s %s: %d redacted" % (flow.request.method, flow.request.path.split("?")[0], n))


def responseheaders(flow: http.HTTPFlow) -> None:
    flow.response.stream = True
