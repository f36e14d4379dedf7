/*
 * The leak scanner, table-driven: each form is planted in surrounding text
 * and must be found with its exact form name, offset and length; each has
 * near-miss controls (one character off, a shorter prefix, the encoding of
 * a neighbouring secret, another alignment's digits) that must not match.
 * The encoders here are written independently of src/scan.c.
 */
#include <sys/wait.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan.h"
#include "scan_int.h"
#include "tap.h"

/* ---- independent encoders ---- */

struct str {
	char *p;
	size_t n, cap;
};

static void
put(struct str *s, const void *p, size_t n)
{
	if (s->n + n + 1 > s->cap) {
		s->cap = (s->n + n + 1) * 2;
		s->p = realloc(s->p, s->cap);
		if (s->p == NULL)
			abort();
	}
	memcpy(s->p + s->n, p, n);
	s->n += n;
	s->p[s->n] = '\0';
}

static void
puts_(struct str *s, const char *p)
{
	put(s, p, strlen(p));
}

static void
radix(struct str *out, const unsigned char *p, size_t n, const char *al,
    unsigned w, int pad)
{
	size_t bits = 8 * n, i, j, nd = (bits + w - 1) / w;
	unsigned v;

	for (i = 0; i < nd; i++) {
		v = 0;
		for (j = 0; j < w; j++) {
			size_t b = i * w + j;

			v <<= 1;
			if (b < bits)
				v |= (p[b / 8] >> (7 - b % 8)) & 1;
		}
		put(out, al + v, 1);
	}
	if (pad) {
		size_t grp = w == 6 ? 4 : 8;

		while (nd % grp != 0) {
			puts_(out, "=");
			nd++;
		}
	}
}

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char B64U[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

static void
hex(struct str *out, const unsigned char *p, size_t n, const char *digits,
    const char *pre, const char *sep)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			puts_(out, sep);
		puts_(out, pre);
		put(out, digits + (p[i] >> 4), 1);
		put(out, digits + (p[i] & 15), 1);
	}
}

/* ---- scanning helpers ---- */

static struct scan *
compile(const char **secrets, const size_t *lens, size_t n, unsigned flags)
{
	struct scan_secret v[16];
	struct scan *sc;
	char err[256];
	size_t i;

	for (i = 0; i < n; i++) {
		v[i].bytes = secrets[i];
		v[i].len = lens ? lens[i] : strlen(secrets[i]);
	}
	if (scan_compile(&sc, v, n, flags, 0, err, sizeof(err)) != 0) {
		printf("# compile: %s\n", err);
		abort();
	}
	return sc;
}

static struct scan_result
scan(const struct scan *sc, const void *p, size_t n)
{
	struct scan_result r = { 0 };

	if (scan_buffer(sc, p, n, &r) != 0)
		abort();
	return r;
}

static void
dump(const struct scan_result *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		printf("#   finding: secret %zu form %s offset %zu length "
		       "%zu\n",
		    r->v[i].secret, r->v[i].form, r->v[i].offset,
		    r->v[i].length);
}

/*
 * Plants enc between "<<" and ">>" and expects exactly one finding of
 * secret 0 with the given form at offset 2, covering enc's length when
 * len_exact.
 */
static void
expect_form(const struct scan *sc, const char *enc, size_t n, const char *form,
    const char *what)
{
	struct str d = { 0 };
	struct scan_result r;
	int good;

	puts_(&d, "<<");
	put(&d, enc, n);
	puts_(&d, ">>");
	r = scan(sc, d.p, d.n);
	good = r.n == 1 && strcmp(r.v[0].form, form) == 0 &&
	    r.v[0].offset == 2 && r.v[0].length == n;
	if (!ok(good, "%s: found as %s at 2+%zu", what, form, n))
		dump(&r);
	scan_result_free(&r);
	free(d.p);
}

static void
expect_none(const struct scan *sc, const void *p, size_t n, const char *what)
{
	struct scan_result r = scan(sc, p, n);

	if (!ok(r.n == 0, "near miss: %s", what))
		dump(&r);
	scan_result_free(&r);
}

/* Number of findings with the given form (prefix match when star). */
static size_t
count_form(const struct scan_result *r, const char *form)
{
	size_t i, k = 0, fl = strlen(form);

	for (i = 0; i < r->n; i++)
		if (form[fl - 1] == '*' ?
			strncmp(r->v[i].form, form, fl - 1) == 0 :
			strcmp(r->v[i].form, form) == 0)
			k++;
	return k;
}

/* ---- the table ---- */

struct plain_case {
	const char *form;
	const char *enc; /* the expected text, C-escaped */
};

/* S1: an ordinary ASCII canary. */
#define S1 "sk-live-0123456789abcdef"

