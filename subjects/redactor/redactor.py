#!/usr/bin/env python3
"""redactor: an HTTP interceptor that removes a project's secrets from
request bodies before they leave for the model provider.

It sits between Claude Code and the next hop (in leakbench, the recording
proxy at $UPSTREAM_URL), forwards every request with the same method, path,
query and headers, and streams every response back as it arrives (SSE is
never buffered). Before forwarding a body it removes every secret it knows,
in every form it knows, and replaces each with [REDACTED].

Which secrets (learn_file): it walks the project (--root, default the
working directory; read-only for it) before every request, re-reading only
the files that changed, and learns
  - every value of a .env-style file (.env, .env.*, *.env, .envrc) that
    looks like a secret, and every value under a secret-looking key
    (password, secret, token, credential, auth, dsn, ..., or ending in
    "key") in any text file: KEY=VALUE, key: value, "key": "value",
    KEY = "value", --password VALUE;
  - string values under secret-looking keys of JSON files, at any depth;
  - passwords in URLs (scheme://user:PASSWORD@host), bearer/basic
    credentials, well-known token formats (Stripe, OpenAI, Anthropic,
    GitHub, Slack, AWS, Google, GitLab, npm, JWT);
  - every line of key and credential files (*.key, *.pem, credentials,
    id_rsa, ...) and the body of every PEM private key block;
  - the same in git's loose objects (.git/objects/xx/...), so a secret that
    was committed and then removed from the tree is still known.
Values shorter than 8 characters are not learned (they would match ordinary
text). Secrets outside the project (Claude Code's environment, its home
directory) are unknown to it: that is the limit of this design.

Which forms (Patterns): raw; JSON-escaped (UTF-8 or \\u-escaped, '/' or
'\\/'); HTML-escaped; percent-encoded (quote, quote_plus, upper and lower
hex digits); hex (lower and upper); base64 and base64url at every byte
alignment inside a longer encoded text, the partial characters at both ends
included. Hex and base64 are searched with whitespace removed, so wrapped
output (`base64` at 76 columns, `od` columns) is found too.

A JSON body is parsed, every string (keys included) redacted, and the body
re-serialized only when something changed: it stays valid JSON. Other
bodies are redacted as text. Compressed bodies (gzip, deflate) are
decompressed first. Fail closed: a body it cannot decode or redact is not
forwarded (502).

It never prints a secret: logs carry counts and file names only.

Usage: redactor [--listen HOST:PORT] [--upstream URL] [--root DIR]
It prints "redactor: listening on HOST:PORT" once ready.
       redactor --redact-stdin [--root DIR]
redacts one body from stdin to stdout, to see what would be forwarded.
"""
import argparse
import base64
import html
import http.client
import json
import os
import re
import signal
import sys
import threading
import urllib.parse
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MASK = "[REDACTED]"
MIN_SECRET = 8
MAX_FILE = 16 << 20  # bytes; larger files are not read
MAX_FILES = 50000
UPSTREAM_TIMEOUT = 900  # seconds of upstream silence before giving up

# ---------------------------------------------------------------------------
# Learning secrets from files

_KEYWORD = r"(?:pass|pwd|secret|token|credential|auth(?!or)|dsn|database_url|conn_?str|private)"
_KEYNAME = rf"[A-Za-z0-9_.-]*(?:{_KEYWORD}[A-Za-z0-9_.-]*|key)"
_VALUE = r"\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[^\s,;'\"}\])]+"
SECRET_KEY = re.compile(rf"(?i)^(?:{_KEYNAME})$")
ASSIGNMENT = re.compile(
    rf"(?i)(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)(?P<sep>[\"']?[ \t]*(?:=>|=|:(?!\d+[:-]))[ \t]*)"
    rf"(?P<val>{_VALUE})")
FLAG = re.compile(rf"(?i)--?[A-Za-z0-9-]*(?:pass|secret|token|key)[A-Za-z0-9-]*[ =](?P<val>{_VALUE})")
URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@'\"]*:(?P<val>[^@\s/'\"]+)@")
BEARER = re.compile(r"(?i)\b(?:bearer|basic)[ \t]+(?P<val>[A-Za-z0-9._~+/=-]{8,})")
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
PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?P<body>[\s\S]*?)-----END \1PRIVATE KEY-----")
HARMLESS = re.compile(
    r"(?i)^(?:true|false|null|none|nil|yes|no|changeme|\$.*|os\.environ.*|process\.env.*|ENV\[.*|<.*>|\{\{.*\}\})$")

