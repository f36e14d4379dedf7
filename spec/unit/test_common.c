/*
 * Tests for src/common/, the servers' plain-C base: the JSON string
 * writer's one dialect (pinned byte for byte: src/lua/json.lua writes the
 * same, see spec/lua/json_spec.lua), UTF-8 validation, Latin-1 text,
 * base64, the growable buffer, the usage and number helpers, the bound
 * sockets, and the chunked decoder (whole and a byte at a time: the same
 * verdict).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/chunked.h"
#include "common/files.h"
#include "common/jsonw.h"
#include "common/sock.h"
#include "common/usage.h"
#include "tap.h"

/* jw_string of s[0..n) as a C string (the caller frees). */
static char *
quoted(const char *s, size_t n)
{
	struct buf b = { 0 };

	jw_string(&b, s, n);
	return buf_take(&b, NULL);
}

/* The dialect, pinned: every ASCII byte alone, then a mixed string. */
static void
test_dialect(void)
{
	static const char mixed[] = "a\"b\\c/d\0e\bf\fg\nh\ri\tj\x01k\x1fl\x7fm"
				    "\xc3\xa9n\xe2\x82\xac";
	char want[16], *got;
	int c, all = 1;

	for (c = 0; c < 0x80; c++) {
		char ch = (char)c;

		if (c == '"' || c == '\\')
			snprintf(want, sizeof(want), "\"\\%c\"", c);
		else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
		    c == '\t')
			snprintf(want, sizeof(want), "\"\\%c\"",
			    "bfnrt"[strchr("\b\f\n\r\t", c) - "\b\f\n\r\t"]);
		else if (c < 0x20 || c == 0x7f)
			snprintf(want, sizeof(want), "\"\\u%04x\"", c);
		else
			snprintf(want, sizeof(want), "\"%c\"", c);
		got = quoted(&ch, 1);
		if (got == NULL || strcmp(got, want) != 0) {
			printf("# byte 0x%02x: got %s, want %s\n", c,
			    got ? got : "(null)", want);
			all = 0;
		}
		free(got);
	}
	ok(all, "dialect: each ASCII byte alone");
	got = quoted(mixed, sizeof(mixed) - 1);
	is_str(got,
	    "\"a\\\"b\\\\c/d\\u0000e\\bf\\fg\\nh\\ri\\tj\\u0001k\\u001fl"
	    "\\u007fm\xc3\xa9n\xe2\x82\xac\"",
	    "dialect: a mixed string (the same bytes as json_spec.lua's)");
	free(got);
}

