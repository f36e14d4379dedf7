/*
 * Tests for the proxy's pure parts: the credential file (cred.c) and the
 * record format (record.c): gzip/deflate decoding, header removal and scrubbing, sequence numbers that continue
 * across restarts.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "proxy/cred.h"
#include "proxy/record.h"
#include "tap.h"

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

/* Removes a directory tree (no shell). */
static void
rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
test_cred(void)
{
	static const struct {
		const char *in, *err;
		int kind;
	} cases[] = {
		{ "apikey:sk-ant-123", NULL, CRED_APIKEY },
		{ "apikey:sk-ant-123\n", NULL, CRED_APIKEY },
		{ "oauth:sk-ant-oat01-xyz\n", NULL, CRED_OAUTH },
		{ "", "expected 'apikey:KEY' or 'oauth:TOKEN'", 0 },
		{ "\n", "expected 'apikey:KEY' or 'oauth:TOKEN'", 0 },
		{ "bearer:SECRETVALUE",
		    "expected 'apikey:KEY' or 'oauth:TOKEN'", 0 },
		{ "SECRETVALUE", "expected 'apikey:KEY' or 'oauth:TOKEN'", 0 },
		{ " apikey:SECRETVALUE",
		    "expected 'apikey:KEY' or 'oauth:TOKEN'", 0 },
		{ "APIKEY:SECRETVALUE",
		    "expected 'apikey:KEY' or 'oauth:TOKEN'", 0 },
		{ "apikey:", "the token is empty", 0 },
		{ "apikey:\n", "the token is empty", 0 },
		{ "apikey:SECRET VALUE", "the token holds whitespace", 0 },
		{ "apikey:SECRETVALUE\n\n", "the token holds whitespace", 0 },
		{ "apikey:SECRETVALUE\r\n", "the token holds whitespace", 0 },
		{ "oauth:SECRET\tVALUE", "the token holds whitespace", 0 },
		{ "oauth:SECRET\x01VALUE", "the token holds whitespace", 0 },
		{ "oauth:SECRET\xc3\xa9VALUE", "the token holds whitespace",
		    0 },
	};
	struct cred c;
	char err[256];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		rc = cred_parse(&c, cases[i].in, strlen(cases[i].in), "/run/c",
		    err, sizeof(err));
		if (cases[i].err == NULL) {
			ok(rc == 0 && (int)c.kind == cases[i].kind,
			    "cred: case %zu accepted", i);
		} else {
			ok(rc == -1 && strstr(err, cases[i].err) != NULL &&
				strncmp(err,
				    "cannot use credential file '/run/c': ",
				    37) == 0,
			    "cred: case %zu refused: %s", i, err);
			ok(strstr(err, "SECRET") == NULL,
			    "cred: case %zu: the message does not quote it", i);
		}
		cred_free(&c);
	}
	rc = cred_parse(&c, "apikey:sk-1\n", 12, "f", err, sizeof(err));
	is_str(c.token, "sk-1", "cred: token without the newline");
	is_int(c.len, 4, "cred: token length");
	cred_free(&c);
	cred_free(&c);
	ok(c.token == NULL && c.kind == CRED_NONE,
	    "cred: free twice is harmless");

	{
		char big[CRED_MAX_FILE + 10];

		memset(big, 'a', sizeof(big));
		memcpy(big, "apikey:", 7);
		rc = cred_parse(&c, big, sizeof(big), "f", err, sizeof(err));
		ok(rc == -1 && strstr(err, "over 4096 bytes") != NULL,
		    "cred: over 4 KB refused (%s)", err);
		rc = cred_parse(&c, big, CRED_MAX_FILE, "f", err, sizeof(err));
		ok(rc == 0, "cred: exactly 4 KB accepted");
		cred_free(&c);
	}

	rc = cred_load(&c, "/nonexistent/cred", err, sizeof(err));
	ok(rc == -1, "cred: missing file refused");
	is_str(err,
	    "cannot read credential file '/nonexistent/cred': no such "
	    "file or directory",
	    "cred: missing file message");
	{
		char path[] = "/tmp/lb-cred-XXXXXX";
		int fd = mkstemp(path);

		(void)!write(fd, "oauth:tok-1\n", 12);
		close(fd);
		rc = cred_load(&c, path, err, sizeof(err));
		ok(rc == 0 && c.kind == CRED_OAUTH &&
			strcmp(c.token, "tok-1") == 0,
		    "cred: loaded from a file");
		cred_free(&c);
		unlink(path);
	}

	/* Scrubbing. */
	{
		unsigned char *s;
		size_t n;

		cred_parse(&c, "apikey:KEY", 10, "f", err, sizeof(err));
		s = cred_scrub(&c, "aKEYbKEYKEY", 11, &n);
		ok(s != NULL, "scrub: replaced");
		is_str((char *)s, "a[credential]b[credential][credential]",
		    "scrub: every occurrence");
		is_int(n, strlen("a[credential]b[credential][credential]"),
		    "scrub: length");
		free(s);
		ok(cred_scrub(&c, "nothing here", 12, &n) == NULL,
		    "scrub: NULL when absent");
		ok(cred_scrub(&c, "KE", 2, &n) == NULL, "scrub: short input");
		s = cred_scrub(&c, "K\0KEY", 5, &n);
		ok(s != NULL && n == 2 + 12 &&
			memcmp(s, "K\0[credential]", 14) == 0,
		    "scrub: binary input");
		free(s);
		cred_free(&c);
		ok(cred_scrub(&c, "KEY", 3, &n) == NULL,
		    "scrub: no credential");
	}
}

