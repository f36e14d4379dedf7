/*
 * The leak scanner (see scan.h for the contract).
 *
 * Compiling: every secret is expanded into literal patterns, one per
 * encoded form; identical bytes for the same secret are kept once, under
 * the first form that produced them (raw first, so an ASCII canary whose
 * JSON escape is itself is reported as "raw"). Radix forms (base64, base32)
 * keep only the characters fully determined by the secret at a given byte
 * alignment; the bits the secret puts into the partial characters at both
 * ends are kept aside and checked on every match.
 *
 * Matching ("mlit"): every pattern is at least 4 bytes. Let W be the
 * shortest pattern length capped at 18 and S = W - 3. Each 4-byte gram at
 * pattern offsets 0..S-1 is entered into a bitmap (hash of the gram) and an
 * exact table (gram -> list of pattern, offset). The data is sampled every
 * S bytes: any occurrence of a pattern covers exactly one sample position
 * whose gram lies within the pattern's first W bytes, so each occurrence
 * is verified exactly once. The bitmap keeps the loop at a few
 * instructions per sample; the exact table and a memcmp decide.
 *
 * Line-wrapped encodings: a second pass looks for line breaks ("\n",
 * "\r\n", or the JSON-escaped two-character forms) with at least 16
 * base64/hex characters before them and another after. The whole run is
 * copied with its breaks (and JSON "\/" escapes) removed, scanned again,
 * and matches are mapped back to offsets in the original buffer. A match
 * also found by the first pass is reported once, from the first pass.
 * Both passes go block by block (4096 samples), so the second reads what
 * the first just brought into the cache.
 *
 * Files are read in chunks into one buffer (scan_fd): mapping a large
 * file costs a TLB miss per page, more than the scan itself.
 */
#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <openssl/evp.h>

#include "scan.h"
#include "scan_int.h"

const char *const scan_forms[] = { "raw",
	"json (dialects: -slash -unicode -html -apos -ctrlu -upper)",
	"json2 (a JSON escape inside a JSON string)",
	"unicode-escape (every character as \\uXXXX)", "base64@0..2",
	"base64url@0..2", "base32@0..4", "base32-lower@0..4",
	"uuencode@0..2 (zero as '`' or ' ')", "ascii85@0..3",
	"base85@0..3 (RFC 1924, Python b85encode, git)", "z85@0..3",
	"base32hex@0..4", "base32-crockford@0..4", "zbase32@0..4",
	"base58, base62, base36, dec, dec-le (the secret alone as one number)",
	"bits (8 per byte)", "octal (3 digits per byte)", "dec-list",
	"octal-list", "octal-sep", "octal-escape", "unicode-escape-bytes",
	"python-bytes", "sep (a separator between every character)",
	"case-upper", "case-lower", "case-upper-lossy", "case-lower-lossy",
	"hex", "hex-upper", "hex-sep", "hex-escape", "hex-0x", "percent",
	"percent-lower", "percent-js", "percent-uri", "percent-plus",
	"percent-form", "percent-all", "percent-all-lower", "html",
	"html-entities (every character as &#N; or &#xH;)", "quoted-printable",
	"rot13", "reversed", "reversed-bytes",
	"grouprev2..8-sep (the secret's groups of 2 to 8 in reverse order, "
	"joined by blanks or line breaks: fold -wK | tac)",
	"utf16le", "utf16be", "json+base64@0..2", "json+base64url@0..2",
	"json+hex (JSON-escaped, then encoded)",
	"FORM+json... (an encoded form, then JSON-escaped)",
	"FORM+wrapped (base64/base32/hex split by line breaks)",
	"dump-hex>FORM (od -x -tx1..8, xxd [-e], hexdump [-C]: any grouping, "
	"offsets, gutters, * lines)",
	"dump-hex-le>FORM (2/4/8-byte words, little-endian)",
	"dump-octal>FORM (od -b)", "dump-decimal>FORM (od -tu1, -td1)",
	"dump-char>FORM (od -c)",
	"byte-list>FORM, byte-list-octal>FORM (arrays wrapped over lines: "
	"xxd -i, pprint, JSON)",
	"uuencode>FORM (begin ... end blocks)",
	"ascii85>FORM, base85>FORM, base85-git>FORM, z85>FORM (wrapped)",
	"gzip>FORM", "zlib>FORM", "deflate>FORM (raw, in zip and runs)",
	"bzip2>FORM", "xz>FORM", "zip>FORM",
	"tar (members are stored whole: found as FORM, or inside gzip>...)",
	"base64>FORM, hex>FORM (long runs holding a magic, text or deflate)",
	"split (pieces of 8+ bytes, raw or in base64/hex runs, across a "
	"channel's segments)",
	"dns>FORM (labels of the names looked up)",
	"zstd>FORM, lz4>FORM (frames), brotli>FORM (in a radix token)",
	"TRANSFORM>FORM, composed to the depth budget (scan_xform.c):",
	"base64, base32, base32hex, base32-crockford, zbase32, hex, base58, "
	"base62, base36, dec, dec-le, bits, octal, ascii85, base85, z85, "
	"base91 (tokens of a run, any prefix)",
	"rot1..rot25, rot47, reverse (over a literal form, through triggers; "
	"over any other text where undoing them gives text a decoder reads)",
	"grouprev2..8, byteswap2..8 (groups of 2 to 8 bytes in reverse "
	"order, or each reversed in place: over the secret, or base64 in "
	"groups of 4, through triggers)",
	"xor (one byte, over a literal form, below the top level)",
	"utf16le, utf16be, utf32le, utf32be (with or without a BOM)",
	"unicode-fold (fullwidth, mathematical, circled folded; zero-width, "
	"bidi, soft hyphen, tag characters removed), unicode-tags",
	"html-unescape (named and numeric entities, mixed with text), "
	"mime-word (=?charset?B|Q?...?=), quoted-printable (soft breaks "
	"anywhere)",
	NULL };

/* ---------------------------------------------------------------- */
/* Growable byte buffers; an allocation failure sets oom and sticks. */

struct buf {
	unsigned char *p;
	size_t n, cap;
	int oom;
};

static void
buf_grow(struct buf *b, size_t more)
{
	size_t cap;
	unsigned char *p;

	if (b->oom)
		return;
	if (b->n + more <= b->cap)
		return;
	cap = b->cap ? b->cap : 64;
	while (cap < b->n + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL) {
		b->oom = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void
buf_put(struct buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (b->oom || n == 0)
		return;
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void
buf_putc(struct buf *b, int c)
{
	unsigned char ch = (unsigned char)c;

	buf_put(b, &ch, 1);
}

static void
buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

static void
buf_hex2(struct buf *b, unsigned v, int upper)
{
	const char *d = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	buf_putc(b, d[(v >> 4) & 15]);
	buf_putc(b, d[v & 15]);
}

static void
buf_u4(struct buf *b, unsigned v, int upper)
{
	buf_puts(b, "\\u");
	buf_hex2(b, (v >> 8) & 255, upper);
	buf_hex2(b, v & 255, upper);
}

/*
 * The next UTF-8 sequence of s[i..n): returns its length and sets *cp, or
 * returns 1 and sets *cp to 0x110000 + byte for an invalid byte.
 */
static size_t
utf8_next(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
{
	unsigned c = s[i];
	size_t len, k;
	uint32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		min = 0x10000;
	} else
		goto bad;
	if (i + len > n)
		goto bad;
	for (k = 1; k < len; k++) {
		if ((s[i + k] & 0xc0) != 0x80)
			goto bad;
		v = (v << 6) | (s[i + k] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		goto bad;
	*cp = v;
	return len;
bad:
	*cp = 0x110000 + c;
	return 1;
}

static int
utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	uint32_t cp;

	while (i < n) {
		i += utf8_next(s, n, i, &cp);
		if (cp >= 0x110000)
			return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- */
/* Encoders. Each appends the encoded form of s[0..n) to out. */

#define J_SLASH	  0x01 /* "/" as "\/" */
#define J_UNICODE 0x02 /* non-ASCII as \uXXXX (surrogate pairs) */
#define J_HTML	  0x04 /* < > & U+2028 U+2029 as \uXXXX */
#define J_APOS	  0x08 /* ' as \u0027 (with J_HTML) */
#define J_CTRLU	  0x10 /* every control character as \u00XX */
#define J_UPPER	  0x20 /* upper-case hex digits in \u escapes */
#define J_ALL	  0x40 /* every character as \uXXXX */
#define J_COMBOS  0x40 /* flags below this are combined freely */

static void
enc_json(struct buf *out, const unsigned char *s, size_t n, unsigned fl)
{
	int up = (fl & J_UPPER) != 0;
	size_t i = 0, len;
	uint32_t cp;

	while (i < n) {
		len = utf8_next(s, n, i, &cp);
		if (cp >= 0x110000) {
			buf_putc(out, s[i]); /* not UTF-8: left as it is */
		} else if (fl & J_ALL) {
			if (cp >= 0x10000) {
				buf_u4(out, 0xd800 + ((cp - 0x10000) >> 10),
				    up);
				buf_u4(out, 0xdc00 + ((cp - 0x10000) & 0x3ff),
				    up);
			} else
				buf_u4(out, cp, up);
		} else if (cp == '"') {
			buf_puts(out, "\\\"");
		} else if (cp == '\\') {
			buf_puts(out, "\\\\");
		} else if (cp == '/' && (fl & J_SLASH)) {
			buf_puts(out, "\\/");
		} else if (cp < 0x20) {
			const char *e = NULL;

			if (!(fl & J_CTRLU)) {
				switch (cp) {
				case '\b':
					e = "\\b";
					break;
				case '\f':
					e = "\\f";
					break;
				case '\n':
					e = "\\n";
					break;
				case '\r':
					e = "\\r";
					break;
				case '\t':
					e = "\\t";
					break;
				default:
					break;
				}
			}
			if (e != NULL)
				buf_puts(out, e);
			else
				buf_u4(out, cp, up);
		} else if ((fl & J_HTML) &&
		    (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 ||
			cp == 0x2029)) {
			buf_u4(out, cp, up);
		} else if ((fl & J_HTML) && (fl & J_APOS) && cp == '\'') {
			buf_u4(out, cp, up);
		} else if (cp >= 0x80 && (fl & J_UNICODE)) {
			if (cp >= 0x10000) {
				buf_u4(out, 0xd800 + ((cp - 0x10000) >> 10),
				    up);
				buf_u4(out, 0xdc00 + ((cp - 0x10000) & 0x3ff),
				    up);
			} else
				buf_u4(out, cp, up);
		} else {
			buf_put(out, s + i, len);
		}
		i += len;
	}
}

/*
 * The dialect flags that can change the escape of s[0..n): the others
 * give the same bytes as without them, so their combinations are skipped.
 * Bit 0x80 is set when even the minimal escape changes s.
 */
#define J_CHANGES 0x80

static unsigned
json_relevant(const unsigned char *s, size_t n)
{
	unsigned r = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned c = s[i];

		if (c == '/')
			r |= J_SLASH;
		else if (c >= 0x80)
			r |= J_UNICODE | J_HTML; /* U+2028, U+2029 */
		else if (c == '<' || c == '>' || c == '&')
			r |= J_HTML;
		else if (c == '\'')
			r |= J_APOS;
		else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
		    c == '\t')
			r |= J_CTRLU | J_CHANGES;
		else if (c < 0x20)
			r |= J_UPPER | J_CHANGES;
		else if (c == '"' || c == '\\')
			r |= J_CHANGES;
	}
	if (r & (J_UNICODE | J_HTML | J_CTRLU))
		r |= J_UPPER;
	if (!(r & J_HTML))
		r &= ~(unsigned)J_APOS;
	return r;
}

/* The form name of a JSON dialect: "json-slash-unicode", "unicode-escape". */
static void
json_name(char *name, size_t size, const char *base, unsigned fl)
{
	snprintf(name, size, "%s%s%s%s%s%s%s", base,
	    (fl & J_SLASH) ? "-slash" : "", (fl & J_UNICODE) ? "-unicode" : "",
	    (fl & J_HTML) ? "-html" : "", (fl & J_APOS) ? "-apos" : "",
	    (fl & J_CTRLU) ? "-ctrlu" : "", (fl & J_UPPER) ? "-upper" : "");
}

/* Hex digits, with sep between bytes and pre before each byte. */
static void
enc_hex(struct buf *out, const unsigned char *s, size_t n, int upper,
    const char *pre, const char *sep)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_puts(out, sep);
		buf_puts(out, pre);
		buf_hex2(out, s[i], upper);
	}
}

/*
 * Percent-encoding: letters, digits and the bytes in keep stay (keep NULL:
 * every byte is encoded), space may become '+'.
 */
static void
enc_percent(struct buf *out, const unsigned char *s, size_t n, const char *keep,
    int upper, int plus)
{
	size_t i;
	unsigned c;

	for (i = 0; i < n; i++) {
		c = s[i];
		int alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9');

		if (plus && c == ' ')
			buf_putc(out, '+');
		else if (keep != NULL &&
		    (alnum || (c != 0 && strchr(keep, (int)c) != NULL)))
			buf_putc(out, (int)c);
		else {
			buf_putc(out, '%');
			buf_hex2(out, c, upper);
		}
	}
}

static void
enc_html(struct buf *out, const unsigned char *s, size_t n, const char *apos)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (s[i]) {
		case '&':
			buf_puts(out, "&amp;");
			break;
		case '<':
			buf_puts(out, "&lt;");
			break;
		case '>':
			buf_puts(out, "&gt;");
			break;
		case '"':
			buf_puts(out, "&quot;");
			break;
		case '\'':
			buf_puts(out, apos);
			break;
		default:
			buf_putc(out, s[i]);
			break;
		}
	}
}

/* Every character as &#N; (or &#xH; with hex). s must be valid UTF-8. */
static void
enc_entities(struct buf *out, const unsigned char *s, size_t n, int hex)
{
	size_t i = 0;
	uint32_t cp;
	char t[16];

	while (i < n) {
		i += utf8_next(s, n, i, &cp);
		snprintf(t, sizeof(t), hex ? "&#x%x;" : "&#%u;", (unsigned)cp);
		buf_puts(out, t);
	}
}

static void
enc_qp(struct buf *out, const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '=' || s[i] >= 0x7f ||
		    (s[i] < 0x20 && s[i] != '\t')) {
			buf_putc(out, '=');
			buf_hex2(out, s[i], 1);
		} else
			buf_putc(out, s[i]);
	}
}

static void
enc_rot13(struct buf *out, const unsigned char *s, size_t n)
{
	size_t i;
	unsigned c;

	for (i = 0; i < n; i++) {
		c = s[i];
		if (c >= 'a' && c <= 'z')
			c = 'a' + (c - 'a' + 13) % 26;
		else if (c >= 'A' && c <= 'Z')
			c = 'A' + (c - 'A' + 13) % 26;
		buf_putc(out, (int)c);
	}
}

/* Characters in reverse order (rev(1)); an invalid byte is a character. */
static void
enc_reverse(struct buf *out, const unsigned char *s, size_t n)
{
	size_t i = n, j, len;
	uint32_t cp;

	while (i > 0) {
		j = i - 1;
		while (j > 0 && i - j < 4 && (s[j] & 0xc0) == 0x80)
			j--;
		len = utf8_next(s, n, j, &cp);
		if (j + len != i) { /* not a sequence ending at i */
			j = i - 1;
			len = 1;
		}
		buf_put(out, s + j, len);
		i = j;
	}
}

static void
enc_reverse_bytes(struct buf *out, const unsigned char *s, size_t n)
{
	size_t i;

	for (i = n; i > 0; i--)
		buf_putc(out, s[i - 1]);
}

/*
 * fold -wK | tac | paste -sd SEP: the K-byte groups of s in reverse
 * order (the last one short, so first), joined by sep; fused, the first
 * two with nothing between (tac of a file without its last line break).
 */
static void
enc_grouprev(struct buf *out, const unsigned char *s, size_t n, size_t k,
    int sep, int fused)
{
	size_t e = n, b;

	while (e > 0) {
		b = (e - 1) / k * k;
		buf_put(out, s + b, e - b);
		if (b > 0 && !(fused && e == n))
			buf_putc(out, sep);
		e = b;
	}
}

/* UTF-16; s must be valid UTF-8. */
static void
enc_utf16(struct buf *out, const unsigned char *s, size_t n, int be)
{
	size_t i = 0;
	uint32_t cp, u[2];
	int k, nu;

	while (i < n) {
		i += utf8_next(s, n, i, &cp);
		if (cp >= 0x10000) {
			u[0] = 0xd800 + ((cp - 0x10000) >> 10);
			u[1] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
			nu = 2;
		} else {
			u[0] = cp;
			nu = 1;
		}
		for (k = 0; k < nu; k++) {
			buf_putc(out, (int)(be ? u[k] >> 8 : u[k] & 255));
			buf_putc(out, (int)(be ? u[k] & 255 : u[k] >> 8));
		}
	}
}