/* Long runs take the eight-byte path: an escape at every offset. */
static void
test_runs(void)
{
	char s[40], want[80];
	int i, all = 1;

	for (i = 0; i < 32; i++) {
		char *got;

		memset(s, 'x', 32);
		s[i] = 0x7f;
		snprintf(want, sizeof(want), "\"%.*s\\u007f%.*s\"", i,
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 31 - i,
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		got = quoted(s, 32);
		all &= got != NULL && strcmp(got, want) == 0;
		free(got);
	}
	ok(all, "runs: DEL found at each of 32 offsets");
}

/* What the writer writes, jansson reads back as the same bytes. */
static void
test_roundtrip(void)
{
	static const unsigned char pick[] = { 'a', ' ', '"', '\\', '\n', '\b',
		'\f', 0x01, 0x1f, 0x7f, 0x00, 0xc3, 0xa9, 0xe2, 0x82, 0xac,
		0xf0, 0x9f, 0x98, 0x80, '/' };
	unsigned char s[64];
	int k, bad = 0, ctl = 0;
	size_t i, n;

	srand(28);
	for (k = 0; k < 5000; k++) {
		struct buf b = { 0 };
		json_t *j;

		n = (size_t)(rand() % 60);
		for (i = 0; i < n; i++)
			s[i] = rand() % 2 ? 'a' + rand() % 26 :
					    pick[rand() % sizeof(pick)];
		jw_text(&b, (const char *)s, n);
		j = json_loadb(b.p, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
		    NULL);
		if (jw_utf8_valid(s, n))
			bad += j == NULL || json_string_length(j) != n ||
			    memcmp(json_string_value(j), s, n) != 0;
		else
			bad += j == NULL;
		for (i = 0; i < b.len; i++)
			ctl += (unsigned char)b.p[i] < 0x20 ||
			    (unsigned char)b.p[i] == 0x7f;
		json_decref(j);
		buf_free(&b);
	}
	is_int(bad, 0, "roundtrip: jansson reads 5000 random strings back");
	is_int(ctl, 0, "roundtrip: no control byte or DEL in the output");
}

static void
test_text(void)
{
	struct buf b = { 0 };
	char out[8];
	size_t extra = 99;

	jw_text(&b, "caf\xe9", 4);
	is_str(b.p, "\"caf\xc3\xa9\"", "text: Latin-1 when not UTF-8");
	buf_free(&b);
	jw_text(&b, "caf\xc3\xa9", 5);
	is_str(b.p, "\"caf\xc3\xa9\"", "text: UTF-8 as it is");
	buf_free(&b);
	is_int(jw_latin1("\xff"
			 "a",
		   2, out),
	    3, "latin1: length");
	ok(memcmp(out,
	       "\xc3\xbf"
	       "a",
	       3) == 0,
	    "latin1: bytes");
	ok(jw_utf8_scan("a\nb\x01\x7f\"", 6, &extra) && extra == 1 + 5 + 5,
	    "scan: escapes add 1 (\\n) and 5 (\\u0001, \\u007f), got %zu",
	    extra);
}

static void
test_utf8(void)
{
	static const struct {
		const char *s;
		int ok;
	} u[] = {
		{ "plain", 1 },
		{ "caf\xc3\xa9", 1 },
		{ "\xe2\x82\xac", 1 },
		{ "\xf0\x9f\x98\x80", 1 },
		{ "\xc3", 0 },
		{ "\x80", 0 },
		{ "\xc0\xaf", 0 },
		{ "\xe0\x80\xaf", 0 },
		{ "\xed\xa0\x80", 0 },
		{ "\xf4\x90\x80\x80", 0 },
		{ "\xff", 0 },
		{ "a\xe2\x82", 0 },
	};
	static const unsigned char pick[] = { 'a', ' ', '"', '\\', '\n', 0x01,
		0x1f, 0x7f, 0x00, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xa0,
		0xf0, 0x9f, 0x98, 0x80, 0xff, 0xc0 };
	unsigned char b[64];
	int bad_valid = 0, k;
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		is_int(jw_utf8_valid(u[i].s, strlen(u[i].s)), u[i].ok,
		    "utf8: case %zu", i);
	ok(jw_utf8_valid("a\0b", 3), "utf8: NUL is valid");
	srand(13);
	for (k = 0; k < 20000; k++) {
		size_t n = (size_t)(rand() % 40);
		json_t *j;

		for (i = 0; i < n; i++)
			b[i] = rand() % 3 ? 'a' + rand() % 26 :
					    pick[rand() % sizeof(pick)];
		j = json_stringn((const char *)b, n);
		bad_valid += (j != NULL) != jw_utf8_valid(b, n);
		json_decref(j);
	}
	is_int(bad_valid, 0,
	    "utf8: same verdict as jansson on 20000 random strings");
}

static void
test_base64(void)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
	} c[] = {
		{ "", 0, "" },
		{ "f", 1, "Zg==" },
		{ "fo", 2, "Zm8=" },
		{ "foobar", 6, "Zm9vYmFy" },
		{ "\xff\xfe\x00", 3, "//4A" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *b = jw_base64(c[i].in, c[i].n);

		is_str(b, c[i].out, "base64: %zu bytes", c[i].n);
		free(b);
	}
}