static const struct plain_case s1_cases[] = {
	{ "raw", S1 },
	{ "hex", "736b2d6c6976652d30313233343536373839616263646566" },
	{ "hex-upper", "736B2D6C6976652D30313233343536373839616263646566" },
	{ "hex-sep",
	    "73 6b 2d 6c 69 76 65 2d 30 31 32 33 34 35 36 37 38 39 "
	    "61 62 63 64 65 66" },
	{ "hex-sep",
	    "73:6B:2D:6C:69:76:65:2D:30:31:32:33:34:35:36:37:38:39:"
	    "61:62:63:64:65:66" },
	{ "hex-escape",
	    "\\x73\\x6b\\x2d\\x6c\\x69\\x76\\x65\\x2d\\x30\\x31"
	    "\\x32\\x33\\x34\\x35\\x36\\x37\\x38\\x39\\x61\\x62\\x63\\x64"
	    "\\x65\\x66" },
	{ "hex-escape+json",
	    "\\\\x73\\\\x6b\\\\x2d\\\\x6c\\\\x69\\\\x76"
	    "\\\\x65\\\\x2d\\\\x30\\\\x31\\\\x32\\\\x33\\\\x34\\\\x35\\\\x36"
	    "\\\\x37\\\\x38\\\\x39\\\\x61\\\\x62\\\\x63\\\\x64\\\\x65\\\\x66" },
	{ "hex-0x",
	    "0x73, 0x6b, 0x2d, 0x6c, 0x69, 0x76, 0x65, 0x2d, 0x30, "
	    "0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, "
	    "0x62, 0x63, 0x64, 0x65, 0x66" },
	{ "percent-all",
	    "%73%6B%2D%6C%69%76%65%2D%30%31%32%33%34%35%36%37"
	    "%38%39%61%62%63%64%65%66" },
	{ "percent-all-lower",
	    "%73%6b%2d%6c%69%76%65%2d%30%31%32%33%34%35"
	    "%36%37%38%39%61%62%63%64%65%66" },
	{ "reversed", "fedcba9876543210-evil-ks" },
	{ "rot13", "fx-yvir-0123456789nopqrs" },
	{ "unicode-escape",
	    "\\u0073\\u006b\\u002d\\u006c\\u0069\\u0076"
	    "\\u0065\\u002d\\u0030\\u0031\\u0032\\u0033\\u0034\\u0035\\u0036"
	    "\\u0037\\u0038\\u0039\\u0061\\u0062\\u0063\\u0064\\u0065\\u0066" },
};

/* S2: quotes, backslash, slash, HTML specials, non-ASCII, a newline. */
#define S2 "p\"a\\ss/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80\n!"

static const struct plain_case s2_cases[] = {
	{ "raw", S2 },
	{ "json", "p\\\"a\\\\ss/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80\\n!" },
	{ "json-slash", "p\\\"a\\\\ss\\/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80\\n!" },
	{ "json-unicode", "p\\\"a\\\\ss/w<o>&rd'\\u00e9\\ud83d\\ude00\\n!" },
	{ "json-unicode-upper",
	    "p\\\"a\\\\ss/w<o>&rd'\\u00E9\\uD83D\\uDE00\\n!" },
	{ "json-html",
	    "p\\\"a\\\\ss/w\\u003co\\u003e\\u0026rd'"
	    "\xc3\xa9\xf0\x9f\x98\x80\\n!" },
	{ "json-unicode-html-apos",
	    "p\\\"a\\\\ss/w\\u003co\\u003e\\u0026rd"
	    "\\u0027\\u00e9\\ud83d\\ude00\\n!" },
	{ "json-ctrlu",
	    "p\\\"a\\\\ss/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80"
	    "\\u000a!" },
	{ "json2",
	    "p\\\\\\\"a\\\\\\\\ss/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80"
	    "\\\\n!" },
	{ "json2-unicode",
	    "p\\\\\\\"a\\\\\\\\ss/w<o>&rd'\\\\u00e9"
	    "\\\\ud83d\\\\ude00\\\\n!" },
	{ "percent", "p%22a%5Css%2Fw%3Co%3E%26rd%27%C3%A9%F0%9F%98%80%0A%21" },
	{ "percent-lower",
	    "p%22a%5css%2fw%3co%3e%26rd%27%c3%a9%f0%9f%98%80%0a%21" },
	{ "percent-js", "p%22a%5Css%2Fw%3Co%3E%26rd'%C3%A9%F0%9F%98%80%0A!" },
	{ "html",
	    "p&quot;a\\ss/w&lt;o&gt;&amp;rd&#39;"
	    "\xc3\xa9\xf0\x9f\x98\x80\n!" },
	{ "html",
	    "p&quot;a\\ss/w&lt;o&gt;&amp;rd&#x27;"
	    "\xc3\xa9\xf0\x9f\x98\x80\n!" },
	{ "quoted-printable", "p\"a\\ss/w<o>&rd'=C3=A9=F0=9F=98=80=0A!" },
	{ "reversed", "!\n\xf0\x9f\x98\x80\xc3\xa9'dr&>o<w/ss\\a\"p" },
	{ "reversed-bytes", "!\n\x80\x98\x9f\xf0\xa9\xc3'dr&>o<w/ss\\a\"p" },
	{ "reversed+json",
	    "!\\n\xf0\x9f\x98\x80\xc3\xa9'dr&>o<w/ss\\\\a\\\"p" },
};

/* S3: binary, with a NUL. */
static const char S3[] = "ab\0cd\xff\xfe\x01xyz";
#define S3LEN 11

static void
test_plain_forms(void)
{
	const char *s1[] = { S1 };
	const char *s2[] = { S2 };
	struct scan *sc;
	size_t i;

	sc = compile(s1, NULL, 1, 0);
	for (i = 0; i < sizeof(s1_cases) / sizeof(s1_cases[0]); i++)
		expect_form(sc, s1_cases[i].enc, strlen(s1_cases[i].enc),
		    s1_cases[i].form, "S1");
	scan_free(sc);
	sc = compile(s2, NULL, 1, 0);
	for (i = 0; i < sizeof(s2_cases) / sizeof(s2_cases[0]); i++)
		expect_form(sc, s2_cases[i].enc, strlen(s2_cases[i].enc),
		    s2_cases[i].form, "S2");
	scan_free(sc);
}

/* The UTF-16 and binary forms, which hold NUL bytes. */
static void
test_binary_forms(void)
{
	const char *s1[] = { S1 }, *s3[] = { S3 };
	size_t l3 = S3LEN, i;
	struct scan *sc;
	struct str d = { 0 };

	sc = compile(s1, NULL, 1, 0);
	for (i = 0; i < strlen(S1); i++) {
		put(&d, S1 + i, 1);
		put(&d, "", 1);
	}
	expect_form(sc, d.p, d.n, "utf16le", "S1");
	d.n = 0;
	for (i = 0; i < strlen(S1); i++) {
		put(&d, "", 1);
		put(&d, S1 + i, 1);
	}
	expect_form(sc, d.p, d.n, "utf16be", "S1");
	d.n = 0;
	for (i = 0; i < strlen(S1); i++) {
		put(&d, S1 + i, 1);
		puts_(&d, "\\u0000");
	}
	expect_form(sc, d.p, d.n, "utf16le+json", "S1 (in a JSON string)");
	scan_free(sc);

	sc = compile(s3, &l3, 1, 0);
	expect_form(sc, S3, S3LEN, "raw", "S3 with NUL");
	d.n = 0;
	hex(&d, (const unsigned char *)S3, S3LEN, "0123456789abcdef", "", "");
	expect_form(sc, d.p, d.n, "hex", "S3");
	d.n = 0;
	puts_(&d, "ab\\u0000cd\xff\xfe\\u0001xyz");
	expect_form(sc, d.p, d.n, "json", "S3 (bytes not UTF-8 kept)");
	scan_free(sc);
	free(d.p);
}

