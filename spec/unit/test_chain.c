/*
 * Generated chains of transforms (issue 24): a property test, not a list.
 *
 * Each case draws, from one seed, a random canary, a random chain of 1 to
 * 3 transforms (each written here, independently of the scanner) and
 * random surroundings: a line of a file, a JSON string (scanned as text
 * and as the decoded values evidence.lua also scans, joined by NUL), a
 * tool result inside a transcript line, text deltas of an SSE stream
 * split at a random point (joined as evidence.lua joins them), or the
 * encoding wrapped over lines. Property 1: the secret is found, and one
 * finding names the chain (outermost first; "base64>rot7>hex"). Property
 * 2: the same chains over near misses (one byte changed, a prefix, a
 * suffix, a masked secret, a hash of it, another canary) find nothing;
 * a near miss whose bytes hold the secret after all (a compressor's
 * framing completing it) is drawn again, and the control (the same
 * cases built with the secret itself) must be found, so the property
 * can fail. A failure prints its seed; CHAIN_SEED=N runs that one case
 * again.
 *
 *	CHAIN_CASES=N      cases per property (default 1500; make fuzz: more)
 *	CHAIN_SEED=N       one case, verbose
 *	CHAIN_TABLE=1      no TAP: the recall table, by transform and by chain
 *	                   length (bench/bench_scan prints it)
 *	CHAIN_MISSES=1     with CHAIN_TABLE: also every seed missed, one a
 *	                   line ("# seed N: chain ... in ...")
 *	CHAIN_DUMP=DIR     with CHAIN_TABLE: each case's bytes in DIR/N.0 (and
 *	                   DIR/N.1: the decoded JSON values, when scanned),
 *	                   and DIR/cases, a line a case: "N FOUND HEX LABELS"
 *	                   (found 0/1 by leakbench, the canary in hex, the
 *	                   transforms' labels joined by '|', "chain of K"
 *	                   last), for another scanner over the same bytes
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <brotli/encode.h>
#include <lz4frame.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <zstd.h>

#include "scan.h"
#include "tap.h"

struct str {
	unsigned char *p;
	size_t n, cap;
};

static void
put(struct str *s, const void *p, size_t n)
{
	if (s->n + n + 1 > s->cap) {
		s->cap = (s->n + n + 1) * 2;
		if ((s->p = realloc(s->p, s->cap)) == NULL)
			abort();
	}
	if (n > 0)
		memcpy(s->p + s->n, p, n);
	s->n += n;
	s->p[s->n] = '\0';
}

static void
putc_(struct str *s, int c)
{
	unsigned char b = (unsigned char)c;

	put(s, &b, 1);
}

static void
puts_(struct str *s, const char *p)
{
	put(s, p, strlen(p));
}

/* ---- a seeded generator (splitmix64) ---- */

static uint64_t rng;

static uint64_t
next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static unsigned
pick(unsigned n)
{
	return (unsigned)(next() % n);
}

/* ---- the transforms, as tools write them ---- */

enum { T_ASCII = 1, T_UTF8 = 2, T_BIN = 4 }; /* what a text is */

typedef void (*enc_fn)(const struct str *in, struct str *out, unsigned arg);

static void
radix_pow2(const struct str *in, struct str *out, const char *al, int step,
    int pad)
{
	unsigned acc = 0;
	int bits = 0;
	size_t i, nd = 0;

	for (i = 0; i < in->n; i++) {
		acc = (acc << 8) | in->p[i];
		bits += 8;
		while (bits >= step) {
			bits -= step;
			putc_(out, al[(acc >> bits) & ((1u << step) - 1)]);
			nd++;
		}
	}
	if (bits > 0) {
		putc_(out, al[(acc << (step - bits)) & ((1u << step) - 1)]);
		nd++;
	}
	while (pad && nd % (step == 6 ? 4 : 8) != 0) {
		putc_(out, '=');
		nd++;
	}
}

static void
e_b64(const struct str *in, struct str *out, unsigned arg)
{
	radix_pow2(in, out,
	    arg ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz01234567"
		  "89-_" :
		  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz01234567"
		  "89+/",
	    6, !arg);
}

static const char *const b32al[] = { "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
	"abcdefghijklmnopqrstuvwxyz234567", "0123456789ABCDEFGHIJKLMNOPQRSTUV",
	"0123456789ABCDEFGHJKMNPQRSTVWXYZ",
	"ybndrfg8ejkmcpqxot1uwisza345h769" };

static void
e_b32(const struct str *in, struct str *out, unsigned arg)
{
	radix_pow2(in, out, b32al[arg], 5, arg < 3);
}

static void
e_hex(const struct str *in, struct str *out, unsigned arg)
{
	radix_pow2(in, out, arg ? "0123456789ABCDEF" : "0123456789abcdef", 4,
	    0);
}

/* A big number in base, big-endian bytes (base58 keeps leading zeros). */
static void
bignum(const struct str *in, struct str *out, const char *al, unsigned base,
    int le)
{
	unsigned char *num = malloc(in->n + 1), *dig = malloc(in->n * 3 + 2);
	size_t n = in->n, i, j, nd = 0, zeros = 0;

	if (num == NULL || dig == NULL)
		abort();
	for (i = 0; i < n; i++)
		num[i] = in->p[le ? n - 1 - i : i];
	while (base == 58 && zeros < n && num[zeros] == 0)
		zeros++;
	for (i = zeros; i < n; i++) {
		unsigned carry = num[i];

		for (j = 0; j < nd; j++) {
			carry += (unsigned)dig[j] * 256;
			dig[j] = (unsigned char)(carry % base);
			carry /= base;
		}
		while (carry > 0) {
			dig[nd++] = (unsigned char)(carry % base);
			carry /= base;
		}
	}
	for (i = 0; i < zeros; i++)
		putc_(out, al[0]);
	for (i = nd; i > 0; i--)
		putc_(out, al[dig[i - 1]]);
	free(num);
	free(dig);
}

static void
e_b58(const struct str *in, struct str *out, unsigned arg)
{
	(void)arg;
	bignum(in, out,
	    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 58,
	    0);
}

static void
e_b62(const struct str *in, struct str *out, unsigned arg)
{
	(void)arg;
	bignum(in, out,
	    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	    62, 0);
}

static void
e_b36(const struct str *in, struct str *out, unsigned arg)
{
	bignum(in, out,
	    arg ? "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" :
		  "0123456789abcdefghijklmnopqrstuvwxyz",
	    36, 0);
}

static void
e_dec(const struct str *in, struct str *out, unsigned arg)
{
	bignum(in, out, "0123456789", 10, (int)arg);
}

/* arg: 0 no grouping, else a group of arg bits and a separator */
static void
e_bits(const struct str *in, struct str *out, unsigned arg)
{
	size_t i, k = 0;
	int b;

	for (i = 0; i < in->n; i++)
		for (b = 7; b >= 0; b--) {
			if (arg && k > 0 && k % arg == 0)
				putc_(out, ' ');
			putc_(out, '0' + ((in->p[i] >> b) & 1));
			k++;
		}
}

static void
e_oct(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;
	char t[8];

	(void)arg;
	for (i = 0; i < in->n; i++) {
		snprintf(t, sizeof(t), "%03o", in->p[i]);
		puts_(out, t);
	}
}