static void
test_buf(void)
{
	struct buf b = { 0 };
	size_t len = 0, i;
	char *p;
	int all = 1;

	ok(buf_take(&b, &len) == NULL && len == 0, "buf: empty take is NULL");
	ok(buf_add(&b, "", 0) == 0 && b.p != NULL && b.p[0] == '\0',
	    "buf: an empty append allocates a NUL-terminated buffer");
	for (i = 0; i < 10000; i++)
		all &= buf_add(&b, "0123456789", 10) == 0;
	ok(all && b.len == 100000 && b.p[b.len] == '\0' &&
		memcmp(b.p + 99990, "0123456789", 10) == 0,
	    "buf: 10000 appends, NUL-terminated");
	buf_reset(&b);
	ok(b.len == 0 && b.p[0] == '\0' && b.cap >= 100001,
	    "buf: reset keeps the memory");
	buf_adds(&b, "abcdef");
	buf_drop(&b, 2);
	is_str(b.p, "cdef", "buf: drop moves the rest to the front");
	ok(b.len == 4, "buf: drop shortens");
	buf_drop(&b, 99);
	ok(b.len == 0 && b.p[0] == '\0',
	    "buf: dropping more than held empties");
	buf_adds(&b, "abc");
	p = buf_take(&b, &len);
	is_str(p, "abc", "buf: take hands the bytes over");
	ok(len == 3 && b.p == NULL && b.len == 0, "buf: and empties it");
	free(p);
	ok(buf_add(&b, "x", SIZE_MAX / 2) < 0 && b.oom,
	    "buf: an impossible size sets oom");
	ok(buf_add(&b, "x", 1) < 0, "buf: oom is sticky");
	ok(buf_take(&b, &len) == NULL && len == 0,
	    "buf: take of an oom buffer is NULL");
	ok(buf_grow(&b, 0, 512) == 0 && b.cap == 512, "buf: a first size");
	buf_free(&b);
}

static void
test_numbers(void)
{
	static const struct {
		const char *s;
		int suffix;
		unsigned long long max;
		int rc;
		unsigned long long v;
	} c[] = {
		{ "1", 0, 10, 0, 1 },
		{ "10", 0, 10, 0, 10 },
		{ "11", 0, 10, -1, 0 },
		{ "0", 0, 10, -1, 0 },
		{ "", 0, 10, -1, 0 },
		{ "-1", 0, 10, -1, 0 },
		{ "+1", 0, 10, -1, 0 },
		{ " 1", 0, 10, -1, 0 },
		{ "1x", 0, 10, -1, 0 },
		{ "1K", 0, 1 << 20, -1, 0 },
		{ "1K", 1, 1 << 20, 0, 1024 },
		{ "2m", 1, 1 << 30, 0, 2 << 20 },
		{ "1G", 1, 1 << 20, -1, 0 },
		{ "1T", 1, 1ULL << 50, -1, 0 },
		{ "99999999999999999999", 0, ULLONG_MAX, -1, 0 },
	};
	unsigned long long v;
	double d;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		v = 0;
		is_int(usage_count(c[i].s, c[i].suffix, c[i].max, &v), c[i].rc,
		    "count: '%s'", c[i].s);
		if (c[i].rc == 0)
			is_int(v, c[i].v, "count: '%s' value", c[i].s);
	}
	ok(usage_seconds("1.5", 10, &d) == 0 && d == 1.5, "seconds: 1.5");
	ok(usage_seconds("0", 10, &d) < 0, "seconds: 0 refused");
	ok(usage_seconds("11", 10, &d) < 0, "seconds: over max refused");
	ok(usage_seconds("nan", 10, &d) < 0, "seconds: nan refused");
	ok(usage_seconds("inf", 10, &d) < 0, "seconds: inf refused");
	ok(usage_seconds("1s", 10, &d) < 0, "seconds: a unit refused");
}

/* What usage_error and usage_bad_option print, and their status. */
static void
test_usage(void)
{
	char *argv[] = { (char *)"lb-x", (char *)"--frob", NULL };
	char text[512];
	FILE *tmp = tmpfile();
	int saved = dup(2), r1, r2, r3;
	size_t n;

	fflush(stderr);
	dup2(fileno(tmp), 2);
	r1 = usage_error("lb-x", "cannot use --n '%s': expected a number", "z");
	r2 = usage_bad_option("lb-x", '?', argv, 2);
	r3 = usage_bad_option("lb-x", ':', argv, 2);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(text, 1, sizeof(text) - 1, tmp);
	text[n] = '\0';
	fclose(tmp);
	ok(r1 == 2 && r2 == 2 && r3 == 2, "usage: status 2");
	is_str(text,
	    "lb-x: cannot use --n 'z': expected a number (try 'lb-x --help')\n"
	    "lb-x: unknown option '--frob' (try 'lb-x --help')\n"
	    "lb-x: option '--frob' needs a value (try 'lb-x --help')\n",
	    "usage: one line each, the program first, help last");
}


static int
collect(void *ctx, const char *p, size_t n)
{
	return buf_add(ctx, p, n);
}