/*
 * Radix forms: the secret inside a longer encoded text at every byte
 * alignment, padded or not, std and URL-safe.
 */
static void
test_radix(void)
{
	/* bytes chosen so that the base64 holds '+' and '/' */
	static const char s4[] = "\xfb\xff\xbf>?~secret-\xfb\xef\xbe";
	const char *sec[] = { S1, s4 };
	struct scan *sc = compile(sec, NULL, 2, 0);
	struct scan_result r;
	struct str plain = { 0 }, enc = { 0 }, txt = { 0 };
	size_t k, t, si;
	char form[32];

	for (si = 0; si < 2; si++)
		for (k = 0; k < 5; k++)
			for (t = 0; t < 3; t++) {
				const char *s = sec[si];
				int url, b32;

				for (url = 0; url < 3; url++) {
					b32 = url == 2;
					if (!b32 && k > 2)
						continue;
					plain.n = enc.n = txt.n = 0;
					put(&plain, "PREFIX!!", k);
					puts_(&plain, s);
					put(&plain, "tail", t);
					radix(&enc, (unsigned char *)plain.p,
					    plain.n,
					    b32	    ? B32 :
						url ? B64U :
						      B64,
					    b32 ? 5 : 6, t != 1);
					puts_(&txt, "data: \"");
					put(&txt, enc.p, enc.n);
					puts_(&txt, "\"");
					r = scan(sc, txt.p, txt.n);
					/* an encoding without '-' or '_' is also std base64 */
					snprintf(form, sizeof(form), "%s@%zu",
					    b32 ? "base32" :
						url &&
						    (memchr(enc.p, '-',
							 enc.n) ||
							memchr(enc.p, '_',
							    enc.n)) ?
						  "base64url" :
						  "base64",
					    k);
					if (!ok(r.n == 1 &&
						    r.v[0].secret == si &&
						    strcmp(r.v[0].form, form) ==
							0,
						"secret %zu as %s, %zu "
						"trailing bytes",
						si, form, t))
						dump(&r);
					scan_result_free(&r);
				}
			}
	scan_free(sc);
	free(plain.p);
	free(enc.p);
	free(txt.p);
}

/* Base64 of a secret that differs in its last or first bits only. */
static void
test_radix_near_miss(void)
{
	const char *sec[] = { S1 };
	struct scan *sc = compile(sec, NULL, 1, 0);
	struct str plain = { 0 }, enc = { 0 };
	static const char *const miss[] = {
		"sk-live-0123456789abcdeg", /* last bit */
		"sk-live-0123456789abcdee", /* low bits */
		"rk-live-0123456789abcdef", /* first bit */
		"ck-live-0123456789abcdef", /* top bits of the first byte */
		"sk-live-0123456789abcde",  /* a shorter prefix */
		"k-live-0123456789abcdef",  /* a shorter suffix */
	};
	size_t m, k, t;
	int url;

	for (m = 0; m < sizeof(miss) / sizeof(miss[0]); m++)
		for (k = 0; k < 3; k++)
			for (t = 0; t < 3; t++)
				for (url = 0; url < 2; url++) {
					plain.n = enc.n = 0;
					put(&plain, "\x01\x02\x03", k);
					puts_(&plain, miss[m]);
					put(&plain, "\xff\xff\xff", t);
					radix(&enc, (unsigned char *)plain.p,
					    plain.n, url ? B64U : B64, 6, 1);
					{
						char what[128];

						snprintf(what, sizeof(what),
						    "base64%s of '%s' at "
						    "alignment %zu, %zu after",
						    url ? "url" : "", miss[m],
						    k, t);
						expect_none(sc, enc.p, enc.n,
						    what);
					}
				}
	/* the right encoding shifted by one digit decodes to other bytes */
	plain.n = enc.n = 0;
	puts_(&plain, S1);
	radix(&enc, (unsigned char *)plain.p, plain.n, B64, 6, 1);
	expect_none(sc, enc.p + 1, enc.n - 1,
	    "base64@0 without its first digit");
	scan_free(sc);
	free(plain.p);
	free(enc.p);
}

/* A JSON file's text base64'd or hex'd: the escaped secret, encoded. */
static void
test_json_then_encoded(void)
{
	const char *sec[] = { S2 };
	struct scan *sc = compile(sec, NULL, 1, 0);
	struct str plain = { 0 }, enc = { 0 };
	struct scan_result r;
	size_t k;
	static const char esc[] =
	    "p\\\"a\\\\ss/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80\\n!";

	for (k = 0; k < 3; k++) {
		plain.n = enc.n = 0;
		puts_(&plain, "{\"pw\": \"");
		put(&plain, "xyz", k);
		puts_(&plain, esc);
		puts_(&plain, "\"}\n");
		radix(&enc, (unsigned char *)plain.p, plain.n, B64, 6, 1);
		r = scan(sc, enc.p, enc.n);
		if (!ok(r.n == 1 &&
			    strncmp(r.v[0].form, "json+base64@", 12) == 0,
			"a JSON file, base64'd (%zu filler bytes)", k))
			dump(&r);
		scan_result_free(&r);
	}
	enc.n = 0;
	hex(&enc, (const unsigned char *)esc, strlen(esc), "0123456789abcdef",
	    "", "");
	expect_form(sc, enc.p, enc.n, "json+hex", "S2 escaped, then hex");
	scan_free(sc);
	free(plain.p);
	free(enc.p);
}