/* ---------------------------------------------------------------- */
/* Radix alphabets (base64, base64url, base32). */

enum {
	AL_NONE,
	AL_B64,
	AL_B64URL,
	AL_B32,
	AL_B32L,
	AL_UU,
	AL_UUS,
	AL_B32HEX,
	AL_CROCK,
	AL_ZB32,
	AL_COUNT
};

static const char *const alphabets[AL_COUNT] = {
	NULL,
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "abcdefghijklmnopqrstuvwxyz234567",
	/* uuencode: 32 + value, zero as '`' (GNU) or ' ' (Python b2a_uu) */
	"`!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_",
	" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_",
	"0123456789ABCDEFGHIJKLMNOPQRSTUV", /* RFC 4648 base32hex */
	"0123456789ABCDEFGHJKMNPQRSTVWXYZ", /* Crockford's */
	"ybndrfg8ejkmcpqxot1uwisza345h769", /* z-base-32 */
};

/* The base85 family: 4 bytes big-endian as 5 digits. */
enum { B85_NONE, B85_ASCII, B85_RFC1924, B85_Z85, B85_COUNT };

static const char *const b85_alphabets[B85_COUNT] = {
	NULL,
	"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
	"abcdefghijklmnopqrstu",
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	"!#$%&()*+-;<=>?@^_`{|}~",
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	".-:+=^!/*?&<>()[]{}@%$#",
};

static signed char b85_value[B85_COUNT][256];

/* radix_value[alphabet][byte]: the digit's value, or -1. */
static signed char radix_value[AL_COUNT][256];

/* enc_char[c]: is c a character of a base64, base32 or hex text? */
static unsigned char enc_char[256];

static void
radix_init(void)
{
	static int done;
	int a, i;

	if (done)
		return;
	for (a = 0; a < AL_COUNT; a++) {
		memset(radix_value[a], -1, 256);
		if (alphabets[a] == NULL)
			continue;
		for (i = 0; alphabets[a][i] != '\0'; i++)
			radix_value[a][(unsigned char)alphabets[a][i]] =
			    (signed char)i;
	}
	for (a = 0; a < B85_COUNT; a++) {
		memset(b85_value[a], -1, 256);
		if (b85_alphabets[a] == NULL)
			continue;
		for (i = 0; b85_alphabets[a][i] != '\0'; i++)
			b85_value[a][(unsigned char)b85_alphabets[a][i]] =
			    (signed char)i;
	}
	for (i = 0; i < 256; i++)
		enc_char[i] = radix_value[AL_B64][i] >= 0 || i == '-' ||
		    i == '_' || i == '=';
	done = 1;
}

/* ---------------------------------------------------------------- */
/* The multi-literal matcher. */

typedef int (*mlit_cb)(void *ctx, size_t pat, size_t start);

struct mslot {
	uint32_t gram;
	uint32_t start; /* into ents */
	uint32_t count; /* 0: empty slot */
};

struct ment {
	uint32_t pat;
	uint32_t off;
	uint32_t len;  /* the pattern's length */
	uint32_t tail; /* its last 4 bytes: most candidates fail on them */
};

struct mlit {
	const unsigned char **pat; /* borrowed pattern bytes */
	size_t *plen;
	size_t npat;
	size_t minlen, stride;
	unsigned bbits, sbits;
	uint64_t *bitmap;
	struct mslot *slots;
	struct ment *ents;
	size_t nents;
};

/*
 * W's cap: the stretch of a pattern its grams are taken from, so the
 * stride S = W - 3 (16 at most; samples every 16 bytes cost 13/16 of
 * every 13). Not more: a stride of 17 falls into step with xxd's 68-byte
 * lines and samples the offset column's grams ("0009") on every line,
 * which hex forms of the secrets hold (the random xxd dump: +9%); 16
 * samples every fourth place of a line, the column's among them (+1.4%).
 */
#define MLIT_WMAX 19
#define GRAM_MUL  0x9e3779b1u
#define SLOT_MUL  0x85ebca6bu

static inline uint32_t
load32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void
mlit_free(struct mlit *m)
{
	if (m == NULL)
		return;
	free(m->pat);
	free(m->plen);
	free(m->bitmap);
	free(m->slots);
	free(m->ents);
	free(m);
}

struct gram_ent {
	uint32_t gram, pat, off;
};

static int
gram_cmp(const void *a, const void *b)
{
	const struct gram_ent *x = a, *y = b;

	if (x->gram != y->gram)
		return x->gram < y->gram ? -1 : 1;
	if (x->pat != y->pat)
		return x->pat < y->pat ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/*
 * Sorts g by gram, then pattern, then offset: g is in (pattern, offset)
 * order, so a stable sort by gram gives it (least significant byte
 * first, 4 passes). Out of memory for the radix sort: qsort, the same
 * order.
 */
static void
gram_sort(struct gram_ent *g, size_t ng)
{
	struct gram_ent *t = malloc(ng * sizeof(*t)), *tmp;
	unsigned sh;
	size_t i;

	if (t == NULL) {
		qsort(g, ng, sizeof(*g), gram_cmp);
		return;
	}
	for (sh = 0; sh < 32; sh += 8) {
		size_t cnt[257] = { 0 };

		for (i = 0; i < ng; i++)
			cnt[((g[i].gram >> sh) & 255) + 1]++;
		for (i = 1; i < 257; i++)
			cnt[i] += cnt[i - 1];
		for (i = 0; i < ng; i++)
			t[cnt[(g[i].gram >> sh) & 255]++] = g[i];
		tmp = g;
		g = t;
		t = tmp;
	}
	/* 4 passes: the sorted entries are back in the caller's array */
	free(t);
}

/*
 * M's index over its NG grams G, sorted by gram: the bitmap that rejects
 * most positions at once, and the slots (open addressing) that hold each
 * distinct gram's run of entries, each entry with its pattern's length
 * and last 4 bytes. 0, or -1 when out of memory.
 */
static int
mlit_index(struct mlit *m, const struct gram_ent *g, size_t ng,
    const unsigned char *const *pat, const size_t *plen)
{
	size_t i, j, nuniq;
	uint32_t h;

	nuniq = 0;
	for (i = 0; i < ng; i++)
		if (i == 0 || g[i].gram != g[i - 1].gram)
			nuniq++;

	for (m->bbits = 12;
	     m->bbits < 23 && ((size_t)1 << m->bbits) < 64 * nuniq; m->bbits++)
		;
	for (m->sbits = 4; ((size_t)1 << m->sbits) < 2 * nuniq; m->sbits++)
		;
	m->bitmap = calloc(((size_t)1 << m->bbits) / 64, sizeof(uint64_t));
	m->slots = calloc((size_t)1 << m->sbits, sizeof(*m->slots));
	m->ents = malloc(ng * sizeof(*m->ents));
	if (m->bitmap == NULL || m->slots == NULL || m->ents == NULL)
		return -1;
	m->nents = ng;
	for (i = 0; i < ng; i++) {
		m->ents[i].pat = g[i].pat;
		m->ents[i].off = g[i].off;
		m->ents[i].len = (uint32_t)plen[g[i].pat];
		m->ents[i].tail = load32(pat[g[i].pat] + plen[g[i].pat] - 4);
		if (i > 0 && g[i].gram == g[i - 1].gram)
			continue;
		h = (g[i].gram * GRAM_MUL) >> (32 - m->bbits);
		m->bitmap[h >> 6] |= (uint64_t)1 << (h & 63);
		h = (g[i].gram * SLOT_MUL) >> (32 - m->sbits);
		while (m->slots[h].count != 0)
			h = (h + 1) & (((uint32_t)1 << m->sbits) - 1);
		m->slots[h].gram = g[i].gram;
		m->slots[h].start = (uint32_t)i;
		for (j = i; j < ng && g[j].gram == g[i].gram; j++)
			;
		m->slots[h].count = (uint32_t)(j - i);
	}
	return 0;
}

/*
 * Builds a matcher over npat patterns, each at least 4 bytes; the arrays
 * are copied, the bytes are borrowed and must outlive it. NULL when out of
 * memory or when a pattern is shorter than 4 bytes.
 */
static struct mlit *
mlit_new(const unsigned char *const *pat, const size_t *plen, size_t npat)
{
	struct mlit *m;
	struct gram_ent *g = NULL;
	size_t i, j, ng = 0, w;

	if (npat == 0 || npat > UINT32_MAX / 16)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->npat = npat;
	m->pat = malloc(npat * sizeof(*m->pat));
	m->plen = malloc(npat * sizeof(*m->plen));
	if (m->pat == NULL || m->plen == NULL)
		goto fail;
	m->minlen = SIZE_MAX;
	for (i = 0; i < npat; i++) {
		m->pat[i] = pat[i];
		m->plen[i] = plen[i];
		if (plen[i] < 4 || plen[i] > UINT32_MAX)
			goto fail;
		if (plen[i] < m->minlen)
			m->minlen = plen[i];
	}
	w = m->minlen < MLIT_WMAX ? m->minlen : MLIT_WMAX;
	m->stride = w - 3;

	g = malloc(npat * m->stride * sizeof(*g));
	if (g == NULL)
		goto fail;
	for (i = 0; i < npat; i++)
		for (j = 0; j < m->stride; j++) {
			g[ng].gram = load32(pat[i] + j);
			g[ng].pat = (uint32_t)i;
			g[ng].off = (uint32_t)j;
			ng++;
		}
	gram_sort(g, ng);
	if (mlit_index(m, g, ng, pat, plen) != 0)
		goto fail;
	free(g);
	return m;
fail:
	free(g);
	mlit_free(m);
	return NULL;
}

/* Checks the candidates of the gram at sample position i. */
static int
mlit_verify(const struct mlit *m, const unsigned char *buf, size_t n, size_t i,
    mlit_cb cb, void *ctx)
{
	uint32_t gram = load32(buf + i);
	uint32_t h = (gram * SLOT_MUL) >> (32 - m->sbits);
	uint32_t mask = ((uint32_t)1 << m->sbits) - 1;
	const struct mslot *sl;
	const struct ment *e, *end;
	size_t s, len;

	for (;;) {
		sl = &m->slots[h];
		if (sl->count == 0)
			return 0;
		if (sl->gram == gram)
			break;
		h = (h + 1) & mask;
	}
	/* (the bounds in locals: cb may write anything) */
	for (e = m->ents + sl->start, end = e + sl->count; e < end; e++) {
		if (e->off > i)
			continue;
		s = i - e->off;
		len = e->len;
		if (len > n - s || load32(buf + s + len - 4) != e->tail)
			continue;
		if (memcmp(buf + s, m->pat[e->pat], len) != 0)
			continue;
		if (cb(ctx, e->pat, s) != 0)
			return -1;
	}
	return 0;
}

#define MBIT(m, g) \
	(((m)->bitmap[((g)*GRAM_MUL) >> (32 - (m)->bbits) >> 6] >> \
	     ((((g)*GRAM_MUL) >> (32 - (m)->bbits)) & 63)) & \
	    1)
/* MBIT with the bitmap and 32 - bbits in locals */
#define MBITL(bmp, sh, g) \
	(((bmp)[((g)*GRAM_MUL) >> (sh) >> 6] >> \
	     ((((g)*GRAM_MUL) >> (sh)) & 63)) & \
	    1)

/*
 * Calls cb for every occurrence of every pattern in buf[0..n) whose
 * sample position lies in [from, to), in no particular order; from must be
 * a multiple of the stride. Over consecutive ranges covering [0, n) every
 * occurrence is reported once. Returns 0, or -1 when cb returned non-zero.
 */
static inline __attribute__((always_inline)) int
mlit_scan_range_(const struct mlit *m, const unsigned char *buf, size_t n,
    size_t from, size_t to, mlit_cb cb, void *ctx)
{
	size_t S = m->stride, i = from, last;
	/* the bitmap and its shift in locals: cb may write anything */
	const uint64_t *bmp = m->bitmap;
	unsigned sh = 32 - m->bbits;

	if (n < m->minlen)
		return 0;
	last = n - 4; /* the last sample position */
	if (to > last + 1)
		to = last + 1;
	while (i + 3 * S < to) {
		uint32_t g0, g1, g2, g3;
		uint64_t b0, b1, b2, b3;

		/* the samples stride through every line: fetch ahead */
		__builtin_prefetch(buf + i + 1024);
		g0 = load32(buf + i);
		g1 = load32(buf + i + S);
		g2 = load32(buf + i + 2 * S);
		g3 = load32(buf + i + 3 * S);
		b0 = MBITL(bmp, sh, g0);
		b1 = MBITL(bmp, sh, g1);
		b2 = MBITL(bmp, sh, g2);
		b3 = MBITL(bmp, sh, g3);
		if ((b0 | b1 | b2 | b3) != 0) {
			if (b0 && mlit_verify(m, buf, n, i, cb, ctx) != 0)
				return -1;
			if (b1 && mlit_verify(m, buf, n, i + S, cb, ctx) != 0)
				return -1;
			if (b2 &&
			    mlit_verify(m, buf, n, i + 2 * S, cb, ctx) != 0)
				return -1;
			if (b3 &&
			    mlit_verify(m, buf, n, i + 3 * S, cb, ctx) != 0)
				return -1;
		}
		i += 4 * S;
	}
	for (; i < to; i += S) {
		uint32_t g = load32(buf + i);

		if (MBITL(bmp, sh, g) &&
		    mlit_verify(m, buf, n, i, cb, ctx) != 0)
			return -1;
	}
	return 0;
}

#ifdef SCAN_AVX2
/*
 * mlit_scan_range_ where the CPU has AVX2 (and BMI2 with it): its shifts
 * by the bitmap's width then take any register (shrx), not only cl,
 * which the loop's four samples wanted in turn.
 */
SCAN_AVX2 static int
mlit_scan_range_avx2(const struct mlit *m, const unsigned char *buf, size_t n,
    size_t from, size_t to, mlit_cb cb, void *ctx)
{
	return mlit_scan_range_(m, buf, n, from, to, cb, ctx);
}
#endif

static int
mlit_scan_range(const struct mlit *m, const unsigned char *buf, size_t n,
    size_t from, size_t to, mlit_cb cb, void *ctx)
{
#ifdef SCAN_AVX2
	if (scan_avx2)
		return mlit_scan_range_avx2(m, buf, n, from, to, cb, ctx);
#endif
	return mlit_scan_range_(m, buf, n, from, to, cb, ctx);
}

static int
mlit_scan(const struct mlit *m, const unsigned char *buf, size_t n, mlit_cb cb,
    void *ctx)
{
	return mlit_scan_range(m, buf, n, 0, n, cb, ctx);
}

/* ---------------------------------------------------------------- */
/* The scanner. */

struct pat {
	size_t off, len; /* bytes in sc->arena */
	size_t secret;
	unsigned form, wform;		     /* indexes into sc->names */
	unsigned char alpha;		     /* AL_NONE, or a radix alphabet */
	unsigned char width;		     /* bits per radix digit */
	unsigned char lead_bits, lead_val;   /* low bits of the digit before */
	unsigned char trail_bits, trail_val; /* high bits of the digit after */
	unsigned char b85;	 /* B85_NONE, or a base85 alphabet */
	unsigned char b85_lead;	 /* secret bytes in the group before */
	unsigned char b85_trail; /* secret bytes in the group after */
	unsigned char gphase;	 /* radix digits before a whole group */
};

struct frag_pat {
	size_t secret, off;
};

struct scan {
	size_t nsecrets;
	unsigned char **secret;
	size_t *slen;
	char (*hash)[9];

	struct pat *pats;
	size_t npats, capp;
	struct buf arena;
	char **names;
	unsigned short name_slot[1024]; /* 1 + index of a name, by hash */
	size_t nnames, capn;
	struct mlit *m;

	struct mlit *mt;     /* triggers of the transforms (scan_xform.c) */
	struct mlit *mtk[2]; /* those of a signature, of a run as it is */
	struct scan_trig *trig;
	size_t ntrig, capt;
	struct buf tarena;
	struct mlit *mg; /* group triggers (their bytes in tarena) */
	struct scan_trig *gtrig;
	size_t ngtrig, capg;
	int g_hex; /* a group trigger is all hex digits */

	struct mlit *pm; /* partial mode: every pmin-gram */
	struct frag_pat *fp;
	size_t pmin;
	size_t maxlen;	      /* longest pattern */
	size_t minsecret;     /* shortest secret */
	uint64_t frag4[1024]; /* hashes of the secrets' 4-grams */
	int partial;
	int oom;
};

static unsigned
intern(struct scan *sc, const char *name)
{
	size_t i, h = 2166136261u, slot;
	char **v;

	/* the names seen so far by hash (FNV-1a), then one by one */
	for (i = 0; name[i] != '\0'; i++)
		h = ((h ^ (unsigned char)name[i]) * 16777619u) & 0xffffffffu;
	for (slot = h & 1023, i = 0; i < 1024 && sc->name_slot[slot] != 0;
	     i++, slot = (slot + 1) & 1023)
		if (strcmp(sc->names[sc->name_slot[slot] - 1], name) == 0)
			return sc->name_slot[slot] - 1u;
	if (i == 1024 || sc->nnames >= 512) /* (a table half full) */
		for (i = 0; i < sc->nnames; i++)
			if (strcmp(sc->names[i], name) == 0)
				return (unsigned)i;
	if (sc->nnames == sc->capn) {
		size_t cap = sc->capn ? 2 * sc->capn : 64;

		v = realloc(sc->names, cap * sizeof(*v));
		if (v == NULL) {
			sc->oom = 1;
			return 0;
		}
		sc->names = v;
		sc->capn = cap;
	}
	sc->names[sc->nnames] = strdup(name);
	if (sc->names[sc->nnames] == NULL) {
		sc->oom = 1;
		return 0;
	}
	if (sc->nnames < 512) {
		for (slot = h & 1023; sc->name_slot[slot] != 0;
		     slot = (slot + 1) & 1023)
			;
		sc->name_slot[slot] = (unsigned short)(sc->nnames + 1);
	}
	return (unsigned)sc->nnames++;
}

/*
 * Adds a pattern for secret idx unless the same bytes are already there
 * for it. first is the index of the secret's first pattern. Returns the
 * new pattern's index, or -1 when it was a duplicate or memory ran out.
 */
static long
add_pat(struct scan *sc, size_t idx, size_t first, const struct buf *b,
    const char *form)
{
	struct pat *p;
	size_t i;
	char wname[96];

	if (b->oom) {
		sc->oom = 1;
		return -1;
	}
	if (b->n < 4)
		return -1;
	for (i = first; i < sc->npats; i++)
		if (sc->pats[i].len == b->n &&
		    memcmp(sc->arena.p + sc->pats[i].off, b->p, b->n) == 0)
			return -1;
	if (sc->npats == sc->capp) {
		size_t cap = sc->capp ? 2 * sc->capp : 256;

		p = realloc(sc->pats, cap * sizeof(*p));
		if (p == NULL) {
			sc->oom = 1;
			return -1;
		}
		sc->pats = p;
		sc->capp = cap;
	}
	p = &sc->pats[sc->npats];
	memset(p, 0, sizeof(*p));
	p->off = sc->arena.n;
	p->len = b->n;
	p->secret = idx;
	p->form = intern(sc, form);
	snprintf(wname, sizeof(wname), "%s+wrapped", form);
	p->wform = intern(sc, wname);
	buf_put(&sc->arena, b->p, b->n);
	if (sc->arena.oom || sc->oom) {
		sc->oom = 1;
		return -1;
	}
	return (long)sc->npats++;
}

/*
 * Radix forms of secret idx: for each byte alignment k (0 .. group-1) the
 * digits of (k filler bytes + secret) that the secret alone determines,
 * plus the secret's bits in the partial digits on either side.
 */
static void
add_radix(struct scan *sc, size_t idx, size_t first, const unsigned char *s,
    size_t n, int alpha, unsigned width, unsigned group, const char *name)
{
	const char *al = alphabets[alpha];
	struct buf b = { 0 };
	char form[64];
	size_t k, i, i0, i1, bit, total, j;
	unsigned v;
	long pi;

	for (k = 0; k < group; k++) {
		total = 8 * (k + n);
		i0 = (8 * k + width - 1) / width;
		i1 = total / width;
		b.n = 0;
		for (i = i0; i < i1; i++) {
			v = 0;
			for (j = 0; j < width; j++) {
				bit = i * width + j - 8 * k; /* >= 0 */
				v = (v << 1) |
				    ((s[bit / 8] >> (7 - bit % 8)) & 1);
			}
			buf_putc(&b, al[v]);
		}
		snprintf(form, sizeof(form), "%s@%zu", name, k);
		pi = add_pat(sc, idx, first, &b, form);
		if (pi < 0)
			continue;
		sc->pats[pi].alpha = (unsigned char)alpha;
		sc->pats[pi].width = (unsigned char)width;
		sc->pats[pi].lead_bits = (unsigned char)(i0 * width - 8 * k);
		v = 0;
		for (j = 0; j < sc->pats[pi].lead_bits; j++)
			v = (v << 1) | ((s[j / 8] >> (7 - j % 8)) & 1);
		sc->pats[pi].lead_val = (unsigned char)v;
		sc->pats[pi].trail_bits = (unsigned char)(total - i1 * width);
		v = 0;
		for (j = 0; j < sc->pats[pi].trail_bits; j++) {
			bit = i1 * width + j - 8 * k;
			v = (v << 1) | ((s[bit / 8] >> (7 - bit % 8)) & 1);
		}
		sc->pats[pi].trail_val = (unsigned char)v;
		/* where the encoder's groups of digits start in the middle */
		v = 8 * group / width;
		sc->pats[pi].gphase = (unsigned char)((v - i0 % v) % v);
	}
	free(b.p);
}

/* The 5 digits of the 4 bytes at p, big-endian, in alphabet al. */
static void
b85_group(char out[5], const unsigned char *p, const char *al)
{
	uint32_t v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
	int i;

	for (i = 4; i >= 0; i--) {
		out[i] = al[v % 85];
		v /= 85;
	}
}

/*
 * Base85 forms of secret idx: for each alignment k (k filler bytes before
 * the secret in its first 4-byte group) the digits of the groups made of
 * secret bytes only; the secret's bytes in the partial groups on either
 * side are checked on every match (b85_ok).
 */
static void
add_b85(struct scan *sc, size_t idx, size_t first, const unsigned char *s,
    size_t n, int alpha, const char *name)
{
	struct buf b = { 0 };
	char form[64], d[5];
	size_t k, g, g0, g1;
	long pi;

	for (k = 0; k < 4; k++) {
		g0 = k > 0 ? 1 : 0;
		g1 = (k + n) / 4;
		b.n = 0;
		for (g = g0; g < g1; g++) {
			b85_group(d, s + 4 * g - k, b85_alphabets[alpha]);
			buf_put(&b, d, 5);
		}
		snprintf(form, sizeof(form), "%s@%zu", name, k);
		pi = add_pat(sc, idx, first, &b, form);
		if (pi < 0)
			continue;
		sc->pats[pi].b85 = (unsigned char)alpha;
		sc->pats[pi].b85_lead = (unsigned char)(k > 0 ? 4 - k : 0);
		sc->pats[pi].b85_trail = (unsigned char)((k + n) % 4);
	}
	free(b.p);
}

/* Base58 (Bitcoin's alphabet) of the whole secret: leading zeros as '1'. */
/*
 * The secret as one big number in radix base (digits al), its first byte
 * the most significant (le: the last); leading zero bytes as zero digits.
 */
static void
enc_bignum(struct buf *out, const unsigned char *s, size_t n, const char *al,
    unsigned base, int le)
{
	unsigned char *dig;
	size_t i, j, nd = 0, zeros = 0, cap = n * 3 + 2;
	unsigned carry;

	if (base < 2)
		return;
	dig = calloc(cap, 1);
	if (dig == NULL) {
		out->oom = 1;
		return;
	}
	while (zeros < n && s[le ? n - 1 - zeros : zeros] == 0)
		zeros++;
	for (i = zeros; i < n; i++) {
		carry = s[le ? n - 1 - i : i];
		for (j = 0; j < nd; j++) {
			carry += (unsigned)dig[j] << 8;
			dig[j] = (unsigned char)(carry % base);
			carry /= base;
		}
		while (carry > 0 && nd < cap) {
			dig[nd++] = (unsigned char)(carry % base);
			carry /= base;
		}
	}
	for (i = 0; i < zeros; i++)
		buf_putc(out, al[0]);
	for (i = nd; i > 0; i--)
		buf_putc(out, al[dig[i - 1]]);
	free(dig);
}

/*
 * Each byte after pre, in base 8, 10 or 16 with at least width digits,
 * with sep between.
 */
static void
enc_list(struct buf *out, const unsigned char *s, size_t n, const char *pre,
    unsigned base, unsigned width, const char *sep)
{
	char t[8];
	size_t i;
	unsigned v, k;

	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_puts(out, sep);
		buf_puts(out, pre);
		v = s[i];
		k = 0;
		do {
			t[k++] = "0123456789abcdef"[v % base];
			v /= base;
		} while (v > 0);
		while (k < width)
			t[k++] = '0';
		while (k > 0)
			buf_putc(out, t[--k]);
	}
}