/*
 * Decodes in pieces of `step` bytes (0: whole); the payload in out, the
 * bytes used in *used. The code of the last call.
 */
static int
dechunk(const char *in, int strict, unsigned long long max_total, size_t step,
    struct buf *out, size_t *used)
{
	struct chunked d = { .max_total = max_total,
		.max_line = 16,
		.max_trailer = 32,
		.strict = strict };
	size_t n = strlen(in), off = 0, u;
	int rc = CHUNKED_MORE;

	while (off < n && rc == CHUNKED_MORE) {
		size_t take = step == 0 || n - off < step ? n - off : step;

		rc = chunked_feed(&d, in + off, take, &u, collect, out);
		off += u;
	}
	*used = off;
	return rc;
}

static void
test_chunked(void)
{
	static const struct {
		const char *name, *in;
		int strict;
		unsigned long long max;
		int rc;
		const char *payload;
		size_t used;
	} c[] = {
		{ "two chunks", "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nNEXT", 1, 0,
		    CHUNKED_DONE, "abcde", 20 },
		{ "bare LF", "A\n0123456789\n0\n\n", 1, 0, CHUNKED_DONE,
		    "0123456789", 16 },
		{ "extension and blanks",
		    "3;a=b\r\nabc\r\n2 ; x\r\nde\r\n0\r\n\r\n", 1, 0,
		    CHUNKED_DONE, "abcde", 28 },
		{ "trailer", "1\r\nx\r\n0\r\nT: v\r\n\r\n", 1, 0, CHUNKED_DONE,
		    "x", 17 },
		{ "no line end after data", "3\r\nabcX\r\n", 1, 0, CHUNKED_BAD,
		    "abc", 0 },
		{ "not hex", "zz\r\n", 1, 0, CHUNKED_BAD, "", 0 },
		{ "a sign", "-1\r\n", 0, 0, CHUNKED_BAD, "", 0 },
		{ "0x is not hex", "0x5\r\nabcde\r\n", 0, 0, CHUNKED_BAD, "",
		    0 },
		{ "16 digits", "1000000000000000\r\n", 0, 0, CHUNKED_BAD, "",
		    0 },
		{ "over max_total", "ffffffffffffffffffffff\r\n", 1, 100,
		    CHUNKED_TOO_LARGE, "", 0 },
		{ "over max_total across chunks", "40\r\n", 1, 0x3f,
		    CHUNKED_TOO_LARGE, "", 0 },
		{ "size line too long", "1;aaaaaaaaaaaaaaaaaaaa\r\n", 0, 0,
		    CHUNKED_BAD, "", 0 },
		{ "trailers too long",
		    "0\r\nA: 0123456789\r\nB: 0123456789\r\nC: 0\r\n\r\n", 0, 0,
		    CHUNKED_TRAILER_TOO_LARGE, "", 0 },
		{ "strict: trailer without a colon", "0\r\nnocolon\r\n\r\n", 1,
		    0, CHUNKED_BAD, "", 0 },
		{ "lenient: trailer without a colon", "0\r\nnocolon\r\n\r\n", 0,
		    0, CHUNKED_DONE, "", 14 },
		{ "strict: a control byte in the extension", "1;a\x01\r\nx\r\n",
		    1, 0, CHUNKED_BAD, "", 0 },
		{ "lenient: anything in the extension",
		    "1;a\x01 b\r\nx\r\n0\r\n\r\n", 0, 0, CHUNKED_DONE, "x",
		    16 },
		{ "strict: text after the blanks", "1 x\r\nx\r\n", 1, 0,
		    CHUNKED_BAD, "", 0 },
		{ "strict: a bare CR in a trailer", "0\r\nA: b\rc\r\n\r\n", 1,
		    0, CHUNKED_BAD, "", 0 },
		{ "cut short", "5\r\nab", 1, 0, CHUNKED_MORE, "ab", 5 },
	};
	size_t i, used, steps[] = { 0, 1, 3 };
	int all_steps = 1;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct buf out = { 0 };
		int rc;

		buf_add(&out, "", 0);
		rc = dechunk(c[i].in, c[i].strict, c[i].max, 0, &out, &used);
		is_int(rc, c[i].rc, "chunked: %s", c[i].name);
		is_str(out.p, c[i].payload, "chunked: %s, payload", c[i].name);
		if (c[i].rc >= 0)
			is_int(used, c[i].used, "chunked: %s, bytes used",
			    c[i].name);
		for (size_t k = 1; k < 3; k++) {
			struct buf o2 = { 0 };

			buf_add(&o2, "", 0);
			all_steps &= dechunk(c[i].in, c[i].strict, c[i].max,
					 steps[k], &o2, &used) == rc &&
			    strcmp(o2.p, out.p) == 0;
			buf_free(&o2);
		}
		buf_free(&out);
	}
	ok(all_steps, "chunked: a byte or three at a time, the same verdict");
	{
		struct chunked d = { 0 };
		size_t u;

		ok(chunked_feed(&d, "0\n\n", 3, &u, NULL, NULL) ==
			    CHUNKED_DONE &&
			chunked_done(&d) &&
			chunked_feed(&d, "1\n", 2, &u, NULL, NULL) ==
			    CHUNKED_DONE &&
			u == 0,
		    "chunked: after the end, nothing more is used");
		chunked_reset(&d);
		ok(!chunked_done(&d) &&
			chunked_feed(&d, "1\nx\n0\n\n", 8, &u, NULL, NULL) ==
			    CHUNKED_DONE,
		    "chunked: reset starts a new message");
	}
}