/* Python's a85encode (arg 0) and b85encode (arg 1): padded, cut. */
static void
e_b85(const struct str *in, struct str *out, unsigned arg)
{
	const char *al = arg ?
	    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "!#$%&()*+-;<=>?@^_`{|}~" :
	    "!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
	    "abcdefghijklmnopqrstu";
	size_t i, k, full;
	char d[5];

	for (i = 0; i < in->n; i += 4) {
		uint32_t v = 0;

		full = in->n - i >= 4 ? 4 : in->n - i;
		for (k = 0; k < 4; k++)
			v = v << 8 | (k < full ? in->p[i + k] : 0);
		if (v == 0 && full == 4 && !arg) {
			putc_(out, 'z');
			continue;
		}
		for (k = 5; k > 0; k--) {
			d[k - 1] = al[v % 85];
			v /= 85;
		}
		put(out, d, full + 1);
	}
}

static void
e_b91(const struct str *in, struct str *out, unsigned arg)
{
	static const char al[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	    "!#$%&()*+,./:;<=>?@[]^_`{|}~\"";
	unsigned b = 0, nb = 0, v;
	size_t i;

	(void)arg;
	for (i = 0; i < in->n; i++) {
		b |= (unsigned)in->p[i] << nb;
		nb += 8;
		if (nb > 13) {
			v = b & 8191;
			if (v > 88) {
				b >>= 13;
				nb -= 13;
			} else {
				v = b & 16383;
				b >>= 14;
				nb -= 14;
			}
			putc_(out, al[v % 91]);
			putc_(out, al[v / 91]);
		}
	}
	if (nb > 0) {
		putc_(out, al[b % 91]);
		if (nb > 7 || b > 90)
			putc_(out, al[b / 91]);
	}
}

static void
e_rot(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		unsigned c = in->p[i];

		if (c >= 'a' && c <= 'z')
			c = 'a' + (c - 'a' + arg) % 26;
		else if (c >= 'A' && c <= 'Z')
			c = 'A' + (c - 'A' + arg) % 26;
		putc_(out, (int)c);
	}
}

static void
e_rot47(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < in->n; i++) {
		unsigned c = in->p[i];

		putc_(out,
		    c >= 33 && c <= 126 ? (int)(33 + (c - 33 + 47) % 94) :
					  (int)c);
	}
}

static void
e_rev(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;

	(void)arg;
	for (i = in->n; i > 0; i--)
		putc_(out, in->p[i - 1]);
}

/*
 * arg & 15 = K (2..8); & 16: each group reversed (byteswap), else the
 * groups' order (fold -wK | tac); & 32: joined by blanks, & 64: by line
 * breaks; arg >> 8: a lead of that many '.' grouped with the text (its
 * phase)
 */
static void
e_group(const struct str *in, struct str *out, unsigned arg)
{
	struct str t = { 0 };
	size_t k = arg & 15, ng, g, j, s, e;

	for (j = arg >> 8; j > 0; j--)
		putc_(&t, '.');
	put(&t, in->p, in->n);
	for (ng = (t.n + k - 1) / k, g = 0; g < ng; g++) {
		s = ((arg & 16) ? g : ng - 1 - g) * k;
		e = s + k < t.n ? s + k : t.n;
		if (g > 0 && (arg & 96))
			putc_(out, arg & 64 ? '\n' : ' ');
		if (arg & 16)
			for (j = e; j > s; j--)
				putc_(out, t.p[j - 1]);
		else
			put(out, t.p + s, e - s);
	}
	free(t.p);
}

static void
e_xor(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		putc_(out, in->p[i] ^ (int)arg);
}

/* arg: 0 LE, 1 BE, 2 LE with a BOM, 3 UTF-32LE. Input is ASCII. */
static void
e_utf(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;

	if (arg == 2)
		put(out, "\xff\xfe", 2);
	for (i = 0; i < in->n; i++) {
		if (arg == 1)
			putc_(out, 0);
		putc_(out, in->p[i]);
		if (arg != 1)
			putc_(out, 0);
		if (arg == 3)
			put(out, "\0\0", 2);
	}
}

static void
put_cp(struct str *s, uint32_t cp)
{
	if (cp < 0x80)
		putc_(s, (int)cp);
	else if (cp < 0x800) {
		putc_(s, (int)(0xc0 | cp >> 6));
		putc_(s, (int)(0x80 | (cp & 63)));
	} else if (cp < 0x10000) {
		putc_(s, (int)(0xe0 | cp >> 12));
		putc_(s, (int)(0x80 | ((cp >> 6) & 63)));
		putc_(s, (int)(0x80 | (cp & 63)));
	} else {
		putc_(s, (int)(0xf0 | cp >> 18));
		putc_(s, (int)(0x80 | ((cp >> 12) & 63)));
		putc_(s, (int)(0x80 | ((cp >> 6) & 63)));
		putc_(s, (int)(0x80 | (cp & 63)));
	}
}

/* arg 0: fullwidth; 1: mathematical bold (letters, digits). */
static void
e_look(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		unsigned c = in->p[i];

		if (arg == 0 && c >= 0x21 && c <= 0x7e)
			put_cp(out, 0xff01 + c - 0x21);
		else if (arg == 1 && c >= 'A' && c <= 'Z')
			put_cp(out, 0x1d400 + c - 'A');
		else if (arg == 1 && c >= 'a' && c <= 'z')
			put_cp(out, 0x1d41a + c - 'a');
		else if (arg == 1 && c >= '0' && c <= '9')
			put_cp(out, 0x1d7ce + c - '0');
		else
			putc_(out, (int)c);
	}
}

/* An invisible after some characters (arg picks which). */
static void
e_invis(const struct str *in, struct str *out, unsigned arg)
{
	static const uint32_t inv[] = { 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff,
		0xad, 0x200e, 0x202c, 0xe0041, 0xe0001 };
	size_t i;

	for (i = 0; i < in->n; i++) {
		putc_(out, in->p[i]);
		if ((i + arg) % 3 == 0)
			put_cp(out, inv[(i + arg) % 10]);
	}
}

/* Quoted-printable, a soft line break after arg % n characters. */
static void
e_qp(const struct str *in, struct str *out, unsigned arg)
{
	size_t i, brk = in->n > 1 ? 1 + arg % (in->n - 1) : 1, col = 0;
	char t[4];

	for (i = 0; i < in->n; i++) {
		unsigned c = in->p[i];

		if (i == brk || col >= 72) {
			puts_(out, "=\n");
			col = 0;
		}
		if (c == '=' || c < 0x21 || c > 0x7e) {
			snprintf(t, sizeof(t), "=%02X", c);
			puts_(out, t);
			col += 3;
		} else {
			putc_(out, (int)c);
			col++;
		}
	}
}

/* Some characters as HTML entities (named, decimal, hex). */
static void
e_html(const struct str *in, struct str *out, unsigned arg)
{
	size_t i;
	char t[16];

	for (i = 0; i < in->n; i++) {
		unsigned c = in->p[i], k = (unsigned)(i * 7 + arg) % 4;

		if (c == '&')
			puts_(out, "&amp;");
		else if (c == '<')
			puts_(out, "&lt;");
		else if (k == 1) {
			snprintf(t, sizeof(t), "&#%u;", c);
			puts_(out, t);
		} else if (k == 2) {
			snprintf(t, sizeof(t), "&#x%x;", c);
			puts_(out, t);
		} else
			putc_(out, (int)c);
	}
}