DOTENV_NAME = re.compile(r"(?:^\.env(?:rc)?(?:\..*)?$|\.env$)")
KEYFILE_NAME = re.compile(
    r"(?i)(?:\.(?:key|pem|p12|pfx|ppk)$|^id_(?:rsa|dsa|ecdsa|ed25519)$|^credentials(?:\..*)?$|"
    r"^\.(?:netrc|pgpass|git-credentials|vault-token)$|^secrets?(?:\..*)?$)")
EXAMPLE_NAME = re.compile(r"(?i)\.(?:example|sample|template|dist)$")


def _unquote(val):
    """VAL without its quotes; JSON/Python escapes of a double-quoted value
    decoded when they decode."""
    if len(val) >= 2 and val[0] == val[-1] == '"':
        try:
            return json.loads(val)
        except ValueError:
            return val[1:-1]
    if len(val) >= 2 and val[0] == val[-1] == "'":
        return val[1:-1]
    return val


def _plausible(val):
    """Is VAL worth treating as a secret (long enough, not a placeholder,
    not overlapping the mask, which would make redaction loop)?"""
    return (len(val) >= MIN_SECRET and not HARMLESS.match(val)
            and MASK not in val and val not in MASK)


def _random_looking(val):
    """For values under keys that do not say "secret": mixed letters and
    digits, or long, and not a plain URL or path."""
    if " " in val or val.startswith(("/", "./", "~/")):
        return False
    if re.match(r"(?i)^[a-z][a-z0-9+.-]*://", val) and not URL_PASSWORD.search(val):
        return False
    has_digit = any(c.isdigit() for c in val)
    has_alpha = any(c.isalpha() for c in val)
    return (has_digit and has_alpha) or len(val) >= 24


def learn_text(text, name=""):
    """The set of secrets in TEXT, the contents of a file named NAME."""
    found = set()
    base = os.path.basename(name)
    if EXAMPLE_NAME.search(base):
        return found
    dotenv = bool(DOTENV_NAME.search(base))
    for m in ASSIGNMENT.finditer(text):
        val = _unquote(m.group("val"))
        if SECRET_KEY.match(m.group("key")) or (dotenv and _random_looking(val)):
            found.add(val)
    for rx in (FLAG, URL_PASSWORD, BEARER):
        for m in rx.finditer(text):
            found.add(_unquote(m.group("val")))
    for m in TOKENS.finditer(text):
        found.add(m.group(0))
    for m in PEM.finditer(text):
        lines = [ln.strip() for ln in m.group("body").splitlines() if ln.strip() and ":" not in ln]
        found.update(lines)
        found.add("".join(lines))
    if KEYFILE_NAME.search(base):
        for ln in text.splitlines():
            ln = ln.strip()
            if ln and not ln.startswith(("#", ";", "[", "-----")) and "=" not in ln:
                found.add(ln)
    if base.endswith(".json"):
        try:
            found.update(_json_secrets(json.loads(text)))
        except ValueError:
            pass
    return {s for s in found if _plausible(s)}


def _json_secrets(v, under_secret=False):
    """String values of a parsed JSON document under secret-looking keys."""
    out = set()
    if isinstance(v, dict):
        for k, x in v.items():
            out |= _json_secrets(x, under_secret or bool(SECRET_KEY.match(str(k))))
    elif isinstance(v, list):
        for x in v:
            out |= _json_secrets(x, under_secret)
    elif isinstance(v, str) and under_secret:
        out.add(v)
    return out


def _decode(data):
    return data.decode("utf-8", errors="replace")


def _git_object_text(path):
    """The contents of a loose git blob at PATH as text, or None."""
    try:
        with open(path, "rb") as f:
            raw = zlib.decompress(f.read(MAX_FILE))
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    if not header.startswith(b"blob ") or b"\0" in body[:8192]:
        return None
    return _decode(body)