/*
 * The four servers say bad usage the same way: one line, status 2. Runs
 * the binaries in $LB_BUILD (spec/run sets it).
 */
static void
test_servers_usage(void)
{
	static const char *const progs[] = { "lb-model", "lb-proxy", "lb-net",
		"lb-trap" };
	const char *build = getenv("LB_BUILD");
	char cmd[1024], out[512], want[256];
	size_t i, n;
	FILE *f;
	int st;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (build == NULL) {
			ok(1, "# SKIP %s: LB_BUILD is not set", progs[i]);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "'%s/%s' --frob 2>&1 >/dev/null",
		    build, progs[i]);
		f = popen(cmd, "r");
		n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
		out[n] = '\0';
		st = f ? pclose(f) : -1;
		snprintf(want, sizeof(want),
		    "%s: unknown option '--frob' (try '%s --help')\n", progs[i],
		    progs[i]);
		is_str(out, want, "servers: %s says bad usage in one line",
		    progs[i]);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "servers: %s exits 2",
		    progs[i]);
	}
}

/* sock_bind: TCP listening, UDP bound, the port told, errors kept apart. */
static void
test_sock(void)
{
	int port = -1, gai = -1, fd, fd2, type = 0;
	socklen_t tl = sizeof(type);

	fd = sock_bind("127.0.0.1", "0", SOCK_STREAM, AI_NUMERICHOST, &port,
	    &gai);
	ok(fd >= 0 && gai == 0 && port > 0,
	    "sock: TCP on port 0 tells its port");
	ok(fd >= 0 &&
		getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &type, &tl) == 0 &&
		type == 1,
	    "sock: and listens");
	fd2 = sock_bind("127.0.0.1", "0", SOCK_DGRAM, AI_NUMERICHOST, &port,
	    &gai);
	ok(fd2 >= 0 && port > 0, "sock: UDP bound, its port told");
	if (fd2 >= 0)
		close(fd2);
	if (fd >= 0) {
		char p[16];
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);

		getsockname(fd, (struct sockaddr *)&sa, &sl);
		snprintf(p, sizeof(p), "%d", ntohs(sa.sin_port));
		errno = 0;
		/* SO_REUSEADDR does not let two listeners share a port. */
		fd2 = sock_bind("127.0.0.1", p, SOCK_STREAM, AI_NUMERICHOST,
		    NULL, &gai);
		ok(fd2 < 0 && gai == 0 && errno == EADDRINUSE,
		    "sock: a taken port is errno EADDRINUSE");
		close(fd);
	}
	fd = sock_bind("localhost", "0", SOCK_STREAM, AI_NUMERICHOST, NULL,
	    &gai);
	ok(fd < 0 && gai != 0,
	    "sock: a name with AI_NUMERICHOST is a "
	    "getaddrinfo error");
}