/* UTF-8 checks and base64 are src/common's: spec/unit/test_common.c. */
static void
test_helpers(void)
{
	json_t *j = wire_text("caf\xe9", 4);

	is_str(json_string_value(j), "caf\xc3\xa9", "text: Latin-1 fallback");
	json_decref(j);
}

/* gzip (or zlib when gzip is 0) of s, via zlib; malloc'd. */
static unsigned char *
compress_str(const char *s, size_t n, int gzip, int raw, size_t *outlen)
{
	z_stream z;
	unsigned char *out = malloc(n + 1024);

	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 6, Z_DEFLATED,
	    raw	     ? -15 :
		gzip ? 31 :
		       15,
	    8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)(uintptr_t)s;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)(n + 1024);
	deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	return out;
}

static void
test_inflate(void)
{
	const char *text = "{\"messages\":[{\"role\":\"user\"}]}";
	unsigned char *gz, *out;
	size_t glen, olen;
	const char *why;

	gz = compress_str(text, strlen(text), 1, 0, &glen);
	ok(wire_inflate(gz, glen, 1, &out, &olen, &why) == 0 &&
		olen == strlen(text) && memcmp(out, text, olen) == 0,
	    "inflate: gzip");
	free(out);
	ok(wire_inflate(gz, glen - 4, 1, &out, &olen, &why) == -1,
	    "inflate: truncated gzip refused (%s)", why);
	gz[12] ^= 0xff;
	ok(wire_inflate(gz, glen, 1, &out, &olen, &why) == -1,
	    "inflate: corrupt gzip refused (%s)", why);
	free(gz);
	gz = compress_str(text, strlen(text), 0, 0, &glen);
	ok(wire_inflate(gz, glen, 0, &out, &olen, &why) == 0 &&
		olen == strlen(text),
	    "inflate: deflate (zlib)");
	free(out);
	free(gz);
	gz = compress_str(text, strlen(text), 0, 1, &glen);
	ok(wire_inflate(gz, glen, 0, &out, &olen, &why) == 0 &&
		olen == strlen(text),
	    "inflate: deflate (raw)");
	free(out);
	free(gz);

	/* A bomb: 200 MB of zeros compresses to ~200 KB. */
	{
		size_t n = 200u * 1024 * 1024;
		char *zeros = calloc(1, n);
		unsigned char *bomb = compress_str(zeros, n, 1, 0, &glen);

		free(zeros);
		ok(wire_inflate(bomb, glen, 1, &out, &olen, &why) == -1 &&
			strstr(why, "64 MiB") != NULL,
		    "inflate: bomb stopped (%s)", why);
		free(bomb);
	}
}

static struct http_header hdrs[] = {
	{ (char *)"Content-Type", (char *)"application/json" },
	{ (char *)"X-Api-Key", (char *)"sk-dummy" },
	{ (char *)"authorization", (char *)"Bearer dummy" },
	{ (char *)"Cookie", (char *)"a=b" },
	{ (char *)"Proxy-Authorization", (char *)"Basic x" },
	{ (char *)"X-Note", (char *)"has REALKEY inside" },
	{ (char *)"Content-Encoding", (char *)"gzip" },
};