class SecretStore:
    """The secrets of a project tree, kept current: refresh() re-walks the
    tree and re-reads only files whose size or mtime changed. Thread-safe."""

    def __init__(self, root):
        self.root = root
        self.lock = threading.Lock()
        self.cache = {}  # path -> ((size, mtime_ns), frozenset of secrets)
        self.secrets = frozenset()
        self.patterns = None
        self.files_with_secrets = 0

    def _learn(self, path, rel, in_git):
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return None
        stamp = (st.st_size, st.st_mtime_ns)
        hit = self.cache.get(path)
        if hit and hit[0] == stamp:
            return hit[1]
        secrets = frozenset()
        if st.st_size <= MAX_FILE:
            if in_git:
                text = _git_object_text(path)
                if text is not None:
                    secrets = frozenset(learn_text(text, "git-object"))
            else:
                try:
                    with open(path, "rb") as f:
                        data = f.read(MAX_FILE)
                except OSError:
                    data = b""
                if b"\0" not in data[:8192]:
                    secrets = frozenset(learn_text(_decode(data), rel))
        self.cache[path] = (stamp, secrets)
        return secrets

    def refresh(self):
        """Re-walks the tree. Returns the current Patterns."""
        with self.lock:
            seen, allsec, nfiles, withsec = set(), set(), 0, 0
            for dirpath, dirnames, filenames in os.walk(self.root):
                rel_dir = os.path.relpath(dirpath, self.root)
                parts = rel_dir.split(os.sep)
                in_git = ".git" in parts
                if in_git:
                    # Only the loose objects of .git are read.
                    if parts[-1] == ".git":
                        dirnames[:] = [d for d in dirnames if d == "objects"]
                        filenames = []
                    elif parts[-1] == "objects":
                        dirnames[:] = [d for d in dirnames if re.fullmatch(r"[0-9a-f]{2}", d)]
                        filenames = []
                dirnames.sort()
                for fn in sorted(filenames):
                    if nfiles >= MAX_FILES:
                        break
                    nfiles += 1
                    path = os.path.join(dirpath, fn)
                    rel = os.path.normpath(os.path.join(rel_dir, fn))
                    seen.add(path)
                    s = self._learn(path, rel, in_git)
                    if s:
                        withsec += 1
                        allsec |= s
            for gone in set(self.cache) - seen:
                del self.cache[gone]
            allsec = frozenset(allsec)
            if allsec != self.secrets or self.patterns is None:
                self.secrets = allsec
                self.patterns = Patterns(allsec)
            self.files_with_secrets = withsec
            return self.patterns


# ---------------------------------------------------------------------------
# Forms of a secret, and removing them

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
B64URL = B64[:62] + "-_"


def base64_cores(secret):
    """(pattern, lead, trail) for base64 and base64url at alignments 0..2:
    PATTERN is the run of characters that only the secret's bits determine;
    LEAD and TRAIL say whether a character partly made of the secret's bits
    sits just before or after it."""
    out = []
    n = len(secret)
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + secret + b"\0\0").decode("ascii")
        first = -(-8 * k // 6)  # ceil
        last = 8 * (k + n) // 6  # exclusive
        core = enc[first:last]
        lead = (8 * k) % 6 != 0
        trail = (8 * (k + n)) % 6 != 0
        out.append((core, lead, trail, B64))
        out.append((core.translate(str.maketrans("+/", "-_")), lead, trail, B64URL))
    return out


def text_forms(s):
    """Forms of secret S searched in text as it is."""
    forms = {s}
    for ascii_only in (False, True):
        j = json.dumps(s, ensure_ascii=ascii_only)[1:-1]
        forms.add(j)
        forms.add(j.replace("/", "\\/"))
        forms.add(re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), j))
    forms.add(html.escape(s, quote=True))
    forms.add(html.escape(s, quote=False))
    for q in (urllib.parse.quote(s, safe=""), urllib.parse.quote(s, safe="/"),
              urllib.parse.quote_plus(s, safe="")):
        forms.add(q)
        forms.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), q))
    return {f for f in forms if len(f) >= MIN_SECRET}