/* Python's bytes repr body: printable ASCII as is, the rest escaped. */
static void
enc_pybytes(struct buf *out, const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' || s[i] == '\'') {
			buf_putc(out, '\\');
			buf_putc(out, s[i]);
		} else if (s[i] == '\t')
			buf_puts(out, "\\t");
		else if (s[i] == '\n')
			buf_puts(out, "\\n");
		else if (s[i] == '\r')
			buf_puts(out, "\\r");
		else if (s[i] >= 0x20 && s[i] < 0x7f)
			buf_putc(out, s[i]);
		else {
			buf_puts(out, "\\x");
			buf_hex2(out, s[i], 0);
		}
	}
}

/* sep between every character (UTF-8 sequences kept whole when valid). */
static void
enc_sep(struct buf *out, const unsigned char *s, size_t n, const char *sep,
    size_t seplen, int utf8)
{
	size_t i = 0, len;
	uint32_t cp;

	while (i < n) {
		len = utf8 ? utf8_next(s, n, i, &cp) : 1;
		if (i > 0)
			buf_put(out, sep, seplen);
		buf_put(out, s + i, len);
		i += len;
	}
}

/* ASCII letters folded to one case; returns whether anything changed. */
static int
enc_case(struct buf *out, const unsigned char *s, size_t n, int upper)
{
	size_t i;
	int changed = 0;
	unsigned c;

	for (i = 0; i < n; i++) {
		c = s[i];
		if (upper && c >= 'a' && c <= 'z')
			c -= 32, changed = 1;
		else if (!upper && c >= 'A' && c <= 'Z')
			c += 32, changed = 1;
		buf_putc(out, (int)c);
	}
	return changed;
}

/* The JSON dialects applied to an already encoded form. */
static const unsigned form_json[] = { 0, J_SLASH, J_UNICODE,
	J_UNICODE | J_UPPER, J_HTML, J_HTML | J_APOS, J_HTML | J_UPPER, J_CTRLU,
	J_CTRLU | J_UPPER };

/*
 * A secret's forms are generated in phases, each adding its patterns in
 * a fixed order (pattern numbers follow it): the state they share.
 */
struct gen {
	struct scan *sc;
	size_t idx, first;
	const unsigned char *s;
	size_t n;
	struct buf b, j2;
};

/* Adds g->b as a pattern of form, and empties g->b. */
static void
gen_add(struct gen *g, const char *form)
{
	add_pat(g->sc, g->idx, g->first, &g->b, form);
	g->b.n = 0;
}

/* The secret as it is, its JSON dialects and the same escaped once more
 * (json2); the dialects that change it. */
static unsigned
gen_json(struct gen *g)
{
	const unsigned char *s = g->s;
	size_t n = g->n;
	char name[96];
	unsigned fl, rel;

	buf_put(&g->b, s, n);
	gen_add(g, "raw");
	rel = json_relevant(s, n);
	for (fl = 0; fl < J_COMBOS; fl++) {
		if ((fl & J_APOS) && !(fl & J_HTML))
			continue;
		if (fl & ~rel)
			continue; /* the same bytes as a smaller set */
		enc_json(&g->b, s, n, fl);
		json_name(name, sizeof(name), "json", fl);
		gen_add(g, name);
	}
	for (fl = 0; fl < J_COMBOS; fl++) {
		if ((fl & J_APOS) && !(fl & J_HTML))
			continue;
		if (fl & ~rel)
			continue;
		enc_json(&g->j2, s, n, fl);
		enc_json(&g->b, g->j2.p, g->j2.n, 0);
		g->j2.n = 0;
		json_name(name, sizeof(name), "json2", fl);
		gen_add(g, name);
	}
	if (g->j2.oom)
		g->sc->oom = 1;
	enc_json(&g->b, s, n, J_ALL);
	gen_add(g, "unicode-escape");
	enc_json(&g->b, s, n, J_ALL | J_UPPER);
	gen_add(g, "unicode-escape-upper");
	return rel;
}

/* The radixes: RFC 4648 and its kin, base85, big numbers; and a JSON
 * file's text encoded (cat config.json | base64) when JSON changes it. */
static void
gen_radix(struct gen *g, unsigned rel)
{
	struct scan *sc = g->sc;
	const unsigned char *s = g->s;
	size_t n = g->n, idx = g->idx, first = g->first;

	add_radix(sc, idx, first, s, n, AL_B64, 6, 3, "base64");
	add_radix(sc, idx, first, s, n, AL_B64URL, 6, 3, "base64url");
	add_radix(sc, idx, first, s, n, AL_B32, 5, 5, "base32");
	add_radix(sc, idx, first, s, n, AL_B32L, 5, 5, "base32-lower");
	add_radix(sc, idx, first, s, n, AL_UU, 6, 3, "uuencode");
	add_radix(sc, idx, first, s, n, AL_UUS, 6, 3, "uuencode");
	add_b85(sc, idx, first, s, n, B85_ASCII, "ascii85");
	add_b85(sc, idx, first, s, n, B85_RFC1924, "base85");
	add_b85(sc, idx, first, s, n, B85_Z85, "z85");
	add_radix(sc, idx, first, s, n, AL_B32HEX, 5, 5, "base32hex");
	add_radix(sc, idx, first, s, n, AL_CROCK, 5, 5, "base32-crockford");
	add_radix(sc, idx, first, s, n, AL_ZB32, 5, 5, "zbase32");
	enc_bignum(&g->b, s, n,
	    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 58,
	    0);
	gen_add(g, "base58");
	enc_bignum(&g->b, s, n,
	    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	    62, 0);
	gen_add(g, "base62");
	enc_bignum(&g->b, s, n, "0123456789abcdefghijklmnopqrstuvwxyz", 36, 0);
	gen_add(g, "base36");
	enc_bignum(&g->b, s, n, "0123456789", 10, 0);
	gen_add(g, "dec");
	enc_bignum(&g->b, s, n, "0123456789", 10, 1);
	gen_add(g, "dec-le");
	if (!(rel & J_CHANGES))
		return;
	enc_json(&g->j2, s, n, 0);
	if (g->j2.oom)
		sc->oom = 1;
	else {
		add_radix(sc, idx, first, g->j2.p, g->j2.n, AL_B64, 6, 3,
		    "json+base64");
		add_radix(sc, idx, first, g->j2.p, g->j2.n, AL_B64URL, 6, 3,
		    "json+base64url");
		enc_hex(&g->b, g->j2.p, g->j2.n, 0, "", "");
		gen_add(g, "json+hex");
	}
	g->j2.n = 0;
}

/* Hex with its separators and prefixes, byte lists (Python, JS, JSON,
 * C arrays), octal, bits and escape runs. */