static void
test_record(void)
{
	struct http_request req;
	struct timespec when = { .tv_sec = 1796227501, .tv_nsec = 123456789 };
	struct cred c;
	char err[256];
	json_t *rec, *h;
	unsigned char *gz;
	size_t glen;
	const char *text = "{\"k\":\"REALKEY\"}";

	cred_parse(&c, "apikey:REALKEY", 14, "f", err, sizeof(err));
	memset(&req, 0, sizeof(req));
	req.method = (char *)"POST";
	req.target = (char *)"/v1/messages?beta=true";
	req.path = (char *)"/v1/messages";
	req.headers = hdrs;
	req.nheaders = 6;
	req.body = (unsigned char *)"{\"a\":\"\xc3\xa9\"}";
	req.body_len = strlen((char *)req.body);
	rec = wire_request_record(&req, 7, &when, &c);
	is_int(json_integer_value(json_object_get(rec, "seq")), 7,
	    "record: seq");
	is_str(json_string_value(json_object_get(rec, "time")),
	    "2026-12-02T16:05:01.123Z", "record: time");
	is_str(json_string_value(json_object_get(rec, "target")),
	    "/v1/messages?beta=true", "record: target");
	is_str(json_string_value(json_object_get(rec, "path")), "/v1/messages",
	    "record: path");
	is_str(json_string_value(json_object_get(rec, "body")),
	    "{\"a\":\"\xc3\xa9\"}", "record: UTF-8 body as text");
	ok(json_is_true(json_object_get(rec, "body_utf8")),
	    "record: body_utf8");
	h = json_object_get(rec, "headers");
	is_int(json_array_size(h), 6, "record: every header");
	is_str(json_string_value(json_array_get(json_array_get(h, 1), 0)),
	    "X-Api-Key", "record: name as received");
	for (int i = 1; i <= 4; i++)
		is_str(json_string_value(
			   json_array_get(json_array_get(h, i), 1)),
		    "[removed]", "record: %s removed", hdrs[i].name);
	is_str(json_string_value(json_array_get(json_array_get(h, 5), 1)),
	    "has [credential] inside",
	    "record: credential scrubbed from a "
	    "header");
	ok(json_object_get(rec, "content_encoding") == NULL,
	    "record: no content_encoding when absent");
	json_decref(rec);

	/* Binary body. */
	req.body = (unsigned char *)"\x80\xff\x00z";
	req.body_len = 4;
	rec = wire_request_record(&req, 8, &when, &c);
	ok(json_object_get(rec, "body") == NULL, "record: no text body");
	is_str(json_string_value(json_object_get(rec, "body_base64")),
	    "gP8Aeg==", "record: base64 body");
	ok(json_is_false(json_object_get(rec, "body_utf8")),
	    "record: flagged not UTF-8");
	json_decref(rec);

	/* Gzip body, the credential inside: stored decoded and scrubbed. */
	gz = compress_str(text, strlen(text), 1, 0, &glen);
	req.body = gz;
	req.body_len = glen;
	req.nheaders = 7;
	rec = wire_request_record(&req, 9, &when, &c);
	is_str(json_string_value(json_object_get(rec, "content_encoding")),
	    "gzip", "record: content_encoding");
	is_str(json_string_value(json_object_get(rec, "body_decoded")),
	    "{\"k\":\"[credential]\"}", "record: decoded body, scrubbed");
	ok(json_object_get(rec, "body_base64") != NULL,
	    "record: and the raw "
	    "gzip");
	json_decref(rec);
	gz[glen - 1] ^= 0xff;
	gz[glen / 2] ^= 0xff;
	rec = wire_request_record(&req, 10, &when, &c);
	ok(json_object_get(rec, "decode_error") != NULL &&
		json_object_get(rec, "body_decoded") == NULL,
	    "record: decode_error on a bad gzip");
	json_decref(rec);
	free(gz);

	/* Writing: lines, response files, numbering across restarts. */
	{
		char dir[] = "/tmp/lb-rec-XXXXXX", path[256], buf[4096];
		struct wire_log w;
		int fd;
		ssize_t n;

		mkdtemp(dir);
		snprintf(path, sizeof(path), "%s/sub/records", dir);
		ok(wire_open(&w, path, &c, err, sizeof(err)) == 0,
		    "wire: opens, creating directories");
		is_int(wire_next_seq(&w), 1, "wire: first seq is 1");
		is_int(wire_next_seq(&w), 2, "wire: then 2");
		rec = json_pack("{s:i, s:s}", "seq", 1, "body", "x REALKEY y");
		ok(wire_write_response(&w, 1, "resp REALKEY", 12, rec) == 0,
		    "wire: response file written");
		ok(wire_append(&w, rec) == 0, "wire: line appended");
		json_decref(rec);
		wire_close(&w);
		snprintf(path, sizeof(path), "%s/sub/records/wire.jsonl", dir);
		fd = open(path, O_RDONLY);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		is_str(buf,
		    "{\"seq\":1,\"body\":\"x [credential] y\","
		    "\"response_file\":\"responses/000001.body\","
		    "\"response_bytes\":12}\n",
		    "wire: the line, scrubbed");
		snprintf(path, sizeof(path),
		    "%s/sub/records/responses/000001.body", dir);
		fd = open(path, O_RDONLY);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		is_str(buf, "resp [credential]",
		    "wire: response file scrubbed");
		snprintf(path, sizeof(path), "%s/sub/records", dir);
		wire_open(&w, path, &c, err, sizeof(err));
		is_int(wire_next_seq(&w), 2,
		    "wire: numbering continues after "
		    "a restart");
		wire_close(&w);
		snprintf(path, sizeof(path), "%s/file", dir);
		close(open(path, O_CREAT | O_WRONLY, 0644));
		ok(wire_open(&w, path, &c, err, sizeof(err)) == -1 &&
			strstr(err, "cannot create records directory") !=
			    NULL &&
			strstr(err, "not a directory") != NULL,
		    "wire: a file in the way is an error (%s)", err);
		wire_close(&w);
		rm_rf(dir);
	}
	cred_free(&c);
}