class Patterns:
    """Every form of every secret, compiled: redact(text) removes them."""

    def __init__(self, secrets):
        self.count = len(secrets)
        plain = set()
        encoded = {}  # pattern -> (lead, trail, alphabet)
        for s in secrets:
            plain |= text_forms(s)
            b = s.encode("utf-8")
            for h in (b.hex(), b.hex().upper()):
                encoded.setdefault(h, (False, False, ""))
            for core, lead, trail, alpha in base64_cores(b):
                if len(core) >= MIN_SECRET:
                    prev = encoded.get(core, (False, False, alpha))
                    encoded[core] = (prev[0] or lead, prev[1] or trail, alpha)
        self.encoded = encoded
        self.plain_rx = self._alternation(plain)
        self.encoded_rx = self._alternation(encoded)

    @staticmethod
    def _alternation(strings):
        if not strings:
            return None
        return re.compile("|".join(re.escape(x) for x in sorted(strings, key=len, reverse=True)))

    def _encoded_spans(self, text, strip):
        """Spans (in TEXT) of encoded forms, found with STRIP removed."""
        if self.encoded_rx is None:
            return []
        if strip.search(text):
            view_parts, index = [], []
            pos = 0
            for m in strip.finditer(text):
                view_parts.append(text[pos:m.start()])
                index.extend(range(pos, m.start()))
                pos = m.end()
            view_parts.append(text[pos:])
            index.extend(range(pos, len(text)))
            view = "".join(view_parts)
        else:
            view, index = text, range(len(text))
        spans = []
        for m in self.encoded_rx.finditer(view):
            start, end = m.start(), m.end()
            lead, trail, alpha = self.encoded[m.group(0)]
            if lead and start > 0 and view[start - 1] in alpha:
                start -= 1
            if trail and end < len(view) and view[end] in alpha:
                end += 1
            spans.append((index[start], index[end - 1] + 1))
        return spans

    def redact(self, text, strip, passes=3):
        """(TEXT with every form replaced by [REDACTED], number replaced)."""
        if not self.count or not text or passes == 0:
            return text, 0
        spans = []
        if self.plain_rx is not None:
            spans.extend((m.start(), m.end()) for m in self.plain_rx.finditer(text))
        spans.extend(self._encoded_spans(text, strip))
        if not spans:
            return text, 0
        spans.sort()
        merged = [list(spans[0])]
        for a, b in spans[1:]:
            if a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        out, pos = [], 0
        for a, b in merged:
            out.append(text[pos:a])
            out.append(MASK)
            pos = b
        out.append(text[pos:])
        # A removal can join two halves into a new match: go again.
        again, n = self.redact("".join(out), strip, passes - 1)
        return again, len(merged) + n


STRIP_JSON_STRING = re.compile(r"\s+")
STRIP_TEXT = re.compile(r"(?:\s|\\[nrt])+")


def redact_json(value, patterns):
    """(VALUE with every string, keys included, redacted; count)."""
    if isinstance(value, str):
        return patterns.redact(value, STRIP_JSON_STRING)
    if isinstance(value, list):
        total, out = 0, []
        for v in value:
            r, n = redact_json(v, patterns)
            out.append(r)
            total += n
        return out, total
    if isinstance(value, dict):
        total, out = 0, {}
        for k, v in value.items():
            rk, nk = patterns.redact(k, STRIP_JSON_STRING)
            rv, nv = redact_json(v, patterns)
            out[rk] = rv
            total += nk + nv
        return out, total
    return value, 0


def redact_body(body, content_type, patterns):
    """(the redacted body bytes, number of redactions). Raises ValueError
    on a body it cannot handle."""
    if not body or not patterns.count:
        return body, 0
    if "json" in (content_type or "").lower() or body[:1] in (b"{", b"["):
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if doc is not None:
            red, n = redact_json(doc, patterns)
            if n == 0:
                return body, 0
            return json.dumps(red, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), n
    text = body.decode("utf-8", errors="surrogateescape")
    red, n = patterns.redact(text, STRIP_TEXT)
    if n == 0:
        return body, 0
    return red.encode("utf-8", errors="surrogateescape"), n


# ---------------------------------------------------------------------------
# The HTTP side

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
              "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length",
              "proxy-connection"}