static void
gen_bytes(struct gen *g)
{
	static const char *const seps[] = { " ", ":", "-" };
	static const char *const oxseps[] = { ", ", ",", " " };
	const unsigned char *s = g->s;
	size_t n = g->n, i;
	int up, bit;

	enc_hex(&g->b, s, n, 0, "", "");
	gen_add(g, "hex");
	enc_hex(&g->b, s, n, 1, "", "");
	gen_add(g, "hex-upper");
	for (up = 0; up < 2; up++) {
		for (i = 0; i < sizeof(seps) / sizeof(seps[0]); i++) {
			enc_hex(&g->b, s, n, up, "", seps[i]);
			gen_add(g, "hex-sep");
		}
		enc_hex(&g->b, s, n, up, "\\x", "");
		gen_add(g, "hex-escape");
		for (i = 0; i < sizeof(oxseps) / sizeof(oxseps[0]); i++) {
			enc_hex(&g->b, s, n, up, "0x", oxseps[i]);
			gen_add(g, "hex-0x");
		}
	}
	for (i = 0; i < sizeof(oxseps) / sizeof(oxseps[0]); i++) {
		enc_list(&g->b, s, n, "", 10, 1, oxseps[i]);
		gen_add(g, "dec-list");
		enc_list(&g->b, s, n, "0", 8, 1, oxseps[i]);
		gen_add(g, "octal-list");
	}
	enc_list(&g->b, s, n, "", 8, 3, " ");
	gen_add(g, "octal-sep");
	enc_list(&g->b, s, n, "", 8, 3, "");
	gen_add(g, "octal");
	for (i = 0; i < n; i++)
		for (bit = 7; bit >= 0; bit--)
			buf_putc(&g->b, '0' + ((s[i] >> bit) & 1));
	gen_add(g, "bits");
	enc_list(&g->b, s, n, "\\", 8, 3, "");
	gen_add(g, "octal-escape");
	enc_list(&g->b, s, n, "\\", 8, 1, "");
	gen_add(g, "octal-escape");
	enc_list(&g->b, s, n, "\\u", 16, 4, "");
	gen_add(g, "unicode-escape-bytes");
	enc_pybytes(&g->b, s, n);
	gen_add(g, "python-bytes");
}

/* Every character as a numeric HTML entity (UTF-8 decoded), HTML,
 * quoted-printable, rot13, reversed, groups reversed, UTF-16. */
static void
gen_markup(struct gen *g)
{
	const unsigned char *s = g->s;
	size_t n = g->n, k;
	int fused;
	char name[32];

	if (utf8_valid(s, n)) {
		enc_entities(&g->b, s, n, 0);
		gen_add(g, "html-entities");
		enc_entities(&g->b, s, n, 1);
		gen_add(g, "html-entities");
	}
	enc_html(&g->b, s, n, "&#39;");
	gen_add(g, "html");
	enc_html(&g->b, s, n, "&#x27;");
	gen_add(g, "html");
	enc_qp(&g->b, s, n);
	gen_add(g, "quoted-printable");
	enc_rot13(&g->b, s, n);
	gen_add(g, "rot13");
	enc_reverse(&g->b, s, n);
	gen_add(g, "reversed");
	enc_reverse_bytes(&g->b, s, n);
	gen_add(g, "reversed-bytes");
	/*
	 * groups split by blanks make no run for the group triggers; tac of
	 * a file without its last line break (a key file, fold's output of
	 * it) joins that last line to the one before: fused
	 */
	for (k = 2; k <= 8 && k < n; k++) {
		snprintf(name, sizeof(name), "grouprev%zu-sep", k);
		for (fused = 0; fused < 2; fused++) {
			enc_grouprev(&g->b, s, n, k, ' ', fused);
			gen_add(g, name);
			enc_grouprev(&g->b, s, n, k, '\n', fused);
			gen_add(g, name);
		}
	}
	if (utf8_valid(s, n)) {
		enc_utf16(&g->b, s, n, 0);
		gen_add(g, "utf16le");
		enc_utf16(&g->b, s, n, 1);
		gen_add(g, "utf16be");
	}
}

/*
 * Text forms: a separator between every character, case folded (its own
 * form when the secret has letters of one case only, folding loses
 * nothing; "-lossy" when it had both), percent-encodings, HTML,
 * quoted-printable, rot13, reversals, UTF-16.
 */
static void
gen_text(struct gen *g)
{
	/* (NUL between bytes is utf16) */
	static const char *const every[] = { " ", "\t", "-", "_", ".", ",", ":",
		"|", "\n", ", ", "\xe2\x80\x8b" };
	static const char *const keep_unreserved = "-._~";
	static const char *const keep_js = "-_.!~*'()";
	static const char *const keep_uri = "-_.!~*'();/?:@&=+$,#";
	static const char *const keep_form = "*-._";
	const unsigned char *s = g->s;
	size_t n = g->n, i;
	int lower = 0, upper = 0;

	for (i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		enc_sep(&g->b, s, n, every[i], strlen(every[i]),
		    utf8_valid(s, n));
		gen_add(g, "sep");
	}
	for (i = 0; i < n; i++) {
		lower |= s[i] >= 'a' && s[i] <= 'z';
		upper |= s[i] >= 'A' && s[i] <= 'Z';
	}
	if (enc_case(&g->b, s, n, 1))
		gen_add(g, upper ? "case-upper-lossy" : "case-upper");
	g->b.n = 0;
	if (enc_case(&g->b, s, n, 0))
		gen_add(g, lower ? "case-lower-lossy" : "case-lower");
	g->b.n = 0;
	enc_percent(&g->b, s, n, keep_unreserved, 1, 0);
	gen_add(g, "percent");
	enc_percent(&g->b, s, n, keep_unreserved, 0, 0);
	gen_add(g, "percent-lower");
	enc_percent(&g->b, s, n, keep_js, 1, 0);
	gen_add(g, "percent-js");
	enc_percent(&g->b, s, n, keep_uri, 1, 0);
	gen_add(g, "percent-uri");
	enc_percent(&g->b, s, n, keep_unreserved, 1, 1);
	gen_add(g, "percent-plus");
	enc_percent(&g->b, s, n, keep_form, 1, 1);
	gen_add(g, "percent-form");
	enc_percent(&g->b, s, n, NULL, 1, 0);
	gen_add(g, "percent-all");
	enc_percent(&g->b, s, n, NULL, 0, 0);
	gen_add(g, "percent-all-lower");
	gen_markup(g);
}

/* Pattern src JSON-escaped in each dialect of form_json that changes it,
 * with src's radix edges. */
static void
gen_json_of(struct gen *g, size_t p)
{
	struct scan *sc = g->sc;
	struct pat src = sc->pats[p];
	const char *fname = sc->names[src.form];
	char name[96], full[160];
	unsigned rel;
	size_t i;
	long pi;
	int few;

	rel = json_relevant(sc->arena.p + src.off, src.len);
	/*
	 * The forms added for dumps, base85 and uuencode: JSON as most
	 * encoders write it (plain, or Go's HTML-safe) only; each dialect
	 * is a pattern more for every secret.
	 */
	few = strncmp(fname, "ascii85", 7) == 0 ||
	    strncmp(fname, "base85", 6) == 0 || strncmp(fname, "z85", 3) == 0 ||
	    strncmp(fname, "uuencode", 8) == 0 || strcmp(fname, "sep") == 0;
	for (i = 0; i < sizeof(form_json) / sizeof(form_json[0]); i++) {
		if (few && form_json[i] != 0 && form_json[i] != J_HTML)
			continue;
		if ((form_json[i] & ~rel) ||
		    (form_json[i] == 0 && !(rel & J_CHANGES)))
			continue;
		g->b.n = 0;
		enc_json(&g->b, sc->arena.p + src.off, src.len, form_json[i]);
		if (g->b.n == src.len &&
		    memcmp(g->b.p, sc->arena.p + src.off, g->b.n) == 0)
			continue;
		json_name(name, sizeof(name), "json", form_json[i]);
		snprintf(full, sizeof(full), "%s+%s", sc->names[src.form],
		    name);
		pi = add_pat(sc, g->idx, g->first, &g->b, full);
		if (pi >= 0) {
			struct pat *q = &sc->pats[pi];

			q->alpha = src.alpha;
			q->width = src.width;
			q->lead_bits = src.lead_bits;
			q->lead_val = src.lead_val;
			q->trail_bits = src.trail_bits;
			q->trail_val = src.trail_val;
			q->b85 = src.b85;
			q->b85_lead = src.b85_lead;
			q->b85_trail = src.b85_trail;
		}
	}
}

/*
 * Every form of secret idx, as patterns: the JSON dialects of the secret,
 * then its encodings, then each encoding JSON-escaped where that changes
 * it.
 */
static void
gen_secret(struct scan *sc, size_t idx)
{
	struct gen g;
	size_t nbase, nend, p;
	unsigned rel;

	memset(&g, 0, sizeof(g));
	g.sc = sc;
	g.idx = idx;
	g.first = sc->npats;
	g.s = sc->secret[idx];
	g.n = sc->slen[idx];
	rel = gen_json(&g);
	nbase = sc->npats;
	gen_radix(&g, rel);
	gen_bytes(&g);
	gen_text(&g);
	nend = sc->npats;
	for (p = nbase; p < nend && !sc->oom; p++)
		gen_json_of(&g, p);
	if (g.b.oom)
		sc->oom = 1;
	free(g.b.p);
	free(g.j2.p);
}

static int
build_partial(struct scan *sc)
{
	const unsigned char **pp;
	size_t *pl, n = 0, i, a;

	for (i = 0; i < sc->nsecrets; i++)
		if (sc->slen[i] >= sc->pmin)
			n += sc->slen[i] - sc->pmin + 1;
	if (n == 0)
		return 0;
	pp = malloc(n * sizeof(*pp));
	pl = malloc(n * sizeof(*pl));
	sc->fp = malloc(n * sizeof(*sc->fp));
	if (pp == NULL || pl == NULL || sc->fp == NULL)
		goto fail;
	n = 0;
	for (i = 0; i < sc->nsecrets; i++) {
		if (sc->slen[i] < sc->pmin)
			continue;
		for (a = 0; a + sc->pmin <= sc->slen[i]; a++) {
			pp[n] = sc->secret[i] + a;
			pl[n] = sc->pmin;
			sc->fp[n].secret = i;
			sc->fp[n].off = a;
			n++;
		}
	}
	sc->pm = mlit_new(pp, pl, n);
	free(pp);
	free(pl);
	return sc->pm == NULL ? -1 : 0;
fail:
	free(pp);
	free(pl);
	return -1;
}

void
scan_free(struct scan *sc)
{
	size_t i;

	if (sc == NULL)
		return;
	for (i = 0; i < sc->nsecrets; i++)
		free(sc->secret[i]);
	free(sc->secret);
	free(sc->slen);
	free(sc->hash);
	free(sc->pats);
	free(sc->arena.p);
	for (i = 0; i < sc->nnames; i++)
		free(sc->names[i]);
	free(sc->names);
	mlit_free(sc->m);
	mlit_free(sc->mt);
	mlit_free(sc->mtk[0]);
	mlit_free(sc->mtk[1]);
	free(sc->trig);
	mlit_free(sc->mg);
	free(sc->gtrig);
	free(sc->tarena.p);
	mlit_free(sc->pm);
	free(sc->fp);
	free(sc);
}

/* The 4-grams of secret i, in sc->frag4. */
static void
frag4_add(struct scan *sc, size_t i)
{
	size_t k;

	for (k = 0; k + 4 <= sc->slen[i]; k++) {
		uint32_t h = (load32(sc->secret[i] + k) * GRAM_MUL) >> 16;

		sc->frag4[h >> 6] |= (uint64_t)1 << (h & 63);
	}
}

/* The secrets' count and lengths: -1 with err when one is out of
 * bounds. */
static int
check_secrets(const struct scan_secret *secrets, size_t nsecrets, char *err,
    size_t errlen)
{
	size_t i;

	if (nsecrets == 0) {
		snprintf(err, errlen, "no secret given");
		return -1;
	}
	for (i = 0; i < nsecrets; i++) {
		if (secrets[i].len < SCAN_MIN_SECRET) {
			snprintf(err, errlen,
			    "secret %zu is %zu bytes long, "
			    "shorter than the minimum of %d",
			    i + 1, secrets[i].len, SCAN_MIN_SECRET);
			return -1;
		}
		if (secrets[i].len > SCAN_MAX_SECRET) {
			snprintf(err, errlen,
			    "secret %zu is %zu bytes long, "
			    "longer than the maximum of %d",
			    i + 1, secrets[i].len, SCAN_MAX_SECRET);
			return -1;
		}
	}
	return 0;
}

static int build_triggers(struct scan *sc);

int
scan_compile(struct scan **out, const struct scan_secret *secrets,
    size_t nsecrets, unsigned flags, size_t partial_min, char *err,
    size_t errlen)
{
	struct scan *sc;
	const unsigned char **pp = NULL;
	size_t *pl = NULL, i;

	*out = NULL;
	radix_init();
	scan_simd_init();
	if (check_secrets(secrets, nsecrets, err, errlen) != 0)
		return -1;
	if (partial_min == 0)
		partial_min = SCAN_MIN_SECRET;
	if (partial_min < 4) {
		snprintf(err, errlen, "partial minimum %zu is shorter than 4",
		    partial_min);
		return -1;
	}
	sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		goto oom;
	sc->secret = calloc(nsecrets, sizeof(*sc->secret));
	sc->slen = calloc(nsecrets, sizeof(*sc->slen));
	sc->hash = calloc(nsecrets, sizeof(*sc->hash));
	if (sc->secret == NULL || sc->slen == NULL || sc->hash == NULL)
		goto oom;
	sc->nsecrets = nsecrets;
	sc->pmin = partial_min;
	for (i = 0; i < nsecrets; i++) {
		sc->secret[i] = malloc(secrets[i].len);
		if (sc->secret[i] == NULL)
			goto oom;
		memcpy(sc->secret[i], secrets[i].bytes, secrets[i].len);
		sc->slen[i] = secrets[i].len;
		if (i == 0 || sc->slen[i] < sc->minsecret)
			sc->minsecret = sc->slen[i];
		scan_hash8(secrets[i].bytes, secrets[i].len, sc->hash[i]);
	}
	for (i = 0; i < nsecrets && !sc->oom; i++) {
		gen_secret(sc, i);
		frag4_add(sc, i);
	}
	if (sc->oom)
		goto oom;
	pp = malloc(sc->npats * sizeof(*pp));
	pl = malloc(sc->npats * sizeof(*pl));
	if (pp == NULL || pl == NULL)
		goto oom;
	for (i = 0; i < sc->npats; i++) {
		pp[i] = sc->arena.p + sc->pats[i].off;
		pl[i] = sc->pats[i].len;
		if (pl[i] > sc->maxlen)
			sc->maxlen = pl[i];
	}
	sc->m = mlit_new(pp, pl, sc->npats);
	if (sc->m == NULL)
		goto oom;
	if (build_triggers(sc) != 0)
		goto oom;
	sc->partial = (flags & SCAN_PARTIAL) != 0;
	if (sc->partial && build_partial(sc) != 0)
		goto oom;
	free(pp);
	free(pl);
	*out = sc;
	return 0;
oom:
	free(pp);
	free(pl);
	scan_free(sc);
	snprintf(err, errlen, "cannot compile scanner: %s", strerror(ENOMEM));
	return -1;
}

/* ---------------------------------------------------------------- */
/* Triggers: what the transforms of scan_xform.c look for. */

/* Is a pattern of this form worth a trigger (the usual innermost forms)? */
static int
trig_form(const char *f)
{
	static const char *const fs[] = { "raw", "hex", "hex-upper", "base64@",
		"base64url@", "base32@", "base32-lower@", "base32hex@",
		"base32-crockford@", "zbase32@", "base58", "base62", "base36",
		"dec", "dec-le", "ascii85@", "base85@", "z85@", "bits",
		"octal" };
	size_t i, l;

	for (i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		l = strlen(fs[i]);
		if (fs[i][l - 1] == '@' ? strncmp(f, fs[i], l) == 0 :
					  strcmp(f, fs[i]) == 0)
			return 1;
	}
	return 0;
}

/*
 * A trigger of n bytes: 7 at least (the rotation signature of an 8-byte
 * secret that starts with a letter: its 7 steps); a group trigger when
 * grp is set. Returns it, or NULL (too short, out of memory).
 */
static struct scan_trig *
add_trig_to(struct scan *sc, int grp, unsigned kind, const struct pat *p,
    const unsigned char *orig, const unsigned char *t, size_t n, size_t skip)
{
	struct scan_trig **arr = grp ? &sc->gtrig : &sc->trig, *v;
	size_t *nt = grp ? &sc->ngtrig : &sc->ntrig;
	size_t *capt = grp ? &sc->capg : &sc->capt;

	if (n < SCAN_MIN_SECRET - 1 || sc->oom)
		return NULL;
	if (*nt == *capt) {
		size_t cap = *capt ? 2 * *capt : 64;

		if ((v = realloc(*arr, cap * sizeof(*v))) == NULL) {
			sc->oom = 1;
			return NULL;
		}
		*arr = v;
		*capt = cap;
	}
	v = &(*arr)[(*nt)++];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->secret = p->secret;
	v->orig = orig;
	v->origlen = p->len;
	v->skip = skip;
	v->off = sc->tarena.n;
	v->len = n;
	buf_put(&sc->tarena, t, n);
	return v;
}