static void
e_mime(const struct str *in, struct str *out, unsigned arg)
{
	(void)arg;
	puts_(out, "=?utf-8?B?");
	e_b64(in, out, 0);
	puts_(out, "?=");
}

static void
e_zlib(const struct str *in, struct str *out, unsigned arg)
{
	uLongf n = compressBound(in->n);
	unsigned char *d = malloc(n);

	(void)arg;
	if (d == NULL || compress2(d, &n, in->p, in->n, 9) != Z_OK)
		abort();
	put(out, d, n);
	free(d);
}

/* arg 0: zstd, 1: lz4 frame, 2: brotli */
static void
e_pack(const struct str *in, struct str *out, unsigned arg)
{
	size_t cap = in->n * 2 + 1024, n = cap;
	unsigned char *d = malloc(cap);

	if (d == NULL)
		abort();
	if (arg == 0)
		n = ZSTD_compress(d, cap, in->p, in->n, 3);
	else if (arg == 1)
		n = LZ4F_compressFrame(d, cap, in->p, in->n, NULL);
	else if (!BrotliEncoderCompress(BROTLI_DEFAULT_QUALITY,
		     BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, in->n, in->p,
		     &n, d))
		abort();
	put(out, d, n);
	free(d);
}

struct xf {
	const char *name; /* in the chain: the scanner's name */
	const char *label;
	enc_fn fn;
	unsigned nargs, argmin; /* arg drawn in [argmin, argmin + nargs) */
	unsigned in;		/* T_* accepted */
	unsigned out;
};

#define ANY (T_ASCII | T_UTF8 | T_BIN)
static const struct xf xfs[] = {
	{ "base64", "base64", e_b64, 1, 0, ANY, T_ASCII },
	{ "base64", "base64url", e_b64, 1, 1, ANY, T_ASCII },
	{ "base32", "base32", e_b32, 2, 0, ANY, T_ASCII },
	{ "base32hex", "base32hex", e_b32, 1, 2, ANY, T_ASCII },
	{ "base32-crockford", "base32-crockford", e_b32, 1, 3, ANY, T_ASCII },
	{ "zbase32", "zbase32", e_b32, 1, 4, ANY, T_ASCII },
	{ "hex", "hex", e_hex, 2, 0, ANY, T_ASCII },
	{ "base58", "base58", e_b58, 1, 0, ANY, T_ASCII },
	{ "base62", "base62", e_b62, 1, 0, ANY, T_ASCII },
	{ "base36", "base36", e_b36, 1, 0, ANY, T_ASCII },
	{ "dec", "dec", e_dec, 1, 0, ANY, T_ASCII },
	{ "dec-le", "dec-le", e_dec, 1, 1, ANY, T_ASCII },
	{ "bits", "bits", e_bits, 2, 0, ANY, T_ASCII },
	{ "bits", "bits (grouped)", e_bits, 1, 8, ANY, T_ASCII },
	{ "octal", "octal", e_oct, 1, 0, ANY, T_ASCII },
	{ "ascii85", "ascii85", e_b85, 1, 0, ANY, T_ASCII },
	{ "base85", "base85", e_b85, 1, 1, ANY, T_ASCII },
	{ "base91", "base91", e_b91, 1, 0, ANY, T_ASCII },
	{ "rot", "rot-N", e_rot, 25, 1, T_ASCII, T_ASCII },
	{ "rot47", "rot47", e_rot47, 1, 0, T_ASCII, T_ASCII },
	{ "reverse", "reverse", e_rev, 1, 0, T_ASCII, T_ASCII },
	{ "xor", "xor", e_xor, 255, 1, ANY, T_BIN },
	{ "utf16le", "utf16le", e_utf, 1, 0, T_ASCII, T_BIN },
	{ "utf16be", "utf16be", e_utf, 1, 1, T_ASCII, T_BIN },
	{ "utf16le", "utf16 (BOM)", e_utf, 1, 2, T_ASCII, T_BIN },
	{ "utf32le", "utf32le", e_utf, 1, 3, T_ASCII, T_BIN },
	{ "unicode-fold", "fullwidth", e_look, 1, 0, T_ASCII, T_UTF8 },
	{ "unicode-fold", "math-bold", e_look, 1, 1, T_ASCII, T_UTF8 },
	{ "unicode-fold", "invisibles", e_invis, 3, 0, T_ASCII, T_UTF8 },
	{ "quoted-printable", "quoted-printable", e_qp, 64, 0, ANY, T_ASCII },
	{ "html-unescape", "html-entities", e_html, 4, 0, T_ASCII, T_ASCII },
	{ "mime-word", "mime-word", e_mime, 1, 0, ANY, T_ASCII },
	{ "zlib", "zlib", e_zlib, 1, 0, ANY, T_BIN },
	{ "zstd", "zstd", e_pack, 1, 0, ANY, T_BIN },
	{ "lz4", "lz4", e_pack, 1, 1, ANY, T_BIN },
	{ "brotli", "brotli", e_pack, 1, 2, ANY, T_BIN },
	/* property 3 draws these, one a chain (draw_chain) */
	{ "grouprev", "grouprev", e_group, 7, 2, T_ASCII, T_ASCII },
	{ "byteswap", "byteswap", e_group, 7, 18, T_ASCII, T_ASCII },
	{ "grouprev", "grouprev (blanks)", e_group, 7, 34, T_ASCII, T_ASCII },
	{ "grouprev", "grouprev (lines)", e_group, 7, 98, T_ASCII, T_ASCII },
};
#define NXF (sizeof(xfs) / sizeof(xfs[0]))
/*
 * The transforms properties 1 and 2 draw from: the first NXF_BASE, so
 * every seed draws what it drew before the group steps were added.
 */
#define NXF_BASE 36

/* ---- one case ---- */

#define MAXCHAIN 3

struct chain {
	size_t n;
	unsigned t[MAXCHAIN]; /* innermost first */
	unsigned arg[MAXCHAIN];
	int same[MAXCHAIN]; /* the step changed nothing (rot5 of digits) */
	struct str mid[MAXCHAIN + 1]; /* mid[k]: after k steps */
	size_t inner;		      /* chain_name names steps 1..inner */
};