/* Line-wrapped encodings: real breaks, CRLF, JSON-escaped breaks. */
static void
test_wrapped(void)
{
	const char *sec[] = { S1 };
	struct scan *sc = compile(sec, NULL, 1, 0);
	struct str plain = { 0 }, enc = { 0 }, txt = { 0 };
	static const char *const brk[] = { "\n", "\r\n", "\\n", "\\r\\n" };
	static const size_t widths[] = { 76, 64, 20 };
	struct scan_result r;
	size_t b, w, k, i, pre;

	for (b = 0; b < 4; b++)
		for (w = 0; w < 3; w++)
			for (pre = 40; pre < 52; pre += 1) {
				plain.n = enc.n = txt.n = 0;
				for (i = 0; i < pre; i++)
					put(&plain, "Q", 1);
				puts_(&plain, S1);
				puts_(&plain, "and some more text after it");
				radix(&enc, (unsigned char *)plain.p, plain.n,
				    B64, 6, 1);
				puts_(&txt, "{\"text\":\"");
				for (k = 0; k < enc.n; k += widths[w]) {
					put(&txt, enc.p + k,
					    enc.n - k < widths[w] ? enc.n - k :
								    widths[w]);
					puts_(&txt, brk[b]);
				}
				puts_(&txt, "\"}");
				r = scan(sc, txt.p, txt.n);
				/* the first digit the secret alone determines */
				k = (8 * pre + 5) / 6;
				k = 9 + k + k / widths[w] * strlen(brk[b]);
				if (!ok(r.n == 1 &&
					    strncmp(r.v[0].form, "base64@",
						7) == 0 &&
					    r.v[0].offset == k,
					"wrapped base64, break %zu width %zu, "
					"%zu bytes before",
					b, widths[w], pre))
					dump(&r);
				scan_result_free(&r);
			}

	/* hex wrapped like xxd -p (60 digits a line) */
	plain.n = enc.n = txt.n = 0;
	puts_(&plain, "DB_PASSWORD=" S1 "\n");
	hex(&enc, (unsigned char *)plain.p, plain.n, "0123456789abcdef", "",
	    "");
	for (k = 0; k < enc.n; k += 60) {
		put(&txt, enc.p + k, enc.n - k < 60 ? enc.n - k : 60);
		puts_(&txt, "\n");
	}
	r = scan(sc, txt.p, txt.n);
	ok(r.n == 1 && strcmp(r.v[0].form, "hex+wrapped") == 0 &&
		r.v[0].offset == 24 && r.v[0].length == 49,
	    "xxd -p output: hex+wrapped at 24, 48 digits and a break");
	scan_result_free(&r);

	/* the near miss wrapped: nothing */
	plain.n = enc.n = txt.n = 0;
	puts_(&plain, "DB_PASSWORD=sk-live-0123456789abcdeg\n");
	radix(&enc, (unsigned char *)plain.p, plain.n, B64, 6, 1);
	for (k = 0; k < enc.n; k += 16) {
		put(&txt, enc.p + k, enc.n - k < 16 ? enc.n - k : 16);
		puts_(&txt, "\\n");
	}
	expect_none(sc, txt.p, txt.n, "wrapped base64 of a secret one bit off");
	scan_free(sc);
	free(plain.p);
	free(enc.p);
	free(txt.p);
}

/* Near misses of the plain forms: one character off, shorter prefix. */
static void
test_plain_near_miss(void)
{
	const char *sec[] = { S1, S2 };
	struct scan *sc = compile(sec, NULL, 2, 0);
	static const char *const miss[] = {
		"sk-live-0123456789abcdeF",
		"sk-live-0123456789abcde",
		"Sk-live-0123456789abcdef",
		"sk-live-0123456789Abcdef",
		"736b2d6c6976652d3031323334353637383961626364656",
		"736b2d6c6976652d30313233343536373839616263646567",
		"%73%6B%2D%6C%69%76%65%2D%30%31%32%33%34%35%36%37%38%39%61%62"
		"%63%64%65%67",
		"fedcba9876543210-evil-k",
		"gedcba9876543210-evil-ks",
		"fx-yvir-0123456789nopqr",
		"p\\\"a\\\\ss/w<o>&rd'\\u00e8\\ud83d\\ude00\\n!",
		"p\\\"a\\\\ss/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80\\n",
		"p\"a\\ss/w<o>&rd'\xc3\xa9\xf0\x9f\x98\x80\n?",
		"p%22a%5Css%2Fw%3Co%3E%26rd%27%C3%A9%F0%9F%98%80%0A%22",
		"sk-live-0123456789abcde\\f",
	};
	char what[64];
	size_t i;

	for (i = 0; i < sizeof(miss) / sizeof(miss[0]); i++) {
		struct str d = { 0 };

		puts_(&d, "text ");
		puts_(&d, miss[i]);
		puts_(&d, " text");
		snprintf(what, sizeof(what), "one-off or shorter text #%zu", i);
		expect_none(sc, d.p, d.n, what);
		free(d.p);
	}
	scan_free(sc);
}

/* Many findings, several secrets, offsets in order, no duplicates. */
static void
test_many(void)
{
	const char *sec[] = { S1, "another-secret-value-42" };
	struct scan *sc = compile(sec, NULL, 2, 0);
	struct str d = { 0 };
	struct scan_result r;
	size_t i, sorted = 1;

	for (i = 0; i < 100; i++) {
		puts_(&d, "{\"role\":\"user\",\"content\":\"");
		puts_(&d, i % 2 ? S1 : "another-secret-value-42");
		puts_(&d, "\"}\n");
	}
	r = scan(sc, d.p, d.n);
	for (i = 1; i < r.n; i++)
		if (r.v[i].offset <= r.v[i - 1].offset)
			sorted = 0;
	is_int(r.n, 100, "100 plantings, 100 findings");
	ok(sorted, "findings sorted by offset, no duplicate");
	is_int(count_form(&r, "raw"), 100, "all raw");
	ok(r.n == 100 && r.v[0].secret == 1 && r.v[1].secret == 0 &&
		r.v[0].offset == 26,
	    "secret indexes and first offset");
	scan_result_free(&r);
	free(d.p);
	scan_free(sc);
}