static void
add_trig(struct scan *sc, unsigned kind, const struct pat *p,
    const unsigned char *orig, const unsigned char *t, size_t n, size_t skip)
{
	add_trig_to(sc, 0, kind, p, orig, t, n, skip);
}

static int
hex_digit(unsigned c)
{
	return (c >= '0' && c <= '9') ||
	    ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/*
 * Is t[0..n) worth a group trigger of the pattern o[0..l)? Not where it
 * occurs in the pattern itself (a periodic secret: the pattern's own
 * scan finds it), nor with fewer than 5 distinct bytes (noise).
 */
static int
group_trig_ok(const unsigned char *o, size_t l, const unsigned char *t,
    size_t n)
{
	uint64_t seen[4] = { 0, 0, 0, 0 };
	unsigned nv = 0;
	size_t j;

	for (j = 0; j < n; j++) {
		if (!(seen[t[j] >> 6] >> (t[j] & 63) & 1))
			nv++;
		seen[t[j] >> 6] |= (uint64_t)1 << (t[j] & 63);
	}
	return nv >= 5 && memmem(o, l, t, n) == NULL;
}

/*
 * The m groups of k bytes at o into t: in reverse order (fold -wK | tac),
 * or each reversed in place (swap).
 */
static void
group_order(unsigned char *t, const unsigned char *o, size_t m, size_t k,
    int swap)
{
	size_t j, i;

	for (j = 0; j < m; j++)
		for (i = 0; i < k; i++)
			t[j * k + i] = swap ? o[j * k + k - 1 - i] :
					      o[(m - 1 - j) * k + i];
}

/*
 * The group triggers of pattern p (scan_int.h): of the raw secret, for
 * K = 2..8 at every phase, both kinds; of a base64 middle, its quartets
 * in reverse order at the encoder's phase. At least two whole groups
 * and 8 bytes. b is scratch; -1: out of memory.
 */
static int
group_triggers(struct scan *sc, const struct pat *p, struct buf *b)
{
	const unsigned char *o = sc->arena.p + p->off;
	const char *f = sc->names[p->form];
	size_t k, ph, m, i, l = p->len;
	struct scan_trig *v;
	unsigned kind;
	int radix;

	radix = (strncmp(f, "base64@", 7) == 0 && f[8] == '\0') ||
	    (strncmp(f, "base64url@", 10) == 0 && f[11] == '\0');
	if (!radix && strcmp(f, "raw") != 0)
		return 0;
	b->n = 0;
	buf_grow(b, l);
	if (b->oom)
		return -1;
	for (k = 2; k <= 8; k++)
		for (ph = 0; ph < k && ph + 2 * k <= l; ph++)
			for (kind = TRIG_GREV; kind <= TRIG_GSWAP; kind <<= 1) {
				if (radix &&
				    (k != 4 || ph != p->gphase ||
					kind != TRIG_GREV))
					continue;
				if ((m = (l - ph) / k) * k < 8)
					continue;
				group_order(b->p, o + ph, m, k,
				    kind == TRIG_GSWAP);
				if (!group_trig_ok(o, l, b->p, m * k))
					continue;
				v = add_trig_to(sc, 1, kind, p, o, b->p, m * k,
				    ph);
				if (v == NULL)
					continue;
				v->group = (unsigned char)k;
				v->radix = (unsigned char)radix;
				v->tdig = radix && p->trail_bits > 0;
				for (i = 0; i < m * k && hex_digit(b->p[i]);
				     i++)
					;
				if (i == m * k)
					sc->g_hex = 1;
			}
	return 0;
}

/* The triggers of pattern p; b is scratch. -1: out of memory. */
static int
pat_triggers(struct scan *sc, const struct pat *p, struct buf *b)
{
	const unsigned char *o = sc->arena.p + p->off;
	uint64_t seen[4] = { 0, 0, 0, 0 };
	unsigned nv = 0;
	size_t j, first;

	b->n = 0;
	buf_grow(b, p->len);
	if (b->oom)
		return -1;
	scan_rot_sig(o, p->len, b->p);
	for (first = 0; first < p->len && !scan_is_letter(o[first]); first++)
		;
	if (first + 1 < p->len)
		add_trig(sc, TRIG_SIG, p, o, b->p + first + 1,
		    p->len - first - 1, first + 1);
	for (j = 0; j < p->len; j++)
		b->p[j] = o[p->len - 1 - j];
	add_trig(sc, TRIG_REV, p, o, b->p, p->len, 0);
	/* reversed, then rotated: found as reverse, rotated inside */
	for (j = 0; j < p->len; j++)
		b->p[j] = o[p->len - 1 - j] >= 33 && o[p->len - 1 - j] <= 126 ?
		    (unsigned char)(33 + (o[p->len - 1 - j] - 33 + 47) % 94) :
		    o[p->len - 1 - j];
	add_trig(sc, TRIG_R47 | TRIG_REV, p, o, b->p, p->len, 0);
	if (b->n < 2 * p->len) {
		buf_grow(b, 2 * p->len);
		if (b->oom)
			return -1;
	}
	for (j = 0; j < p->len; j++)
		b->p[p->len + j] = o[p->len - 1 - j];
	scan_rot_sig(b->p + p->len, p->len, b->p);
	for (first = 0; first < p->len && !scan_is_letter(b->p[p->len + first]);
	     first++)
		;
	if (first + 1 < p->len)
		add_trig(sc, TRIG_SIG | TRIG_REV, p, o, b->p + first + 1,
		    p->len - first - 1, first + 1);
	for (j = 0; j < p->len; j++)
		b->p[j] = o[j] >= 33 && o[j] <= 126 ?
		    (unsigned char)(33 + (o[j] - 33 + 47) % 94) :
		    o[j];
	add_trig(sc, TRIG_R47, p, o, b->p, p->len, 0);
	/* a delta of few values (bits, digits) finds noise */
	for (j = 0; j + 1 < p->len; j++) {
		b->p[j] = o[j] ^ o[j + 1];
		if (!(seen[b->p[j] >> 6] >> (b->p[j] & 63) & 1))
			nv++;
		seen[b->p[j] >> 6] |= (uint64_t)1 << (b->p[j] & 63);
	}
	if (nv >= 8)
		add_trig(sc, TRIG_DELTA, p, o, b->p, p->len - 1, 0);
	return 0;
}

/* A matcher of the n triggers v; pp, pl: room for n. NULL: no memory. */
static struct mlit *
trig_mlit(const struct scan *sc, const struct scan_trig *v, size_t n,
    const unsigned char **pp, size_t *pl)
{
	size_t i;

	for (i = 0; i < n; i++) {
		pp[i] = sc->tarena.p + v[i].off;
		pl[i] = v[i].len;
	}
	return mlit_new(pp, pl, n);
}

/*
 * For each pattern of a trigger form: its rotation signature (any rot-N),
 * its reversal, its rot47; for each secret its XOR delta (any one-byte
 * key). The trigger matcher finds them in transformed runs; scan_xform.c
 * then undoes the transform and scans again, so a trigger is never a
 * finding by itself.
 */
static int
build_triggers(struct scan *sc)
{
	struct buf b = { 0 };
	const unsigned char **pp = NULL;
	size_t *pl = NULL, i, j;
	int rc = -1, k;

	for (i = 0; i < sc->npats && !sc->oom; i++) {
		const struct pat *p = &sc->pats[i];

		if (!trig_form(sc->names[p->form]))
			continue;
		if (pat_triggers(sc, p, &b) != 0 ||
		    group_triggers(sc, p, &b) != 0)
			goto out;
	}
	if (sc->oom || sc->tarena.oom)
		goto out;
	if (sc->ntrig == 0 && sc->ngtrig == 0) {
		rc = 0;
		goto out;
	}
	j = sc->ntrig > sc->ngtrig ? sc->ntrig : sc->ngtrig;
	pp = malloc(j * sizeof(*pp));
	pl = malloc(j * sizeof(*pl));
	if (pp == NULL || pl == NULL)
		goto out;
	if (sc->ngtrig > 0 &&
	    (sc->mg = trig_mlit(sc, sc->gtrig, sc->ngtrig, pp, pl)) == NULL)
		goto out;
	if (sc->ntrig == 0) {
		rc = 0;
		goto out;
	}
	if ((sc->mt = trig_mlit(sc, sc->trig, sc->ntrig, pp, pl)) == NULL)
		goto out;
	/*
	 * The prefilters of scan_trig_maybe: the triggers a scan of a
	 * signature reports, and those a scan of a run as it is reports,
	 * each with its own stride (a run's are as long as the patterns).
	 */
	for (k = 0; k < 2; k++) {
		unsigned want = k == 0 ? TRIG_SIG : TRIG_REV | TRIG_R47;

		for (i = 0, j = 0; i < sc->ntrig; i++)
			if ((sc->trig[i].kind & want) &&
			    (k == 0 || !(sc->trig[i].kind & TRIG_SIG))) {
				pp[j] = sc->tarena.p + sc->trig[i].off;
				pl[j++] = sc->trig[i].len;
			}
		if (j > 0 && (sc->mtk[k] = mlit_new(pp, pl, j)) == NULL)
			goto out;
	}
	rc = 0;
out:
	free(b.p);
	free(pp);
	free(pl);
	return rc;
}

struct trig_ctx {
	const struct scan *sc;
	unsigned kinds;
	scan_trig_cb cb;
	void *ctx;
};

static int
on_trig(void *vctx, size_t pat, size_t start)
{
	struct trig_ctx *t = vctx;
	const struct scan_trig *tr = &t->sc->trig[pat];

	/* a signature's trigger only in a signature */
	if ((tr->kind & t->kinds) == 0 ||
	    ((tr->kind & TRIG_SIG) && !(t->kinds & TRIG_SIG)))
		return 0;
	return t->cb(t->ctx, tr, start);
}

int
scan_trig_scan(const struct scan *sc, const unsigned char *p, size_t n,
    unsigned kinds, scan_trig_cb cb, void *ctx)
{
	struct trig_ctx t = { sc, kinds, cb, ctx };

	if (sc->mt == NULL)
		return 0;
	return mlit_scan(sc->mt, p, n, on_trig, &t);
}

struct group_ctx {
	const struct scan *sc;
	scan_trig_cb cb;
	void *ctx;
};

static int
on_group_trig(void *vctx, size_t pat, size_t start)
{
	struct group_ctx *g = vctx;

	return g->cb(g->ctx, &g->sc->gtrig[pat], start);
}

int
scan_group_scan(const struct scan *sc, const unsigned char *p, size_t n,
    scan_trig_cb cb, void *ctx)
{
	struct group_ctx g = { sc, cb, ctx };

	if (sc->mg == NULL)
		return 0;
	return mlit_scan(sc->mg, p, n, on_group_trig, &g);
}

int
scan_group_hex(const struct scan *sc)
{
	return sc->g_hex;
}

/* Is gram one of m's sampled grams (the exact table, not the bitmap)? */
static inline int
mlit_has(const struct mlit *m, uint32_t gram)
{
	uint32_t h = (gram * SLOT_MUL) >> (32 - m->sbits);
	uint32_t mask = ((uint32_t)1 << m->sbits) - 1;

	if (!MBIT(m, gram))
		return 0;
	for (;; h = (h + 1) & mask) {
		if (m->slots[h].count == 0)
			return 0;
		if (m->slots[h].gram == gram)
			return 1;
	}
}

/*
 * Tables for the rotation signature of sampled grams, by the last letter
 * before a byte (0 none, 1..26 'a'..'z'): the byte's signature, and the
 * last letter after it.
 */
static unsigned char sig_of[27][256];
static unsigned char sig_last[27][256];

static void
sig_init_once(void)
{
	int c, pv;

	for (pv = 0; pv < 27; pv++)
		for (c = 0; c < 256; c++) {
			int l = (c | 0x20) - 'a';

			if (!scan_is_letter((unsigned)c)) {
				sig_of[pv][c] = (unsigned char)c;
				sig_last[pv][c] = (unsigned char)pv;
				continue;
			}
			sig_of[pv][c] = pv == 0 ?
			    1 :
			    (unsigned char)((c >= 'a' ? 'a' : 'A') +
				(l - (pv - 1) + 26) % 26);
			sig_last[pv][c] = (unsigned char)(l + 1);
		}
}

static void
sig_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sig_init_once);
}

int
scan_trig_maybe(const struct scan *sc, const unsigned char *p, size_t n,
    int sig)
{
	const struct mlit *m = sc->mtk[sig ? 0 : 1];
	size_t S, i, j, last;
	unsigned prev = 0; /* the last letter before sample i */
	uint32_t gram;

	if (m == NULL || n < m->minlen)
		return 0;
	sig_init();
	S = m->stride;
	last = n - 4;
	for (i = 0; i <= last; i += S) {
		if (sig) {
			/* as scan_rot_sig() computes them */
			unsigned p1 = sig_last[prev][p[i]];
			unsigned p2 = sig_last[p1][p[i + 1]];
			unsigned p3 = sig_last[p2][p[i + 2]];
			unsigned char g[4] = { sig_of[prev][p[i]],
				sig_of[p1][p[i + 1]], sig_of[p2][p[i + 2]],
				sig_of[p3][p[i + 3]] };

			memcpy(&gram, g, 4);
			/* on to the next sample (if any): its last letter
			 * before */
			for (j = i + S <= last ? i + S : i; j > i; j--)
				if (sig_last[0][p[j - 1]] != 0) {
					prev = sig_last[0][p[j - 1]];
					break;
				}
		} else
			gram = load32(p + i);
		if (mlit_has(m, gram))
			return 1;
	}
	return 0;
}

size_t
scan_trig_differ(const struct scan *sc, const unsigned char *p, size_t n,
    size_t *hits)
{
	const struct mlit *m = sc->mtk[0];
	unsigned char sig[72];
	size_t s, l, i, bad = 0;
	uint32_t gram;
	int a, b;

	for (s = 0; m != NULL && s < n; s++)
		for (l = 0; l <= sizeof(sig) && s + l <= n; l++) {
			a = scan_trig_maybe(sc, p + s, l, 1);
			b = 0;
			if (l >= m->minlen) {
				scan_rot_sig(p + s, l, sig);
				for (i = 0; i + 4 <= l && !b; i += m->stride) {
					memcpy(&gram, sig + i, 4);
					b = mlit_has(m, gram);
				}
			}
			bad += a != b;
			*hits += (size_t)a;
		}
	return bad;
}

const unsigned char *
scan_secret_bytes(const struct scan *sc, size_t i, size_t *len)
{
	*len = sc->slen[i];
	return sc->secret[i];
}

size_t
scan_min_secret(const struct scan *sc)
{
	return sc->minsecret;
}

size_t
scan_nsecrets(const struct scan *sc)
{
	return sc->nsecrets;
}

size_t
scan_maxspan(const struct scan *sc)
{
	return 5 * (sc->maxlen + 2);
}

size_t
scan_npatterns(const struct scan *sc)
{
	return sc->npats;
}

void
scan_pattern(const struct scan *sc, size_t i, const unsigned char **p,
    size_t *len, size_t *secret, const char **form)
{
	*p = sc->arena.p + sc->pats[i].off;
	*len = sc->pats[i].len;
	*secret = sc->pats[i].secret;
	*form = sc->names[sc->pats[i].form];
}

/* ---------------------------------------------------------------- */
/* Scanning. */

struct scan_ctx {
	const struct scan *sc;
	const unsigned char *buf;
	size_t n;
	struct scan_result *res;
	int wrapped;
	/* the joined buffer's map back to the original (wrapped pass) */
	const size_t *seg_j, *seg_o;
	size_t nseg;
};