static void
canary(struct str *s)
{
	static const char *const pre[] = { "sk-live-", "ghp_", "AKIA", "xoxb-",
		"", "sk-ant-api03-" };
	static const char al[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned i, n = 12 + pick(28);

	s->n = 0;
	puts_(s, pre[pick(6)]);
	for (i = 0; i < n; i++)
		putc_(s, al[pick(62)]);
}

static unsigned
kind_of(const struct str *s)
{
	size_t i;
	unsigned k = T_ASCII;

	for (i = 0; i < s->n; i++) {
		if (s->p[i] < 0x21 || s->p[i] == 0x7f)
			return T_BIN;
		if (s->p[i] >= 0x80)
			k = T_UTF8;
	}
	return k;
}

/*
 * Is a step's output of the secret a literal form (scan --forms)? A
 * rotation, reversal or XOR is found through triggers of those forms
 * (src/scan_int.h): over the secret, or over one of them of the secret.
 */
static int
literal(const struct xf *x, unsigned arg)
{
	return x->fn == e_b64 || x->fn == e_b32 || x->fn == e_hex ||
	    x->fn == e_b58 || x->fn == e_b62 || (x->fn == e_b36 && !arg) ||
	    x->fn == e_dec || (x->fn == e_bits && arg == 0) || x->fn == e_oct ||
	    x->fn == e_b85;
}

static int
over_trigger(const struct xf *x)
{
	return x->fn == e_rot || x->fn == e_rot47 || x->fn == e_rev ||
	    x->fn == e_xor;
}

static int
textual(const struct xf *x)
{
	return x->fn == e_look || x->fn == e_invis || x->fn == e_qp ||
	    x->fn == e_html;
}

/*
 * The chains the detector claims (strict): every chain but a rotation,
 * reversal or XOR over a transform with no literal form (base91, QP,
 * entities, look-alikes, UTF-16, compression), brotli (no magic) and two
 * text escapes stacked (look-alikes of entities, QP of look-alikes). The
 * recall table draws from all of them.
 */
static int strict = 1;

/*
 * ... but for these (outer over inner, by label), found in every case of
 * 20000 generated (bench_scan's table: 8 or more of each), a rotation
 * or reversal right over a radix, quoted-printable under rot47 (its
 * soft breaks read "l\n"), XOR of look-alikes and stacked escapes.
 */
static const char *const claimed[][2] = {
	{ "rot-N", "bits (grouped)" },
	{ "rot-N", "bits" },
	{ "rot-N", "html-entities" },
	{ "rot-N", "octal" },
	{ "rot-N", "reverse" },
	{ "rot-N", "base58" },
	{ "rot-N", "base32-crockford" },
	{ "rot-N", "dec-le" },
	{ "rot47", "bits (grouped)" },
	{ "rot47", "bits" },
	{ "rot47", "octal" },
	{ "rot47", "base32-crockford" },
	{ "rot47", "quoted-printable" },
	{ "reverse", "base64" },
	{ "reverse", "rot-N" },
	{ "reverse", "zbase32" },
	{ "quoted-printable", "fullwidth" },
	{ "quoted-printable", "math-bold" },
	{ "quoted-printable", "quoted-printable" },
	{ "quoted-printable", "html-entities" },
	{ "invisibles", "quoted-printable" },
	{ "fullwidth", "html-entities" },
	{ "fullwidth", "quoted-printable" },
	{ "html-entities", "html-entities" },
	{ "math-bold", "html-entities" },
	{ "invisibles", "html-entities" },
	{ "xor", "fullwidth" },
	{ "xor", "math-bold" },
};

static int
claimed_pair(unsigned outer, unsigned inner)
{
	size_t i;

	for (i = 0; i < sizeof(claimed) / sizeof(claimed[0]); i++)
		if (strcmp(xfs[outer].label, claimed[i][0]) == 0 &&
		    strcmp(xfs[inner].label, claimed[i][1]) == 0)
			return 1;
	return 0;
}

/*
 * Property 3: every chain holds one group step (at a drawn place), the
 * others drawn as properties 1 and 2 draw them.
 */
static int groups;

/*
 * Is a group step at i claimed (strict)? Over the secret of slen bytes,
 * spaced, or with two whole groups after its phase (the lead's '.'s);
 * or at i == 1 right over the secret's hex (grouprev of an even K:
 * hex>grouprevK/2) or base64 (grouprev4: its quartets),
 * unspaced. A rotation, rot47, reversal or XOR over one: not claimed
 * (no trigger of a rotated group step).
 */
static int
group_claimed(const struct chain *c, size_t i, size_t slen)
{
	unsigned a = c->arg[i], k = a & 15, ph = (k - (a >> 8) % k) % k;

	if (i == 0)
		return (a & 96) ||
		    (slen >= ph && (slen - ph) / k >= 2 &&
			(slen - ph) / k * k >= 8);
	if (i > 1 || (a & (16 | 96)))
		return 0;
	return (xfs[c->t[0]].fn == e_b64 && k == 4) ||
	    (xfs[c->t[0]].fn == e_hex && k % 2 == 0);
}

/* Draws a chain whose last transform gives text, over slen bytes. */
static void
draw_chain(struct chain *c, size_t len, size_t slen)
{
	unsigned k = T_ASCII, t;
	size_t i, gat;

	for (;;) {
		c->n = len;
		k = T_ASCII;
		gat = groups ? pick((unsigned)len) : len;
		for (i = 0; i < len; i++) {
			/* a group step over text, not right over reverse */
			if (i == gat &&
			    (k != T_ASCII ||
				(i > 0 && xfs[c->t[i - 1]].fn == e_rev)))
				break;
			do
				t = i == gat ? NXF_BASE + pick(NXF - NXF_BASE) :
					       pick(NXF_BASE);
			while (!(xfs[t].in & k) ||
			    (i > 0 &&
				(xfs[t].fn == e_rot || xfs[t].fn == e_rev) &&
				xfs[c->t[i - 1]].fn == xfs[t].fn) ||
			    (i > 0 && xfs[t].fn == e_rev &&
				xfs[c->t[i - 1]].fn == e_group));
			c->t[i] = t;
			c->arg[i] = xfs[t].argmin + pick(xfs[t].nargs);
			if (xfs[t].fn == e_group && i == 0 && !(c->arg[i] & 96))
				c->arg[i] |= pick(c->arg[i] & 15) << 8;
			if (strict && xfs[t].fn == e_group &&
			    !group_claimed(c, i, slen))
				break;
			if (strict && i > gat && over_trigger(&xfs[t]))
				break;
			/* (a text escape beside a separator: not one run) */
			if (strict && i > 0 && textual(&xfs[t]) &&
			    xfs[c->t[i - 1]].fn == e_group &&
			    (c->arg[i - 1] & 96))
				break;
			if (strict && i > 0 && over_trigger(&xfs[t]) &&
			    !(i == 1 && literal(&xfs[c->t[0]], c->arg[0])) &&
			    !claimed_pair(t, c->t[i - 1]))
				break;
			if (strict && (xfs[t].fn == e_pack && c->arg[i] == 2))
				break; /* brotli: no magic (table only) */
			if (strict && i > 0 && textual(&xfs[t]) &&
			    textual(&xfs[c->t[i - 1]]) &&
			    !claimed_pair(t, c->t[i - 1]))
				break; /* stacked text escapes (table only) */
			k = xfs[t].out;
		}
		if (i == len && k != T_BIN)
			return;
	}
}

static void
apply(const struct chain *c, const struct str *secret, struct str *out)
{
	struct str a = { 0 }, b = { 0 };
	size_t i;

	put(&a, secret->p, secret->n);
	for (i = 0; i <= c->n; i++)
		((struct chain *)(uintptr_t)c)->mid[i].n = 0;
	put(&((struct chain *)(uintptr_t)c)->mid[0], secret->p, secret->n);
	for (i = 0; i < c->n; i++) {
		b.n = 0;
		put(&b, "", 0);
		xfs[c->t[i]].fn(&a, &b, c->arg[i]);
		/* (a compressor stores a short input as it is) */
		((struct chain *)(uintptr_t)c)->same[i] = memmem(b.p, b.n, a.p,
							      a.n) != NULL;
		a.n = 0;
		put(&a, b.p, b.n);
		put(&((struct chain *)(uintptr_t)c)->mid[i + 1], b.p, b.n);
	}
	out->n = 0;
	put(out, a.p, a.n);
	free(a.p);
	free(b.p);
}

/* The chain as the scanner names it, outermost first: "base64>rot7". */
static void
chain_name(const struct chain *c, char *out, size_t size, int all)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = c->inner; i > 0; i--) {
		const struct xf *x = &xfs[c->t[i - 1]];
		char one[32];

		if (c->same[i - 1] && !all)
			continue;
		if (x->fn == e_rot)
			snprintf(one, sizeof(one), "rot%u", c->arg[i - 1]);
		else if (x->fn == e_group)
			snprintf(one, sizeof(one), "%s%u", x->name,
			    c->arg[i - 1] & 15);
		else if (x->fn == e_mime)
			snprintf(one, sizeof(one), "base64");
		else if (strncmp(x->name, "utf16", 5) == 0)
			snprintf(one, sizeof(one), "utf16");
		else
			snprintf(one, sizeof(one), "%s", x->name);
		o += (size_t)snprintf(out + o, size - o, "%s%s", o ? ">" : "",
		    one);
		if (o >= size)
			return;
	}
}