/*
 * In place: the dialect's escapes as jansson writes them (DEL as it is,
 * \u00XX in uppercase). Returns s.
 */
static char *
jansson_dialect(char *s)
{
	char *r = s, *w = s;

	while (*r != '\0') {
		if (r[0] == '\\' && r[1] == 'u' &&
		    strncmp(r + 2, "007f", 4) == 0) {
			*w++ = 0x7f;
			r += 6;
		} else if (r[0] == '\\' && r[1] == 'u') {
			memmove(w, r, 6);
			for (int k = 2; k < 6; k++)
				if (w[k] >= 'a' && w[k] <= 'f')
					w[k] = (char)(w[k] - 'a' + 'A');
			w += 6;
			r += 6;
		} else if (r[0] == '\\') {
			*w++ = *r++;
			*w++ = *r++;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return s;
}

/*
 * wire_dump must write what jansson writes, only faster, except for the
 * strings: those are in the one dialect of src/common/jsonw.h. So jansson
 * reads back the same value, and the text differs from jansson's only in
 * the escapes of DEL and the case of \u00XX.
 */
static void
test_dump(void)
{
	json_t *v = json_object(), *a = json_array();
	char *mine, *theirs, big[300];
	size_t len, i;
	int same = 1;

	static const char pat[] = "ab\"c\\d\n\x01\x1f\x7f/e\tf\xc3\xa9g";

	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = pat[i % (sizeof(pat) - 1)];
	big[sizeof(big) - 1] = '\0';
	json_object_set_new(v, "seq", json_integer(-42));
	json_object_set_new(v, "t", json_string("2026-11-29T16:05:01.123Z"));
	json_object_set_new(v, "empty", json_string(""));
	json_object_set_new(v, "nul", json_stringn("a\0b", 3));
	json_object_set_new(v, "uni",
	    json_string("\xf0\x9f\x98\x80 \xe2\x82\xac"));
	json_object_set_new(v, "k\"ey\n", json_true());
	json_object_set_new(v, "f", json_false());
	json_object_set_new(v, "n", json_null());
	json_object_set_new(v, "r1", json_real(12.3));
	json_object_set_new(v, "r2", json_real(3.0));
	json_object_set_new(v, "r3", json_real(0.001234));
	json_object_set_new(v, "r4", json_real(1e21));
	json_array_append_new(a, json_string("x"));
	json_array_append_new(a, json_array());
	json_array_append_new(a, json_object());
	json_object_set_new(v, "arr", a);
	for (i = 0; i < sizeof(pat) - 1; i++) /* escapes, each alignment */
		json_object_set_new(v, (char[]){ 'b', (char)('a' + i), 0 },
		    json_string(big + i));
	mine = wire_dump(v, &len);
	theirs = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(12));
	ok(mine && len == strlen(mine), "dump: length");
	ok(mine && strstr(mine, "\\u007f/e") != NULL &&
		strchr(mine, 0x7f) == NULL,
	    "dump: DEL escaped");
	{
		json_t *back = mine ? json_loads(mine, JSON_ALLOW_NUL, NULL) :
				      NULL;

		ok(back != NULL && json_equal(back, v),
		    "dump: jansson reads the same value back");
		json_decref(back);
	}
	is_str(mine ? jansson_dialect(mine) : NULL, theirs,
	    "dump: jansson's text but for the dialect's escapes");
	free(mine);
	free(theirs);
	json_decref(v);

	/* Random strings of every byte class. */
	srand(7);
	for (int k = 0; k < 200 && same; k++) {
		char s[97];
		size_t n = (size_t)(rand() % 96);

		for (i = 0; i < n; i++) {
			int c = rand() % 130;

			s[i] = (char)(c < 128 ? c : 'z');
			if (s[i] == 0)
				s[i] = '"';
		}
		s[n] = '\0';
		v = json_pack("{s:s}", "s", s);
		mine = wire_dump(v, &len);
		theirs = json_dumps(v, JSON_COMPACT);
		same = mine && theirs &&
		    strcmp(jansson_dialect(mine), theirs) == 0;
		free(mine);
		free(theirs);
		json_decref(v);
	}
	ok(same,
	    "dump: 200 random ASCII strings as jansson writes them, but for "
	    "the dialect");
}

#define CTL8   "\x01\x02\x03\x04\x05\x06\x07\x1f"
#define CTL64  CTL8 CTL8 CTL8 CTL8 CTL8 CTL8 CTL8 CTL8
#define DEL16  "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f"
#define NUL16  "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
#define S(lit) lit, sizeof(lit) - 1
#define Q16    "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""

/* Which form the record takes for a body: text, or base64 when shorter. */
static void
test_compact(void)
{
	static const struct {
		const char *name;
		const char *s;
		size_t n;
		const char *key; /* which one the record uses */
	} cases[] = {
		{ "empty", S(""), "body" },
		{ "plain text", S("hello, world"), "body" },
		{ "JSON", S("{\"a\":\"b\",\"c\":[1,2]}"), "body" },
		{ "line ends and tabs", S("a\nb\r\tc\\d"), "body" },
		{ "UTF-8", S("caf\xc3\xa9 \xe2\x82\xac"), "body" },
		{ "one control byte", S("ab\001cdefghijkl"), "body" },
		{ "a few control bytes", S(CTL8), "body" },
		{ "control bytes", S(CTL64), "body_base64" },
		{ "NULs", S(NUL16 NUL16 NUL16 NUL16), "body_base64" },
		{ "DEL bytes (\\u007f each)", S(DEL16 DEL16 DEL16 DEL16),
		    "body_base64" },
		{ "quotes (at most twice as long)", S(Q16 Q16 Q16 Q16 Q16 Q16),
		    "body" },
	};
	struct http_request req;
	struct timespec when = { 0 };
	struct cred c = { 0 };
	json_t *rec;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&req, 0, sizeof(req));
		req.method = (char *)"POST";
		req.target = req.path = (char *)"/";
		req.body = (unsigned char *)cases[i].s;
		req.body_len = cases[i].n;
		rec = wire_request_record(&req, 1, &when, &c);
		ok(json_object_get(rec, cases[i].key) != NULL,
		    "record: %s as "
		    "%s",
		    cases[i].name, cases[i].key);
		ok(json_is_true(json_object_get(rec, "body_utf8")),
		    "record: %s still flagged UTF-8", cases[i].name);
		json_decref(rec);
	}
}