int
scan_res_push(struct scan_result *res, const struct scan_finding *f)
{
	if (res->n == res->cap) {
		size_t cap = res->cap ? 2 * res->cap : 16;
		struct scan_finding *v = realloc(res->v, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		res->v = v;
		res->cap = cap;
	}
	res->v[res->n++] = *f;
	return 0;
}

/* The radix digit at buf[i], accepting JSON's "\/" for "/"; -1 if none. */
static int
digit_at(const unsigned char *buf, size_t n, size_t i, int alpha)
{
	if (i >= n)
		return -1;
	if (buf[i] == '\\' && i + 1 < n && buf[i + 1] == '/')
		return radix_value[alpha]['/'];
	return radix_value[alpha][buf[i]];
}

/* Do the partial digits around a radix match carry the secret's bits? */
static int
radix_ok(const struct pat *p, const unsigned char *buf, size_t n, size_t start)
{
	int v;

	if (p->lead_bits > 0) {
		if (start == 0)
			return 0;
		v = radix_value[p->alpha][buf[start - 1]];
		if (v < 0 ||
		    ((unsigned)v & ((1u << p->lead_bits) - 1)) != p->lead_val)
			return 0;
	}
	if (p->trail_bits > 0) {
		v = digit_at(buf, n, start + p->len, p->alpha);
		if (v < 0 ||
		    ((unsigned)v >> (p->width - p->trail_bits)) != p->trail_val)
			return 0;
	}
	return 1;
}

/*
 * Decodes c (2 to 5) base85 digits at p into 4 bytes, the missing digits
 * taken as the highest (how a short last group is decoded). Returns 0, or
 * -1 when a character is not a digit or the value overflows.
 */
static int
b85_decode(const unsigned char *p, size_t c, int alpha, unsigned char g[4])
{
	uint64_t v = 0;
	size_t i;
	int d;

	for (i = 0; i < 5; i++) {
		d = i < c ? b85_value[alpha][p[i]] : 84;
		if (d < 0)
			return -1;
		v = v * 85 + (unsigned)d;
	}
	if (v > 0xffffffffu)
		return -1;
	g[0] = (unsigned char)(v >> 24);
	g[1] = (unsigned char)(v >> 16);
	g[2] = (unsigned char)(v >> 8);
	g[3] = (unsigned char)v;
	return 0;
}

/*
 * Do the base85 groups around a match hold the secret's first and last
 * bytes? The group after may be a short last group, of any length that
 * holds the bytes (a quote after it may itself be a digit).
 */
static int
b85_ok(const struct scan *sc, const struct pat *p, const unsigned char *buf,
    size_t n, size_t start)
{
	const unsigned char *s = sc->secret[p->secret];
	size_t slen = sc->slen[p->secret], e = start + p->len, avail = 0, c;
	unsigned char g[4];

	if (p->b85_lead > 0) {
		if (start < 5 ||
		    b85_decode(buf + start - 5, 5, p->b85, g) != 0 ||
		    memcmp(g + 4 - p->b85_lead, s, p->b85_lead) != 0)
			return 0;
	}
	if (p->b85_trail == 0)
		return 1;
	while (avail < 5 && e + avail < n &&
	    b85_value[p->b85][buf[e + avail]] >= 0)
		avail++;
	for (c = avail; c > p->b85_trail; c--)
		if (b85_decode(buf + e, c, p->b85, g) == 0 &&
		    memcmp(g, s + slen - p->b85_trail, p->b85_trail) == 0)
			return 1;
	return 0;
}

/* Maps an offset in the joined buffer to the original buffer. */
static size_t
seg_map(const struct scan_ctx *c, size_t j)
{
	size_t lo = 0, hi = c->nseg;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (c->seg_j[mid] <= j)
			lo = mid;
		else
			hi = mid;
	}
	return c->seg_o[lo] + (j - c->seg_j[lo]);
}

static int
on_match(void *ctx, size_t pi, size_t start)
{
	struct scan_ctx *c = ctx;
	const struct pat *p = &c->sc->pats[pi];
	struct scan_finding f;

	if (p->alpha != AL_NONE && !radix_ok(p, c->buf, c->n, start))
		return 0;
	if (p->b85 != B85_NONE && !b85_ok(c->sc, p, c->buf, c->n, start))
		return 0;
	f.secret = p->secret;
	f.pattern = (unsigned)pi;
	f.wrapped = (unsigned char)c->wrapped;
	f.xform = 0;
	if (!c->wrapped) {
		f.form = c->sc->names[p->form];
		f.offset = start;
		f.length = p->len;
	} else {
		f.form = c->sc->names[p->wform];
		f.offset = seg_map(c, start);
		f.length = seg_map(c, start + p->len - 1) + 1 - f.offset;
	}
	return scan_res_push(c->res, &f);
}

static inline int
is_enc(unsigned char c)
{
	return enc_char[c];
}

/* The length of a line break token at buf[i], or 0. */
static size_t
break_at(const unsigned char *buf, size_t n, size_t i)
{
	if (buf[i] == '\n')
		return 1;
	if (buf[i] == '\r' && i + 1 < n && buf[i + 1] == '\n')
		return 2;
	if (buf[i] == '\\' && i + 1 < n && buf[i + 1] == 'n')
		return 2;
	if (buf[i] == '\\' && i + 3 < n && buf[i + 1] == 'r' &&
	    buf[i + 2] == '\\' && buf[i + 3] == 'n')
		return 4;
	return 0;
}

/* An encoded character at i ("\/" counts as one); returns its size or 0. */
static size_t
enc_at(const unsigned char *buf, size_t n, size_t i)
{
	if (i >= n)
		return 0;
	if (buf[i] == '\\' && i + 1 < n && buf[i + 1] == '/')
		return 2;
	return is_enc(buf[i]) ? 1 : 0;
}

#define WRAP_MIN_LINE 16

/*
 * The size of the encoded character ending at j (exclusive), not going
 * below floor: 2 for "\/", 1, or 0 when there is none. The letters of an
 * escaped line break ("\n", "\r") do not count.
 */
static size_t
enc_before(const unsigned char *buf, size_t j, size_t floor)
{
	unsigned char c;

	if (j <= floor)
		return 0;
	c = buf[j - 1];
	if (j - 1 > floor && buf[j - 2] == '\\') {
		if (c == '/')
			return 2;
		if (c == 'n' || c == 'r')
			return 0;
	}
	return is_enc(c) ? 1 : 0;
}

/* Where the run of encoded text ending at j starts, at most max chars. */
static size_t
run_start(const unsigned char *buf, size_t j, size_t floor, size_t max,
    size_t *count)
{
	size_t w, k = 0;

	/* 16 at a time while they are encoded characters, none escaped */
	while (k + 16 <= max && j >= floor + 17 && buf[j - 17] != '\\' &&
	    scan_b64_all16(buf + j - 16)) {
		j -= 16;
		k += 16;
	}
	while (k < max && (w = enc_before(buf, j, floor)) != 0) {
		j -= w;
		k++;
	}
	*count = k;
	return j;
}

/*
 * Whether a line break scan_wrapped() may take starts at j: a '\n' but
 * one before '{' (a JSON line's start), a "\\r", a "\\n" but one before
 * a blank, '"' or "\\\"" (a JSON text's escapes, the end of its string):
 * what comes after those is no encoded character (enc_at), so no break
 * there starts a region.
 */
static inline int
break_cand(const unsigned char *buf, size_t j, size_t n)
{
	if (buf[j] == '\n')
		return !(j + 1 < n && buf[j + 1] == '{');
	if (buf[j] != '\\' || j + 1 >= n)
		return 0;
	if (buf[j + 1] == 'r')
		return 1;
	return buf[j + 1] == 'n' &&
	    !(j + 2 < n &&
		(buf[j + 2] == ' ' || buf[j + 2] == '"' ||
		    (buf[j + 2] == '\\' && j + 3 < n && buf[j + 3] == '"')));
}

/*
 * The first j at or after i where break_cand() holds, or n; 16 bytes
 * at a time where the 3 after them may be read.
 */
static inline size_t
next_break_sse2(const unsigned char *buf, size_t i, size_t n)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), bs = _mm_set1_epi8('\\');

	while (i + 19 <= n) {
		__m128i v = _mm_loadu_si128(
		    (const __m128i *)(const void *)(buf + i));
		__m128i b = _mm_cmpeq_epi8(v, bs), nlm = _mm_cmpeq_epi8(v, nl);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(nlm, b));

		if (m != 0) {
			/* the '\n' and '\\' that may start a break */
			__m128i v1 = _mm_loadu_si128(
			    (const __m128i *)(const void *)(buf + i + 1));

			nlm = _mm_andnot_si128(_mm_cmpeq_epi8(v1,
						   _mm_set1_epi8('{')),
			    nlm);
			if (_mm_movemask_epi8(b) != 0) {
				__m128i v2 = _mm_loadu_si128(
				    (const __m128i *)(const void *)(buf + i +
					2));
				__m128i v3 = _mm_loadu_si128(
				    (const __m128i *)(const void *)(buf + i +
					3));
				__m128i q = _mm_set1_epi8('"');
				__m128i n1 = _mm_cmpeq_epi8(v1,
				    _mm_set1_epi8('n'));
				__m128i r1 = _mm_cmpeq_epi8(v1,
				    _mm_set1_epi8('r'));
				__m128i no2 =
				    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v2,
								  _mm_set1_epi8(
								      ' ')),
						     _mm_cmpeq_epi8(v2, q)),
					_mm_and_si128(_mm_cmpeq_epi8(v2, bs),
					    _mm_cmpeq_epi8(v3, q)));

				nlm = _mm_or_si128(nlm,
				    _mm_and_si128(b,
					_mm_or_si128(_mm_andnot_si128(no2, n1),
					    r1)));
			}
			m = (unsigned)_mm_movemask_epi8(nlm);
		}
		if (m != 0)
			return i + (size_t)__builtin_ctz(m);
		i += 16;
	}
#endif
	while (i < n && !break_cand(buf, i, n))
		i++;
	return i;
}

#ifdef SCAN_AVX2
/*
 * next_break_sse2, 32 bytes at a time while the 3 bytes after them may
 * be read; it then goes on where this stops.
 */
SCAN_AVX2 static size_t
next_break_avx2(const unsigned char *buf, size_t i, size_t n)
{
	const __m256i nl = _mm256_set1_epi8('\n'), bs = _mm256_set1_epi8('\\');

	while (i + 35 <= n) {
		__m256i v = _mm256_loadu_si256(
		    (const __m256i *)(const void *)(buf + i));
		__m256i b = _mm256_cmpeq_epi8(v, bs),
			nlm = _mm256_cmpeq_epi8(v, nl);
		uint32_t m = (uint32_t)_mm256_movemask_epi8(
		    _mm256_or_si256(nlm, b));

		if (m != 0) {
			__m256i v1 = _mm256_loadu_si256(
			    (const __m256i *)(const void *)(buf + i + 1));

			nlm = _mm256_andnot_si256(_mm256_cmpeq_epi8(v1,
						      _mm256_set1_epi8('{')),
			    nlm);
			if (!_mm256_testz_si256(b, b)) {
				__m256i v2 = _mm256_loadu_si256(
				    (const __m256i *)(const void *)(buf + i +
					2));
				__m256i v3 = _mm256_loadu_si256(
				    (const __m256i *)(const void *)(buf + i +
					3));
				__m256i q = _mm256_set1_epi8('"');
				__m256i n1 = _mm256_cmpeq_epi8(v1,
				    _mm256_set1_epi8('n'));
				__m256i r1 = _mm256_cmpeq_epi8(v1,
				    _mm256_set1_epi8('r'));
				__m256i no2 = _mm256_or_si256(
				    _mm256_or_si256(_mm256_cmpeq_epi8(v2,
							_mm256_set1_epi8(' ')),
					_mm256_cmpeq_epi8(v2, q)),
				    _mm256_and_si256(_mm256_cmpeq_epi8(v2, bs),
					_mm256_cmpeq_epi8(v3, q)));

				nlm = _mm256_or_si256(nlm,
				    _mm256_and_si256(b,
					_mm256_or_si256(_mm256_andnot_si256(no2,
							    n1),
					    r1)));
			}
			m = (uint32_t)_mm256_movemask_epi8(nlm);
		}
		if (m != 0)
			return i + (size_t)__builtin_ctz(m);
		i += 32;
	}
	return next_break_sse2(buf, i, n);
}
#endif

#ifdef SCAN_AVX2
/*
 * The classes of a byte by its low and its high half: a byte is in a
 * class when a bit of the class is set in both. Base64 and '=' (bits 0
 * to 4): '+' '-' '/' (high 2), '0'-'9' '=' (3), 'A'-'O' 'a'-'o' (4, 6),
 * 'P'-'Z' 'p'-'z' (5, 7), '_' (5); hex digits (bits 5 and 6): '0'-'9',
 * 'A'-'F' 'a'-'f'. A high half of 8 or more is in none.
 */
#define CLS_B64 0x1f
#define CLS_HEX 0x60

/* the bytes of v in CLS_B64 (*hexm: in CLS_HEX): bit k clear for v[k] */
SCAN_AVX2 static inline __attribute__((always_inline)) uint32_t
b64_out32(__m256i v, uint32_t *hexm)
{
	const __m256i lo = _mm256_setr_epi8(0x2a, 0x6e, 0x6e, 0x6e, 0x6e, 0x6e,
	    0x6e, 0x2e, 0x2e, 0x2e, 0x0c, 0x05, 0x04, 0x07, 0x04, 0x15, 0x2a,
	    0x6e, 0x6e, 0x6e, 0x6e, 0x6e, 0x6e, 0x2e, 0x2e, 0x2e, 0x0c, 0x05,
	    0x04, 0x07, 0x04, 0x15);
	const __m256i hi = _mm256_setr_epi8(0, 0, 0x01, 0x22, 0x44, 0x18, 0x44,
	    0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x22, 0x44, 0x18, 0x44,
	    0x08, 0, 0, 0, 0, 0, 0, 0, 0);
	const __m256i k0f = _mm256_set1_epi8(0x0f), z = _mm256_setzero_si256();
	__m256i c = _mm256_and_si256(_mm256_shuffle_epi8(lo,
					 _mm256_and_si256(v, k0f)),
	    _mm256_shuffle_epi8(hi,
		_mm256_and_si256(_mm256_srli_epi16(v, 4), k0f)));

	if (hexm != NULL)
		*hexm = (uint32_t)_mm256_movemask_epi8(
		    _mm256_cmpeq_epi8(_mm256_and_si256(c,
					  _mm256_set1_epi8(CLS_HEX)),
			z));
	return (uint32_t)_mm256_movemask_epi8(
	    _mm256_cmpeq_epi8(_mm256_and_si256(c, _mm256_set1_epi8(CLS_B64)),
		z));
}

/*
 * The walk of scan_b64_span_avx2; hex NULL or not is a constant where
 * it is inlined, so the walk without it computes no hex digits.
 */
SCAN_AVX2 static inline __attribute__((always_inline)) size_t
b64_span_(const unsigned char *buf, size_t i, size_t n, int *hex)
{
	uint32_t out, hm = 0, hacc = 0;
	unsigned sh = 0;

	for (;; i += 32) {
		if (i + 32 > n) { /* the tail: the last 32 bytes again */
			if (i >= n)
				break;
			sh = (unsigned)(i - (n - 32));
			out = b64_out32(_mm256_loadu_si256((
					    const __m256i *)(const void *)(buf +
					    n - 32)),
				  hex != NULL ? &hm : NULL) >>
			    sh;
			hm >>= sh;
			out |= ~(~0u >> sh); /* n: the end */
		} else
			out = b64_out32(_mm256_loadu_si256((
					    const __m256i *)(const void *)(buf +
					    i)),
			    hex != NULL ? &hm : NULL);
		if (out != 0) {
			unsigned k = (unsigned)__builtin_ctz(out);

			hacc |= hm & ((1u << k) - 1);
			i += k;
			break;
		}
		hacc |= hm;
	}
	if (hex != NULL && hacc != 0)
		*hex = 0;
	return i;
}

SCAN_AVX2 size_t
scan_b64_span_avx2(const unsigned char *buf, size_t i, size_t n)
{
	return b64_span_(buf, i, n, NULL);
}

SCAN_AVX2 size_t
scan_b64_hex_span_avx2(const unsigned char *buf, size_t i, size_t n, int *hex)
{
	return b64_span_(buf, i, n, hex);
}
#endif

static size_t
next_break_char(const unsigned char *buf, size_t i, size_t n)
{
#ifdef SCAN_AVX2
	if (scan_avx2)
		return next_break_avx2(buf, i, n);
#endif
	return next_break_sse2(buf, i, n);
}

int scan_avx2;

static void
simd_init(void)
{
#ifdef SCAN_AVX2
	scan_avx2 = __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#endif
}

void
scan_simd_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, simd_init);
}

int
scan_simd_set(int on)
{
	scan_simd_init();
	simd_init();
	if (!on)
		scan_avx2 = 0;
	return scan_avx2;
}

size_t
scan_simd_differ(const unsigned char *p, size_t n)
{
	size_t bad = 0;
#ifdef SCAN_AVX2
	size_t i, e;

	if (!scan_simd_set(1))
		return 0;
	/* every start, and ends short of n (the tails) */
	for (e = n > 40 ? n - 40 : 0; e <= n; e++)
		for (i = 0; i <= e; i++) {
			size_t k = next_break_sse2(p, i, e), j = i;

			/* and the byte loop */
			while (j < e && !break_cand(p, j, e))
				j++;
			bad += next_break_avx2(p, i, e) != k || k != j;
		}
#endif
	return bad + scan_span_differ(p, n) + scan_decode_simd_differ(p, n) +
	    scan_xform_simd_differ(p, n);
}