/*
 * A finding's form, normalised to the chain's names: alignments and
 * wrapping dropped, one-step literal forms named as their transform,
 * the innermost "raw" (and JSON escapes) dropped.
 */
static void
norm_form(const char *form, char *out, size_t size)
{
	static const struct {
		const char *from, *to;
	} alias[] = { { "base64url", "base64" }, { "base32-lower", "base32" },
		{ "hex-upper", "hex" }, { "reversed", "reverse" },
		{ "reversed-bytes", "reverse" },
		{ "html-entities", "html-unescape" },
		{ "html", "html-unescape" }, { "json+base64", "base64" },
		{ "json+base64url", "base64" }, { "z85", "base85" },
		{ "mime-word", "base64" }, { "utf16le", "utf16" },
		{ "utf16be", "utf16" } };
	static const struct {
		const char *from, *to; /* to no longer than from */
	} same_as[] = { { "grouprev2>hex", "hex>reverse" },
		{ "grouprev4>hex", "hex>grouprev2" },
		{ "grouprev6>hex", "hex>grouprev3" },
		{ "grouprev8>hex", "hex>grouprev4" },
		{ "base64>grouprev3", "grouprev4>base64" } };
	char part[64];
	const char *p = form, *e;
	size_t o = 0, l, k;

	out[0] = '\0';
	while (*p != '\0') {
		e = strchr(p, '>');
		l = e ? (size_t)(e - p) : strlen(p);
		if (l >= sizeof(part))
			l = sizeof(part) - 1;
		memcpy(part, p, l);
		part[l] = '\0';
		part[strcspn(part, "@+")] = '\0';
		if (strncmp(part, "grouprev", 8) == 0 && strchr(part, '-'))
			*strchr(part, '-') = '\0'; /* grouprevK-sep */
		for (k = 0; k < sizeof(alias) / sizeof(alias[0]); k++)
			if (strcmp(part, alias[k].from) == 0)
				snprintf(part, sizeof(part), "%s", alias[k].to);
		if (strcmp(part, "raw") != 0 && strncmp(part, "json", 4) != 0 &&
		    o < size)
			o += (size_t)snprintf(out + o, size - o, "%s%s",
			    o ? ">" : "", part);
		p = e ? e + 1 : p + strlen(p);
	}
	/* a number's bytes reversed is the number read the other way */
	while ((e = strstr(out, "dec-le>reverse")) != NULL)
		memmove((char *)(uintptr_t)e + 3, e + 14, strlen(e + 14) + 1);
	while ((e = strstr(out, "dec>reverse")) != NULL)
		memmove((char *)(uintptr_t)e + 6, e + 11, strlen(e + 11) + 1),
		    memcpy((char *)(uintptr_t)e, "dec-le", 6);
	/*
	 * grouprev of 2J hex digits is hex of grouprevJ (the scanner decodes
	 * first); base64 of grouprev3 is grouprev4 of base64 (both true)
	 */
	for (k = 0; k < sizeof(same_as) / sizeof(same_as[0]); k++)
		while ((e = strstr(out, same_as[k].from)) != NULL) {
			size_t fl = strlen(same_as[k].from),
			       tl = strlen(same_as[k].to);

			memmove((char *)(uintptr_t)e + tl, e + fl,
			    strlen(e + fl) + 1);
			memcpy((char *)(uintptr_t)e, same_as[k].to, tl);
		}
}

/* Transforms of characters that commute with one another. */
static int
charwise(const char *t)
{
	return strncmp(t, "rot", 3) == 0 || strcmp(t, "reverse") == 0 ||
	    strcmp(t, "unicode-fold") == 0 ||
	    strcmp(t, "quoted-printable") == 0 ||
	    strcmp(t, "html-unescape") == 0;
}

static size_t
split(char *s, char *v[], size_t max)
{
	size_t n = 0;
	char *p = s, *e;

	while (*p != '\0' && n < max) {
		v[n++] = p;
		if ((e = strchr(p, '>')) == NULL)
			break;
		*e = '\0';
		p = e + 1;
	}
	return n;
}

/*
 * The same chain: equal, or equal after swapping neighbours that commute
 * (rot7 of reversed text is reversed rot7 text).
 */
static int
same_chain(const char *got, const char *want)
{
	char g[256], w[256], *gv[16], *wv[16], *t;
	size_t ng, nw, i;

	if (strcmp(got, want) == 0)
		return 1;
	snprintf(g, sizeof(g), "%s", got);
	snprintf(w, sizeof(w), "%s", want);
	ng = split(g, gv, 16);
	nw = split(w, wv, 16);
	if (ng != nw)
		return 0;
	for (i = 0; i < ng; i++) {
		if (strcmp(gv[i], wv[i]) == 0)
			continue;
		if (i + 1 < ng && charwise(gv[i]) && charwise(gv[i + 1]) &&
		    strcmp(gv[i], wv[i + 1]) == 0 &&
		    strcmp(gv[i + 1], wv[i]) == 0) {
			t = gv[i];
			gv[i] = gv[i + 1];
			gv[i + 1] = t;
			continue;
		}
		return 0;
	}
	return 1;
}

/*
 * Quoted-printable whose soft breaks fell outside the secret's part:
 * the chain without its outer quoted-printable steps.
 */
static int
qp_outside(const char *got, const char *want)
{
	static const char qp[] = "quoted-printable>";

	while (strncmp(want, qp, sizeof(qp) - 1) == 0) {
		want += sizeof(qp) - 1;
		if (same_chain(got, want))
			return 1;
	}
	return 0;
}

/* JSON string escape (what JSON.stringify does). */
static void
json_esc(const struct str *in, struct str *out)
{
	size_t i;
	char t[8];

	for (i = 0; i < in->n; i++) {
		unsigned c = in->p[i];

		if (c == '"' || c == '\\') {
			putc_(out, '\\');
			putc_(out, (int)c);
		} else if (c == '\n')
			puts_(out, "\\n");
		else if (c < 0x20) {
			snprintf(t, sizeof(t), "\\u%04x", c);
			puts_(out, t);
		} else
			putc_(out, (int)c);
	}
}