/*
 * The literal matcher samples every W - 3 bytes (W: the shortest
 * pattern's length, MLIT_WMAX at most): a secret of each length around
 * that cap, alone in 200 bytes of text at every offset, is found there
 * as the byte loop finds it (a stride one byte longer fails this).
 */
static void
test_mlit_offsets(void)
{
	static const size_t lens[] = { 8, 12, 17, 18, 19, 20, 21, 22, 25, 40 };
	char sec[41], txt[200];
	const char *sv[1] = { sec };
	size_t li, k, o, j, bad = 0, total = 0;

	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		struct scan *sc;

		for (k = 0; k < lens[li]; k++)
			sec[k] = "Kq7xZ2mP9wR4tY6uB3nV8cL5"[(k * 7 + li) % 24];
		sec[lens[li]] = '\0';
		sc = compile(sv, NULL, 1, 0);
		for (o = 0; o + lens[li] <= sizeof(txt); o++) {
			struct scan_result r;
			size_t found = 0, raw = 0;

			for (k = 0; k < sizeof(txt); k++)
				txt[k] = " words of text, "[k % 16];
			memcpy(txt + o, sec, lens[li]);
			/* the byte loop */
			for (j = 0; j + lens[li] <= sizeof(txt); j++)
				found += memcmp(txt + j, sec, lens[li]) == 0;
			r = scan(sc, txt, sizeof(txt));
			for (k = 0; k < r.n; k++)
				raw += strcmp(r.v[k].form, "raw") == 0 &&
				    r.v[k].offset == o;
			bad += found != 1 || raw != 1 ||
			    count_form(&r, "raw") != 1;
			total++;
			scan_result_free(&r);
		}
		scan_free(sc);
	}
	ok(bad == 0,
	    "a secret of 8 to 40 bytes at every offset of 200 bytes of text "
	    "is found there as the byte loop finds it (%zu of %zu differ)",
	    bad, total);
}

/* c moved r letters on (letters only). */
static unsigned char
rot_letter(unsigned char c, unsigned r)
{
	if (c >= 'a' && c <= 'z')
		return (unsigned char)('a' + (c - 'a' + r) % 26);
	if (c >= 'A' && c <= 'Z')
		return (unsigned char)('A' + (c - 'A' + r) % 26);
	return c;
}

/* rot-N over letters of p[0..n), to out */
static void
rot_n(const char *p, size_t n, int rot, char *out)
{
	size_t k;

	for (k = 0; k < n; k++)
		out[k] = (char)rot_letter((unsigned char)p[k], (unsigned)rot);
}

/*
 * Runs shorter than a window: a secret of 8 to 16 letters and digits
 * that starts with a letter (runs of 8 to 11 are looked at for a secret
 * that short; its rotation signature is 7 long), rotated by 7 or by 19,
 * alone
 * between blanks at every offset of 80 bytes of text, is found there
 * under its chain, once; the run lies inside one 16-byte window at some
 * offsets, across two at others.
 */
static void
test_run_offsets(void)
{
	static const char alnum[] = "Kq7xZ2mP9wR4tY6uB3nV8cL5";
	char sec[17], form[32], txt[80];
	const char *sv[1] = { sec };
	size_t len, k, o, bad = 0, total = 0;
	static const int rots[] = { 7, 19 };
	size_t how;
	int rot;

	for (len = 8; len <= 16; len++) {
		struct scan *sc;

		for (k = 0; k < len; k++)
			sec[k] = k == 0 ? 'Q' : alnum[(k * 5 + len) % 24];
		sec[len] = '\0';
		sc = compile(sv, NULL, 1, 0);
		for (how = 0; how < 2; how++)
			for (rot = rots[how], o = 1; o + len + 1 <= sizeof(txt);
			     o++) {
				struct scan_result r;
				size_t named = 0;

				for (k = 0; k < sizeof(txt); k++)
					txt[k] = "a word of text, "[k % 16];
				txt[o - 1] = txt[o + len] = ' ';
				rot_n(sec, len, rot, txt + o);
				snprintf(form, sizeof(form), "rot%d>raw", rot);
				r = scan(sc, txt, sizeof(txt));
				for (k = 0; k < r.n; k++)
					named += strcmp(r.v[k].form, form) == 0;
				if (named != 1 && bad < 3) {
					printf("# len %zu offset %zu %s: %zu\n",
					    len, o, form, named);
					dump(&r);
				}
				bad += named != 1;
				total++;
				scan_result_free(&r);
			}
		scan_free(sc);
	}
	ok(bad == 0,
	    "a secret of 8 to 16 characters, rotated by 7 or 19, at every "
	    "offset of 80 bytes of text is found under its chain (%zu of %zu "
	    "missed)",
	    bad, total);
}

/*
 * An 8-byte secret, whose runs of 8 and more are all looked at: 64 KB of
 * words of 4 to 15 random letters and digits, and beside them its
 * rotations with one character changed, cut short by one, or one of
 * another secret, find nothing; the same text with one rotation of it
 * finds that one.
 */