/* sock_adopt and sock_name: an inherited socket checked, listening, named. */
static void
test_sock_adopt(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	char name[128], want[128];
	int tfd, ufd, xfd, on = 0;
	socklen_t sl = sizeof(on);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	tfd = socket(AF_INET, SOCK_STREAM, 0);
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	bind(tfd, (struct sockaddr *)&sa, sizeof(sa));
	bind(ufd, (struct sockaddr *)&sa, sizeof(sa));
	ok(sock_adopt(tfd, SOCK_STREAM) == 0 &&
		getsockopt(tfd, SOL_SOCKET, SO_ACCEPTCONN, &on, &sl) == 0 &&
		on == 1,
	    "sock_adopt: a bound TCP socket now listens");
	ok(sock_adopt(tfd, SOCK_STREAM) == 0,
	    "sock_adopt: listening already is fine");
	ok((fcntl(tfd, F_GETFD) & FD_CLOEXEC) != 0,
	    "sock_adopt: close-on-exec");
	errno = 0;
	ok(sock_adopt(ufd, SOCK_STREAM) < 0 && errno == ENOTSOCK,
	    "sock_adopt: UDP for TCP is ENOTSOCK");
	ok(sock_adopt(ufd, SOCK_DGRAM) == 0, "sock_adopt: UDP for UDP");
	xfd = open("/dev/null", O_RDONLY);
	ok(sock_adopt(xfd, SOCK_STREAM) < 0, "sock_adopt: not a socket");
	close(xfd);
	ok(sock_adopt(xfd, SOCK_DGRAM) < 0, "sock_adopt: a closed fd");
	ok(sock_adopt(-1, SOCK_DGRAM) < 0, "sock_adopt: -1");
	sl = sizeof(sa);
	getsockname(tfd, (struct sockaddr *)&sa, &sl);
	snprintf(want, sizeof(want), "127.0.0.1:%d", ntohs(sa.sin_port));
	ok(sock_name(tfd, name, sizeof(name)) == 0, "sock_name: TCP");
	is_str(name, want, "sock_name: HOST:PORT");
	close(tfd);
	close(ufd);
	snprintf(un.sun_path, sizeof(un.sun_path), "/tmp/lb-sock-%d",
	    (int)getpid());
	unlink(un.sun_path);
	xfd = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(xfd, (struct sockaddr *)&un, sizeof(un));
	ok(sock_adopt(xfd, SOCK_STREAM) == 0, "sock_adopt: a unix socket");
	snprintf(want, sizeof(want), "unix:%s", un.sun_path);
	sock_name(xfd, name, sizeof(name));
	is_str(name, want, "sock_name: unix:PATH");
	unlink(un.sun_path);
	close(xfd);
	ok(sock_name(xfd, name, sizeof(name)) < 0 && strcmp(name, "?") == 0,
	    "sock_name: a closed fd is '?'");
}

/* mkdir -p and whole writes. */
static void
test_files(void)
{
	char dir[] = "/tmp/lb-common-XXXXXX", path[128], back[16];
	struct stat st;
	int fd;

	if (mkdtemp(dir) == NULL) {
		ok(0, "files: a temporary directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	ok(file_mkdirs(path) == 0 && stat(path, &st) == 0 &&
		S_ISDIR(st.st_mode),
	    "files: mkdirs makes the parents");
	ok(file_mkdirs(path) == 0, "files: mkdirs of an existing directory");
	snprintf(path, sizeof(path), "%s/a/f", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ok(fd >= 0 && file_write_all(fd, "hello", 5) == 0 && close(fd) == 0,
	    "files: write_all");
	fd = open(path, O_RDONLY);
	ok(fd >= 0 && read(fd, back, sizeof(back)) == 5 &&
		memcmp(back, "hello", 5) == 0,
	    "files: the bytes are there");
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/a/f/g", dir);
	errno = 0;
	ok(file_mkdirs(path) < 0 && errno == ENOTDIR,
	    "files: a file in the way is ENOTDIR");
	ok(file_write_all(-1, "x", 1) < 0 && errno == EBADF,
	    "files: a bad descriptor fails");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ok(system(path) == 0, "files: cleaned up");
}

int
main(void)
{
	test_dialect();
	test_runs();
	test_roundtrip();
	test_text();
	test_utf8();
	test_base64();
	test_buf();
	test_sock();
	test_sock_adopt();
	test_numbers();
	test_usage();
	test_chunked();
	test_servers_usage();
	test_files();
	return tap_done();
}