enum { S_LINE, S_JSON, S_TRANSCRIPT, S_SSE, S_WRAP, S_COUNT };
static const char *const s_name[S_COUNT] = { "a line", "a JSON string",
	"a transcript line", "SSE deltas", "wrapped" };

/*
 * The surroundings: texts[0] the channel's bytes, texts[1] what
 * evidence.lua also scans (decoded JSON values, joined deltas), or empty.
 */
static void
surround(int s, const struct str *payload, struct str *t0, struct str *t1,
    int qp)
{
	static const char *const words[] = { "the", "config", "value", "is",
		"export", "token", "ok", "{", "}", "done", "path=/tmp/x",
		"id:", "42" };
	struct str esc = { 0 }, inner = { 0 };
	size_t i, cut, w;

	t0->n = t1->n = 0;
	put(t0, "", 0);
	put(t1, "", 0);
	for (i = pick(6); i > 0; i--) {
		puts_(&inner, words[pick(13)]);
		puts_(&inner, " ");
	}
	switch (s) {
	case S_LINE:
		put(t0, inner.p, inner.n);
		/* (a quoted-printable text has its '=' as "=3D") */
		puts_(t0, qp || pick(2) ? "\nAPI_KEY: " : "\nAPI_KEY=");
		put(t0, payload->p, payload->n);
		puts_(t0, "\nOTHER=1\n");
		break;
	case S_WRAP:
		w = 16 + pick(80);
		puts_(t0, "-----BEGIN DATA-----\n");
		for (i = 0; i < payload->n; i += w) {
			put(t0, payload->p + i,
			    payload->n - i < w ? payload->n - i : w);
			putc_(t0, '\n');
		}
		puts_(t0, "-----END DATA-----\n");
		break;
	case S_JSON:
	case S_TRANSCRIPT:
		json_esc(payload, &esc);
		if (s == S_JSON)
			puts_(t0, "{\"type\":\"tool_result\",\"content\":\"");
		else
			puts_(t0,
			    "{\"type\":\"user\",\"message\":{\"role\":"
			    "\"user\",\"content\":[{\"tool_use_id\":"
			    "\"toolu_01\",\"type\":\"tool_result\","
			    "\"content\":\"");
		put(t0, esc.p, esc.n);
		puts_(t0, s == S_JSON ? "\"}\n" : "\"}]}}\n");
		/* the decoded values, joined by NUL as evidence.lua does */
		puts_(t1, s == S_JSON ? "tool_result" : "user");
		putc_(t1, 0);
		put(t1, payload->p, payload->n);
		putc_(t1, 0);
		puts_(t1, s == S_JSON ? "" : "toolu_01");
		break;
	case S_SSE:
		cut = payload->n > 1 ? 1 + pick((unsigned)payload->n - 1) : 0;
		for (i = 0; i < 2; i++) {
			struct str part = { 0 };

			put(&part, payload->p + (i ? cut : 0),
			    i ? payload->n - cut : cut);
			esc.n = 0;
			json_esc(&part, &esc);
			puts_(t0,
			    "event: content_block_delta\ndata: "
			    "{\"type\":\"content_block_delta\",\"index\":0,"
			    "\"delta\":{\"type\":\"text_delta\",\"text\":\"");
			put(t0, esc.p, esc.n);
			puts_(t0, "\"}}\n\n");
			free(part.p);
		}
		/* the answer: deltas joined */
		put(t1, inner.p, inner.n);
		put(t1, payload->p, payload->n);
		puts_(t1, "\n");
		break;
	default:
		break;
	}
	free(esc.p);
	free(inner.p);
}

/* ---- the properties ---- */

static struct {
	unsigned gen, found, named;
} by_xf[NXF], by_len[MAXCHAIN + 1], by_s[S_COUNT];

static int verbose;
static const char *dump; /* CHAIN_DUMP */
static FILE *dump_cases;

/* CHAIN_DUMP: one case's bytes and its line in DIR/cases. */
static void
dump_case(uint64_t seed, int found, const struct str *secret,
    const struct chain *c, const struct str *t0, const struct str *t1)
{
	char path[4096];
	const struct str *t[2] = { t0, t1 };
	FILE *f;
	size_t i;

	for (i = 0; i < 2; i++) {
		if (t[i]->n == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%llu.%zu", dump,
		    (unsigned long long)seed, i);
		if ((f = fopen(path, "wb")) == NULL ||
		    fwrite(t[i]->p, 1, t[i]->n, f) != t[i]->n ||
		    fclose(f) != 0) {
			perror(path);
			exit(2);
		}
	}
	fprintf(dump_cases, "%llu %d ", (unsigned long long)seed, found);
	for (i = 0; i < secret->n; i++)
		fprintf(dump_cases, "%02x", secret->p[i]);
	fputc(' ', dump_cases);
	for (i = 0; i < c->n; i++)
		fprintf(dump_cases, "%s|", xfs[c->t[i]].label);
	fprintf(dump_cases, "chain of %zu\n", c->n);
}

static int
scan_both(struct scan *sc, const struct str *t0, const struct str *t1,
    struct scan_result *r)
{
	memset(r, 0, sizeof(*r));
	if (scan_buffer(sc, t0->p, t0->n, r) != 0)
		return -1;
	if (t1->n > 0 && scan_buffer(sc, t1->p, t1->n, r) != 0)
		return -1;
	return 0;
}