/*
 * wire_request_bound is what the proxy reserves before forwarding: it must
 * never be below the record's real size, whatever the bytes, headers and
 * credential (a short token grows when scrubbed to "[credential]").
 */
static void
test_bound(void)
{
	static const unsigned char pick[] = { 'a', '"', '\\', 0x01, 0x00, 0xc3,
		0xa9, 0xff, 'K', 'E', 'Y' };
	static const char *const names[] = { "X-Api-Key", "Cookie", "Accept",
		"X-Other" };
	struct http_header h[4];
	char vals[4][200], err[64], tgt[80];
	unsigned char body[600];
	struct timespec when = { .tv_sec = 1796227501 };
	struct http_request req;
	struct cred creds[3];
	int low = 0, k, c;
	size_t i, len;
	json_t *rec;
	char *d;

	memset(creds, 0, sizeof(creds));
	cred_parse(&creds[1], "apikey:K", 8, "f", err, sizeof(err));
	cred_parse(&creds[2], "apikey:KEY", 10, "f", err, sizeof(err));
	srand(21);
	for (k = 0; k < 3000; k++) {
		memset(&req, 0, sizeof(req));
		req.method = (char *)"POST";
		/* Each part is often empty, so none hides another's bound. */
		c = rand() % 3;
		for (i = 0; i < 79; i++)
			tgt[i] = c == 1 ? 'K' : 'a' + rand() % 26;
		tgt[0] = '/';
		tgt[c == 0 ? 1 : 79] = '\0';
		req.target = req.path = tgt;
		c = rand() % 3; /* header values: mixed, escapes, tokens */
		for (i = 0; i < 4; i++) {
			size_t n = (size_t)(rand() % 200);

			for (size_t j = 0; j < n; j++)
				vals[i][j] = c == 1		      ? 0x01 :
				    c == 2			      ? 'K' :
				    (char)pick[rand() % sizeof(pick)] ?:
									'z';
			vals[i][n] = '\0';
			h[i].name = (char *)names[i];
			h[i].value = vals[i];
		}
		req.headers = h;
		req.nheaders = (size_t)(rand() % 5);
		req.body_len = rand() % 3 ?
		    (size_t)(rand() % (int)sizeof(body)) :
		    0;
		c = rand() % 4; /* ASCII, escapes, mixed, tokens */
		for (i = 0; i < req.body_len; i++)
			body[i] = c == 0 ? 'a' + rand() % 26 :
			    c == 1	 ? (rand() % 2 ? 0x01 : 0x7f) :
			    c == 3	 ? 'K' :
					   pick[rand() % sizeof(pick)];
		req.body = body;
		rec = wire_request_record(&req, 123456, &when, &creds[k % 3]);
		d = wire_dump(rec, &len);
		low += wire_request_bound(&req, &creds[k % 3]) < len;
		free(d);
		json_decref(rec);
	}
	is_int(low, 0,
	    "bound: never below the record's size (3000 random "
	    "requests)");
	h[0].name = (char *)"Content-Encoding";
	h[0].value = (char *)"gzip";
	req.nheaders = 1;
	is_int(wire_request_bound(&req, &creds[0]), 0,
	    "bound: none for a "
	    "compressed body");
	cred_free(&creds[1]);
	cred_free(&creds[2]);
}

