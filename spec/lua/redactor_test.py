"""Tests of the redactor, standalone on loopback: the redactor as a child
process on 127.0.0.1 (port chosen by the kernel), a recording upstream in
this process, a project in a temporary directory. Run with
  python3 -B -m unittest -v redactor_test     (from spec/lua)
spec/lua/redactor_spec.lua runs them as part of `make test`. (They live
here, not next to the redactor, because the redactor's directory is its
image's build context: every file there is part of the image's tag.)

The checks of what reached the upstream are independent of the redactor's
own code: they decode every base64 and hex run of the forwarded body and
look for the secret in the result.
"""
import base64
import binascii
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
REDACTOR = os.path.join(HERE, "..", "..", "subjects", "redactor", "redactor.py")
DEADLINE = 20  # seconds, for anything that waits

SECRET = "sk-live-3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6"
SPECIAL = 'Zq"8\\&ü€-0c1d2e4b5a6978c0d1e2f3a4b5c6d7'
DBPASS = "pgpw-aa11bb22cc33dd44ee55ff66"
HISTORY = "sk_live_0011223344556677889900aabbccddee"


def b64_runs_decode(text):
    """Every decoding of every base64-looking run of TEXT (whitespace and
    JSON \\n escapes removed), at every character offset."""
    joined = re.sub(r"(?:\s|\\n|\\r)+", "", text)
    out = []
    for m in re.finditer(r"[A-Za-z0-9+/_-]{12,}={0,2}", joined):
        run = m.group(0).rstrip("=").replace("-", "+").replace("_", "/")
        for off in range(4):
            chunk = run[off:]
            chunk = chunk[: len(chunk) - len(chunk) % 4]
            try:
                out.append(base64.b64decode(chunk))
            except binascii.Error:
                pass
    return out


def hex_runs_decode(text):
    joined = re.sub(r"(?:\s|\\n)+", "", text)
    out = []
    for m in re.finditer(r"[0-9a-fA-F]{16,}", joined):
        run = m.group(0)
        for off in range(2):
            chunk = run[off:]
            chunk = chunk[: len(chunk) - len(chunk) % 2]
            out.append(bytes.fromhex(chunk))
    return out


def leaks(secret, body_bytes):
    """Where SECRET can still be read in BODY_BYTES: a list of form names."""
    text = body_bytes.decode("utf-8", errors="replace")
    b = secret.encode()
    found = []
    if secret in text:
        found.append("raw")
    if json.dumps(secret)[1:-1] in text or json.dumps(secret, ensure_ascii=False)[1:-1] in text:
        found.append("json")
    try:
        if secret in json.dumps(json.loads(text), ensure_ascii=False):
            found.append("json-decoded")
        decoded = json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        decoded = text
    for t in (text, decoded):
        if any(b in d for d in b64_runs_decode(t)):
            found.append("base64")
        if any(b in d for d in hex_runs_decode(t)):
            found.append("hex")
    return sorted(set(found))