size_t
scan_span_differ(const unsigned char *p, size_t n)
{
	size_t bad = 0;
#ifdef SCAN_AVX2
	size_t i, e, j;

	radix_init();
	if (!scan_simd_set(1))
		return 0;
	for (e = n > 40 ? n - 40 : 0; e <= n; e++)
		for (i = 0; i + 32 <= e; i++) {
			int hex = 1, hx = 1;

			/* the byte loop, and its hex digits */
			for (j = i; j < e && enc_char[p[j]]; j++)
				hx &= (p[j] >= '0' && p[j] <= '9') ||
				    ((p[j] | 0x20) >= 'a' &&
					(p[j] | 0x20) <= 'f');
			bad += scan_b64_hex_span_avx2(p, i, e, &hex) != j ||
			    hex != hx || scan_b64_span_avx2(p, i, e) != j;
		}
#else
	(void)p;
	(void)n;
#endif
	return bad;
}

int
scan_lit_maybe(const struct scan *sc, const unsigned char *p, size_t n)
{
	const struct mlit *m = sc->m;
	size_t i, k, b, t, cnt;

	if (n >= m->minlen)
		for (i = 0; i + 4 <= n; i += m->stride)
			if (mlit_has(m, load32(p + i)))
				return 1;
	/* a line break as scan_wrapped() takes one, from any floor */
	for (i = 0; (k = next_break_char(p, i, n)) < n; i = k + 1) {
		b = p[k] == '\n' && k > 0 && p[k - 1] == '\r' ? k - 1 : k;
		t = break_at(p, n, b);
		if (t == 0 || enc_at(p, n, b + t) == 0)
			continue;
		run_start(p, b, 0, WRAP_MIN_LINE, &cnt);
		if (cnt >= WRAP_MIN_LINE)
			return 1;
	}
	return 0;
}

struct joiner {
	struct buf j;
	size_t *seg_j, *seg_o;
	size_t nseg, capseg;
	int oom;
};

static void
join_seg(struct joiner *jn, size_t jo, size_t oo)
{
	if (jn->nseg > 0 &&
	    jn->seg_o[jn->nseg - 1] + (jo - jn->seg_j[jn->nseg - 1]) == oo)
		return; /* contiguous: same segment */
	if (jn->nseg == jn->capseg) {
		size_t cap = jn->capseg ? 2 * jn->capseg : 64;
		size_t *a = realloc(jn->seg_j, cap * sizeof(*a));

		if (a == NULL) {
			jn->oom = 1;
			return;
		}
		jn->seg_j = a;
		a = realloc(jn->seg_o, cap * sizeof(*a));
		if (a == NULL) {
			jn->oom = 1;
			return;
		}
		jn->seg_o = a;
		jn->capseg = cap;
	}
	jn->seg_j[jn->nseg] = jo;
	jn->seg_o[jn->nseg] = oo;
	jn->nseg++;
}

/* The wrapped pass's position, so it can run block by block. */
struct wrap_state {
	struct joiner jn;
	size_t i;     /* next candidate position */
	size_t floor; /* end of the last region */
};

/*
 * The wrapped pass over the break candidates before upto: finds runs of
 * encoded text split by line breaks, joins each and scans it. Findings go
 * to res with the "+wrapped" forms. Returns 0, or -1 when out of memory.
 */
static int
scan_wrapped(const struct scan *sc, const unsigned char *buf, size_t n,
    size_t upto, struct wrap_state *w, struct scan_result *res)
{
	struct joiner *jn = &w->jn;
	struct scan_ctx c;
	size_t t, start, k, e, cnt;

	if (upto > n)
		upto = n;
	while (w->i < upto) {
		k = next_break_char(buf, w->i, upto);
		if (k >= upto) {
			w->i = upto;
			break;
		}
		w->i = k + 1;
		if (buf[k] == '\n' && k > w->floor && buf[k - 1] == '\r')
			k--;
		t = break_at(buf, n, k);
		if (t == 0 || enc_at(buf, n, k + t) == 0)
			continue;
		run_start(buf, k, w->floor, WRAP_MIN_LINE, &cnt);
		if (cnt < WRAP_MIN_LINE)
			continue;
		/* a region: back to the start of the run, then forward */
		start = run_start(buf, k, w->floor, SIZE_MAX, &cnt);
		jn->j.n = 0;
		jn->nseg = 0;
		e = start;
		for (;;) {
			size_t r = scan_b64_span(buf, e, n, enc_char);

			if (r > e) {
				join_seg(jn, jn->j.n, e);
				buf_put(&jn->j, buf + e, r - e);
				e = r;
			}
			if (e + 1 < n && buf[e] == '\\' && buf[e + 1] == '/') {
				join_seg(jn, jn->j.n, e + 1);
				buf_putc(&jn->j, '/');
				e += 2;
				continue;
			}
			if (e < n && (t = break_at(buf, n, e)) != 0 &&
			    enc_at(buf, n, e + t) != 0) {
				e += t;
				continue;
			}
			break;
		}
		if (jn->j.oom || jn->oom)
			return -1;
		memset(&c, 0, sizeof(c));
		c.sc = sc;
		c.buf = jn->j.p;
		c.n = jn->j.n;
		c.res = res;
		c.wrapped = 1;
		c.seg_j = jn->seg_j;
		c.seg_o = jn->seg_o;
		c.nseg = jn->nseg;
		if (mlit_scan(sc->m, jn->j.p, jn->j.n, on_match, &c) != 0)
			return -1;
		w->floor = e;
		if (e > w->i)
			w->i = e;
	}
	return 0;
}

static int
finding_cmp(const void *a, const void *b)
{
	const struct scan_finding *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->secret != y->secret)
		return x->secret < y->secret ? -1 : 1;
	if (x->pattern != y->pattern)
		return x->pattern < y->pattern ? -1 : 1;
	return (int)x->wrapped - (int)y->wrapped;
}

/*
 * Sorts r's findings, and keeps one per (offset, secret, pattern), the
 * unwrapped first, and none of a transform that holds a finding of the
 * same secret made without one.
 */
static void
findings_sort(struct scan_result *r)
{
	size_t i, k;

	if (r->n > 1)
		qsort(r->v, r->n, sizeof(*r->v), finding_cmp);
	/* one finding per (offset, secret, pattern): the unwrapped first */
	for (i = 0, k = 0; i < r->n; i++) {
		if (k > 0 && r->v[k - 1].offset == r->v[i].offset &&
		    r->v[k - 1].secret == r->v[i].secret &&
		    r->v[k - 1].pattern == r->v[i].pattern &&
		    (!r->v[i].xform || r->v[k - 1].form == r->v[i].form))
			continue;
		r->v[k++] = r->v[i];
	}
	r->n = k;
	/*
	 * A transform's finding that holds a finding of the same secret
	 * made without one (a literal form, a dump) says nothing more.
	 */
	for (i = 0, k = 0; i < r->n; i++) {
		size_t j, a = r->v[i].offset, b = a + r->v[i].length;
		int held = 0;

		for (j = i; j > 0 && r->v[j - 1].offset == a; j--)
			;
		for (; j < r->n && r->v[j].offset < b && r->v[i].xform && !held;
		     j++)
			held = !r->v[j].xform &&
			    r->v[j].secret == r->v[i].secret &&
			    r->v[j].offset + r->v[j].length <= b;
		if (!held)
			r->v[k++] = r->v[i];
	}
	r->n = k;
}

int
scan_buffer_memo(const struct scan *sc, const void *data, size_t len,
    struct scan_result *res, struct scan_memo *memo)
{
	struct scan_budget bg;
	int rc;

	bg.left = len > (SIZE_MAX - SCAN_DECODE_MIN) / SCAN_DECODE_FACTOR ?
	    SIZE_MAX :
	    len * SCAN_DECODE_FACTOR + SCAN_DECODE_MIN;
	bg.maxdepth = SCAN_DECODE_DEPTH;
	bg.work = SCAN_DECODE_WORK_MIN +
	    (uint64_t)len * SCAN_DECODE_WORK_PER_BYTE;
	bg.hit = 0;
	bg.memo = memo;
	rc = scan_at(sc, data, len, 0, &bg, res);
	res->budget |= bg.hit;
	return rc;
}

int
scan_buffer(const struct scan *sc, const void *data, size_t len,
    struct scan_result *res)
{
	struct scan_memo memo;
	int rc;

	memset(&memo, 0, sizeof(memo));
	rc = scan_buffer_memo(sc, data, len, res, &memo);
	scan_memo_clear(&memo);
	return rc;
}

static int scan_at_(const struct scan *sc, const unsigned char *data,
    size_t len, unsigned depth, struct scan_budget *bg, struct scan_result *res,
    int decode);

int
scan_at(const struct scan *sc, const unsigned char *data, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res)
{
	return scan_at_(sc, data, len, depth, bg, res, 1);
}

int
scan_lit(const struct scan *sc, const unsigned char *data, size_t len,
    struct scan_result *res)
{
	return scan_at_(sc, data, len, 0, NULL, res, 0);
}

static int
scan_at_(const struct scan *sc, const unsigned char *data, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res, int decode)
{
	const unsigned char *buf = data;
	struct scan_result r = { 0 };
	struct wrap_state w;
	struct scan_ctx c;
	size_t need, block, from;

	memset(&c, 0, sizeof(c));
	c.sc = sc;
	c.buf = buf;
	c.n = len;
	c.res = &r;
	memset(&w, 0, sizeof(w));
	/*
	 * Both passes block by block, so the second finds the block still in
	 * the cache; the block is a multiple of the stride.
	 */
	block = sc->m->stride * 4096;
	for (from = 0; from < len; from += block) {
		if (mlit_scan_range(sc->m, buf, len, from, from + block,
			on_match, &c) != 0 ||
		    scan_wrapped(sc, buf, len, from + block, &w, &r) != 0)
			goto oom;
	}
	if (decode &&
	    (decode_pass(sc, buf, len, depth, bg, &r) != 0 ||
		xform_pass(sc, buf, len, depth, bg, &r) != 0))
		goto oom;
	findings_sort(&r);
	free(w.jn.j.p);
	free(w.jn.seg_j);
	free(w.jn.seg_o);
	need = res->n + r.n;
	if (need > res->cap) {
		struct scan_finding *v = realloc(res->v, need * sizeof(*v));

		if (v == NULL)
			goto oom;
		res->v = v;
		res->cap = need;
	}
	if (r.n > 0)
		memcpy(res->v + res->n, r.v, r.n * sizeof(*r.v));
	res->n = need;
	free(r.v);
	return 0;
oom:
	free(w.jn.j.p);
	free(w.jn.seg_j);
	free(w.jn.seg_o);
	free(r.v);
	return -1;
}

/*
 * A file read in chunks into one buffer that stays in the cache (mapping
 * the file costs a TLB miss per page, which is more than the scan). Each
 * round scans [context | new part | lookahead] and keeps the findings that
 * start in the new part; the next round's context is the end of this
 * one's new part, its new part begins with this one's lookahead. Context
 * and lookahead (span + 4 KiB each) hold any whole match, wrapped ones
 * included (at most a 4-byte break after every digit), the digit before
 * it, and enough of a wrapped run to recognize it.
 */
int
scan_fd(const struct scan *sc, int fd, struct scan_result *res)
{
	struct scan_result r = { 0 };
	struct scan_memo memo; /* one for the whole file: runs come back */
	size_t carry = 5 * (sc->maxlen + 2) + 4096;
	size_t chunk = carry * 4 > (512u << 10) ? carry * 4 : (512u << 10);
	size_t cap = chunk + 2 * carry, have = 0, own = 0, limit, keep, i;
	unsigned long long base = 0;
	unsigned char *buf;
	int eof = 0, e;
	ssize_t got;
	struct stat st;

	/*
	 * A regular file up to SCAN_FD_WHOLE is read whole, so a compressed
	 * or encoded region is decoded whole, not cut at a chunk's end.
	 */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
	    (unsigned long long)st.st_size <= SCAN_FD_WHOLE &&
	    (size_t)st.st_size + 1 > cap)
		cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap)) == NULL)
		return -1;
	memset(&memo, 0, sizeof(memo));
	for (;;) {
		while (have < cap && !eof) {
			got = read(fd, buf + have, cap - have);
			if (got == -1 && errno == EINTR)
				continue;
			if (got == -1)
				goto fail;
			if (got == 0)
				eof = 1;
			have += (size_t)got;
		}
		limit = eof ? have : have - carry;
		r.n = 0;
		if (scan_buffer_memo(sc, buf, have, &r, &memo) != 0) {
			errno = ENOMEM;
			goto fail;
		}
		res->budget |= r.budget;
		r.budget = 0;
		for (i = 0; i < r.n; i++) {
			struct scan_finding f = r.v[i];

			if (f.offset < own || f.offset >= limit)
				continue;
			f.offset += (size_t)base;
			if (scan_res_push(res, &f) != 0) {
				errno = ENOMEM;
				goto fail;
			}
		}
		if (eof)
			break;
		keep = limit > carry ? limit - carry : 0;
		memmove(buf, buf + keep, have - keep);
		base += keep;
		have -= keep;
		own = limit - keep;
	}
	free(r.v);
	free(buf);
	scan_memo_clear(&memo);
	return 0;
fail:
	e = errno;
	free(r.v);
	free(buf);
	scan_memo_clear(&memo);
	errno = e;
	return -1;
}

void
scan_result_free(struct scan_result *res)
{
	free(res->v);
	res->v = NULL;
	res->n = res->cap = 0;
}

/* ---------------------------------------------------------------- */
/* Partial mode. */

struct partial_ctx {
	const struct scan *sc;
	const unsigned char *buf;
	size_t n;
	struct scan_fragment *frags;
	size_t *diag_end; /* per secret: last extension */
	size_t *diag;
};

static int
on_gram(void *ctx, size_t pi, size_t start)
{
	struct partial_ctx *c = ctx;
	const struct frag_pat *fp = &c->sc->fp[pi];
	const unsigned char *s = c->sc->secret[fp->secret];
	size_t slen = c->sc->slen[fp->secret];
	size_t d = start - fp->off + slen; /* diagonal, kept positive */
	size_t l = 0, r = c->sc->pmin;
	struct scan_fragment *best = &c->frags[fp->secret];

	if (c->diag[fp->secret] == d && start < c->diag_end[fp->secret])
		return 0; /* inside the last extension */
	while (fp->off > l && start > l &&
	    c->buf[start - l - 1] == s[fp->off - l - 1])
		l++;
	while (fp->off + r < slen && start + r < c->n &&
	    c->buf[start + r] == s[fp->off + r])
		r++;
	c->diag[fp->secret] = d;
	c->diag_end[fp->secret] = start + r;
	if (l + r > best->length ||
	    (l + r == best->length && start - l < best->offset)) {
		best->length = l + r;
		best->offset = start - l;
		best->secret_offset = fp->off - l;
	}
	return 0;
}

int
scan_partial(const struct scan *sc, const void *data, size_t len,
    struct scan_fragment *frags)
{
	struct partial_ctx c;
	size_t i;
	int rc = 0;

	for (i = 0; i < sc->nsecrets; i++)
		memset(&frags[i], 0, sizeof(frags[i]));
	if (!sc->partial)
		return -1;
	if (sc->pm == NULL)
		return 0; /* every secret is shorter than the minimum */
	memset(&c, 0, sizeof(c));
	c.sc = sc;
	c.buf = data;
	c.n = len;
	c.frags = frags;
	c.diag = calloc(sc->nsecrets, sizeof(*c.diag));
	c.diag_end = calloc(sc->nsecrets, sizeof(*c.diag_end));
	if (c.diag == NULL || c.diag_end == NULL)
		rc = -1;
	else
		rc = mlit_scan(sc->pm, data, len, on_gram, &c);
	free(c.diag);
	free(c.diag_end);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Reports. */

void
scan_hash8(const void *secret, size_t len, char out[9])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int i;