static void
test_short_near_miss(void)
{
	static const char alnum[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *sv[1] = { "Qx9mR2vL" };
	struct scan *sc = compile(sv, NULL, 1, 0);
	struct str d = { 0 };
	struct scan_result r;
	char w[16];
	uint32_t seed = 12345;
	size_t k, len, rot;

	while (d.n < 65536) {
		seed = seed * 1103515245u + 12345u;
		len = 4 + (seed >> 16) % 12;
		for (k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			w[k] = alnum[(seed >> 16) % 62];
		}
		put(&d, w, len);
		puts_(&d, " ");
	}
	for (rot = 1; rot < 26; rot++) {
		rot_n(sv[0], 8, (int)rot, w);
		w[rot % 8] = w[rot % 8] == '0' ? '1' : '0';
		put(&d, w, 8);
		puts_(&d, " ");
		rot_n(sv[0], 7, (int)rot, w);
		put(&d, w, 7);
		puts_(&d, " ");
		rot_n("Qx9mR2vK", 8, (int)rot, w);
		put(&d, w, 8);
		puts_(&d, "\n");
	}
	expect_none(sc, d.p, d.n,
	    "an 8-byte secret: 64 KB of random words, its rotations one "
	    "character off or cut short");
	rot_n(sv[0], 8, 11, w);
	put(&d, w, 8);
	puts_(&d, "\n");
	r = scan(sc, d.p, d.n);
	ok(r.n == 1 && count_form(&r, "rot11>raw") == 1,
	    "and with its rot11 after them, that one is found (%zu findings)",
	    r.n);
	scan_result_free(&r);
	free(d.p);
	scan_free(sc);
}

static void
test_compile_errors(void)
{
	struct scan_secret v[2] = { { S1, strlen(S1) }, { "short", 5 } };
	struct scan *sc = (struct scan *)1;
	char err[256];

	ok(scan_compile(&sc, v, 2, 0, 0, err, sizeof(err)) == -1 && sc == NULL,
	    "a 5-byte secret is refused");
	is_str(err, "secret 2 is 5 bytes long, shorter than the minimum of 8",
	    "the message names the secret and the minimum");
	ok(scan_compile(&sc, v, 0, 0, 0, err, sizeof(err)) == -1,
	    "no secret is refused");
	is_str(err, "no secret given", "no secret: message");
	v[1].bytes = "12345678";
	v[1].len = 8;
	ok(scan_compile(&sc, v, 2, 0, 0, err, sizeof(err)) == 0,
	    "an 8-byte secret is accepted");
	scan_free(sc);
}

static void
test_reports(void)
{
	const char *sec[] = { S1 };
	struct scan *sc = compile(sec, NULL, 1, 0);
	char h[9], *m, *snip;
	struct scan_result r;
	const char *data = "password: " S1 " and hex 736b2d6c6976652d3031323334"
			   "353637383961626364656620 sk-live-01 end";

	scan_hash8("abc", 3, h);
	is_str(h, "ba7816bf", "hash8 is the first 8 hex digits of SHA-256");
	m = scan_mask(S1, strlen(S1));
	is_str(m,
	    "sk\xe2\x80\xa6"
	    "24",
	    "mask: two characters and length");
	free(m);
	m = scan_mask("\x01\xffzzzzzzzz", 10);
	is_str(m,
	    "??\xe2\x80\xa6"
	    "10",
	    "mask: unprintable shown as ?");
	free(m);

	r = scan(sc, data, strlen(data));
	is_int(r.n, 2, "raw and hex found");
	snip = scan_snippet(sc, data, strlen(data), r.v, r.n, 0, 200);
	scan_hash8(S1, strlen(S1), h);
	ok(snip != NULL && strstr(snip, S1) == NULL &&
		strstr(snip, "736b2d6c") == NULL &&
		strstr(snip, "sk-live") == NULL,
	    "snippet holds no secret text");
	ok(snip != NULL && strstr(snip, h) != NULL &&
		strstr(snip,
		    "password: \xc2\xab"
		    "secret:") == snip,
	    "snippet masks with the hash");
	printf("#   %s\n", snip ? snip : "(null)");
	free(snip);
	snip = scan_snippet(sc, data, strlen(data), r.v, r.n, 0, 4);
	ok(snip != NULL && strncmp(snip, "\xe2\x80\xa6", 3) == 0,
	    "a cut snippet starts with an ellipsis");
	printf("#   %s\n", snip ? snip : "(null)");
	free(snip);
	scan_result_free(&r);
	scan_free(sc);
}

static void
test_partial(void)
{
	const char *sec[] = { S1, "zzzzzzzzzzzzzzzzzzzz" };
	struct scan *sc = compile(sec, NULL, 2, SCAN_PARTIAL);
	struct scan_fragment f[2];
	const char *d1 = "key: sk-live-0123****cdef and ive-0123456789ab!";
	const char *d2 = "key: sk-live-****ef";

	ok(scan_partial(sc, d1, strlen(d1), f) == 0, "partial scan runs");
	is_int(f[0].length, 16, "longest fragment: 16 bytes");
	is_int(f[0].offset, 30, "at its offset");
	is_int(f[0].secret_offset, 4, "from the secret's byte 4");
	is_int(f[1].length, 0, "the other secret: nothing");
	ok(scan_partial(sc, d2, strlen(d2), f) == 0 && f[0].length == 8,
	    "an 8-byte prefix is reported at the minimum");
	ok(scan_partial(sc, S1, strlen(S1), f) == 0 && f[0].length == 24 &&
		f[0].offset == 0,
	    "the whole secret is its longest fragment");
	scan_free(sc);
	sc = compile(sec, NULL, 1, 0);
	ok(scan_partial(sc, d1, strlen(d1), f) == -1,
	    "partial needs SCAN_PARTIAL");
	scan_free(sc);
}

/*
 * scan_fd reads in chunks: it must give exactly what scan_buffer gives for
 * the whole text, with plantings (wrapped ones too) across every chunk
 * boundary.
 */
static void
test_fd_chunks(void)
{
	const char *sec[] = { S1, S2 };
	struct scan *sc = compile(sec, NULL, 2, 0);
	struct str d = { 0 }, plain = { 0 }, enc = { 0 };
	struct scan_result a, b = { 0 };
	size_t i, k, same;
	FILE *tf = tmpfile();
	unsigned x = 12345;

	while (d.n < 3u << 20) {
		x = x * 1103515245 + 12345;
		switch ((x >> 16) % 5) {
		case 0:
			puts_(&d, S1);
			break;
		case 1:
			plain.n = enc.n = 0;
			put(&plain, "abc", (x >> 8) % 3);
			puts_(&plain, S1);
			radix(&enc, (unsigned char *)plain.p, plain.n, B64, 6,
			    1);
			for (k = 0; k < enc.n; k += 17) {
				put(&d, enc.p + k,
				    enc.n - k < 17 ? enc.n - k : 17);
				puts_(&d, "\\n");
			}
			break;
		case 2:
			puts_(&d, s2_cases[1 + (x >> 8) % 8].enc);
			break;
		default:
			for (i = 0; i < (x >> 8) % 3000; i++)
				put(&d,
				    "lorem ipsum dolor \\n sit amet\n" + i % 8,
				    1);
			break;
		}
	}
	a = scan(sc, d.p, d.n);
	fwrite(d.p, 1, d.n, tf);
	fflush(tf);
	rewind(tf);
	/* through a pipe: a regular file this small is read whole */
	{
		int pfd[2];
		pid_t pid;

		if (pipe(pfd) == -1 || (pid = fork()) == -1)
			abort();
		if (pid == 0) {
			size_t off = 0;
			ssize_t w;

			close(pfd[0]);
			while (off < d.n &&
			    (w = write(pfd[1], d.p + off, d.n - off)) > 0)
				off += (size_t)w;
			_exit(0);
		}
		close(pfd[1]);
		ok(scan_fd(sc, pfd[0], &b) == 0,
		    "scan_fd reads 3 MB from a "
		    "pipe, in chunks");
		close(pfd[0]);
		waitpid(pid, NULL, 0);
	}
	same = a.n == b.n;
	for (i = 0; same && i < a.n; i++)
		same = a.v[i].offset == b.v[i].offset &&
		    a.v[i].length == b.v[i].length &&
		    a.v[i].pattern == b.v[i].pattern &&
		    a.v[i].secret == b.v[i].secret;
	if (!ok(same && a.n > 1000,
		"chunked and whole scans agree (%zu, %zu "
		"findings)",
		a.n, b.n)) {
		for (i = 0, k = 0; i < a.n; i++) {
			while (k < b.n && b.v[k].offset < a.v[i].offset)
				k++;
			if (k >= b.n || b.v[k].offset != a.v[i].offset)
				printf("#   only whole: %zu %s %zu (chunk "
				       "%zu)\n",
				    a.v[i].offset, a.v[i].form, a.v[i].length,
				    a.v[i].offset / (512u << 10));
		}
	}
	fclose(tf);
	scan_result_free(&a);
	scan_result_free(&b);
	free(d.p);
	free(plain.p);
	free(enc.p);
	scan_free(sc);
}

/* ---- the AVX2 kernels against the SSE2 ones (scan_int.h) ---- */

/* Random bytes, drawn to meet every class the kernels test and its edges. */
static void
simd_fill(unsigned char *p, size_t n, unsigned *x)
{
	static const char pick[] = "aZ09+/=-_`.,:;\"'&?#\\nr lx01{}()<>";
	static const char b64al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
				    "opqrstuvwxyz0123456789+/=";
	static const unsigned char edge[] = { 0x00, 0x09, 0x0a, 0x0d, 0x1f,
		0x20, 0x21, 0x2a, 0x2b, 0x5f, 0x60, 0x61, 0x7a, 0x7b, 0x7e,
		0x7f, 0x80, 0xc1, 0xc2, 0xc3, 0xcf, 0xd0, 0xef, 0xff };
	size_t i;
	unsigned mode = 0;

	for (i = 0; i < n; i++) {
		*x = *x * 1103515245 + 12345;
		if ((*x >> 8) % 48 == 0)
			mode = (*x >> 16) % 9;
		switch (mode) {
		case 8: /* NULs, a byte of text now and then */
			p[i] = (*x >> 16) % 29 == 0 ? (unsigned char)'a' : 0;
			break;
		case 6: /* base64, with an edge now and then */
			p[i] = (*x >> 16) % 97 == 0 ?
			    edge[(*x >> 8) % sizeof(edge)] :
			    (unsigned char)b64al[(*x >> 16) % 65];
			break;
		case 7: /* hex digits, either case */
			p[i] = (*x >> 16) % 97 == 0 ?
			    (unsigned char)'g' :
			    (unsigned char)"0123456789abcdefABCDEF"[(*x >> 16) %
				22];
			break;
		case 0: /* text */
			p[i] = (*x >> 16) % 6 == 0 ?
			    ' ' :
			    (unsigned char)('a' + (*x >> 16) % 26);
			break;
		case 1: /* a run */
			p[i] = (unsigned char)pick[(*x >> 16) % 14];
			break;
		case 2: /* bits, plain and under rot47 */
			p[i] = (unsigned char)"01 _`,-"[(*x >> 16) % 7];
			break;
		case 3:
			p[i] = edge[(*x >> 16) % sizeof(edge)];
			break;
		case 4: /* JSON text with escapes, JSON lines */
			p[i] = (unsigned char)"ab \\n\"r/{\n"[(*x >> 16) % 10];
			break;
		default:
			p[i] = (unsigned char)
			    pick[(*x >> 16) % (sizeof(pick) - 1)];
			break;
		}
	}
}

static int
same_findings(const struct scan_result *a, const struct scan_result *b)
{
	size_t i;

	if (a->n != b->n || a->budget != b->budget)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->v[i].offset != b->v[i].offset ||
		    a->v[i].length != b->v[i].length ||
		    a->v[i].pattern != b->v[i].pattern ||
		    a->v[i].secret != b->v[i].secret ||
		    strcmp(a->v[i].form, b->v[i].form) != 0)
			return 0;
	return 1;
}