/* Property 1 for one seed: 1 found with its chain, 0 not. */
static int
leak_case(uint64_t seed, int *found_any, char *why, size_t whylen)
{
	struct str secret = { 0 }, payload = { 0 }, t0 = { 0 }, t1 = { 0 };
	struct scan_secret v;
	struct scan *sc;
	struct scan_result r;
	struct chain c;
	char want[256], all[256], inner[256], got[256], err[128];
	size_t i, k;
	int s, named = 0, verbatim;

	rng = seed ^ (groups ? 0x67726f7570u : 0);
	memset(&c, 0, sizeof(c));
	canary(&secret);
	draw_chain(&c, 1 + pick(MAXCHAIN), secret.n);
	apply(&c, &secret, &payload);
	s = (int)pick(S_COUNT);
	/* base64 as its tools wrap it, long enough to be a run (48) */
	if (s == S_WRAP &&
	    (strcmp(xfs[c.t[c.n - 1]].name, "base64") != 0 || payload.n < 64))
		s = S_LINE;
	if (kind_of(&payload) == T_BIN && s != S_LINE)
		s = S_LINE;
	surround(s, &payload, &t0, &t1, xfs[c.t[c.n - 1]].fn == e_qp);
	/*
	 * The chain's name: without the steps that left their input as it
	 * was (rot5 of digits, a compressor storing a short input), or with
	 * them (brotli has no magic: its stored block is found decoded);
	 * "raw" when the secret itself is in the payload.
	 */
	c.inner = c.n;
	chain_name(&c, all, sizeof(all), 1);
	norm_form(all, got, sizeof(got));
	snprintf(all, sizeof(all), "%s", got);
	chain_name(&c, want, sizeof(want), 0);
	norm_form(want, got, sizeof(got));
	snprintf(want, sizeof(want), "%s", got);
	/* the innermost steps whose output is in the payload as it is */
	for (k = 0, verbatim = -1; k < c.n && verbatim < 0; k++)
		if (memmem(payload.p, payload.n, c.mid[k].p, c.mid[k].n))
			verbatim = (int)k;
	c.inner = verbatim > 0 ? (size_t)verbatim : 0;
	chain_name(&c, inner, sizeof(inner), 0);
	norm_form(inner, got, sizeof(got));
	snprintf(inner, sizeof(inner), "%s", got);
	v.bytes = secret.p;
	v.len = secret.n;
	if (scan_compile(&sc, &v, 1, 0, 0, err, sizeof(err)) != 0)
		abort();
	if (scan_both(sc, &t0, &t1, &r) != 0)
		abort();
	*found_any = r.n > 0;
	for (i = 0; i < r.n && !named; i++) {
		norm_form(r.v[i].form, got, sizeof(got));
		named = same_chain(got, want) || same_chain(got, all) ||
		    (verbatim >= 0 && same_chain(got, inner)) ||
		    qp_outside(got, want);
	}
	snprintf(why, whylen, "chain %s in %s: %zu findings%s%s", want,
	    s_name[s], r.n, r.n ? ", first " : "", r.n ? r.v[0].form : "");
	if (verbose) {
		printf("# secret %.*s\n# payload %zu bytes: %.*s\n",
		    (int)secret.n, secret.p, payload.n,
		    (int)(payload.n < 300 ? payload.n : 300), payload.p);
		for (i = 0; i < r.n; i++)
			printf("#   finding: %s at %zu+%zu\n", r.v[i].form,
			    r.v[i].offset, r.v[i].length);
	}
	for (i = 0; i < c.n; i++) {
		by_xf[c.t[i]].gen++;
		by_xf[c.t[i]].found += r.n > 0;
		by_xf[c.t[i]].named += (unsigned)named;
	}
	if (dump_cases != NULL)
		dump_case(seed, r.n > 0, &secret, &c, &t0, &t1);
	by_len[c.n].gen++;
	by_len[c.n].found += r.n > 0;
	by_len[c.n].named += (unsigned)named;
	by_s[s].gen++;
	by_s[s].found += r.n > 0;
	by_s[s].named += (unsigned)named;
	for (k = 0; k <= MAXCHAIN; k++)
		free(c.mid[k].p);
	scan_result_free(&r);
	scan_free(sc);
	free(secret.p);
	free(payload.p);
	free(t0.p);
	free(t1.p);
	return named;
}

/*
 * Does a step's output of the near miss (c, applied) hold the secret, or
 * the output of the same steps over the secret up to that step?
 */
static int
holds_secret(const struct chain *c, const struct str *secret)
{
	struct chain cs;
	struct str out = { 0 };
	size_t i, j, k;
	int held = 0;

	memset(&cs, 0, sizeof(cs));
	cs.n = c->n;
	for (k = 0; k < c->n; k++) {
		cs.t[k] = c->t[k];
		cs.arg[k] = c->arg[k];
	}
	apply(&cs, secret, &out);
	for (i = 1; i <= c->n && !held; i++)
		for (j = 0; j <= i && !held; j++)
			held = cs.mid[j].n > 0 &&
			    memmem(c->mid[i].p, c->mid[i].n, cs.mid[j].p,
				cs.mid[j].n) != NULL;
	for (k = 0; k <= MAXCHAIN; k++)
		free(cs.mid[k].p);
	free(out.p);
	return held;
}

/* miss_case() with the secret itself: its control, which must fail. */
static int control;

/* Property 2 for one seed: 1 when nothing is found. */
static int
miss_case(uint64_t seed, char *why, size_t whylen)
{
	static const char *const kinds[] = { "one byte changed", "a prefix",
		"a suffix", "masked", "its SHA-256", "another canary",
		"the secret itself" };
	struct str secret = { 0 }, near = { 0 }, payload = { 0 }, t0 = { 0 },
		   t1 = { 0 };
	struct scan_secret v;
	struct scan *sc;
	struct scan_result r;
	struct chain c;
	char want[256], err[128];
	unsigned k, i, j, md_len;
	unsigned char md[EVP_MAX_MD_SIZE];
	int s, clean;

	rng = seed ^ 0x5eed5eed5eedu ^ (groups ? 0x67726f7570u : 0);
	memset(&c, 0, sizeof(c));
	canary(&secret);
again:
	near.n = 0;
	k = control ? 6 : pick(6);
	switch (k) {
	case 6: /* the control: the secret itself */
		put(&near, secret.p, secret.n);
		break;
	case 0:
		put(&near, secret.p, secret.n);
		i = pick((unsigned)secret.n);
		near.p[i] = near.p[i] == 'a' ? 'b' : 'a';
		break;
	/*
	 * A prefix or suffix 3 to 6 bytes short: text beside a radix's
	 * partial group reads as the missing bytes 1 time in 256 each (seed
	 * 85630: "_KEY=" before Ascii85 of a suffix one byte short decoded
	 * to ... and that byte, which holds the whole secret).
	 */
	case 1:
		put(&near, secret.p, secret.n - 3 - pick(4));
		break;
	case 2:
		i = 3 + pick(4);
		put(&near, secret.p + i, secret.n - i);
		break;
	case 3:
		put(&near, secret.p, 4);
		for (i = 4; i + 4 < secret.n; i++)
			putc_(&near, '*');
		put(&near, secret.p + secret.n - 4, 4);
		break;
	case 4:
		EVP_Digest(secret.p, secret.n, md, &md_len, EVP_sha256(), NULL);
		{
			struct str h = { 0 };

			put(&h, md, md_len);
			e_hex(&h, &near, 0);
			free(h.p);
		}
		break;
	default:
		canary(&near);
		break;
	}
	draw_chain(&c, 1 + pick(MAXCHAIN), near.n);
	apply(&c, &near, &payload);
	/*
	 * A near miss whose bytes hold the secret after all is not one: an
	 * lz4 frame stores a short input as it is and ends in zeros, so
	 * XOR of a prefix with the key the last byte XORs to 0 is, with the
	 * frame's end mark, XOR of the whole secret. Each step's output of
	 * the secret (and the secret) is looked for in each later output of
	 * the near miss; where one is, another near miss is drawn.
	 */
	if (!control && holds_secret(&c, &secret)) {
		for (j = 0; j <= MAXCHAIN; j++)
			free(c.mid[j].p);
		memset(&c, 0, sizeof(c));
		goto again;
	}
	s = (int)pick(S_COUNT);
	if (s == S_WRAP || (kind_of(&payload) == T_BIN && s != S_LINE))
		s = S_LINE;
	surround(s, &payload, &t0, &t1, xfs[c.t[c.n - 1]].fn == e_qp);
	c.inner = c.n;
	chain_name(&c, want, sizeof(want), 1);
	for (j = 0; j <= MAXCHAIN; j++)
		free(c.mid[j].p);
	v.bytes = secret.p;
	v.len = secret.n;
	if (scan_compile(&sc, &v, 1, 0, 0, err, sizeof(err)) != 0)
		abort();
	if (scan_both(sc, &t0, &t1, &r) != 0)
		abort();
	clean = r.n == 0;
	snprintf(why, whylen, "%s through %s in %s: %zu findings%s%s", kinds[k],
	    want, s_name[s], r.n, r.n ? ", first " : "",
	    r.n ? r.v[0].form : "");
	scan_result_free(&r);
	scan_free(sc);
	free(secret.p);
	free(near.p);
	free(payload.p);
	free(t0.p);
	free(t1.p);
	return clean;
}

