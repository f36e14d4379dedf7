"""minijson: the subset of the json module the hook scripts use (loads,
load, dumps, dump), for Pythons without it.

Debian's python3-minimal, which is all the claude image may have, ships no
json module; the hooks import this one instead (`import minijson as json`).
It reads any JSON document (RFC 8259: objects, arrays, strings with every
escape and surrogate pairs, numbers, true/false/null) and raises ValueError
on anything else; it writes compact-enough JSON that json.loads reads back
to the same value. No other dependency than re.
"""
import re

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_PLAIN = re.compile(r'[^"\\\x00-\x1f]*')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _string(s, i):
    """Parses the string starting after the quote at s[i-1]. Returns
    (value, index after the closing quote)."""
    out = []
    while True:
        m = _PLAIN.match(s, i)
        out.append(m.group(0))
        i = m.end()
        if i >= len(s):
            raise ValueError("unterminated string")
        c = s[i]
        if c == '"':
            return "".join(out), i + 1
        if c != "\\":
            raise ValueError(f"control character in string at {i}")
        e = s[i + 1:i + 2]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e == "u":
            cp = _hex4(s, i + 2)
            i += 6
            if 0xD800 <= cp < 0xDC00 and s[i:i + 2] == "\\u":
                lo = _hex4(s, i + 2)
                if 0xDC00 <= lo < 0xE000:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    i += 6
            out.append(chr(cp))
        else:
            raise ValueError(f"bad escape at {i}")


def _hex4(s, i):
    h = s[i:i + 4]
    if len(h) != 4 or not re.fullmatch(r"[0-9a-fA-F]{4}", h):
        raise ValueError(f"bad \\u escape at {i}")
    return int(h, 16)


def _value(s, i, depth):
    if depth > 500:
        raise ValueError("nesting too deep")
    i = _WS.match(s, i).end()
    if i >= len(s):
        raise ValueError("unexpected end of input")
    c = s[i]
    if c == "{":
        obj = {}
        i = _WS.match(s, i + 1).end()
        if s[i:i + 1] == "}":
            return obj, i + 1
        while True:
            i = _WS.match(s, i).end()
            if s[i:i + 1] != '"':
                raise ValueError(f"object key expected at {i}")
            key, i = _string(s, i + 1)
            i = _WS.match(s, i).end()
            if s[i:i + 1] != ":":
                raise ValueError(f"':' expected at {i}")
            obj[key], i = _value(s, i + 1, depth + 1)
            i = _WS.match(s, i).end()
            if s[i:i + 1] == ",":
                i += 1
            elif s[i:i + 1] == "}":
                return obj, i + 1
            else:
                raise ValueError(f"',' or '}}' expected at {i}")
    if c == "[":
        arr = []
        i = _WS.match(s, i + 1).end()
        if s[i:i + 1] == "]":
            return arr, i + 1
        while True:
            v, i = _value(s, i, depth + 1)
            arr.append(v)
            i = _WS.match(s, i).end()
            if s[i:i + 1] == ",":
                i += 1
            elif s[i:i + 1] == "]":
                return arr, i + 1
            else:
                raise ValueError(f"',' or ']' expected at {i}")
    if c == '"':
        return _string(s, i + 1)
    for word, v in (("true", True), ("false", False), ("null", None)):
        if s.startswith(word, i):
            return v, i + len(word)
    m = _NUMBER.match(s, i)
    if m and m.end() > i:
        if m.group(1) or m.group(2):
            return float(m.group(0)), m.end()
        return int(m.group(0)), m.end()
    raise ValueError(f"unexpected character at {i}")


def loads(s):
    """The value of the JSON document S (str or UTF-8 bytes)."""
    if isinstance(s, (bytes, bytearray)):
        s = s.decode("utf-8")
    v, i = _value(s, 0, 0)
    if _WS.match(s, i).end() != len(s):
        raise ValueError("extra data after the document")
    return v


def load(f):
    return loads(f.read())


def _quote(s, ensure_ascii):
    def esc(m):
        c = m.group(0)
        if c in ('"', "\\"):
            return "\\" + c
        if c == "\n":
            return "\\n"
        if c == "\r":
            return "\\r"
        if c == "\t":
            return "\\t"
        n = ord(c)
        if n >= 0x10000:
            n -= 0x10000
            return "\\u%04x\\u%04x" % (0xD800 + (n >> 10), 0xDC00 + (n & 0x3FF))
        return "\\u%04x" % n
    rx = r'["\\\x00-\x1f\x80-\U0010ffff]' if ensure_ascii else r'["\\\x00-\x1f]'
    return '"' + re.sub(rx, esc, s) + '"'


def dumps(v, ensure_ascii=True, **_ignored):
    """V as JSON text."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return _quote(v, ensure_ascii)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("out of range float values are not JSON compliant")
        return repr(v)
    if isinstance(v, dict):
        return "{" + ", ".join(_quote(str(k), ensure_ascii) + ": " + dumps(x, ensure_ascii)
                               for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(dumps(x, ensure_ascii) for x in v) + "]"
    raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


def dump(v, f, ensure_ascii=True, **_ignored):
    f.write(dumps(v, ensure_ascii))