	if (EVP_Digest(secret, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen < 4) {
		memcpy(out, "????????", 9);
		return;
	}
	for (i = 0; i < 4; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

char *
scan_mask(const void *secret, size_t len)
{
	const unsigned char *s = secret;
	char *out = malloc(32);
	char a, b;

	if (out == NULL)
		return NULL;
	a = len > 0 && s[0] >= 0x21 && s[0] < 0x7f ? (char)s[0] : '?';
	b = len > 1 && s[1] >= 0x21 && s[1] < 0x7f ? (char)s[1] : '?';
	snprintf(out, 32, "%c%c\xe2\x80\xa6%zu", a, b, len);
	return out;
}

/* Marks -2 in mark[0..wn) the fragments of 4 bytes or more of any
 * secret in buf[lo..lo+wn). */
static void
mark_fragments(const struct scan *sc, const unsigned char *buf, size_t lo,
    size_t wn, signed char *mark)
{
	size_t i, k, s, m;

	for (i = 0; i + 4 <= wn; i++) {
		uint32_t h = (load32(buf + lo + i) * GRAM_MUL) >> 16;

		if (!((sc->frag4[h >> 6] >> (h & 63)) & 1))
			continue;
		/* each place in a secret its 4 bytes start, then as far as
		 * they go on alike */
		for (s = 0; s < sc->nsecrets; s++) {
			const unsigned char *sp = sc->secret[s], *q = sp;

			while ((size_t)(q - sp) + 4 <= sc->slen[s] &&
			    (q = memmem(q, sc->slen[s] - (size_t)(q - sp),
				 buf + lo + i, 4)) != NULL) {
				k = (size_t)(q - sp);
				m = 4;
				while (i + m < wn && k + m < sc->slen[s] &&
				    buf[lo + i + m] == sc->secret[s][k + m])
					m++;
				memset(mark + i, -2, m);
				q++;
			}
		}
	}
}

/* Marks 0 in mark, and the secret in who, the bytes of the findings that
 * overlap the window [lo, hi) (f is sorted by offset). */
static void
mark_findings(const struct scan *sc, const struct scan_finding *f, size_t nf,
    size_t which, size_t lo, size_t hi, signed char *mark, size_t *who)
{
	size_t i, k, span;

	span = 5 * (sc->maxlen + 2);
	k = which;
	while (k > 0 && f[k - 1].offset + span > lo)
		k--;
	for (; k < nf && f[k].offset < hi; k++) {
		size_t a = f[k].offset, b = f[k].offset + f[k].length;

		if (b <= lo || a >= hi)
			continue;
		a = a < lo ? lo : a;
		b = b > hi ? hi : b;
		for (i = a; i < b; i++) {
			mark[i - lo] = 0;
			who[i - lo] = f[k].secret;
		}
	}
}

/* The window's bytes as text: findings as «secret:HASH», fragments as
 * '*', other bytes escaped. */
static void
render_window(const struct scan *sc, const unsigned char *buf, size_t len,
    size_t lo, size_t hi, const signed char *mark, const size_t *who,
    struct buf *out)
{
	size_t i, wn = hi - lo;

	if (lo > 0)
		buf_puts(out, "\xe2\x80\xa6");
	for (i = 0; i < wn; i++) {
		unsigned char ch = buf[lo + i];

		if (mark[i] == 0) {
			if (i == 0 || mark[i - 1] != 0 ||
			    who[i - 1] != who[i]) {
				buf_puts(out,
				    "\xc2\xab"
				    "secret:");
				buf_puts(out, sc->hash[who[i]]);
				buf_puts(out, "\xc2\xbb");
			}
		} else if (mark[i] == -2) {
			buf_putc(out, '*');
		} else if (ch == '\n') {
			buf_puts(out, "\\n");
		} else if (ch == '\t') {
			buf_puts(out, "\\t");
		} else if (ch == '\r') {
			buf_puts(out, "\\r");
		} else if (ch < 0x20 || ch >= 0x7f) {
			buf_puts(out, "\\x");
			buf_hex2(out, ch, 0);
		} else {
			buf_putc(out, ch);
		}
	}
	if (hi < len)
		buf_puts(out, "\xe2\x80\xa6");
}

char *
scan_snippet(const struct scan *sc, const void *data, size_t len,
    const struct scan_finding *f, size_t nf, size_t which, size_t ctx)
{
	const unsigned char *buf = data;
	struct buf out = { 0 };
	size_t lo, hi, wn;
	signed char *mark; /* -1 plain, -2 fragment, >= 0 finding */
	size_t *who;

	if (which >= nf)
		return NULL;
	lo = f[which].offset > ctx ? f[which].offset - ctx : 0;
	hi = f[which].offset + f[which].length;
	hi = hi > len ? len : hi;
	hi = len - hi > ctx ? hi + ctx : len;
	if (lo > hi)
		lo = hi;
	wn = hi - lo;
	mark = malloc(wn + 1);
	who = malloc((wn + 1) * sizeof(*who));
	if (mark == NULL || who == NULL) {
		free(mark);
		free(who);
		return NULL;
	}
	memset(mark, -1, wn + 1);
	mark_fragments(sc, buf, lo, wn, mark);
	mark_findings(sc, f, nf, which, lo, hi, mark, who);
	render_window(sc, buf, len, lo, hi, mark, who, &out);
	buf_putc(&out, '\0');
	free(mark);
	free(who);
	if (out.oom) {
		free(out.p);
		return NULL;
	}
	return (char *)out.p;
}

/* ---------------------------------------------------------------- */
/* Pieces (split). */

struct split_secret {
	struct scan_piece *v; /* found, in channel order */
	size_t n, cap;
	size_t first; /* the current segment's first */
	struct scan_piece *chain;
	size_t nchain;
	int dropped;
};

struct scan_split {
	size_t nsecrets;
	unsigned char **secret;
	size_t *slen;
	size_t min;
	struct mlit *m; /* every min-gram of every secret */
	struct frag_pat *fp;
	struct split_secret *ss;
	struct buf dec; /* a decoded run */
	/* the segment being scanned */
	size_t segment;
	const char *form;
	size_t run_off; /* offset reported for decoded */
	size_t *diag, *diag_end;
};

void
scan_split_free(struct scan_split *sp)
{
	size_t i;

	if (sp == NULL)
		return;
	for (i = 0; i < sp->nsecrets; i++) {
		free(sp->secret[i]);
		if (sp->ss != NULL) {
			free(sp->ss[i].v);
			free(sp->ss[i].chain);
		}
	}
	free(sp->secret);
	free(sp->slen);
	free(sp->ss);
	free(sp->fp);
	free(sp->diag);
	free(sp->diag_end);
	free(sp->dec.p);
	mlit_free(sp->m);
	free(sp);
}

int
scan_split_new(struct scan_split **out, const struct scan *sc, size_t min_piece)
{
	struct scan_split *sp;
	const unsigned char **pp = NULL;
	size_t *pl = NULL, i, a, n = 0;

	*out = NULL;
	if (min_piece == 0)
		min_piece = SCAN_SPLIT_MIN;
	if (min_piece < 4)
		return -1;
	if ((sp = calloc(1, sizeof(*sp))) == NULL)
		return -1;
	sp->nsecrets = sc->nsecrets;
	sp->min = min_piece;
	sp->secret = calloc(sc->nsecrets, sizeof(*sp->secret));
	sp->slen = calloc(sc->nsecrets, sizeof(*sp->slen));
	sp->ss = calloc(sc->nsecrets, sizeof(*sp->ss));
	sp->diag = calloc(sc->nsecrets, sizeof(*sp->diag));
	sp->diag_end = calloc(sc->nsecrets, sizeof(*sp->diag_end));
	if (sp->secret == NULL || sp->slen == NULL || sp->ss == NULL ||
	    sp->diag == NULL || sp->diag_end == NULL)
		goto fail;
	for (i = 0; i < sc->nsecrets; i++) {
		if ((sp->secret[i] = malloc(sc->slen[i])) == NULL)
			goto fail;
		memcpy(sp->secret[i], sc->secret[i], sc->slen[i]);
		sp->slen[i] = sc->slen[i];
		if (sc->slen[i] >= min_piece)
			n += sc->slen[i] - min_piece + 1;
	}
	if (n == 0) {
		*out = sp;
		return 0;
	}
	pp = malloc(n * sizeof(*pp));
	pl = malloc(n * sizeof(*pl));
	sp->fp = malloc(n * sizeof(*sp->fp));
	if (pp == NULL || pl == NULL || sp->fp == NULL)
		goto fail;
	n = 0;
	for (i = 0; i < sp->nsecrets; i++)
		for (a = 0; a + min_piece <= sp->slen[i]; a++) {
			pp[n] = sp->secret[i] + a;
			pl[n] = min_piece;
			sp->fp[n].secret = i;
			sp->fp[n].off = a;
			n++;
		}
	sp->m = mlit_new(pp, pl, n);
	free(pp);
	free(pl);
	if (sp->m == NULL)
		goto fail2;
	*out = sp;
	return 0;
fail:
	free(pp);
	free(pl);
fail2:
	scan_split_free(sp);
	return -1;
}

/* A maximal fragment through the gram at start (as on_gram). */
static int
on_piece(void *ctx, size_t pi, size_t start)
{
	struct scan_split *sp = ctx;
	const struct frag_pat *fp = &sp->fp[pi];
	const unsigned char *s = sp->secret[fp->secret], *buf = sp->dec.p;
	size_t slen = sp->slen[fp->secret], n = sp->dec.n;
	size_t d = start - fp->off + slen, l = 0, r = sp->min;
	struct split_secret *ss = &sp->ss[fp->secret];
	struct scan_piece *p;

	if (sp->diag[fp->secret] == d && start < sp->diag_end[fp->secret])
		return 0;
	while (fp->off > l && start > l &&
	    buf[start - l - 1] == s[fp->off - l - 1])
		l++;
	while (fp->off + r < slen && start + r < n &&
	    buf[start + r] == s[fp->off + r])
		r++;
	sp->diag[fp->secret] = d;
	sp->diag_end[fp->secret] = start + r;
	if (ss->n == SCAN_SPLIT_MAX_PIECES) {
		ss->dropped = 1;
		return 0;
	}
	if (ss->n == ss->cap) {
		size_t cap = ss->cap ? 2 * ss->cap : 16;
		struct scan_piece *v = realloc(ss->v, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		ss->v = v;
		ss->cap = cap;
	}
	p = &ss->v[ss->n];
	p->segment = sp->segment;
	p->offset = sp->form[0] == 'r' ? start - l : sp->run_off;
	p->length = l + r;
	p->secret_offset = fp->off - l;
	p->form = sp->form;
	ss->n++;
	return 0;
}

static int
split_scan(struct scan_split *sp, const unsigned char *buf, size_t len,
    const char *form, size_t run_off)
{
	size_t i;

	if (sp->m == NULL)
		return 0;
	for (i = 0; i < sp->nsecrets; i++)
		sp->diag[i] = sp->diag_end[i] = 0;
	sp->form = form;
	sp->run_off = run_off;
	/* on_piece reads sp->dec: point it at buf for the raw scan */
	if (form[0] == 'r') {
		struct buf save = sp->dec;

		sp->dec.p = (unsigned char *)(uintptr_t)buf;
		sp->dec.n = len;
		i = (size_t)mlit_scan(sp->m, buf, len, on_piece, sp);
		sp->dec = save;
		return i != 0 ? -1 : 0;
	}
	return mlit_scan(sp->m, sp->dec.p, sp->dec.n, on_piece, sp);
}

/* The value of a base64 digit (either alphabet), or -1. */
static int
b64_digit(unsigned c)
{
	int v = radix_value[AL_B64][c];

	if (v >= 0)
		return v;
	return radix_value[AL_B64URL][c];
}

static int
piece_cmp(const void *a, const void *b)
{
	const struct scan_piece *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return (x->secret_offset > y->secret_offset) -
	    (x->secret_offset < y->secret_offset);
}

int
scan_split_add(struct scan_split *sp, const void *data, size_t len,
    size_t segment)
{
	const unsigned char *buf = data;
	size_t i = 0, s, k;
	int hex;

	radix_init();
	sp->segment = segment;
	for (k = 0; k < sp->nsecrets; k++)
		sp->ss[k].first = sp->ss[k].n;
	if (split_scan(sp, buf, len, "raw", 0) != 0)
		return -1;
	/* runs of base64 or hex of at least a piece's encoding */
	while (i < len) {
		if (b64_digit(buf[i]) < 0) {
			i++;
			continue;
		}
		s = i;
		hex = 1;
		while (i < len && b64_digit(buf[i]) >= 0) {
			if (!((buf[i] >= '0' && buf[i] <= '9') ||
				(buf[i] >= 'a' && buf[i] <= 'f') ||
				(buf[i] >= 'A' && buf[i] <= 'F')))
				hex = 0;
			i++;
		}
		if (i - s < (hex ? 2 : 4) * sp->min / (hex ? 1 : 3))
			continue;
		sp->dec.n = 0;
		if (hex) {
			for (k = s; k + 1 < i; k += 2) {
				int a, b;

				a = buf[k] <= '9' ? buf[k] - '0' :
						    (buf[k] | 0x20) - 'a' + 10;
				b = buf[k + 1] <= '9' ?
				    buf[k + 1] - '0' :
				    (buf[k + 1] | 0x20) - 'a' + 10;
				buf_putc(&sp->dec, a << 4 | b);
			}
		} else {
			unsigned acc = 0;
			int bits = 0;

			for (k = s; k < i; k++) {
				acc = (acc << 6) | (unsigned)b64_digit(buf[k]);
				bits += 6;
				if (bits >= 8) {
					bits -= 8;
					buf_putc(&sp->dec, (int)(acc >> bits));
				}
			}
		}
		if (sp->dec.oom)
			return -1;
		if (split_scan(sp, NULL, 0, hex ? "hex" : "base64", s) != 0)
			return -1;
	}
	/* this segment's pieces in the order of their offsets */
	for (k = 0; k < sp->nsecrets; k++) {
		struct split_secret *ss = &sp->ss[k];

		if (ss->n - ss->first > 1)
			qsort(ss->v + ss->first, ss->n - ss->first,
			    sizeof(*ss->v), piece_cmp);
	}
	return 0;
}

/*
 * The shortest chain, over the pieces of SS in channel order: via[i] is
 * the fewest pieces of a chain that ends with piece i and covers the
 * secret's bytes [0, end of i); prev[i] the piece before i in it. A piece
 * that is the whole secret (SLEN bytes) takes no part (the raw form found
 * it). Quadratic in the pieces of one secret, at most
 * SCAN_SPLIT_MAX_PIECES. Returns the chain's last piece, or SIZE_MAX.
 */
static size_t
shortest_chain(const struct split_secret *ss, size_t slen, size_t *prev,
    size_t *via)
{
	size_t i, last = SIZE_MAX;

	for (i = 0; i < ss->n; i++) {
		const struct scan_piece *p = &ss->v[i];
		size_t end = p->secret_offset + p->length, j;

		via[i] = SIZE_MAX; /* unreachable */
		prev[i] = SIZE_MAX;
		if (p->length == slen)
			continue;
		if (p->secret_offset == 0) {
			via[i] = 1;
			continue;
		}
		for (j = 0; j < i; j++) {
			const struct scan_piece *q = &ss->v[j];
			size_t qe = q->secret_offset + q->length;

			if (via[j] == SIZE_MAX || qe < p->secret_offset ||
			    qe >= end)
				continue;
			if (via[j] + 1 < via[i]) {
				via[i] = via[j] + 1;
				prev[i] = j;
			}
		}
	}
	for (i = 0; i < ss->n; i++)
		if (via[i] != SIZE_MAX &&
		    ss->v[i].secret_offset + ss->v[i].length == slen &&
		    (last == SIZE_MAX || via[i] < via[last]))
			last = i;
	return last;
}

int
scan_split_result(struct scan_split *sp, size_t secret,
    const struct scan_piece **v, size_t *n)
{
	struct split_secret *ss = &sp->ss[secret];
	size_t slen = sp->slen[secret], i, k, last;
	size_t *prev = NULL, *via = NULL;

	*v = NULL;
	*n = 0;
	free(ss->chain);
	ss->chain = NULL;
	ss->nchain = 0;
	if (ss->n < 2)
		return 0;
	prev = malloc(ss->n * sizeof(*prev));
	via = malloc(ss->n * sizeof(*via));
	if (prev == NULL || via == NULL)
		goto oom;
	last = shortest_chain(ss, slen, prev, via);
	if (last == SIZE_MAX)
		goto none;
	/* the chain, from its last piece back (via reused for its indexes) */
	for (k = 0, i = last; i != SIZE_MAX; i = prev[i])
		via[k++] = i;
	if (k < 2)
		goto none;
	ss->chain = malloc(k * sizeof(*ss->chain));
	if (ss->chain == NULL)
		goto oom;
	for (i = 0; i < k; i++)
		ss->chain[i] = ss->v[via[k - 1 - i]];
	ss->nchain = k;
	*v = ss->chain;
	*n = k;
	free(prev);
	free(via);
	return 1;
none:
	free(prev);
	free(via);
	return 0;
oom:
	free(prev);
	free(via);
	return -1;
}