def log(msg):
    sys.stdout.write("redactor: " + msg + "\n")
    sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "redactor"
    # Set on the class by serve().
    store = None
    upstream = None  # urllib.parse.SplitResult

    def log_message(self, fmt, *args):  # the default logs to stderr per request
        pass

    def _read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline(3)
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _error(self, status, message):
        body = json.dumps({"type": "error", "error": {"type": "api_error",
                                                      "message": "redactor: " + message}}).encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _forward(self):
        try:
            body = self._read_body()
        except (ValueError, OSError) as e:
            self.close_connection = True
            return self._error(400, f"cannot read the request body: {e}")
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP]
        redactions = 0
        if body:
            enc = self.headers.get("Content-Encoding", "").strip().lower()
            try:
                if enc in ("gzip", "x-gzip", "deflate"):
                    body = zlib.decompress(body, 47 if enc != "deflate" else 15)
                    headers = [(k, v) for k, v in headers if k.lower() != "content-encoding"]
                elif enc not in ("", "identity"):
                    raise ValueError(f"unsupported content encoding '{enc}'")
                patterns = self.store.refresh()
                body, redactions = redact_body(body, self.headers.get("Content-Type"), patterns)
            except (ValueError, zlib.error, RecursionError) as e:
                log(f"{self.command} {self.path}: refused: {e}")
                return self._error(502, f"cannot redact the request body, not forwarded: {e}")
        headers.append(("Content-Length", str(len(body))))
        up = self.upstream
        path = (up.path.rstrip("/") + self.path) if up.path not in ("", "/") else self.path
        conn = http.client.HTTPConnection(up.hostname, up.port or 80, timeout=UPSTREAM_TIMEOUT)
        try:
            conn.putrequest(self.command, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", up.netloc)
            for k, v in headers:
                conn.putheader(k, v)
            conn.endheaders(body if body else None)
            resp = conn.getresponse()
        except OSError as e:
            conn.close()
            log(f"{self.command} {self.path}: upstream unreachable: {e}")
            return self._error(502, f"cannot reach the upstream: {e}")
        log(f"{self.command} {self.path}: {len(body)} bytes, {redactions} redactions, "
            f"{self.store.patterns.count if self.store.patterns else 0} secrets known; "
            f"upstream {resp.status}")
        try:
            self._relay(resp)
        finally:
            conn.close()

    def _relay(self, resp):
        """Streams RESP to the client as it arrives."""
        self.send_response_only(resp.status, resp.reason)
        length = None
        for k, v in resp.getheaders():
            kl = k.lower()
            if kl == "content-length":
                length = v
            elif kl not in HOP_BY_HOP:
                self.send_header(k, v)
        no_body = self.command == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200
        chunked = not no_body and length is None
        if no_body:
            if length is not None:
                self.send_header("Content-Length", length)
        elif chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", length)
        if resp.will_close and not chunked and length is None:
            self.close_connection = True
        self.end_headers()
        self.wfile.flush()
        if no_body:
            return
        try:
            while True:
                data = resp.read1(65536)
                if not data:
                    break
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                else:
                    self.wfile.write(data)
                self.wfile.flush()
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (OSError, http.client.HTTPException) as e:
            # The upstream or the client went away mid-stream: end this
            # connection so the client sees a truncated response.
            log(f"{self.command} {self.path}: stream ended early: {e}")
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward


def serve(listen, upstream, root):
    host, _, port = listen.rpartition(":")
    up = urllib.parse.urlsplit(upstream)
    if up.scheme != "http" or not up.hostname:
        raise SystemExit(f"redactor: bad upstream URL '{upstream}': http://HOST[:PORT] expected")
    store = SecretStore(root)
    store.refresh()
    Handler.store, Handler.upstream = store, up

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    srv = Server((host or "0.0.0.0", int(port)), Handler)
    # As a container's PID 1, SIGTERM would otherwise be ignored.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log(f"{store.patterns.count} secrets learned from {store.files_with_secrets} files under '{root}'")
    log(f"listening on {srv.server_address[0]}:{srv.server_address[1]}, upstream {upstream}")
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()


def main(argv=None):
    p = argparse.ArgumentParser(prog="redactor", description=__doc__.split("\n\n")[0])
    p.add_argument("--listen", default="0.0.0.0:8080", help="HOST:PORT (default 0.0.0.0:8080)")
    p.add_argument("--upstream", default=os.environ.get("UPSTREAM_URL"),
                   help="where requests go (default $UPSTREAM_URL)")
    p.add_argument("--root", default=".", help="the project whose secrets to remove (default .)")
    p.add_argument("--redact-stdin", action="store_true",
                   help="no server: redact the body on stdin to stdout, as a request body would be")
    a = p.parse_args(argv)
    if not os.path.isdir(a.root):
        p.error(f"cannot read the project directory '{a.root}'")
    if a.redact_stdin:
        store = SecretStore(a.root)
        patterns = store.refresh()
        try:
            body, n = redact_body(sys.stdin.buffer.read(), None, patterns)
        except (ValueError, RecursionError) as e:
            raise SystemExit(f"redactor: cannot redact the body: {e}")
        sys.stdout.buffer.write(body)
        sys.stderr.write(f"redactor: {n} redactions, {patterns.count} secrets known\n")
        return
    if not a.upstream:
        p.error("no upstream: set UPSTREAM_URL or pass --upstream")
    serve(a.listen, a.upstream, a.root)


if __name__ == "__main__":
    main()