class Upstream:
    """A recording upstream on 127.0.0.1: answers JSON, or SSE in two parts
    with a gate between them that the test opens."""

    def __init__(self):
        self.requests = []
        self.gate = threading.Event()
        self.first_sent = threading.Event()
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if self.path.startswith("/sse"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for part in (b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
                                 b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        self.wfile.flush()
                        if not outer.first_sent.is_set():
                            outer.first_sent.set()
                            outer.gate.wait(DEADLINE)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    return
                reply = json.dumps({"ok": True, "echo_len": len(body)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def write(root, rel, text, mode="w"):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode, encoding=None if "b" in mode else "utf-8") as f:
        f.write(text)


def git(root, *args):
    subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.com",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                   cwd=root, check=True, capture_output=True)


class RedactorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="redactor-test-")
        write(cls.root, ".env", "# prod\nAPI_KEY=" + SECRET + "\nDB_HOST=db.internal\n")
        write(cls.root, "config/app.json", json.dumps({"db": {"host": "db", "password": SPECIAL}}))
        write(cls.root, "config/database.yml", "production:\n  url: postgres://shop:" + DBPASS
              + "@db.internal:5432/shop\n")
        if shutil.which("git"):
            write(cls.root, "pay.py", 'KEY = "' + HISTORY + '"\n')
            git(cls.root, "init", "-q")
            git(cls.root, "add", "pay.py")
            git(cls.root, "commit", "-q", "-m", "pay")
            git(cls.root, "rm", "-q", "pay.py")
            git(cls.root, "commit", "-q", "-m", "no key")
        cls.upstream = Upstream()
        cls.proc = subprocess.Popen(
            [sys.executable, REDACTOR, "--listen", "127.0.0.1:0", "--root", cls.root],
            env=dict(os.environ, UPSTREAM_URL=f"http://127.0.0.1:{cls.upstream.port}"),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        cls.log = []
        deadline = time.monotonic() + DEADLINE
        cls.port = None
        while time.monotonic() < deadline:
            line = cls.proc.stdout.readline()
            if not line:
                break
            cls.log.append(line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                cls.port = int(m.group(1))
                break
        if cls.port is None:
            cls.tearDownClass()
            raise RuntimeError("the redactor did not start: " + "".join(cls.log))
        cls.drain = threading.Thread(target=lambda: [cls.log.append(ln) for ln in cls.proc.stdout],
                                     daemon=True)
        cls.drain.start()

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "proc", None):
            cls.proc.terminate()
            cls.proc.wait(DEADLINE)
            if getattr(cls, "drain", None):
                cls.drain.join(DEADLINE)
            cls.proc.stdout.close()
        cls.upstream.close()
        shutil.rmtree(cls.root, ignore_errors=True)

    def post(self, body, path="/v1/messages?beta=true", headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE)
        h = {"Content-Type": "application/json", "x-api-key": "dummy", "anthropic-version": "2023-06-01"}
        h.update(headers or {})
        n = len(self.upstream.requests)
        conn.request("POST", path, body=body, headers=h)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        forwarded = self.upstream.requests[n] if len(self.upstream.requests) > n else None
        return resp, data, forwarded

    def message_body(self, text):
        return json.dumps({"model": "m", "stream": True, "max_tokens": 100, "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                          "content": text}]}]}).encode()

    def assert_clean(self, forwarded, *secrets):
        self.assertIsNotNone(forwarded, "the request reached the upstream")
        doc = json.loads(forwarded["body"])  # still valid JSON
        self.assertEqual("toolu_1", doc["messages"][0]["content"][0]["tool_use_id"])
        for s in secrets:
            self.assertEqual([], leaks(s, forwarded["body"]), "secret readable after redaction")
        self.assertIn("[REDACTED]", doc["messages"][0]["content"][0]["content"])

    def test_raw_secret_is_redacted_and_headers_path_kept(self):
        resp, data, fwd = self.post(self.message_body("API_KEY=" + SECRET + "\n"))
        self.assertEqual(200, resp.status)
        self.assertEqual({"ok": True, "echo_len": len(fwd["body"])}, json.loads(data))
        self.assert_clean(fwd, SECRET)
        self.assertEqual("/v1/messages?beta=true", fwd["path"])
        self.assertEqual("dummy", fwd["headers"]["x-api-key"])
        self.assertEqual("2023-06-01", fwd["headers"]["anthropic-version"])
        self.assertEqual(str(len(fwd["body"])), fwd["headers"]["Content-Length"])

    def test_base64_at_every_offset_wrapped_and_urlsafe(self):
        for prefix in ("", "x", "xy", "# prod\nAPI_KEY="):
            for alt in (False, True):
                enc = base64.b64encode((prefix + SECRET + "\n").encode())
                if alt:
                    enc = base64.urlsafe_b64encode((prefix + SECRET + "\n").encode())
                text = enc.decode()
                wrapped = "\n".join(text[i:i + 76] for i in range(0, len(text), 76))
                with self.subTest(prefix=prefix, urlsafe=alt):
                    _, _, fwd = self.post(self.message_body(wrapped))
                    self.assert_clean(fwd, SECRET)

    def test_hex_plain_upper_and_spaced(self):
        h = SECRET.encode().hex()
        for text in (h, h.upper(), " ".join(h[i:i + 2] for i in range(0, len(h), 2)),
                     "\n".join(h[i:i + 32] for i in range(0, len(h), 32))):
            with self.subTest(text=text[:20]):
                _, _, fwd = self.post(self.message_body(text))
                self.assert_clean(fwd, SECRET)

    def test_percent_and_html_forms(self):
        from urllib.parse import quote, quote_plus
        for text in (quote(SPECIAL, safe=""), quote_plus(SPECIAL), "x=" + re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(SPECIAL, safe="")),
                     SPECIAL.replace("&", "&amp;").replace('"', "&quot;")):
            with self.subTest(text=text[:12]):
                _, _, fwd = self.post(self.message_body(text))
                self.assertNotIn(text.encode(), fwd["body"])
                self.assertIn(b"[REDACTED]", fwd["body"])

    def test_json_special_characters_raw_and_escaped_stay_valid_json(self):
        # Raw (a decoded print), and the file's own JSON-escaped text, which
        # the body then escapes again.
        file_text = json.dumps({"password": SPECIAL}, ensure_ascii=False)
        ascii_text = json.dumps({"password": SPECIAL})
        for text in (SPECIAL, file_text, ascii_text):
            with self.subTest(text=text[:15]):
                _, _, fwd = self.post(self.message_body(text))
                self.assert_clean(fwd, SPECIAL)
                self.assertNotIn(json.dumps(SPECIAL)[1:-1], json.loads(fwd["body"])["messages"][0]
                                 ["content"][0]["content"])

    def test_url_password_from_a_yaml_config(self):
        _, _, fwd = self.post(self.message_body(
            "migrate: cannot connect to postgres://shop:" + DBPASS + "@db.internal:5432/shop: refused"))
        self.assert_clean(fwd, DBPASS)

    @unittest.skipUnless(shutil.which("git"), "git is not installed")
    def test_secret_only_in_git_history(self):
        self.assertFalse(os.path.exists(os.path.join(self.root, "pay.py")))
        _, _, fwd = self.post(self.message_body('-KEY = "' + HISTORY + '"\n'))
        self.assert_clean(fwd, HISTORY)

    def test_secret_in_system_prompt_and_keys(self):
        body = json.dumps({"system": [{"type": "text", "text": "env: " + SECRET}],
                           "metadata": {SECRET: 1}, "messages": []}).encode()
        _, _, fwd = self.post(body)
        self.assertEqual([], leaks(SECRET, fwd["body"]))
        self.assertEqual({"[REDACTED]": 1}, json.loads(fwd["body"])["metadata"])

    def test_file_written_after_start_is_learned(self):
        late = "late-secret-77aa88bb99cc00dd11ee"
        write(self.root, "deploy/.env.staging", "TOKEN=" + late + "\n")
        try:
            _, _, fwd = self.post(self.message_body("the token is " + late))
            self.assert_clean(fwd, late)
        finally:
            os.remove(os.path.join(self.root, "deploy/.env.staging"))

    def test_body_without_secrets_is_forwarded_byte_for_byte(self):
        body = b'{"model":"m",  "messages":[{"role":"user","content":"count the lines of src/main.py"}]}'
        _, _, fwd = self.post(body)
        self.assertEqual(body, fwd["body"])

    def test_non_json_body_is_redacted_as_text(self):
        body = b"not json: " + SECRET.encode() + b" and " + base64.b64encode(b"ab" + SECRET.encode())
        _, _, fwd = self.post(body, headers={"Content-Type": "text/plain"})
        self.assertNotIn(SECRET.encode(), fwd["body"])
        self.assertFalse(any(SECRET.encode() in d for d in b64_runs_decode(fwd["body"].decode())))

    def test_gzip_body_is_decompressed_and_redacted(self):
        import gzip
        resp, _, fwd = self.post(gzip.compress(self.message_body(SECRET)),
                                 headers={"Content-Encoding": "gzip"})
        self.assertEqual(200, resp.status)
        self.assertNotIn("Content-Encoding", fwd["headers"])
        self.assert_clean(fwd, SECRET)

    def test_unknown_content_encoding_is_refused_not_forwarded(self):
        n = len(self.upstream.requests)
        resp, data, fwd = self.post(b"\x00\x01" + SECRET.encode(), headers={"Content-Encoding": "br"})
        self.assertEqual(502, resp.status)
        self.assertIsNone(fwd)
        self.assertEqual(n, len(self.upstream.requests))
        self.assertEqual("error", json.loads(data)["type"])
        self.assertNotIn(SECRET.encode(), data)

    def test_sse_is_streamed_unbuffered(self):
        self.upstream.gate.clear()
        self.upstream.first_sent.clear()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE)
        try:
            conn.request("POST", "/sse", body=self.message_body("hi"),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            self.assertEqual(200, resp.status)
            self.assertEqual("text/event-stream", resp.getheader("Content-Type"))
            # The first event arrives while the upstream still holds the
            # second one back: nothing in between buffers the stream.
            first = b""
            while b"\n\n" not in first:
                chunk = resp.read1(4096)
                self.assertTrue(chunk, "the stream ended before the first event")
                first += chunk
            self.assertFalse(self.upstream.gate.is_set())
            self.assertIn(b"message_start", first)
            self.assertNotIn(b"message_stop", first)
            self.upstream.gate.set()
            rest = resp.read()
            self.assertIn(b"message_stop", rest)
        finally:
            self.upstream.gate.set()
            conn.close()

    def test_keep_alive_serves_several_requests_on_one_connection(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE)
        try:
            for _ in range(3):
                conn.request("POST", "/v1/messages", body=self.message_body(SECRET),
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                self.assertEqual(200, resp.status)
                resp.read()
        finally:
            conn.close()

    def test_logs_never_hold_a_secret(self):
        self.post(self.message_body(SECRET))
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline and not any("redactions" in ln for ln in self.log):
            time.sleep(0.01)
        text = "".join(self.log)
        self.assertIn("redactions", text)
        for s in (SECRET, SPECIAL, DBPASS, HISTORY):
            self.assertEqual([], leaks(s, text.encode()))


class UpstreamDownTest(unittest.TestCase):
    def test_unreachable_upstream_gives_502(self):
        root = tempfile.mkdtemp(prefix="redactor-test-")
        # A port nobody listens on: bind one, note it, close it.
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
        s.close()
        proc = subprocess.Popen([sys.executable, REDACTOR, "--listen", "127.0.0.1:0", "--root", root,
                                 "--upstream", f"http://127.0.0.1:{dead}"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            port = None
            for line in proc.stdout:
                m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
                if m:
                    port = int(m.group(1))
                    break
            self.assertIsNotNone(port)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE)
            conn.request("POST", "/v1/messages", body=b"{}", headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            self.assertEqual(502, resp.status)
            self.assertIn("cannot reach the upstream", json.loads(resp.read())["error"]["message"])
            conn.close()
        finally:
            proc.terminate()
            proc.wait(DEADLINE)
            proc.stdout.close()
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