static void
test_simd(void)
{
	const char *sec[] = { S1, S2 };
	struct scan *sc = compile(sec, NULL, 2, 0);
	struct str d = { 0 }, plain = { 0 }, enc = { 0 };
	struct scan_result a, b;
	unsigned char buf[700];
	unsigned x = 2024;
	size_t i, k, len, bad = 0, differ = 0, total = 0;

	if (!scan_simd_set(1)) {
		ok(1, "kernels: no AVX2 here, one path only");
		scan_free(sc);
		return;
	}
	for (i = 0; i < 300; i++) {
		len = 1 + (x >> 4) % sizeof(buf);
		simd_fill(buf, len, &x);
		bad += scan_simd_differ(buf, len);
	}
	/* every 4 bytes of JSON escapes and lines (the breaks' filter) */
	for (i = 0; i < 6 * 6 * 6 * 6; i++) {
		memset(buf, 'a', 48);
		for (k = 0, len = i; k < 4; k++, len /= 6)
			buf[20 + k] = (unsigned char)"\\n\"{ \n"[len % 6];
		bad += scan_simd_differ(buf, 48);
	}
	ok(bad == 0,
	    "kernels: AVX2 and SSE2 (and the byte loops that have one) give "
	    "the same answers at every offset of 300 random buffers and of "
	    "1296 buffers of JSON escapes (%zu differ)",
	    bad);
	/*
	 * the walks along a class: every byte value at every place of 40
	 * bytes of base64 characters (hex digits, and not), ends anywhere
	 */
	bad = 0;
	for (i = 0; i < 256 * 40 * 2; i++) {
		for (k = 0; k < 80; k++)
			buf[k] = (unsigned char)(i % 2 ?
				"0a9fF" :
				"zA+/=_-Z")[k % (i % 2 ? 5 : 8)];
		buf[i / 2 % 40 + 20] = (unsigned char)(i / 80);
		bad += scan_span_differ(buf, 80);
	}
	ok(bad == 0,
	    "kernels: the AVX2 walk along base64 characters and its hex "
	    "digits give what the byte loop gives with each byte value at "
	    "each place (%zu differ)",
	    bad);
	/* whole scans, the secrets planted among the same random bytes */
	for (i = 0; i < 40; i++) {
		d.n = 0;
		while (d.n < 20000) {
			x = x * 1103515245 + 12345;
			switch ((x >> 16) % 4) {
			case 0:
				puts_(&d, (x >> 8) % 2 ? S1 : S2);
				break;
			case 1:
				plain.n = enc.n = 0;
				put(&plain, "abc", (x >> 8) % 3);
				puts_(&plain, S1);
				radix(&enc, (unsigned char *)plain.p, plain.n,
				    B64, 6, 1);
				for (k = 0; k < enc.n; k += 17) {
					put(&d, enc.p + k,
					    enc.n - k < 17 ? enc.n - k : 17);
					puts_(&d, (x >> 9) % 2 ? "\\n" : "\n");
				}
				break;
			case 2:
				puts_(&d, s2_cases[1 + (x >> 8) % 8].enc);
				break;
			default:
				len = 1 + (x >> 8) % sizeof(buf);
				simd_fill(buf, len, &x);
				put(&d, buf, len);
				break;
			}
		}
		scan_simd_set(1);
		a = scan(sc, d.p, d.n);
		scan_simd_set(0);
		b = scan(sc, d.p, d.n);
		differ += !same_findings(&a, &b);
		total += a.n;
		scan_result_free(&a);
		scan_result_free(&b);
	}
	scan_simd_set(1);
	ok(differ == 0 && total > 0,
	    "kernels: 40 scans of random bytes and planted forms find the "
	    "same with AVX2 and without (%zu differ, %zu findings)",
	    differ, total);
	free(d.p);
	free(plain.p);
	free(enc.p);
	scan_free(sc);
}

