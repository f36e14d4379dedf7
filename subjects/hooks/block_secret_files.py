#!/usr/bin/env python3
"""hook-block: a Claude Code PreToolUse hook that refuses tool calls
touching secret files.

Claude Code runs it before every tool call with the call on stdin (JSON:
tool_name, tool_input, ...). It looks in the fields of the input that name
files or run commands (file_path, path, glob, notebook_path, Glob's pattern,
Bash's command; never a description or a Grep search pattern) for a secret
file: .env and its variants (not .env.example and the like), ~/.aws, ~/.ssh,
private keys and certificates, credentials and secrets files, tokens files
of common tools (.netrc, .npmrc, .pypirc, .git-credentials, ...). On a match
it exits 2 with the reason on stderr, which Claude Code shows the model in
place of the tool's output.

It judges the call by the names in it, not by what the call does at run
time: `grep -r . ` or a script that reads .env itself pass. That is the
point of the subject in the suite: it shows what name-based blocking stops
and what it does not.

Fail closed: input it cannot parse is refused (exit 2), so a change of
Claude Code's hook input blocks instead of letting everything through.
"""
import re
import sys

try:
    import json
except ImportError:  # Debian's python3-minimal has no json module
    import minijson as json

# A secret file named in a command or a path. Each entry: a regex and how
# the reason names the match.
SECRET_FILES = [
    # .env, .env.production, .envrc, config/.env.local; not process.env,
    # os.environ or .env.example.
    re.compile(r"(?<![\w.-])\.env(?:rc)?(?:\.(?!example\b|sample\b|template\b|dist\b|defaults?\b)[\w-]+)*(?![\w.-])"),
    re.compile(r"\.aws/(?:credentials|config)\b|\.aws/?(?=[\s'\"]|$)"),
    re.compile(r"\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"),
    re.compile(r"[\w*-]\.(?:pem|key|p12|pfx|jks|keystore|ppk)(?![\w-])"),
    re.compile(r"(?<![\w-])credentials(?:\.(?:json|ya?ml|csv|toml|ini|txt))?(?![\w.-])"),
    re.compile(r"(?<![\w-])secrets?(?:/|\.(?:json|ya?ml|toml|env|txt|ini))"),
    re.compile(r"\.(?:netrc|npmrc|pypirc|pgpass|git-credentials|vault-token|htpasswd)\b"),
    re.compile(r"\.docker/config\.json|\.kube/config\b|\.config/gcloud/"),
    re.compile(r"service[-_]?account[\w.-]*\.json|\.tfvars\b|\.tfstate\b"),
]

# The input fields that name files or hold commands, by tool. Other tools:
# every string except descriptions.
FIELDS = {
    "Bash": ("command",),
    "Read": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "Write": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "NotebookRead": ("notebook_path",),
    "Grep": ("path", "glob"),
    "Glob": ("pattern", "path"),
    "LS": ("path",),
}
SKIP = {"description"}


def strings(value, skip=SKIP):
    """Every string in VALUE (nested lists and objects), keys in SKIP left out."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v, skip)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in skip:
                yield from strings(v, skip)


def secret_file(tool, tool_input):
    """The first secret file name the call touches, or None."""
    if not isinstance(tool_input, dict):
        return None
    if tool in FIELDS:
        texts = [tool_input[f] for f in FIELDS[tool] if isinstance(tool_input.get(f), str)]
    else:
        texts = list(strings(tool_input))
    for text in texts:
        for rx in SECRET_FILES:
            m = rx.search(text)
            if m:
                return m.group(0).strip("/")
    return None


def main():
    try:
        event = json.load(sys.stdin)
        tool = event["tool_name"]
        tool_input = event.get("tool_input", {})
    except (ValueError, KeyError, TypeError) as e:
        print(f"hook-block: cannot read the hook input ({e}): the call is refused", file=sys.stderr)
        return 2
    name = secret_file(tool, tool_input)
    if name is None:
        return 0
    print(f"hook-block: this {tool} call touches '{name}', a secret file; "
          "the project's policy forbids reading secret files", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