static void
table(unsigned cases)
{
	size_t i;

	printf("recall of generated chains%s (%u cases, seeds 1..%u):\n",
	    groups ? " with a group step" : "", cases, cases);
	printf("  %-20s %9s %9s\n", "transform in chain", "found", "named");
	for (i = 0; i < NXF; i++)
		if (by_xf[i].gen > 0)
			printf("  %-20s %4u/%-4u %4u/%-4u\n", xfs[i].label,
			    by_xf[i].found, by_xf[i].gen, by_xf[i].named,
			    by_xf[i].gen);
	for (i = 1; i <= MAXCHAIN; i++)
		printf("  chain of %zu          %4u/%-4u %4u/%-4u\n", i,
		    by_len[i].found, by_len[i].gen, by_len[i].named,
		    by_len[i].gen);
	for (i = 0; i < S_COUNT; i++)
		printf("  in %-17s %4u/%-4u %4u/%-4u\n", s_name[i],
		    by_s[i].found, by_s[i].gen, by_s[i].named, by_s[i].gen);
}

/* Seeds that failed once, run by every make test. */
static const struct {
	unsigned seed;
	const char *what;
} regress[] = {
	{ 1532,
	    "base64 wrapped after a line of its own: decoded from its "
	    "first line, not from the line a window was found in" },
	{ 1278, "quoted-printable under rot47: its soft break reads l\\n" },
	{ 406, "quoted-printable of base85 under rot47" },
	{ 819, "look-alikes of entities: both decoders read the line" },
	{ 246, "Crockford base32 of look-alikes of entities" },
	{ 230, "XOR of look-alikes: the key that makes them UTF-8" },
};

/*
 * Properties 1 and 2 over seeds 1..cases: counts the chains lost (no
 * finding), unnamed (found under another name) and the near misses with
 * a finding (dirty); prints the first 20 of each (all when list).
 */
static void
run_cases(unsigned cases, int tab, int list, unsigned *lost, unsigned *unnamed,
    unsigned *dirty)
{
	unsigned i, shown = 0, nearmiss = 0;
	char why[512];
	int any;

	*lost = *unnamed = *dirty = 0;
	for (i = 1; i <= cases; i++) {
		if (!leak_case(i, &any, why, sizeof(why))) {
			*lost += !any;
			*unnamed += any;
			if ((!tab && shown++ < 20) || (tab && list))
				printf("# %sseed %u: %s\n",
				    groups ? "groups, " : "", i, why);
		}
		if (!miss_case(i, why, sizeof(why))) {
			(*dirty)++;
			if ((!tab && nearmiss++ < 20) || (tab && list))
				printf("# %snear miss, seed %u: %s\n",
				    groups ? "groups, " : "", i, why);
		}
	}
}

int
main(void)
{
	const char *e = getenv("CHAIN_CASES"), *one = getenv("CHAIN_SEED");
	const char *eg = getenv("CHAIN_GROUP_CASES");
	unsigned cases = e ? (unsigned)strtoul(e, NULL, 10) : 1500, i;
	unsigned gcases = eg ? (unsigned)strtoul(eg, NULL, 10) : cases / 3;
	unsigned lost = 0, unnamed = 0, dirty = 0;
	int any, tab = getenv("CHAIN_TABLE") != NULL;
	int list = getenv("CHAIN_MISSES") != NULL;
	char why[512];

	strict = !tab;
	if (tab && (dump = getenv("CHAIN_DUMP")) != NULL) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/cases", dump);
		if ((dump_cases = fopen(path, "w")) == NULL) {
			perror(path);
			return 2;
		}
	}
	if (xfs[NXF_BASE - 1].fn != e_pack || xfs[NXF_BASE].fn != e_group)
		abort(); /* the group steps come last */
	if (one != NULL) {
		uint64_t seed = strtoull(one, NULL, 10);

		groups = getenv("CHAIN_GROUPS") != NULL; /* property 3's */
		verbose = 1;
		ok(leak_case(seed, &any, why, sizeof(why)), "seed %llu: %s",
		    (unsigned long long)seed, why);
		ok(miss_case(seed, why, sizeof(why)),
		    "near miss, seed %llu: %s", (unsigned long long)seed, why);
		return tap_done();
	}
	run_cases(cases, tab, list, &lost, &unnamed, &dirty);
	if (tab) {
		table(cases);
		printf("near misses with a finding: %u/%u\n", dirty, cases);
		/*
		 * property 3's own table; CHAIN_DUMP keeps property 1's
		 * cases alone (bench_scan hands them to git-secrets)
		 */
		if (dump_cases != NULL && fclose(dump_cases) != 0) {
			perror(dump);
			return 2;
		}
		dump_cases = NULL;
		memset(by_xf, 0, sizeof(by_xf));
		memset(by_len, 0, sizeof(by_len));
		memset(by_s, 0, sizeof(by_s));
		groups = 1;
		run_cases(gcases, tab, list, &lost, &unnamed, &dirty);
		table(gcases);
		printf("near misses with a finding: %u/%u\n", dirty, gcases);
		return 0;
	}
	/* generated cases that failed before their fix, whatever CASES */
	for (i = 0; i < sizeof(regress) / sizeof(regress[0]); i++)
		ok(leak_case(regress[i].seed, &any, why, sizeof(why)),
		    "seed %u (%s): %s", regress[i].seed, regress[i].what, why);
	/*
	 * A handful of chains in a thousand are known misses (README,
	 * "Recall"): their seeds are printed above; more fails.
	 */
	ok((lost + unnamed) * 1000 <= cases * 3,
	    "%u generated chains of 1 to %d transforms: found with their "
	    "chain but %u (%u not found, %u under another name; at most 3 "
	    "in 1000)",
	    cases, MAXCHAIN, lost + unnamed, lost, unnamed);
	ok(dirty == 0,
	    "%u near misses through generated chains: nothing found (%u "
	    "found)",
	    cases, dirty);
	/* the control: the same cases with the secret itself are found */
	control = 1;
	for (i = 1, dirty = 0; i <= 100; i++)
		dirty += !miss_case(i, why, sizeof(why));
	control = 0;
	ok(dirty >= 95,
	    "control: the near-miss cases of seeds 1 to 100 built with the "
	    "secret itself find it (%u of 100)",
	    dirty);
	/*
	 * Property 3: chains holding one group step (grouprev, byteswap,
	 * spaced grouprev), found with their chain, and their near misses
	 * not; seeds of their own
	 */
	groups = 1;
	run_cases(gcases, tab, list, &lost, &unnamed, &dirty);
	ok((lost + unnamed) * 1000 <= gcases * 3,
	    "%u generated chains with a group step: found with their chain "
	    "but %u (%u not found, %u under another name; at most 3 in 1000)",
	    gcases, lost + unnamed, lost, unnamed);
	ok(dirty == 0,
	    "%u near misses through chains with a group step: nothing found "
	    "(%u found)",
	    gcases, dirty);
	return tap_done();
}