/* Totals that continue from what a directory holds, and the caps. */
static void
test_caps(void)
{
	char dir[] = "/tmp/lb-caps-XXXXXX", path[256], err[256];
	struct wire_log w;
	struct cred c = { 0 };
	int fd;

	mkdtemp(dir);
	snprintf(path, sizeof(path), "%s/responses", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/wire.jsonl", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	(void)!write(fd, "{}\n{}\n", 6);
	close(fd);
	/* Request 9 has a response file; 3 to 8 were refused or lost. */
	snprintf(path, sizeof(path), "%s/responses/000009.body", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	(void)!write(fd, "0123456789", 10);
	close(fd);
	ok(wire_open(&w, dir, &c, err, sizeof(err)) == 0, "caps: open");
	is_int(wire_next_seq(&w), 10,
	    "caps: numbering stays above the "
	    "response files (never overwrites one)");
	is_int(w.nrecords, 2, "caps: records counted from wire.jsonl");
	is_int(w.nbytes, 16, "caps: bytes of wire.jsonl and responses/");
	wire_set_caps(&w, 4, 100);
	is_int(wire_reserve(&w, 1, 50), WIRE_CAP_NONE, "caps: a record fits");
	is_int(wire_reserve(&w, 0, 34), WIRE_CAP_NONE,
	    "caps: bytes up to the "
	    "cap fit");
	is_int(wire_reserve(&w, 0, 1), WIRE_CAP_BYTES,
	    "caps: one more byte "
	    "does not");
	wire_unreserve(&w, 0, 40);
	is_int(wire_reserve(&w, 1, 10), WIRE_CAP_NONE,
	    "caps: room given back "
	    "is usable");
	is_int(wire_reserve(&w, 1, 1), WIRE_CAP_RECORDS,
	    "caps: the record "
	    "count is checked first");
	is_int(w.nrecords, 4, "caps: a refusal takes nothing");
	wire_close(&w);
	rm_rf(dir);
}

int
main(void)
{
	test_cred();
	test_helpers();
	test_inflate();
	test_record();
	test_dump();
	test_compact();
	test_bound();
	test_caps();
	return tap_done();
}