/*
 * The rotation signature's grams as the trigger test samples them, each
 * from the last letter before it, against scan_rot_sig's: runs of
 * letters, digits and punctuation with rotations of the secret's letters
 * planted now and then.
 */
static void
test_trig_sig(void)
{
	const char *sec[] = { S1, S2, "tokenXyzzyPlughQuux4242" };
	struct scan *sc = compile(sec, NULL, 3, 0);
	unsigned char buf[300];
	unsigned x = 99;
	size_t i, k, len, bad = 0, hits = 0;

	for (i = 0; i < 60; i++) {
		x = x * 1103515245 + 12345;
		len = 1 + (x >> 8) % sizeof(buf);
		for (k = 0; k < len; k++) {
			x = x * 1103515245 + 12345;
			buf[k] = (unsigned char)("abcdefghijklmnopqrstuvwxyzQXZ"
						 "0123456789-_.+/= "[(x >> 16) %
						     46]);
			if ((x >> 8) % 40 == 0 && k + 24 <= len) {
				const char *p = sec[(x >> 12) % 2 ? 0 : 2];
				unsigned r = (x >> 20) % 26;
				size_t j;

				for (j = 0; p[j] != '\0' && k < len; j++, k++)
					buf[k] = rot_letter((unsigned char)p[j],
					    r);
				k--;
			}
		}
		bad += scan_trig_differ(sc, buf, len, &hits);
	}
	ok(bad == 0 && hits > 0,
	    "rotation triggers: the grams sampled from the last letter before "
	    "each are scan_rot_sig's at every offset and length up to 72 of "
	    "60 random runs (%zu differ, %zu could find one)",
	    bad, hits);
	scan_free(sc);
}

int
main(void)
{
	test_plain_forms();
	test_binary_forms();
	test_radix();
	test_radix_near_miss();
	test_wrapped();
	test_json_then_encoded();
	test_plain_near_miss();
	test_many();
	test_mlit_offsets();
	test_run_offsets();
	test_short_near_miss();
	test_compile_errors();
	test_reports();
	test_partial();
	test_fd_chunks();
	test_simd();
	test_trig_sig();
	return tap_done();
}
