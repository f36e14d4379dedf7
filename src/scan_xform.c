/*
 * Transforms for the leak scanner (see scan_int.h): invertible decoders,
 * each finding its own candidates in a buffer, undoing itself there and
 * handing what it got to scan_at() one level deeper, where every literal
 * form, every decoder of scan_decode.c and every transform here runs
 * again. So transforms compose: rot13 of base64 is found as
 * "rot13>base64@1", base32 of rot5 of hex as "base32>rot5>hex", to the
 * depth budget. Each transform spends work units (scan.h) for what it
 * looks at and what it hands on.
 *
 * Candidates:
 *   - runs: printable ASCII characters without a blank, found 16 bytes
 *     at a time (a window all of them, 12 or more across the end of
 *     one, or 12 or more inside one). Each run is
 *       - checked for rotations and reversals through the triggers
 *         (scan_int.h): its rotation signature against the patterns'
 *         (any rot-N over letters), the run itself against the patterns
 *         reversed and under rot47; on a hit the run is undone and
 *         scanned. A sample of the signature every few bytes is
 *         checked first (scan_trig_maybe): the signature of the whole
 *         run is computed only where one may be a trigger's;
 *       - undone by a reversal, rot47 or a rotation without a trigger
 *         where that gives text a decoder reads (undo_run(): over a
 *         transform with no literal form of the secret; basE91, whose
 *         alphabet a rotation keeps, under each rotation whose first
 *         groups decode to text);
 *       - cut into tokens at punctuation that no radix uses and at
 *         JSON-escaped line breaks (lines of 16 or more characters with
 *         more after the break are one wrapped token); each token of 12
 *         or more characters is decoded by every radix whose alphabet
 *         holds all of it (base64, base32 in four alphabets, hex,
 *         base58, base62, base36, decimal as one number either byte
 *         order, bits, octal bytes), and the whole run by base85/z85/
 *         Ascii85 and basE91.
 *     What decodes is scanned when it is text (valid UTF-8, few control
 *     bytes), UTF-16/32 or a compressed magic, or XOR of text, or a
 *     compressed stream XORed with one byte (the key under which its
 *     magic shows; zlib and gzip only when the start inflates); else,
 *     from a radix token, tried as brotli; else, from basE91, scanned
 *     for the literal forms alone (a binary secret). Random bytes (a
 *     hash, an id, an image) are none of these, and a long token's first
 *     32 bytes show it before the rest is decoded: plain data costs a
 *     few table lookups per byte of a run, not a scan per decoder;
 *   - bits grouped by blanks or punctuation ("01110011 01101011"), and
 *     under rot47 ("_```__`` _``_`_``": rotated back where they read as
 *     text);
 *   - NUL bytes: UTF-16LE/BE and UTF-32LE/BE text around them;
 *   - bytes from 0xc2: Unicode look-alikes (fullwidth, mathematical
 *     alphanumerics) folded to ASCII and invisibles (zero-width, bidi
 *     marks, soft hyphen, tag characters) removed, on the line; tag
 *     characters also read as the ASCII they smuggle;
 *   - '&': HTML named and numeric entities decoded on the line, and
 *     the line rotated back where its entities show a rotation over
 *     letters (a hex entity's 'x' or an entity's name rotated: '&', '#',
 *     ';' and decimal entities stay as they were);
 *   - "=?": MIME encoded-words (B and Q);
 *   - a line feed after an 'l' between run characters: quoted-printable
 *     under rot47 (its soft breaks read "l\n"), the lines so joined
 *     rotated back, breaks kept, and scanned (on_soft47);
 *   - below the top level, in bytes that are not text: a secret's or a
 *     pattern's XOR delta (any one-byte key); else the keys, from the
 *     bytes seen most, under which they read as look-alikes, invisibles
 *     or entities (text a decoder here reads, with no literal form);
 *   - a radix token whose bytes are neither text nor XOR: brotli (which
 *     has no magic; zstd and lz4 have, and scan_decode.c finds them).
 * A transform's finding that holds a finding of the same secret made
 * without a transform (a literal form, a dump) is dropped by scan_at().
 *
 * A run seen before at the top level of the same scan (scan_buffer, or
 * all of scan_fd's chunks) is not decoded again: the memo (scan_int.h)
 * gives its findings at the new place and spends its work units and
 * decoded bytes again, so a scan finds and reports what it would without
 * the memo. The wire resends the whole conversation with every request:
 * most runs of a wire come back.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <brotli/decode.h>
#include <zlib.h>

#include "scan_int.h"

#define MIN_RUN	  12	      /* characters of a run */
#define MIN_TOKEN 12	      /* characters a radix decodes */
#define MAX_BIGN  4096	      /* digits of a big number */
#define MAX_LINE  4096	      /* bytes of a line folded or unescaped */
#define MAX_TOKEN (64u << 10) /* characters of a token decoded */

/* ---------------------------------------------------------------- */
/* Tables. */

enum {
	R_B64,
	R_B32,
	R_B32HEX,
	R_CROCK,
	R_ZB32,
	R_HEX,
	R_B58,
	R_B62,
	R_B36,
	R_DEC,
	R_BITS,
	R_OCT,
	R_COUNT
};

static const char *const r_name[R_COUNT] = { "base64", "base32", "base32hex",
	"base32-crockford", "zbase32", "hex", "base58", "base62", "base36",
	"dec", "bits", "octal" };


static signed char rval[R_COUNT][256]; /* digit values, or -1 */
static uint16_t rmask[256];	       /* radixes holding the byte */
static uint32_t tcls[256];	       /* rmask and T_* of a token's byte */
static uint32_t rcls[256];	       /* RC_* of a run's byte */
static unsigned char runc[256];	       /* a run's characters */
static unsigned char bitc[256];	       /* '0', '1' and bit separators */
static unsigned char delim[256];       /* cuts a run into tokens */

enum {
	T_LOWER = 1u << 16,
	T_UPPER = 1u << 17,
	T_DIGIT = 1u << 18,
	T_NONHEX = 1u << 19, /* a letter after 'f' */
	T_PAD = 1u << 20     /* '=' */
};

enum { X_A85, X_Z85, X_B85, X_B91, X_COUNT };

enum {
	RC_X = 1,	   /* RC_X << a: in alphabet a of x_alpha */
	RC_B64 = 1u << 8,  /* in base64 (rmask) */
	RC_CUT = 1u << 9,  /* delim: cuts tokens */
	RC_PAD = 1u << 10, /* '=' */
	RC_BSL = 1u << 11, /* '\\': a line break's escape, maybe */
	RC_HEX = 1u << 12  /* a hex digit */
};
static const char *const x_name[X_COUNT] = { "ascii85", "z85", "base85",
	"base91" };
static const char *const x_alpha[X_COUNT] = {
	"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
	"abcdefghijklmnopqrstu",
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	".-:+=^!/*?&<>()[]{}@%$#",
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	"!#$%&()*+-;<=>?@^_`{|}~",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	"!#$%&()*+,./:;<=>?@[]^_`{|}~\"",
};
static signed char xval[X_COUNT][256];
static unsigned char magic1[256]; /* first bytes of magic_at()'s magics */
static const unsigned char magic_first[] = "\x1f\x78\x42\xfd\x50\x28\x04";

static const char *const rot_name[26] = { "rot0", "rot1", "rot2", "rot3",
	"rot4", "rot5", "rot6", "rot7", "rot8", "rot9", "rot10", "rot11",
	"rot12", "rot13", "rot14", "rot15", "rot16", "rot17", "rot18", "rot19",
	"rot20", "rot21", "rot22", "rot23", "rot24", "rot25" };

static void
set_alpha(int r, const char *al, int fold)
{
	int i;

	for (i = 0; al[i] != '\0'; i++) {
		unsigned c = (unsigned char)al[i];

		rval[r][c] = (signed char)i;
		if (fold && c >= 'A' && c <= 'Z')
			rval[r][c + 32] = (signed char)i;
		if (fold && c >= 'a' && c <= 'z')
			rval[r][c - 32] = (signed char)i;
	}
}

static void
tables_setup(void)
{
	const char *d = "=:,;()[]{}<>'`|&?!@#$%^*~\"\\";
	int r, c, x, i;

	memset(rval, -1, sizeof(rval));
	set_alpha(R_B64,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	    0);
	rval[R_B64]['-'] = 62;
	rval[R_B64]['_'] = 63;
	set_alpha(R_B32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 1);
	set_alpha(R_B32HEX, "0123456789ABCDEFGHIJKLMNOPQRSTUV", 1);
	set_alpha(R_CROCK, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 1);
	set_alpha(R_ZB32, "ybndrfg8ejkmcpqxot1uwisza345h769", 0);
	set_alpha(R_HEX, "0123456789abcdef", 1);
	set_alpha(R_B58,
	    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 0);
	set_alpha(R_B62,
	    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	    0);
	set_alpha(R_B36, "0123456789abcdefghijklmnopqrstuvwxyz", 1);
	set_alpha(R_DEC, "0123456789", 0);
	set_alpha(R_BITS, "01", 0);
	set_alpha(R_OCT, "01234567", 0);
	for (c = 0; c < 256; c++) {
		rmask[c] = 0;
		for (r = 0; r < R_COUNT; r++)
			if (rval[r][c] >= 0)
				rmask[c] |= (uint16_t)(1u << r);
		runc[c] = c > 0x20 && c < 0x7f;
		bitc[c] = c == '0' || c == '1' || c == ' ' || c == ',' ||
		    c == '_' || c == '-';
	}
	/* padding belongs to base64 and base32 (their tokens end in it) */
	rmask['='] = (uint16_t)((1u << R_B64) | (1u << R_B32) |
	    (1u << R_B32HEX));
	for (i = 0; d[i] != '\0'; i++)
		delim[(unsigned char)d[i]] = 1;
	delim['='] = 0; /* kept: padding; cut only where it is not one */
	for (c = 0; c < 256; c++)
		tcls[c] = rmask[c] | (c >= 'a' && c <= 'z' ? T_LOWER : 0) |
		    (c >= 'A' && c <= 'Z' ? T_UPPER : 0) |
		    (c >= '0' && c <= '9' ? T_DIGIT : 0) |
		    ((c | 0x20) > 'f' && (c | 0x20) <= 'z' ? T_NONHEX : 0) |
		    (c == '=' ? T_PAD : 0);
	memset(xval, -1, sizeof(xval));
	for (x = 0; x < X_COUNT; x++)
		for (i = 0; x_alpha[x][i] != '\0'; i++)
			xval[x][(unsigned char)x_alpha[x][i]] = (signed char)i;
	xval[X_A85]['z'] = 85; /* four zero bytes */
	for (c = 0; c < 256; c++) {
		for (x = 0; x < X_COUNT; x++)
			if (xval[x][c] >= 0)
				rcls[c] |= (uint32_t)RC_X << x;
		if (rmask[c] & (1u << R_B64))
			rcls[c] |= RC_B64;
		if (delim[c])
			rcls[c] |= RC_CUT;
		if (c == '=')
			rcls[c] |= RC_PAD;
		if (c == '\\')
			rcls[c] |= RC_BSL;
		if (rval[R_HEX][c] >= 0)
			rcls[c] |= RC_HEX;
	}
	for (i = 0; magic_first[i] != '\0'; i++)
		magic1[magic_first[i]] = 1;
}

static void
tables_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, tables_setup);
}

void
scan_rot_sig(const unsigned char *p, size_t n, unsigned char *out)
{
	size_t i;
	int prev = -1;

	for (i = 0; i < n; i++) {
		unsigned c = p[i];

		if (!scan_is_letter(c)) {
			out[i] = (unsigned char)c;
			continue;
		}
		if (prev < 0)
			out[i] = 1;
		else
			out[i] = (unsigned char)((c >= 'a' ? 'a' : 'A') +
			    ((int)(c | 0x20) - prev + 26) % 26);
		prev = (int)(c | 0x20);
	}
}

/* ---------------------------------------------------------------- */
/* The pass's state and its output. */

#define GROUP_HITS 8 /* group triggers undone in one run, at most */

struct xp {
	const struct scan *sc;
	const unsigned char *buf;
	size_t n;
	unsigned depth;
	struct scan_budget *bg;
	struct scan_result *res;
	unsigned char *t; /* scratch for decoded bytes */
	size_t tcap;
	unsigned char *u; /* a second scratch */
	size_t ucap;
	unsigned char *v; /* a third (XOR deltas) */
	size_t vcap;
	unsigned char *w; /* a run undone (undo_run) */
	size_t wcap;
	size_t maxsecret;
	int oom;
	/* what a trigger scan saw, in run */
	const unsigned char *run;
	uint32_t rots;
	unsigned kinds;
	unsigned char xkey[4];
	int nxkey;
	struct {
		const struct scan_trig *t;
		size_t q;
	} gh[GROUP_HITS]; /* group triggers, at run[q] */
	unsigned ngh;
};

static unsigned char *
scratch(unsigned char **p, size_t *cap, size_t n, int *oom)
{
	unsigned char *q;

	if (n <= *cap)
		return *p;
	if ((q = realloc(*p, n)) == NULL) {
		*oom = 1;
		return NULL;
	}
	*p = q;
	*cap = n;
	return q;
}

/*
 * Scans d[0..dn) one level deeper (with every decoder, or for the
 * literal forms alone when lit is set) and appends its findings as
 * "name>FORM" covering buf[s..e). Returns 0, or -1 when out of memory.
 */
static int
xemit_(struct xp *x, const unsigned char *d, size_t dn, const char *name,
    size_t s, size_t e, int lit)
{
	struct scan_result in = { 0 };
	struct scan_finding f;
	size_t i;

	if (dn < SCAN_MIN_SECRET)
		return 0;
	if (x->depth + 1 > x->bg->maxdepth) {
		x->bg->hit |= SCAN_BUDGET_DEPTH;
		return 0;
	}
	if (scan_budget_late(x->bg))
		return 0;
	if (dn > x->bg->left) {
		x->bg->hit |= SCAN_BUDGET_BYTES;
		return 0;
	}
	x->bg->left -= dn;
	scan_budget_spend(x->bg, dn);
	if ((lit ? scan_lit(x->sc, d, dn, &in) :
		   scan_at(x->sc, d, dn, x->depth + 1, x->bg, &in)) != 0) {
		scan_result_free(&in);
		return -1;
	}
	for (i = 0; i < in.n; i++) {
		f = in.v[i];
		f.form = scan_form_join(name, f.form);
		f.offset = s;
		f.length = e - s;
		f.wrapped = 0;
		f.xform = 1;
		if (scan_res_push(x->res, &f) != 0) {
			scan_result_free(&in);
			return -1;
		}
	}
	scan_result_free(&in);
	return 0;
}

static int
xemit(struct xp *x, const unsigned char *d, size_t dn, const char *name,
    size_t s, size_t e)
{
	return xemit_(x, d, dn, name, s, e, 0);
}

/* Bytes that are not text: controls but tab, line feed and return. */
static inline int
ctrl_byte(unsigned c)
{
	return (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f;
}

/* Does a compressed stream's magic start at d[0..n)? */
static int
magic_at(const unsigned char *d, size_t n)
{
	return n >= 4 &&
	    ((d[0] == 0x1f && d[1] == 0x8b) ||
		(d[0] == 0x78 &&
		    (d[1] == 0x01 || d[1] == 0x5e || d[1] == 0x9c ||
			d[1] == 0xda)) ||
		memcmp(d, "BZh", 3) == 0 ||
		memcmp(d,
		    "\xfd"
		    "7zX",
		    4) == 0 ||
		memcmp(d, "PK\x03\x04", 4) == 0 ||
		memcmp(d, "\x28\xb5\x2f\xfd", 4) == 0 ||
		memcmp(d, "\x04\x22\x4d\x18", 4) == 0);
}

/*
 * Is the start of d text, UTF-16/32 or a compressed stream (from one of
 * its first 16 bytes)? Text is ASCII or UTF-8 with at most one byte in 8 a control byte or a byte of
 * a malformed UTF-8 sequence: random bytes (a hash, a key, an image in
 * base64) are about half high bytes, nearly all of them malformed, and
 * fail within a few dozen bytes; decoding them further would find
 * nothing but cost as much as text does.
 */
static size_t text_bad(const unsigned char *d, size_t k, size_t n, size_t stop);

/*
 * The NULs of d[0..k) at even and at odd offsets, 8 bytes at a time
 * (a byte is 0 when neither its low 7 bits, added to 0x7f, nor it has
 * the top bit: no carry leaves a byte).
 */
static inline void
nul_parity(const unsigned char *d, size_t k, size_t *even, size_t *odd)
{
	size_t i = 0, e = 0, o = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fu, ones = 0x0101010101010101u;
	const uint64_t alt = 0x00ff00ff00ff00ffu;
	uint64_t w, z;

	for (; i + 8 <= k; i += 8) {
		memcpy(&w, d + i, 8);
		z = (~(((w & lo7) + lo7) | w) & ~lo7) >> 7; /* 1: a NUL */
		e += (size_t)(((z & alt) * ones) >> 56);
		o += (size_t)((((z >> 8) & alt) * ones) >> 56);
	}
#endif
	for (; i < k; i++)
		if (d[i] == 0)
			*(i % 2 ? &o : &e) += 1;
	*even = e;
	*odd = o;
}

/* Bytes from 0x80 in d[0..k), 8 at a time. */
static inline size_t
high_count(const unsigned char *d, size_t k)
{
	const uint64_t ones = 0x0101010101010101u;
	size_t i = 0, c = 0;
	uint64_t w;

	for (; i + 8 <= k; i += 8) {
		memcpy(&w, d + i, 8);
		c += (size_t)((((w >> 7) & ones) * ones) >> 56);
	}
	for (; i < k; i++)
		c += d[i] >> 7;
	return c;
}

/*
 * Does a compressed stream's magic start in d[0..16) (n: d's length)?
 * With 16 bytes there, their first bytes are compared 16 at a time
 * (magic_first's), else one by one (magic_at wants 4 bytes from each).
 */
static inline int
magic16(const unsigned char *d, size_t n)
{
	size_t i;

#ifdef __SSE2__
	if (n >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)d);
		__m128i a = _mm_setzero_si128();
		unsigned m;

		for (i = 0; i < sizeof(magic_first) - 1; i++)
			a = _mm_or_si128(a,
			    _mm_cmpeq_epi8(v,
				_mm_set1_epi8((char)magic_first[i])));
		for (m = (unsigned)_mm_movemask_epi8(a); m != 0; m &= m - 1) {
			i = (size_t)__builtin_ctz(m);
			if (magic_at(d + i, n - i))
				return 1;
		}
		return 0;
	}
#endif
	for (i = 0; i < 16 && i + 4 <= n; i++)
		if (magic1[d[i]] && magic_at(d + i, n - i))
			return 1;
	return 0;
}

static int
worth(const unsigned char *d, size_t n)
{
	size_t k = n < 64 ? n : 64, zodd, zeven;

	if (n == 0)
		return 0;
	/* a stream, or one behind a short header (a stored brotli block) */
	if (magic16(d, n))
		return 1;
	nul_parity(d, k, &zeven, &zodd);
	if (zodd * 3 >= k || zeven * 3 >= k)
		return 1;
	return text_bad(d, k, n, k / 8) * 8 <= k;
}

#if defined(SCAN_AVX2) && defined(__SSE2__)
/* worth() as it was, a byte at a time (for tests). */
static int
worth_bytes(const unsigned char *d, size_t n)
{
	size_t i, k = n < 64 ? n : 64, zodd = 0, zeven = 0;

	if (n == 0)
		return 0;
	for (i = 0; i < 16 && i + 4 <= n; i++)
		if (magic1[d[i]] && magic_at(d + i, n - i))
			return 1;
	for (i = 0; i < k; i += 2) {
		zeven += d[i] == 0;
		zodd += i + 1 < k && d[i + 1] == 0;
	}
	if (zodd * 3 >= k || zeven * 3 >= k)
		return 1;
	return text_bad(d, k, n, k / 8) * 8 <= k;
}
#endif

/*
 * Bytes of d[0..k) that are control bytes or in a malformed UTF-8
 * sequence (one that d[k..n) may still complete is not held against
 * it), counted until there are more than stop.
 */
static size_t
text_bad(const unsigned char *d, size_t k, size_t n, size_t stop)
{
	size_t i, bad = 0, len, j;

	for (i = 0; i < k && bad <= stop; i++) {
		unsigned c = d[i];

		if (c < 0x80) {
			bad += ctrl_byte(c);
			continue;
		}
		/* a UTF-8 sequence: its lead, then its continuation bytes
		 * (one cut off by the end of d is not held against it) */
		len = c >= 0xc2 && c <= 0xdf ? 2 :
		    c >= 0xe0 && c <= 0xef   ? 3 :
		    c >= 0xf0 && c <= 0xf4   ? 4 :
					       0;
		for (j = 1; j < len && i + j < n && (d[i + j] & 0xc0) == 0x80;
		     j++)
			;
		if (len == 0 || (j < len && i + j < n)) {
			bad++;
			continue;
		}
		i += j - 1;
	}
	return bad;
}

/* ---------------------------------------------------------------- */
/* Radix decoders. Each writes into x->t and returns the byte count. */

/* Power-of-two radixes: bits per digit, most significant first. */
static size_t
dec_pow2(struct xp *x, int r, const unsigned char *p, size_t n, int step)
{
	unsigned acc = 0;
	int bits = 0, v;
	size_t i, o = 0;
	unsigned char *d = scratch(&x->t, &x->tcap, n * (size_t)step / 8 + 1,
	    &x->oom);

	if (d == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == '=')
			break;
		if ((v = rval[r][p[i]]) < 0)
			continue;
		acc = (acc << step) | (unsigned)v;
		bits += step;
		if (bits >= 8) {
			bits -= 8;
			d[o++] = (unsigned char)(acc >> bits);
		}
	}
	return o;
}

/*
 * A big number in radix base, as big-endian bytes (leading zeros kept
 * as the radix's zero digits, as base58 does). The number grows in
 * 32-bit limbs, by as many digits at a time as fit one.
 */
static size_t
dec_big(struct xp *x, int r, unsigned base, const unsigned char *p, size_t n)
{
	unsigned char *d;
	uint32_t *l;
	size_t i, j, nl = 0, len, zeros = 0, cap = n + 1;
	uint64_t carry, mul;
	unsigned k, per;

	if (n > MAX_BIGN)
		return 0;
	if ((d = scratch(&x->t, &x->tcap, cap, &x->oom)) == NULL ||
	    (l = (uint32_t *)(void *)scratch(&x->v, &x->vcap,
		 (n / 4 + 2) * sizeof(*l), &x->oom)) == NULL)
		return 0;
	while (zeros < n && rval[r][p[zeros]] == 0 && r == R_B58)
		zeros++;
	for (per = 1, mul = base; mul * base <= UINT32_MAX; per++)
		mul *= base;
	for (i = zeros; i < n; i += k) {
		/* k digits: their value, and base^k */
		for (k = 0, carry = 0, mul = 1; k < per && i + k < n; k++) {
			carry = carry * base + (unsigned)rval[r][p[i + k]];
			mul *= base;
		}
		for (j = 0; j < nl; j++) {
			carry += (uint64_t)l[j] * mul;
			l[j] = (uint32_t)carry;
			carry >>= 32;
		}
		if (carry != 0)
			l[nl++] = (uint32_t)carry;
	}
	/* big-endian bytes, without the number's leading zero bytes */
	for (len = 4 * nl;
	     len > 0 && (l[(len - 1) / 4] >> (8 * ((len - 1) % 4)) & 255) == 0;
	     len--)
		;
	for (j = 0; j < len; j++)
		d[zeros + len - 1 - j] = (unsigned char)(l[j / 4] >>
		    (8 * (j % 4)));
	scan_budget_spend(x->bg, n * (len / 8 + 1));
	memset(d, 0, zeros);
	return zeros + len;
}

static size_t
dec_oct(struct xp *x, const unsigned char *p, size_t n)
{
	unsigned char *d;
	size_t i, o = 0;
	unsigned v;

	if (n % 3 != 0)
		return 0;
	if ((d = scratch(&x->t, &x->tcap, n / 3 + 1, &x->oom)) == NULL)
		return 0;
	for (i = 0; i + 2 < n; i += 3) {
		v = (unsigned)(p[i] - '0') * 64 +
		    (unsigned)(p[i + 1] - '0') * 8 + (unsigned)(p[i + 2] - '0');
		if (v > 255)
			return 0;
		d[o++] = (unsigned char)v;
	}
	return o;
}

/* base85 family: groups of 5 digits, a short last group padded. */
static size_t
dec_b85(struct xp *x, int a, const unsigned char *p, size_t n)
{
	unsigned char *d;
	size_t i, o = 0, k;
	uint64_t v = 0;
	int nd = 0, pad;

	/* 'z' is four bytes */
	if ((d = scratch(&x->t, &x->tcap, 4 * n + 8, &x->oom)) == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		int c = xval[a][p[i]];

		if (c < 0)
			continue;
		if (c == 85) { /* Ascii85 'z' */
			if (nd != 0)
				return o;
			memset(d + o, 0, 4);
			o += 4;
			continue;
		}
		v = v * 85 + (unsigned)c;
		if (++nd == 5) {
			if (v > 0xffffffffu)
				return o;
			for (k = 0; k < 4; k++)
				d[o++] = (unsigned char)(v >> (24 - 8 * k));
			v = 0;
			nd = 0;
		}
	}
	if (nd > 1) {
		pad = 5 - nd;
		for (k = 0; k < (size_t)pad; k++)
			v = v * 85 + 84;
		for (k = 0; k < (size_t)(4 - pad); k++)
			d[o++] = (unsigned char)(v >> (24 - 8 * k));
	}
	return o;
}

/* basE91 (Joachim Henke's). */
static size_t
dec_b91(struct xp *x, const unsigned char *p, size_t n)
{
	unsigned char *d;
	size_t i, o = 0;
	unsigned b = 0, nb = 0;
	int v = -1, c;

	if ((d = scratch(&x->t, &x->tcap, n + 4, &x->oom)) == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if ((c = xval[X_B91][p[i]]) < 0)
			continue;
		if (v < 0) {
			v = c;
			continue;
		}
		v += c * 91;
		b |= (unsigned)v << nb;
		nb += (v & 8191) > 88 ? 13 : 14;
		do {
			d[o++] = (unsigned char)b;
			b >>= 8;
			nb -= 8;
		} while (nb > 7);
		v = -1;
	}
	if (v >= 0)
		d[o++] = (unsigned char)(b | (unsigned)v << nb);
	return o;
}

static int
on_any(void *ctx, const struct scan_trig *t, size_t pos)
{
	(void)t;
	(void)pos;
	*(int *)ctx = 1;
	return 0;
}

/*
 * Does d[0..n) hold a pattern XORed with one byte (its delta)? Only
 * when its start could be text under one key: a byte of ASCII text
 * XORed with k has k's top bit, so at most one byte in 8 of the first
 * 64 may differ from the others there (random bytes: half of them do).
 */
/*
 * d[0..k) XORed with key (k <= 64; d has 64 bytes to read): where the
 * first control byte is (k: none), and in *mark how many bytes before it
 * are from 0xc2, or a letter or '#' after an '&'. A byte at a time.
 */
static size_t
xor_trial_bytes(const unsigned char *d, size_t k, unsigned key, unsigned *mark)
{
	unsigned char t, prev = 0;
	size_t i;

	for (i = 0, *mark = 0; i < k; i++) {
		t = d[i] ^ (unsigned char)key;
		if (ctrl_byte(t))
			break;
		*mark += t >= 0xc2 ||
		    (i > 0 && prev == '&' && (scan_is_letter(t) || t == '#'));
		prev = t;
	}
	return i;
}

#ifdef __SSE2__
/*
 * The masks of one window of xor_trial: its control bytes, its bytes
 * from 0xc2, its '&', its letters and '#'; t gets the window XORed.
 */
static inline void
xor_window(const unsigned char *d, __m128i kv, unsigned char *t, unsigned m[4])
{
	__m128i v = _mm_xor_si128(kv,
	    _mm_loadu_si128((const __m128i *)(const void *)d));
	__m128i lo = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
	__m128i ws = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
	    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
		_mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
	__m128i l = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)),
	    _mm_set1_epi8('a'));

	_mm_storeu_si128((__m128i *)(void *)t, v);
	m[0] = (unsigned)_mm_movemask_epi8(
	    _mm_or_si128(_mm_andnot_si128(ws, lo),
		_mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))));
	m[1] = (unsigned)_mm_movemask_epi8(
	    _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8((char)0xc2)), v));
	m[2] = (unsigned)_mm_movemask_epi8(
	    _mm_cmpeq_epi8(v, _mm_set1_epi8('&')));
	m[3] = (unsigned)_mm_movemask_epi8(
	    _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(25)), l),
		_mm_cmpeq_epi8(v, _mm_set1_epi8('#'))));
}

/*
 * xor_trial_bytes 16 bytes at a time, t[0..64) getting d XORed: each
 * key tried costs a few operations a window, not a loop over 64 bytes
 * (up to 24 keys a call).
 */
static size_t
xor_trial(const unsigned char *d, size_t k, unsigned key, unsigned *mark,
    unsigned char *t)
{
	const __m128i kv = _mm_set1_epi8((char)key);
	unsigned m0[4], m1[4], m2[4], m3[4];
	uint64_t ctl, hi, amp, lh, lim, before, mk;
	size_t i;

	xor_window(d, kv, t, m0);
	xor_window(d + 16, kv, t + 16, m1);
	xor_window(d + 32, kv, t + 32, m2);
	xor_window(d + 48, kv, t + 48, m3);
#define XOR_JOIN(j) \
	((uint64_t)m0[j] | (uint64_t)m1[j] << 16 | (uint64_t)m2[j] << 32 | \
	    (uint64_t)m3[j] << 48)
	ctl = XOR_JOIN(0);
	hi = XOR_JOIN(1);
	amp = XOR_JOIN(2);
	lh = XOR_JOIN(3);
#undef XOR_JOIN
	lim = k < 64 ? ((uint64_t)1 << k) - 1 : ~(uint64_t)0;
	ctl &= lim;
	i = ctl != 0 ? (size_t)__builtin_ctzll(ctl) : k;
	before = i < 64 ? ((uint64_t)1 << i) - 1 : ~(uint64_t)0;
	mk = (hi | ((amp << 1) & lh)) & before;
	for (*mark = 0; mk != 0; mk &= mk - 1)
		++*mark;
	return i;
}
#else
static size_t
xor_trial(const unsigned char *d, size_t k, unsigned key, unsigned *mark,
    unsigned char *t)
{
	size_t i;

	for (i = 0; i < k; i++)
		t[i] = d[i] ^ (unsigned char)key;
	return xor_trial_bytes(d, k, key, mark);
}
#endif

/*
 * XOR of text a text decoder reads (look-alikes, invisibles, entities),
 * which holds no literal form of a secret and so no pattern's delta:
 * the keys under which the first 64 bytes of d[0..n) are text (valid
 * UTF-8, no control byte) with a byte from 0xc2 or an '&' before a
 * letter or '#'. Up to max keys into keys; returns how many. Key 0 (d
 * as it is) is not one.
 */
static size_t
xor_text_keys(const unsigned char *d, size_t n, unsigned char *keys, size_t max,
    size_t *looked)
{
	/* what such text repeats: look-alikes' and invisibles' UTF-8
	 * leads and continuations, an entity's '&', '#' and ';' */
	static const unsigned char often[] = { 0xef, 0xbc, 0xbd, 0xf0, 0x9d,
		0xe2, 0x80, 0xc2, 0xad, '&', '#', ';' };
	unsigned char t[64], d64[64] = { 0 }, tried[256] = { 0 };
	unsigned cnt[256] = { 0 }, top[2] = { 0, 0 }, mark;
	size_t i, k, got = 0, j, score[8], h;
	unsigned key, a, b;

	*looked = 0;
	if (n < SCAN_MIN_SECRET || max > 8)
		return 0;
	/* the two bytes seen most (of the first 256): one of those, under
	 * the key */
	for (i = 0; i < n && i < 256; i++)
		if (++cnt[d[i]] > cnt[top[0]])
			top[0] = d[i];
	h = i;
	k = i < 64 ? i : 64; /* the bytes tried under each key */
	*looked = h;
	/* (a lead, an '&' every few bytes, four times at least: not bytes
	 * of no structure) */
	if (cnt[top[0]] < 4 || cnt[top[0]] * 10 < h)
		return 0;
	memcpy(d64, d, k);
	top[1] = top[0] ^ 1;
	for (i = 0; i < h; i++)
		if (d[i] != top[0] && cnt[d[i]] > cnt[top[1]])
			top[1] = d[i];
	for (a = 0; a < 2; a++)
		for (b = 0; b < sizeof(often); b++) {
			key = top[a] ^ often[b];
			if (key == 0 || tried[key]++)
				continue;
			i = xor_trial(d64, k, key, &mark, t);
			*looked += i;
			if (i < k || mark < 4 || text_bad(t, k, k, 0) != 0)
				continue;
			/* kept: the keys that show the most of them first */
			for (j = got < max ? got++ : max;
			     j > 0 && score[j - 1] < mark; j--)
				if (j < max) {
					keys[j] = keys[j - 1];
					score[j] = score[j - 1];
				}
			if (j < max) {
				keys[j] = (unsigned char)key;
				score[j] = mark;
			}
		}
	return got;
}

/*
 * The XOR delta of p[0..n) into d: d[i] = p[i] ^ p[i + 1] for i < n - 1;
 * 16 at a time (a bomb's megabytes of zeros come here).
 */
static void
xor_delta(const unsigned char *p, size_t n, unsigned char *d)
{
	size_t i = 0;

#ifdef __SSE2__
	for (; i + 17 <= n; i += 16)
		_mm_storeu_si128((__m128i *)(void *)(d + i),
		    _mm_xor_si128(_mm_loadu_si128(
				      (const __m128i *)(const void *)(p + i)),
			_mm_loadu_si128(
			    (const __m128i *)(const void *)(p + i + 1))));
#endif
	for (; i + 1 < n; i++)
		d[i] = p[i] ^ p[i + 1];
}

static int
xor_hit(struct xp *x, const unsigned char *d, size_t n)
{
	unsigned char *t;
	size_t k, high;
	int hit = 0;

	if (n < SCAN_MIN_SECRET || n > MAX_TOKEN)
		return 0;
	k = n < 64 ? n : 64;
	high = high_count(d, k);
	if (high * 8 > k && (k - high) * 8 > k)
		return 0;
	if ((t = scratch(&x->v, &x->vcap, n, &x->oom)) == NULL)
		return 0;
	xor_delta(d, n, t);
	scan_budget_spend(x->bg, n);
	scan_trig_scan(x->sc, t, n - 1, TRIG_DELTA, on_any, &hit);
	if (!hit && n <= 4096) {
		unsigned char keys[1];
		size_t looked;

		hit = xor_text_keys(d, n, keys, 1, &looked) > 0;
		scan_budget_spend(x->bg, looked);
	}
	return hit;
}

/* Bits of a brotli stream, least significant first. */
struct bitr {
	const unsigned char *p;
	size_t n, pos;
	unsigned bit;
};

static int
bits_take(struct bitr *b, unsigned k, unsigned *v)
{
	unsigned i, r = 0;

	for (i = 0; i < k; i++) {
		if (b->pos >= b->n)
			return -1;
		r |= ((unsigned)(b->p[b->pos] >> b->bit) & 1u) << i;
		if (++b->bit == 8) {
			b->bit = 0;
			b->pos++;
		}
	}
	*v = r;
	return 0;
}

/*
 * Could d[0..n) start a brotli stream that gives bytes? 0 when its
 * header (RFC 7932: the window, the first meta-block's length, its
 * padding when stored or metadata) is one the decoder refuses, or is
 * the empty last block: half of all random bytes, each costing the
 * decoder's set-up otherwise. 1 when it may be.
 */
static int
brotli_may(const unsigned char *d, size_t n)
{
	struct bitr b = { d, n, 0, 0 };
	unsigned v, last, nib, i;

	if (bits_take(&b, 1, &v) != 0)
		return 1;
	if (v) { /* the window: 1 + 3 bits, or 1 + 3 + 3 bits */
		if (bits_take(&b, 3, &v) != 0)
			return 1;
		if (v == 0) {
			if (bits_take(&b, 3, &v) != 0)
				return 1;
			if (v == 1)
				return 0; /* a large window: refused */
		}
	}
	if (bits_take(&b, 1, &last) != 0)
		return 1;
	if (last) {
		if (bits_take(&b, 1, &v) != 0)
			return 1;
		if (v)
			return 0; /* the empty last block: nothing */
	}
	if (bits_take(&b, 2, &nib) != 0)
		return 1;
	if (nib == 3) { /* metadata: a reserved bit, zero */
		if (bits_take(&b, 1, &v) != 0)
			return 1;
		return v == 0;
	}
	for (i = 0; i < nib + 4; i++) {
		if (bits_take(&b, 4, &v) != 0)
			return 1;
		if (i + 1 == nib + 4 && nib > 0 && v == 0)
			return 0; /* a needless nibble */
	}
	if (last)
		return 1;
	if (bits_take(&b, 1, &v) != 0 || !v)
		return 1;
	while (b.bit != 0) { /* stored: zero bits to the byte's end */
		if (bits_take(&b, 1, &v) != 0)
			return 1;
		if (v)
			return 0;
	}
	return 1;
}

/*
 * Brotli has no magic: bytes that are neither text nor XOR are tried as
 * a brotli stream (small ones: a file or a key compressed), and what it
 * gives is scanned when it is text, or when the stream decoded to its
 * end (a real stream, whatever it holds: another brotli stream stored,
 * a binary file).
 */
static int
try_brotli(struct xp *x, const unsigned char *d, size_t n, const char *outer,
    size_t s, size_t e)
{
	BrotliDecoderState *b;
	BrotliDecoderResult r;
	size_t cap = 64u << 10, avail_in = n, avail_out, got;
	const uint8_t *next_in = d;
	uint8_t *next_out;
	unsigned char *o;
	int rc = 0;

	if (n > 4096 || x->depth + 1 > x->bg->maxdepth || !brotli_may(d, n))
		return 0;
	if (cap > x->bg->left)
		cap = x->bg->left;
	if (cap < SCAN_MIN_SECRET)
		return 0;
	if ((o = scratch(&x->v, &x->vcap, cap, &x->oom)) == NULL)
		return -1;
	if ((b = BrotliDecoderCreateInstance(NULL, NULL, NULL)) == NULL)
		return 0;
	next_out = o;
	avail_out = cap;
	r = BrotliDecoderDecompressStream(b, &avail_in, &next_in, &avail_out,
	    &next_out, NULL);
	BrotliDecoderDestroyInstance(b);
	got = cap - avail_out;
	scan_budget_spend(x->bg, n + got);
	if (r != BROTLI_DECODER_RESULT_ERROR && got >= SCAN_MIN_SECRET &&
	    (r == BROTLI_DECODER_RESULT_SUCCESS || worth(o, got)))
		rc = xemit(x, o, got,
		    outer != NULL ? scan_form_join(outer, "brotli") : "brotli",
		    s, e);
	return rc;
}

/*
 * A one-byte key (not 0) under which d[0..n) starts with a compressed
 * stream's magic, or 0: XOR over a compressor, which leaves no text and
 * no delta of a secret to see. The key is d[0] XOR a magic's first byte;
 * the rest of that magic under the key confirms it (zlib: its header's
 * check, and a first block of a valid type), so random bytes give a key
 * about once in 90 (zlib's two bytes), and then only an inflate that
 * fails within a few bytes.
 */
static unsigned
xor_magic(const unsigned char *d, size_t n)
{
	static const unsigned char first[] = { 0x1f, 0x78, 'B', 0xfd, 'P', 0x28,
		0x04 };
	unsigned char h[8];
	size_t i, j;
	unsigned k, d01;

	if (n < 8)
		return 0;
	/* a key leaves d[0] ^ d[1] as it is: a magic's first two show it */
	d01 = d[0] ^ d[1];
	if (d01 != (0x1f ^ 0x8b) && d01 != (0x78 ^ 0x01) &&
	    d01 != (0x78 ^ 0x5e) && d01 != (0x78 ^ 0x9c) &&
	    d01 != (0x78 ^ 0xda) && d01 != ('B' ^ 'Z') && d01 != (0xfd ^ '7') &&
	    d01 != ('P' ^ 'K') && d01 != (0x28 ^ 0xb5) && d01 != (0x04 ^ 0x22))
		return 0;
	for (j = 0; j < sizeof(first); j++) {
		if ((k = d[0] ^ first[j]) == 0)
			continue;
		for (i = 0; i < 8; i++)
			h[i] = (unsigned char)(d[i] ^ k);
		if (!magic_at(h, 8) || (h[0] == 0x1f && h[2] != 8))
			continue;
		if (h[0] == 0x78 &&
		    (((unsigned)h[0] << 8 | h[1]) % 31 != 0 || (h[2] & 6) == 6))
			continue;
		if (h[0] == 'B' &&
		    (n < 10 || h[3] < '1' || h[3] > '9' || (d[4] ^ k) != '1' ||
			(d[5] ^ k) != 'A' || (d[6] ^ k) != 'Y' ||
			(d[7] ^ k) != '&'))
			continue;
		return k;
	}
	return 0;
}

/*
 * Does d[0..n) XORed with k inflate (zlib or gzip: their magics are 2
 * and 3 bytes, which random bytes match under some key) into text for
 * its first bytes? Other magics are 4 bytes or more: 1 in 2^24 by chance.
 */
static int
xor_inflates(struct xp *x, const unsigned char *d, size_t n, unsigned k)
{
	unsigned char in[256], out[64];
	size_t m = n < sizeof(in) ? n : sizeof(in), i, got;
	z_stream z;
	int zr;

	if ((d[0] ^ k) != 0x78 && (d[0] ^ k) != 0x1f)
		return 1;
	if (n < 8) /* (xor_magic's minimum) */
		return 0;
	for (i = 0; i < m; i++)
		in[i] = (unsigned char)(d[i] ^ k);
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, (d[0] ^ k) == 0x1f ? 31 : 15) != Z_OK)
		return 0;
	z.next_in = in;
	z.avail_in = (unsigned)m;
	z.next_out = out;
	z.avail_out = sizeof(out);
	zr = inflate(&z, Z_SYNC_FLUSH);
	got = sizeof(out) - z.avail_out;
	inflateEnd(&z);
	scan_budget_spend(x->bg, m + got);
	return (zr == Z_OK || zr == Z_STREAM_END || zr == Z_BUF_ERROR) &&
	    got >= SCAN_MIN_SECRET && worth(out, got);
}

/*
 * d[0..n) XORed with the key xor_magic() found, scanned one level deeper
 * as "name>xor".
 */
static int
try_xor_magic(struct xp *x, const unsigned char *d, size_t n, unsigned k,
    const char *name, size_t s, size_t e)
{
	unsigned char *u = malloc(n);
	size_t i;
	int rc;

	if (!xor_inflates(x, d, n, k)) {
		free(u);
		return 0;
	}
	if (u == NULL)
		return -1;
	for (i = 0; i < n; i++)
		u[i] = (unsigned char)(d[i] ^ k);
	rc = xemit(x, u, n, scan_form_join(name, "xor"), s, e);
	free(u);
	return rc;
}

/*
 * What a decoder gave for buf[s..e), d[0..n): scanned under name when it
 * is text or XOR of text, else (when br is set: the bytes of a radix
 * token) tried as brotli, else, for basE91 (the one decoder here whose
 * encoding of a secret is not among the literal forms the top level
 * scans for), scanned for the literal forms alone when one may be there
 * (a binary secret as it is).
 */
static int
try_decoded(struct xp *x, const unsigned char *d, size_t n, const char *name,
    size_t s, size_t e, int br)
{
	size_t had = x->res->n;
	unsigned k;

	if (n < SCAN_MIN_SECRET)
		return 0;
	if (worth(d, n) || xor_hit(x, d, n))
		return xemit(x, d, n, name, s, e);
	if ((k = xor_magic(d, n)) != 0)
		return try_xor_magic(x, d, n, k, name, s, e);
	if (br && try_brotli(x, d, n, name, s, e) != 0)
		return -1;
	if (name != x_name[X_B91] || x->res->n > had ||
	    !scan_lit_maybe(x->sc, d, n))
		return 0;
	return xemit_(x, d, n, name, s, e, 1);
}

#define GATE 32 /* bytes of a long token decoded first */

/*
 * Must try_decoded() drop a decoder's output of dn >= 64 bytes whose
 * first pn >= GATE bytes are in x->t? 1 when its window of 64 bytes can
 * be neither text (more than 8 bad bytes already, no magic, fewer than
 * 6 NULs at either parity where 22 are needed), nor XOR of text (more
 * than 8 bytes on each side of the top bit), nor a brotli stream (its
 * header refused, or the decoder fails within these bytes: it reads a
 * stream in order, so it would fail there on the whole too).
 */
static int
gate_dead(struct xp *x, size_t pn, size_t dn)
{
	const unsigned char *d = x->t;
	size_t i, zodd = 0, zeven = 0, high = 0, cap = 64u << 10, ai, ao;
	BrotliDecoderState *b;
	BrotliDecoderResult r;
	const uint8_t *ni;
	uint8_t *no, *o;

	if (x->oom || pn < GATE || dn < 64)
		return 0;
	for (i = 0; i < 16; i++)
		if (magic1[d[i]] && magic_at(d + i, GATE - i))
			return 0;
	if (xor_magic(d, GATE))
		return 0;
	for (i = 0; i < GATE; i += 2) {
		zeven += d[i] == 0;
		zodd += d[i + 1] == 0;
		high += (d[i] >> 7) + (d[i + 1] >> 7);
	}
	if (zodd >= 6 || zeven >= 6 || high <= 8 || GATE - high <= 8 ||
	    text_bad(d, GATE, GATE, 8) <= 8)
		return 0;
	/* try_brotli()'s conditions: past them, it would not try */
	if (dn > 4096 || x->depth + 1 > x->bg->maxdepth || !brotli_may(d, GATE))
		return 1;
	if (cap > x->bg->left)
		cap = x->bg->left;
	if (cap < SCAN_MIN_SECRET)
		return 1;
	if ((o = scratch(&x->v, &x->vcap, cap, &x->oom)) == NULL ||
	    (b = BrotliDecoderCreateInstance(NULL, NULL, NULL)) == NULL)
		return 0;
	ai = GATE;
	ni = d;
	ao = cap;
	no = o;
	r = BrotliDecoderDecompressStream(b, &ai, &ni, &ao, &no, NULL);
	BrotliDecoderDestroyInstance(b);
	scan_budget_spend(x->bg, GATE + cap - ao);
	return r == BROTLI_DECODER_RESULT_ERROR;
}

/*
 * Decodes p[0..n) (a token covering buf[s..e)) by radix r and scans
 * it.
 */
static int
try_radix(struct xp *x, int r, const unsigned char *p, size_t n, size_t s,
    size_t e)
{
	size_t dn = 0, i, step, body;
	int rc;

	/*
	 * A long token of a radix with digits of whole bits: its first
	 * GATE bytes first. Random bytes (most long tokens) end here.
	 */
	step = r == R_B64 ? 6 :
	    r == R_HEX	  ? 4 :
	    r == R_BITS	  ? 1 :
	    r >= R_B58	  ? 0 :
			    5;
	for (body = n; body > 0 && p[body - 1] == '='; body--)
		;
	if (step > 0 && body * step / 8 >= 64 && !(r == R_HEX && n % 2) &&
	    gate_dead(x,
		dec_pow2(x, r, p, (GATE * 8 + step - 1) / step, (int)step),
		body * step / 8))
		return 0;
	if (x->oom)
		return -1;

	switch (r) {
	case R_B64:
		dn = dec_pow2(x, r, p, n, 6);
		break;
	case R_B32:
	case R_B32HEX:
	case R_CROCK:
	case R_ZB32:
		dn = dec_pow2(x, r, p, n, 5);
		break;
	case R_HEX:
		if (n % 2 != 0)
			return 0;
		dn = dec_pow2(x, r, p, n, 4);
		break;
	case R_BITS:
		dn = dec_pow2(x, r, p, n, 1);
		break;
	case R_B58:
		dn = dec_big(x, r, 58, p, n);
		break;
	case R_B62:
		dn = dec_big(x, r, 62, p, n);
		break;
	case R_B36:
		dn = dec_big(x, r, 36, p, n);
		break;
	case R_DEC:
		dn = dec_big(x, r, 10, p, n);
		break;
	case R_OCT:
		dn = dec_oct(x, p, n);
		break;
	default:
		break;
	}
	if (x->oom)
		return -1;
	if (dn < SCAN_MIN_SECRET)
		return 0;
	/* bytes that are not text: scanned only when XOR would give one */
	rc = try_decoded(x, x->t, dn, r_name[r], s, e, 1);
	if (rc != 0 || r != R_DEC)
		return rc;
	/* a number, least significant byte first */
	for (i = 0; i < dn / 2; i++) {
		unsigned char c = x->t[i];

		x->t[i] = x->t[dn - 1 - i];
		x->t[dn - 1 - i] = c;
	}
	return try_decoded(x, x->t, dn, "dec-le", s, e, 1);
}

/*
 * The radixes that fit token p[0..n) (covering buf[s..e)): all of its
 * characters in the alphabet (padding at the end only), and what the
 * alphabet implies.
 */
/*
 * The radixes a token of body characters may be read in: all, the
 * radixes holding every one of them; the rest, whether any is so.
 */
static unsigned
fit_bits(unsigned m, int lower, int upper, int digit, int nonhex, size_t body)
{
	/* the big numbers read text that a smaller alphabet does not */
	if (!nonhex)
		m &= ~(unsigned)((1u << R_B58) | (1u << R_B62) | (1u << R_B36) |
		    (1u << R_CROCK) | (1u << R_B32HEX) | (1u << R_ZB32));
	if (!(lower && upper))
		m &= ~(unsigned)((1u << R_B58) | (1u << R_B62) | (1u << R_B64));
	if (lower && upper)
		m &= ~(unsigned)((1u << R_B36) | (1u << R_B32) |
		    (1u << R_B32HEX) | (1u << R_CROCK));
	if (upper)
		m &= ~(unsigned)(1u << R_ZB32);
	if (!digit)
		m &= ~(unsigned)((1u << R_B36) | (1u << R_B62));
	if (m & (1u << R_BITS))
		m &= (1u << R_BITS); /* 0 and 1 only: bits */
	else if (m & (1u << R_DEC))  /* digits: a number, octal, hex */
		m &= (1u << R_OCT) | (1u << R_DEC) | (1u << R_HEX);
	if (m & (1u << R_DEC) && body < 19)
		m &= ~(unsigned)(1u << R_DEC);
	return m;
}

static unsigned
fit_body(const unsigned char *p, size_t body)
{
	uint32_t all = 0xffff, any = 0;
	size_t i;

	for (i = 0; i < body; i++) {
		all &= tcls[p[i]];
		any |= tcls[p[i]];
	}
	if (any & T_PAD)
		return 0;
	return fit_bits(all & 0xffff, (any & T_LOWER) != 0,
	    (any & T_UPPER) != 0, (any & T_DIGIT) != 0, (any & T_NONHEX) != 0,
	    body);
}

static int
on_token(struct xp *x, const unsigned char *p, size_t n, size_t s, size_t e)
{
	unsigned m;
	size_t body = n;
	int r;

	while (body > 0 && p[body - 1] == '=')
		body--;
	if (body < MIN_TOKEN || n > MAX_TOKEN)
		return 0;
	if ((m = fit_body(p, body)) == 0)
		return 0;
	for (r = 0; r < R_COUNT; r++)
		if ((m & (1u << r)) && try_radix(x, r, p, n, s, e) != 0)
			return -1;
	return 0;
}

/* ---------------------------------------------------------------- */
/*
 * Undoing a rotation, rot47 or a reversal without a trigger: over a
 * transform with no literal form of the secret (rot47 of base91, a
 * reversed base32 of hex), no pattern shows where. A run (or its part
 * after a key) is undone when what that gives is read by a decoder: its
 * characters in a radix's alphabet (or the base85 family's, basE91's)
 * and the first bytes that radix decodes from it text, UTF-16/32 or a
 * compressed stream (worth()). The run undone is then scanned one level
 * deeper, where every decoder runs on it. A rotation is tried only for
 * the alphabets its letters can come from (a rotated hex run has letters
 * past 'f'), rot47 only when it gives a run of one alphabet, so plain
 * runs cost a pass over their bytes.
 */

#define UNDO_MIN 20	 /* characters of a run undone */
#define UNDO_MAX 4096	 /* ... at most */
#define PROBE	 48	 /* bytes a probe decodes */
#define R_ALL	 0x0fffu /* every radix */

static uint32_t lset[R_COUNT], uset[R_COUNT]; /* letters of each alphabet */
/*
 * Per byte c, for one pass over a run: uall[c] is ANDed (the alphabets
 * holding every byte), uany[c] ORed (its letters and kinds):
 *   uall  0..11  radixes holding c           (U_RAW)
 *        12..15  base85 family, basE91        (U_FAM)
 *        16      base64 holds c
 *        20..31  radixes holding rot47(c)     (U_RAW47)
 *        32..35  families holding rot47(c)    (U_FAM47)
 *        36      base64 holds rot47(c)
 *        40..51  radixes holding c, all of them for a letter or '='
 *   uany  0..25  c a lower-case letter, 26..51 upper-case
 *        52..55  T_LOWER..T_NONHEX of c, 56..59 of rot47(c)
 */
static uint64_t uall[256], uany[256];
/* unrot[k][c]: c rotated back by k (1..25); unrot[0]: rot47 */
static unsigned char unrot[26][256];

static unsigned char
rot47(unsigned c)
{
	return (
	    unsigned char)(c > 0x20 && c < 0x7f ? 33 + (c - 33 + 47) % 94 : c);
}

static uint64_t
tkind(unsigned c)
{
	return (tcls[c] >> 16) & 15; /* T_LOWER, T_UPPER, T_DIGIT, T_NONHEX */
}

static void
undo_init(void)
{
	int r, c;

	for (r = 0; r < R_COUNT; r++)
		for (c = 0; c < 26; c++) {
			if (rval[r]['a' + c] >= 0)
				lset[r] |= 1u << c;
			if (rval[r]['A' + c] >= 0)
				uset[r] |= 1u << c;
		}
	for (r = 0; r < 26; r++)
		for (c = 0; c < 256; c++) {
			unsigned b = c >= 'a' ? 'a' : 'A';

			unrot[r][c] = r == 0 ?
			    rot47((unsigned)c) :
			    scan_is_letter((unsigned)c) ?
			    (unsigned char)(b +
				((unsigned)c - b + 26 - (unsigned)r) % 26) :
			    (unsigned char)c;
		}
	for (c = 0; c < 256; c++) {
		unsigned q = rot47((unsigned)c);
		uint64_t fam = (rcls[c] / RC_X) & 15,
			 fq = (rcls[q] / RC_X) & 15;
		uint64_t nl = scan_is_letter((unsigned)c) || c == '=' ?
		    R_ALL :
		    rmask[c];

		uall[c] = (uint64_t)rmask[c] | fam << 12 |
		    (uint64_t)((rcls[c] & RC_B64) != 0) << 16 |
		    (uint64_t)rmask[q] << 20 | fq << 32 |
		    (uint64_t)((rcls[q] & RC_B64) != 0) << 36 | nl << 40;
		uany[c] = (c >= 'a' && c <= 'z' ? (uint64_t)1 << (c - 'a') :
				  c >= 'A' && c <= 'Z' ? (uint64_t)1
				      << (26 + c - 'A') :
							 0) |
		    tkind((unsigned)c) << 52 | tkind(q) << 56;
	}
}

static void
undo_init_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, undo_init);
}

/*
 * Does u[0..k) (the first k of n characters of a run undone, '='
 * stripped before it) read as one of the radixes m, or of the families
 * fam (RC_X bits), into text? Decodes its start; a big number only when
 * k is all of it.
 */
static int
probe(struct xp *x, const unsigned char *u, size_t k, size_t n, unsigned m,
    uint32_t fam)
{
	size_t dn, l;
	int r, a;

	for (r = 0; r < R_COUNT; r++) {
		if (!(m & (1u << r)))
			continue;
		switch (r) {
		case R_B64:
		case R_HEX:
		case R_BITS:
			l = r == R_B64 ? 6 : r == R_HEX ? 4 : 1;
			if (r == R_HEX && n % 2)
				continue;
			dn = dec_pow2(x, r, u,
			    k < PROBE * 8 / l ? k : PROBE * 8 / l, (int)l);
			break;
		case R_B58:
		case R_B62:
		case R_B36:
		case R_DEC:
			if (k < n)
				continue;
			dn = dec_big(x, r,
			    r == R_B58	   ? 58 :
				r == R_B62 ? 62 :
				r == R_B36 ? 36 :
					     10,
			    u, k);
			break;
		case R_OCT:
			if (n % 3)
				continue;
			l = k < 3 * PROBE ? k : 3 * PROBE;
			dn = dec_oct(x, u, l - l % 3);
			break;
		default: /* base32 in its alphabets */
			dn = dec_pow2(x, r, u,
			    k < PROBE * 8 / 5 ? k : PROBE * 8 / 5, 5);
			break;
		}
		if (x->oom)
			return 0;
		scan_budget_spend(x->bg, dn + PROBE);
		if (dn >= SCAN_MIN_SECRET && worth(x->t, dn))
			return 1;
	}
	for (a = 0; a < X_COUNT; a++) {
		if (!(fam & (1u << a)))
			continue;
		/* two groups first: 8 bytes of random data are text 1 in 10^4 */
		l = k < 10 ? k : 10;
		dn = a == X_B91 ? dec_b91(x, u, l) : dec_b85(x, a, u, l);
		if (x->oom)
			return 0;
		if (dn < 8 || text_bad(x->t, 8, 8, 0) > 0)
			continue;
		l = k < 60 ? k : 60;
		dn = a == X_B91 ? dec_b91(x, u, l) : dec_b85(x, a, u, l);
		if (x->oom)
			return 0;
		scan_budget_spend(x->bg, dn + l);
		if (dn >= SCAN_MIN_SECRET && worth(x->t, dn))
			return 1;
	}
	return 0;
}

#define UNDO_PRE 160 /* characters of a run undone for a probe */

/*
 * undo(p[i]) for i < k into u, by kind: 0 reversal, 1..25 a rotation
 * back, 47 rot47.
 */
static void
undo_bytes(const unsigned char *p, size_t n, unsigned char *u, size_t k,
    int kind)
{
	const unsigned char *t = unrot[kind == 47 ? 0 : kind];
	size_t i;

	if (kind == 0)
		for (i = 0; i < k; i++)
			u[i] = p[n - 1 - i];
	else
		for (i = 0; i < k; i++)
			u[i] = t[p[i]];
}

/*
 * The run p[0..n) (buf[s..e)) undone by kind when its start probes
 * alive in radixes m or families fam: scanned one level deeper.
 */
static int
undo_try(struct xp *x, const unsigned char *p, size_t n, int kind, unsigned m,
    uint32_t fam, size_t s, size_t e)
{
	unsigned char *u;
	size_t k = UNDO_PRE, a = 0;

	if (m == 0 && fam == 0)
		return 0;
	/* what the probes read: 64 characters but of a big number */
	if (!(m &
		((1u << R_B58) | (1u << R_B62) | (1u << R_B36) | (1u << R_DEC) |
		    (1u << R_BITS) | (1u << R_OCT))))
		k = 64;
	if (k > n)
		k = n;
	if ((u = scratch(&x->w, &x->wcap, n, &x->oom)) == NULL)
		return -1;
	undo_bytes(p, n, u, k, kind);
	while (a < k && u[a] == '=')
		a++;
	if (!probe(x, u + a, k - a, n - a, m, fam))
		return x->oom ? -1 : 0;
	undo_bytes(p, n, u, n, kind);
	return xemit(x, u, n,
	    kind == 0	   ? "reverse" :
		kind == 47 ? "rot47" :
			     rot_name[kind],
	    s, e);
}

/* probe() on the start of the run p[0..n) as it is, '=' skipped. */
static int
probe_run(struct xp *x, const unsigned char *p, size_t n, unsigned m,
    uint32_t fam)
{
	const unsigned char *q = p, *end = p + (n < UNDO_PRE ? n : UNDO_PRE);

	while (q < end && *q == '=')
		q++;
	return probe(x, q, (size_t)(end - q), n - (size_t)(q - p), m, fam) ||
	    x->oom;
}

/* Can byte c start text (printable ASCII, a blank, a UTF-8 lead)? */
static inline int
text_start(unsigned c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t' ||
	    (c >= 0xc2 && c <= 0xf4);
}

/*
 * The first groups of basE91 p[0..8) rotated back by k, decoded into o
 * while the first byte may start text or a stream (p: a run of 20 or
 * more):
 * their count (a rotation that fails stops at its first bad byte).
 */
static size_t
b91_head(const unsigned char *p, int k, unsigned char *o)
{
	const signed char *val = xval[X_B91];
	const unsigned char *t = unrot[k];
	unsigned b = 0, nb = 0, v;
	size_t i, no = 0;
	int c0, c1;

	for (i = 0; i + 1 < 8; i += 2) {
		if ((c0 = val[t[p[i]]]) < 0 || (c1 = val[t[p[i + 1]]]) < 0)
			break;
		v = (unsigned)(c0 + 91 * c1);
		b |= v << nb;
		nb += (v & 8191) > 88 ? 13 : 14;
		do {
			o[no++] = (unsigned char)b;
			b >>= 8;
			nb -= 8;
		} while (nb > 7);
		if (!text_start(o[0]) && !magic1[o[0]])
			return 0;
	}
	return no;
}

/*
 * basE91 under a rotation over letters: its alphabet is the same under
 * every rotation, nothing shows which. Each rotation's first four groups
 * (6 bytes or so) must be text (or start a stream) before undo_try()
 * probes more and undoes the run: random runs pass about 1 rotation in
 * 200 there, 1 in 10^4 the probe.
 */
static int
undo_b91_rots(struct xp *x, const unsigned char *p, size_t n, size_t s,
    size_t e, uint32_t done_rots)
{
	unsigned char o[16];
	size_t no;
	int k;

	scan_budget_spend(x->bg, 25);
	for (k = 1; k < 26; k++) {
		if (done_rots & ((uint32_t)1 << k))
			continue;
		if ((no = b91_head(p, k, o)) < 4 ||
		    (!magic1[o[0]] && text_bad(o, no, no, 0) > 0))
			continue;
		if (undo_try(x, p, n, k, 0, 1u << X_B91, s, e) != 0)
			return -1;
	}
	return 0;
}

/*
 * Is a run of n undone (undo_run)? Not a short or a long one, and not
 * where no level is left (a guess, not a decoder that read its input: no
 * guess, and no depth budget said).
 */
static int
undo_fits(const struct xp *x, size_t n)
{
	return n >= UNDO_MIN && n <= UNDO_MAX &&
	    x->depth + 1 <= x->bg->maxdepth;
}

/*
 * uall ANDed into *all and uany ORed into *any over p[0..n); two of
 * each in turn, so that each byte does not wait for the one before.
 */
static void
undo_masks(const unsigned char *p, size_t n, uint64_t *all, uint64_t *any)
{
	uint64_t a0 = *all, a1 = ~(uint64_t)0, y0 = *any, y1 = 0;
	size_t i;

	for (i = 0; i + 2 <= n; i += 2) {
		a0 &= uall[p[i]];
		y0 |= uany[p[i]];
		a1 &= uall[p[i + 1]];
		y1 |= uany[p[i + 1]];
	}
	if (i < n) {
		a0 &= uall[p[i]];
		y0 |= uany[p[i]];
	}
	*all = a0 & a1;
	*any = y0 | y1;
}

/*
 * The run p[0..n) (buf[s..e)) undone by a reversal, rot47 and each
 * rotation where a decoder may read what that gives (see above); done:
 * what the triggers undid already; all and any: undo_masks of the run
 * (undo_fits: n). One pass over the run; a probe only where an alphabet
 * fits.
 */
static int
undo_run(struct xp *x, const unsigned char *p, size_t n, size_t s, size_t e,
    uint32_t done_rots, unsigned done_kinds, uint64_t all, uint64_t any)
{
	uint32_t low, up, lm, um, rfam, ifam;
	unsigned raw, iraw, nl, cand, t, ti, m;
	int k, r;

	scan_budget_spend(x->bg, n);
	raw = (unsigned)all & R_ALL;
	rfam = (all >> 16) & 1 ? 0 : (uint32_t)(all >> 12) & 15;
	iraw = (unsigned)(all >> 20) & R_ALL;
	ifam = (all >> 36) & 1 ? 0 : (uint32_t)(all >> 32) & 15;
	nl = (unsigned)(all >> 40) & R_ALL;
	low = (uint32_t)any & 0x3ffffff;
	up = (uint32_t)(any >> 26) & 0x3ffffff;
	t = (unsigned)(any >> 52) & 15;
	ti = (unsigned)(any >> 56) & 15;
	/*
	 * A run that reads as text as it is is read by the decoders: undone
	 * too, text of low entropy (bits, hex of text) reads as text again
	 * under most rotations and reversed, a guess each level deeper.
	 */
	m = fit_bits(raw, t & 1, t & 2, t & 4, t & 8, n);
	if ((m != 0 || rfam != 0) && probe_run(x, p, n, m, rfam))
		return x->oom ? -1 : 0;
	/* reversed: the same alphabets */
	if (!(done_kinds & TRIG_REV) &&
	    undo_try(x, p, n, 0, m, rfam, s, e) != 0)
		return -1;
	/*
	 * rot47: a radix alphabet the run is not in; base85 and basE91 in
	 * any case (rot47 of their text is mostly their text too, and the
	 * run as it is did not read as text above)
	 */
	m = fit_bits(iraw & ~raw, ti & 1, ti & 2, ti & 4, ti & 8, n);
	if (!(done_kinds & TRIG_R47) &&
	    undo_try(x, p, n, 47, m, ifam, s, e) != 0)
		return -1;
	/*
	 * Rotations: an alphabet the run is not in that its letters rotated
	 * back fit (base64 is the same under every rotation: no rotation of
	 * it shows).
	 */
	/* basE91 (not base64, which has a literal form) under a rotation */
	if ((rfam & (1u << X_B91)) && !(raw & (1u << R_B64)) &&
	    (low | up) != 0 && undo_b91_rots(x, p, n, s, e, done_rots) != 0)
		return -1;
	nl &= ~raw;
	if ((low | up) == 0 || nl == 0)
		return 0;
	for (k = 1; k < 26; k++) {
		if (done_rots & ((uint32_t)1 << k))
			continue;
		/* the letters before the rotation: c - k */
		lm = ((low >> k) | (low << (26 - k))) & 0x3ffffff;
		um = ((up >> k) | (up << (26 - k))) & 0x3ffffff;
		for (cand = 0, r = 0; r < R_COUNT; r++)
			if ((nl & (1u << r)) && !(lm & ~lset[r]) &&
			    !(um & ~uset[r]))
				cand |= 1u << r;
		if (cand == 0)
			continue;
		m = fit_bits(cand, lm != 0, um != 0, t & 4,
		    ((lm | um) & ~(uint32_t)0x3f) != 0, n);
		if (undo_try(x, p, n, k, m, 0, s, e) != 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Triggers in a run. */

static int
on_sig(void *ctx, const struct scan_trig *t, size_t pos)
{
	struct xp *x = ctx;
	const unsigned char *run = x->run;
	size_t q, base;
	int nrot;

	if (t->kind & TRIG_REV) { /* rotated and reversed: reverse first */
		x->kinds |= TRIG_REV;
		return 0;
	}
	/* the trigger starts at orig[skip] */
	if (pos < t->skip)
		return 0;
	base = pos - t->skip;
	for (q = t->skip; q < t->origlen && !scan_is_letter(t->orig[q]); q++)
		;
	if (q >= t->origlen)
		return 0;
	nrot = ((int)(run[base + q] | 0x20) - (int)(t->orig[q] | 0x20) + 26) %
	    26;
	if (nrot != 0)
		x->rots |= (uint32_t)1 << nrot;
	return 0;
}

static int
on_kind(void *ctx, const struct scan_trig *t, size_t pos)
{
	struct xp *x = ctx;

	(void)pos;
	x->kinds |= t->kind;
	return 0;
}

#define WRAP_LINE 16 /* characters of a line a wrapped token goes on after */

/* A JSON-escaped line break at p[i] ("\\n", "\\r\\n", "\\r"): its length. */
static size_t
esc_break(const unsigned char *p, size_t i, size_t n)
{
	if (i + 1 >= n || p[i] != '\\')
		return 0;
	if (p[i + 1] == 'n')
		return 2;
	if (p[i + 1] != 'r')
		return 0;
	return i + 3 < n && p[i + 2] == '\\' && p[i + 3] == 'n' ? 4 : 2;
}

/*
 * A token of a wrapped run, p[0..n), without its escaped line breaks,
 * in the scratch x->u (the run's signature is done with); *len gets
 * its length. On no memory, the token as it is.
 */
static const unsigned char *
unwrap(struct xp *x, const unsigned char *p, size_t n, size_t *len)
{
	unsigned char *d = scratch(&x->u, &x->ucap, n, &x->oom);
	size_t i, o = 0, w;

	if (d == NULL) {
		*len = n;
		return p;
	}
	for (i = 0; i < n; i++) {
		if (p[i] == '\\' && (w = esc_break(p, i, n)) > 0) {
			i += w - 1;
			continue;
		}
		d[o++] = p[i];
	}
	*len = o;
	return d;
}

/*
 * The run x->run of n at buf[s..e): the rotations, reversal and rot47
 * its triggers show, each emitted; sig is n bytes of scratch.
 */
static int
run_triggers(struct xp *x, size_t n, size_t s, size_t e, unsigned char *sig)
{
	const unsigned char *p = x->run;
	size_t i;
	int k;

	/* the signature only where a sample of it may be a trigger's */
	if (scan_trig_maybe(x->sc, p, n, 1)) {
		scan_rot_sig(p, n, sig);
		if (scan_trig_scan(x->sc, sig, n, TRIG_SIG, on_sig, x) != 0)
			return -1;
	}
	if (scan_trig_maybe(x->sc, p, n, 0) &&
	    scan_trig_scan(x->sc, p, n, TRIG_REV | TRIG_R47, on_kind, x) != 0)
		return -1;
	for (k = 1; k < 26 && x->rots != 0; k++) {
		if (!(x->rots & ((uint32_t)1 << k)))
			continue;
		for (i = 0; i < n; i++) {
			unsigned c = p[i];

			if (scan_is_letter(c)) {
				unsigned b = c >= 'a' ? 'a' : 'A';

				c = b + (c - b + 26 - (unsigned)k) % 26;
			}
			sig[i] = (unsigned char)c;
		}
		if (xemit(x, sig, n, rot_name[k], s, e) != 0)
			return -1;
	}
	if (x->kinds & TRIG_REV) {
		for (i = 0; i < n; i++)
			sig[i] = p[n - 1 - i];
		if (xemit(x, sig, n, "reverse", s, e) != 0)
			return -1;
	}
	if (x->kinds & TRIG_R47) {
		for (i = 0; i < n; i++)
			sig[i] = (unsigned char)(33 + (p[i] - 33 + 47) % 94);
		if (xemit(x, sig, n, "rot47", s, e) != 0)
			return -1;
	}
	return 0;
}

/*
 * Where a key ends in the run p[0..n) (room: the bytes that may be read
 * from p): its first '=' or ':' in its first 40 bytes, or min(n, 40);
 * 16 bytes at a time where 48 may be read.
 */
static inline size_t
key_at(const unsigned char *p, size_t n, size_t room)
{
	size_t i;

#ifdef __SSE2__
	if (room >= 48) {
		size_t lim = n < 40 ? n : 40;

		for (i = 0; i < lim; i += 16) {
			__m128i v = _mm_loadu_si128(
			    (const __m128i *)(const void *)(p + i));
			unsigned m = (unsigned)_mm_movemask_epi8(
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('=')),
				_mm_cmpeq_epi8(v, _mm_set1_epi8(':'))));

			if (m != 0)
				return i + (size_t)__builtin_ctz(m) < lim ?
				    i + (size_t)__builtin_ctz(m) :
				    lim;
		}
		return lim;
	}
#else
	(void)room;
#endif
	for (i = 0; i < n && i < 40 && p[i] != '=' && p[i] != ':'; i++)
		;
	return i;
}

/*
 * One pass over the run: the alphabets of the base85 family and
 * basE91 that hold all of it (from its start, and after a key in
 * its first 40 characters), whether base64 lacks a character of it,
 * and the tokens. *kts: where the part after a key starts (0: none);
 * *lead, *fam: the alphabets that hold the run, and its part after
 * the key.
 *
 * Tokens: cut at punctuation no radix uses ('=' inside a token) and
 * at a JSON-escaped line break, all of it (the line after it starts
 * a token of its own, not "n..."), except where a line of
 * WRAP_LINE or more characters goes on after the break: a wrapped
 * run, joined into one token.
 */
static int
run_tokens(struct xp *x, size_t n, size_t s, size_t *kts_, uint32_t *lead_,
    uint32_t *fam_)
{
	const unsigned char *p = x->run;
	size_t i, j, ts, ls, nw, tn = 0, kts;
	uint32_t lead = ~0u, fam = ~0u;

	kts = key_at(p, n, x->n - s);
	if (kts < n && kts < 40) {
		for (i = 0; i <= kts; i++)
			lead &= rcls[p[i]];
		kts++;
	} else {
		kts = 0;
	}
	for (i = 0, ts = 0, ls = 0, nw = 0; i <= n; i++) {
		uint32_t c = RC_CUT;
		size_t w;
		int cut;

		if (i < n) {
			c = rcls[p[i]];
			if (i >= kts)
				fam &= c;
			if (!(c & (RC_CUT | RC_PAD | RC_BSL)))
				continue;
		}
		w = c & RC_BSL ? esc_break(p, i, n) : 0;
		/* (the escape's letters count in the alphabets) */
		for (j = i + 1; j < i + w; j++)
			if (j >= kts)
				fam &= rcls[p[j]];
		if (w > 0 && i - (ls > ts ? ls : ts) >= WRAP_LINE &&
		    i + w < n && !delim[p[i + w]] && p[i + w] != '=') {
			nw++;
			i += w - 1;
			ls = i + 1;
			continue;
		}
		cut = i == n || w > 0 || (c & RC_CUT) ||
		    ((c & RC_PAD) && i + 1 < n && p[i + 1] != '=' &&
			!delim[p[i + 1]]);
		if (!cut)
			continue;
		if (ts < i && p[ts] == '=')
			ts++;
		if (i > ts) {
			const unsigned char *tp = p + ts;

			tn = i - ts;
			if (nw > 0)
				tp = unwrap(x, p + ts, i - ts, &tn);
			if (on_token(x, tp, tn, s + ts, s + i) != 0)
				return -1;
		}
		ts = ls = i + (w > 0 ? w : 1);
		i = ts - 1;
		nw = 0;
	}
	*kts_ = kts;
	*lead_ = lead;
	*fam_ = fam;
	return 0;
}

/*
 * The whole run by the base85 family and basE91, or after a key;
 * only a run with a character base64 lacks (base85 text of 20 bytes
 * has one but 3 times in 1000).
 */
static int
run_whole(struct xp *x, size_t n, size_t s, size_t e, size_t kts, uint32_t lead,
    uint32_t fam)
{
	const unsigned char *p = x->run;
	int k;

	for (k = (lead & fam) & RC_B64 ? 2 * X_COUNT : 0; k < 2 * X_COUNT;
	     k++) {
		size_t dn, from = k < X_COUNT ? 0 : kts;
		int a = k % X_COUNT;

		if ((k >= X_COUNT && kts == 0) || n - from < 10)
			continue;
		if (!((k < X_COUNT ? lead & fam : fam) & (RC_X << a)))
			continue;
		dn = a == X_B91 ? dec_b91(x, p + from, n - from) :
				  dec_b85(x, a, p + from, n - from);
		if (x->oom)
			return -1;
		if (try_decoded(x, x->t, dn, x_name[a], s + from, e, 0) != 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Groups reversed: fold -wK | tac | tr -d '\n', and each group in place. */

static const char *const grev_name[9] = { NULL, NULL, "grouprev2", "grouprev3",
	"grouprev4", "grouprev5", "grouprev6", "grouprev7", "grouprev8" };
static const char *const gswap_name[9] = { NULL, NULL, "byteswap2", "byteswap3",
	"byteswap4", "byteswap5", "byteswap6", "byteswap7", "byteswap8" };

static int
on_group(void *ctx, const struct scan_trig *t, size_t pos)
{
	struct xp *x = ctx;

	if (x->ngh < GROUP_HITS) {
		x->gh[x->ngh].t = t;
		x->gh[x->ngh].q = pos;
		x->ngh++;
	}
	return 0;
}

/*
 * Could c have followed the secret, in the group it shares with the
 * secret's last bytes? A letter, a digit or a byte of the pattern; for
 * a base64 middle its digits and '='. Text that preceded the secret (a
 * key, "KEY=") may be anything.
 */
static int
secret_like(const struct scan_trig *t, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned c = p[i];

		if (t->radix ? !(rmask[c] & (1u << R_B64)) :
			       !((tcls[c] & (T_LOWER | T_UPPER | T_DIGIT)) ||
				   memchr(t->orig, (int)c, t->origlen)))
			return 0;
	}
	return 1;
}

/* Are run[a..a+l) the bytes o[0..l), reversed when rev is set? */
static int
edge_is(const unsigned char *run, size_t a, const unsigned char *o, size_t l,
    int rev)
{
	size_t i;

	for (i = 0; i < l; i++)
		if (run[a + i] != (rev ? o[l - 1 - i] : o[i]))
			return 0;
	return 1;
}

/*
 * The readings of an edge of l bytes of the pattern (the head or the
 * tail, e) whose group lies before (before set) or after the inner
 * groups, at run[q..) or run[..q) of n: 0 when it is empty, the short
 * group (fold's last: the grouped text ends at the secret) and the whole
 * group of K bytes (its other bytes secret-like when follow is set). A
 * bit for each length that holds: 1 << len.
 */
static unsigned
edge_reads(const struct scan_trig *t, const unsigned char *run, size_t n,
    size_t q, int before, const unsigned char *e, size_t l, int rev, int follow)
{
	size_t k = t->group, a, x;
	unsigned r = 0;

	/* an empty edge needs no group, but for a base64 tail's digit */
	if (l == 0 && !(t->radix && follow && t->tdig))
		return 1;
	if (l == 0)
		r |= 1; /* (the partial digit's group may be left out) */
	if (l > 0 && !t->radix && (before ? q >= l : q + l <= n) &&
	    edge_is(run, before ? q - l : q, e, l, rev))
		r |= 1u << l;
	/*
	 * unpadded base64 (base64url, JWTs): fold's last group, the text's
	 * end, holds the tail and its partial digit alone
	 */
	x = t->tdig;
	if (t->radix && before && follow && l + x > 0 && l + x < k &&
	    q >= l + x && edge_is(run, q - l - x, e, l, rev) &&
	    secret_like(t, run + q - x, x))
		r |= 1u << (l + x);
	if (before ? q < k : q + k > n)
		return r;
	/* the edge's bytes at the group's far end from the inner ones */
	a = before ? q - k : q + k - l;
	if (!edge_is(run, a, e, l, rev))
		return r;
	if (follow &&
	    !secret_like(t, before ? run + q - k + l : run + q, k - l))
		return r;
	return r | 1u << k;
}

/*
 * A group trigger t at run[q]: the windows its edges' readings give,
 * each the run's bytes in the secret's order, scanned one level deeper
 * (xemit) as "grouprevK>FORM" or "byteswapK>FORM".
 */
static int
group_undo(struct xp *x, size_t n, size_t s, const struct scan_trig *t,
    size_t q, unsigned *left)
{
	const unsigned char *run = x->run, *o = t->orig;
	size_t k = t->group, ph = t->skip, m = (t->origlen - ph) / k;
	size_t tl = t->origlen - ph - m * k, e = q + m * k, eh, et, j, i, wn;
	int swap = t->kind == TRIG_GSWAP;
	unsigned heads, tails;
	unsigned char *w;

	if (swap) {
		heads = edge_reads(t, run, n, q, 1, o, ph, 1, 0);
		tails = edge_reads(t, run, n, e, 0, o + t->origlen - tl, tl, 1,
		    1);
	} else {
		tails = edge_reads(t, run, n, q, 1, o + t->origlen - tl, tl, 0,
		    1);
		heads = edge_reads(t, run, n, e, 0, o, ph, 0, 0);
	}
	if (heads == 0 || tails == 0)
		return 0;
	scan_budget_spend(x->bg, t->origlen + 2 * k);
	if ((w = scratch(&x->w, &x->wcap, t->origlen + 2 * k, &x->oom)) == NULL)
		return -1;
	for (eh = 0; eh <= k; eh++)
		for (et = 0; et <= k; et++) {
			if (!(heads >> eh & 1) || !(tails >> et & 1) ||
			    *left == 0)
				continue;
			--*left;
			wn = 0;
			if (swap) {
				for (i = q; i > q - eh; i--)
					w[wn++] = run[i - 1];
				for (j = 0; j < m; j++)
					for (i = q + (j + 1) * k; i > q + j * k;
					     i--)
						w[wn++] = run[i - 1];
				for (i = e + et; i > e; i--)
					w[wn++] = run[i - 1];
				if (xemit(x, w, wn, gswap_name[k], s + q - eh,
					s + e + et) != 0)
					return -1;
				continue;
			}
			memcpy(w, run + e, eh);
			wn = eh;
			for (j = 0; j < m; j++, wn += k)
				memcpy(w + wn, run + e - (j + 1) * k, k);
			memcpy(w + wn, run + q - et, et);
			wn += et;
			if (xemit(x, w, wn, grev_name[k], s + q - et,
				s + e + eh) != 0)
				return -1;
		}
	return 0;
}

/*
 * The run x->run of n at buf[s..): its group triggers, each undone
 * where its edges fit (at most GROUP_HITS windows). The windows never
 * leave the run: its findings depend on its bytes alone (the memo).
 */
static int
group_run(struct xp *x, size_t n, size_t s)
{
	unsigned i, left = GROUP_HITS;

	x->ngh = 0;
	if (scan_group_scan(x->sc, x->run, n, on_group, x) != 0)
		return -1;
	for (i = 0; i < x->ngh; i++)
		if (group_undo(x, n, s, x->gh[i].t, x->gh[i].q, &left) != 0)
			return -1;
	return 0;
}

/* The run buf[s..e): its rotations, reversal and rot47, then tokens. */
static int
on_run(struct xp *x, size_t s, size_t e)
{
	const unsigned char *p = x->buf + s;
	size_t n = e - s, kts;
	uint32_t lead, fam;
	uint64_t all = ~(uint64_t)0, any = 0, all2 = ~(uint64_t)0, any2 = 0;
	unsigned char *sig;
	int whole, tail;

	scan_budget_spend(x->bg, 2 * n);
	if (n > MAX_TOKEN)
		return 0;
	if ((sig = scratch(&x->u, &x->ucap, n, &x->oom)) == NULL)
		return -1;
	x->run = p;
	x->rots = 0;
	x->kinds = 0;
	if (run_triggers(x, n, s, e, sig) != 0 ||
	    run_tokens(x, n, s, &kts, &lead, &fam) != 0 ||
	    run_whole(x, n, s, e, kts, lead, fam) != 0)
		return -1;
	/* a run of hex digits holds no group trigger but a hex secret's */
	if ((!(lead & fam & RC_HEX) || scan_group_hex(x->sc)) &&
	    group_run(x, n, s) != 0)
		return -1;
	/*
	 * undone without a trigger: the run, and its part after a key; the
	 * alphabets of both from one pass over the run
	 */
	whole = undo_fits(x, n);
	tail = kts > 0 && undo_fits(x, n - kts);
	if (whole || tail)
		undo_init_once();
	if (tail)
		undo_masks(p + kts, n - kts, &all2, &any2);
	if (whole) {
		undo_masks(p, tail ? kts : n, &all, &any);
		if (tail) {
			all &= all2;
			any |= any2;
		}
	}
	if ((whole &&
		undo_run(x, p, n, s, e, x->rots, x->kinds, all, any) != 0) ||
	    (tail &&
		undo_run(x, p + kts, n - kts, s + kts, e, 0, 0, all2, any2) !=
		    0))
		return -1;
	return x->oom ? -1 : 0;
}

/* ---------------------------------------------------------------- */
/* Bits grouped by separators: "01110011 01101011 ...". */

static size_t
on_bits(struct xp *x, size_t i)
{
	size_t s = i, e = i, nb = 0, o = 0;
	unsigned acc = 0;
	int bits = 0, rev;
	unsigned char *d, *w;

	while (s > 0 &&
	    (x->buf[s - 1] == '0' || x->buf[s - 1] == '1' ||
		x->buf[s - 1] == ' ' || x->buf[s - 1] == ','))
		s--;
	while (e < x->n &&
	    (x->buf[e] == '0' || x->buf[e] == '1' || x->buf[e] == ' ' ||
		x->buf[e] == ',' || x->buf[e] == '_' || x->buf[e] == '-' ||
		x->buf[e] == '\n'))
		e++;
	scan_budget_spend(x->bg, e - s);
	if ((d = scratch(&x->t, &x->tcap, (e - s) / 8 + 1, &x->oom)) == NULL)
		return e;
	for (i = s; i < e; i++) {
		if (x->buf[i] != '0' && x->buf[i] != '1')
			continue;
		acc = (acc << 1) | (unsigned)(x->buf[i] - '0');
		nb++;
		if (++bits == 8) {
			d[o++] = (unsigned char)acc;
			acc = 0;
			bits = 0;
		}
	}
	if (nb < 64)
		return e;
	rev = !worth(d, o);
	if (xemit(x, d, o, "bits", s, e) != 0) {
		x->oom = 1;
		return e;
	}
	/*
	 * Not text forward: read backwards (the groups reversed, and the
	 * bits in each), text there is a reversal over the bits: undone,
	 * and read one level deeper.
	 */
	if (!rev || x->depth + 1 > x->bg->maxdepth ||
	    (d = scratch(&x->u, &x->ucap, o + 1, &x->oom)) == NULL ||
	    (w = scratch(&x->w, &x->wcap, e - s, &x->oom)) == NULL)
		return e;
	for (o = 0, bits = 0, acc = 0, i = e; i > s; i--) {
		w[e - i] = x->buf[i - 1];
		if (x->buf[i - 1] != '0' && x->buf[i - 1] != '1')
			continue;
		acc = (acc << 1) | (unsigned)(x->buf[i - 1] - '0');
		if (++bits == 8) {
			d[o++] = (unsigned char)acc;
			acc = 0;
			bits = 0;
		}
	}
	scan_budget_spend(x->bg, e - s);
	if (worth(d, o) && xemit(x, w, e - s, "reverse", s, e) != 0)
		x->oom = 1;
	return e;
}

static int
bit47(unsigned c)
{
	return c == '_' || c == '`';
}

/*
 * Bits under rot47 ('0' is '_', '1' is '`'), grouped by blanks: where
 * they read as text forward or backwards, the region is rotated back and
 * read one level deeper (by on_bits, as "rot47>bits"). Both symbols
 * must be there (a row of "_ _ _" is a blank to fill in).
 */
static size_t
on_bits47(struct xp *x, size_t i)
{
	size_t s = i, e = i, k, nb = 0, ones = 0, o = 0, ob = 0;
	unsigned acc = 0, accb = 0;
	int bits = 0, bitsb = 0;
	unsigned char *d, *b, *w;

	while (s > 0 && (bit47(x->buf[s - 1]) || x->buf[s - 1] == ' '))
		s--;
	while (e < x->n &&
	    (bit47(x->buf[e]) || x->buf[e] == ' ' || x->buf[e] == '\n'))
		e++;
	scan_budget_spend(x->bg, 2 * (e - s));
	if (x->depth + 1 > x->bg->maxdepth ||
	    (d = scratch(&x->t, &x->tcap, (e - s) / 4 + 2, &x->oom)) == NULL)
		return e;
	b = d + (e - s) / 8 + 1;
	for (k = s; k < e; k++) {
		unsigned f = x->buf[k], r = x->buf[e - 1 - (k - s)];

		if (bit47(f)) {
			acc = (acc << 1) | (f == '`');
			nb++;
			ones += f == '`';
			if (++bits == 8) {
				d[o++] = (unsigned char)acc;
				acc = 0;
				bits = 0;
			}
		}
		if (bit47(r)) {
			accb = (accb << 1) | (r == '`');
			if (++bitsb == 8) {
				b[ob++] = (unsigned char)accb;
				accb = 0;
				bitsb = 0;
			}
		}
	}
	if (nb < 64 || ones < 8 || nb - ones < 8 ||
	    !(worth(d, o) || worth(b, ob)) ||
	    (w = scratch(&x->w, &x->wcap, e - s, &x->oom)) == NULL)
		return e;
	undo_init_once();
	for (k = s; k < e; k++)
		w[k - s] = unrot[0][x->buf[k]];
	if (xemit(x, w, e - s, "rot47", s, e) != 0)
		x->oom = 1;
	return e;
}

/* ---------------------------------------------------------------- */
/* UTF-16 and UTF-32 around a NUL. */

static void
put_utf8(unsigned char *d, size_t *o, uint32_t cp)
{
	if (cp < 0x80) {
		d[(*o)++] = (unsigned char)cp;
	} else if (cp < 0x800) {
		d[(*o)++] = (unsigned char)(0xc0 | cp >> 6);
		d[(*o)++] = (unsigned char)(0x80 | (cp & 63));
	} else if (cp < 0x10000) {
		d[(*o)++] = (unsigned char)(0xe0 | cp >> 12);
		d[(*o)++] = (unsigned char)(0x80 | ((cp >> 6) & 63));
		d[(*o)++] = (unsigned char)(0x80 | (cp & 63));
	} else {
		d[(*o)++] = (unsigned char)(0xf0 | cp >> 18);
		d[(*o)++] = (unsigned char)(0x80 | ((cp >> 12) & 63));
		d[(*o)++] = (unsigned char)(0x80 | ((cp >> 6) & 63));
		d[(*o)++] = (unsigned char)(0x80 | (cp & 63));
	}
}

static uint32_t
unit(const unsigned char *p, int w, int be)
{
	if (w == 2)
		return be ? (uint32_t)p[0] << 8 | p[1] :
			    (uint32_t)p[1] << 8 | p[0];
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3] :
		    (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
		(uint32_t)p[1] << 8 | p[0];
}

/*
 * A code unit of text as a secret's UTF-16 holds it: ASCII, or a letter
 * below U+0800 (Latin, Greek, Cyrillic, ...). Not higher: two ASCII
 * bytes read as one unit are a CJK character, and plain text would then
 * be "UTF-16" from end to end.
 */
static int
text_unit(uint32_t u)
{
	return (u >= 0x20 && u < 0x7f) || u == '\n' || u == '\t' || u == '\r' ||
	    (u >= 0xa0 && u < 0x800);
}

/*
 * The NUL at z: each of UTF-16LE/BE and UTF-32LE/BE whose code unit of
 * an ASCII character holds it; the units around that are text, decoded
 * to UTF-8 and scanned. Returns where the longest region ends.
 */
static size_t
on_nul(struct xp *x, size_t z, size_t floor)
{
	static const char *const nm[4] = { "utf16le", "utf16be", "utf32le",
		"utf32be" };
	size_t best = z + 1, k;
	int v;

	for (v = 0; v < 4; v++) {
		int w = v < 2 ? 2 : 4, be = v & 1;
		size_t a, s, e, o = 0, at;
		unsigned char *d;

		/* the unit holding z, its ASCII byte beside it */
		for (k = 0; k < (size_t)w; k++) {
			if (z < k)
				break;
			at = z - k;
			if (at + (size_t)w > x->n)
				continue;
			if (text_unit(unit(x->buf + at, w, be)) &&
			    unit(x->buf + at, w, be) < 0x7f)
				break;
		}
		if (k == (size_t)w || z < k)
			continue;
		a = z - k;
		s = a;
		while (s >= floor + (size_t)w &&
		    text_unit(unit(x->buf + s - w, w, be)))
			s -= (size_t)w;
		e = a;
		while (
		    e + (size_t)w <= x->n && text_unit(unit(x->buf + e, w, be)))
			e += (size_t)w;
		if (e < x->n && e + (size_t)w > x->n && !be) {
			/* a number's top zero bytes are gone: pad them */
			unsigned char last[4] = { 0, 0, 0, 0 };

			memcpy(last, x->buf + e, x->n - e);
			if (text_unit(unit(last, w, be)))
				e = x->n;
		}
		if ((e - s) / (size_t)w < SCAN_MIN_SECRET)
			continue;
		scan_budget_spend(x->bg, e - s);
		if ((d = scratch(&x->t, &x->tcap, (e - s) * 2 + 4, &x->oom)) ==
		    NULL)
			return x->n;
		for (k = s; k < e; k += (size_t)w) {
			unsigned char last[4] = { 0, 0, 0, 0 };
			uint32_t u;

			if (k + (size_t)w > e) {
				memcpy(last, x->buf + k, e - k);
				u = unit(last, w, be);
			} else
				u = unit(x->buf + k, w, be);

			if (w == 2 && u >= 0xd800 && u < 0xdc00 && k + 4 <= e) {
				uint32_t lo = unit(x->buf + k + 2, w, be);

				if (lo >= 0xdc00 && lo < 0xe000) {
					u = 0x10000 + ((u - 0xd800) << 10) +
					    (lo - 0xdc00);
					k += 2;
				}
			}
			if (u == 0xfeff)
				continue; /* a byte order mark */
			put_utf8(d, &o, u);
		}
		if (xemit(x, d, o, nm[v], s, e) != 0) {
			x->oom = 1;
			return x->n;
		}
		if (e > best)
			best = e;
	}
	return best;
}

/* ---------------------------------------------------------------- */
/* Unicode: look-alikes folded, invisibles removed, tags read. */

static size_t
utf8_dec(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
{
	unsigned c = s[i];
	size_t len, k;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, v = c & 0x07;
	else
		goto bad;
	if (i + len > n)
		goto bad;
	for (k = 1; k < len; k++) {
		if ((s[i + k] & 0xc0) != 0x80)
			goto bad;
		v = (v << 6) | (s[i + k] & 0x3f);
	}
	*cp = v;
	return len;
bad:
	*cp = 0xfffd;
	return 1;
}

static int
invisible(uint32_t cp)
{
	return cp == 0xad || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2064) ||
	    (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff || cp == 0x34f ||
	    cp == 0x180e || (cp >= 0xfe00 && cp <= 0xfe0f) ||
	    (cp >= 0xe0000 && cp <= 0xe007f);
}

/* NFKC for the look-alikes that matter here: an ASCII byte, or 0. */
static unsigned
fold(uint32_t cp)
{
	if (cp >= 0xff01 && cp <= 0xff5e)
		return cp - 0xff01 + 0x21; /* fullwidth */
	if (cp == 0x3000)
		return ' ';
	if (cp >= 0x1d400 && cp <= 0x1d6a3) { /* mathematical letters */
		unsigned k = (cp - 0x1d400) % 52;

		return k < 26 ? 'A' + k : 'a' + k - 26;
	}
	if (cp >= 0x1d7ce && cp <= 0x1d7ff) /* mathematical digits */
		return '0' + (cp - 0x1d7ce) % 10;
	if (cp >= 0x24b6 && cp <= 0x24cf) /* circled letters */
		return 'A' + (cp - 0x24b6);
	if (cp >= 0x24d0 && cp <= 0x24e9)
		return 'a' + (cp - 0x24d0);
	if (cp >= 0x2460 && cp <= 0x2468) /* circled digits */
		return '1' + (cp - 0x2460);
	if (cp == 0x24ea)
		return '0';
	return 0;
}

static size_t entity(const unsigned char *p, size_t n, uint32_t *cp);

/* Is the sequence at i one fold or invisible() acts on? */
static int
foldable(const unsigned char *b, size_t n, size_t i)
{
	uint32_t cp;

	utf8_dec(b, n, i, &cp);
	return invisible(cp) || fold(cp) != 0;
}

/*
 * The end of the region that starts on i's line: the lines from there on
 * as long as each holds a look-alike or invisible (amp: an entity), so a
 * quoted-printable soft break inside it stays inside; at most MAX_LINE
 * bytes after i, never past a NUL.
 */
static size_t
region_end(const struct xp *x, size_t i, int amp)
{
	size_t k, ls = i, e = i;
	uint32_t cp;

	for (k = i; k < x->n && k - i < MAX_LINE && x->buf[k] != '\0'; k++) {
		if (x->buf[k] == '\n') {
			if (e <= ls)
				return k; /* a line without one */
			ls = k + 1;
		} else if (amp ? x->buf[k] == '&' &&
			    entity(x->buf + k, x->n - k, &cp) != 0 :
				 x->buf[k] >= 0xc2 && foldable(x->buf, x->n, k))
			e = k + 1;
	}
	return k;
}

static size_t
on_unicode(struct xp *x, size_t i, size_t floor)
{
	size_t s = i, e, k, o = 0, ot = 0, len;
	unsigned char *d, *tg;
	uint32_t cp;
	unsigned f;

	while (s > floor && i - s < MAX_LINE && x->buf[s - 1] != '\n' &&
	    x->buf[s - 1] != '\0')
		s--;
	e = region_end(x, i, 0);
	scan_budget_spend(x->bg, e - s);
	if ((d = scratch(&x->u, &x->ucap, 2 * (e - s) + 2, &x->oom)) == NULL)
		return e;
	tg = d + (e - s) + 1;
	for (k = s; k < e; k += len) {
		len = utf8_dec(x->buf, e, k, &cp);
		if (cp >= 0xe0020 && cp <= 0xe007e)
			tg[ot++] = (unsigned char)(cp - 0xe0000);
		if (invisible(cp))
			continue;
		if ((f = fold(cp)) != 0)
			d[o++] = (unsigned char)f;
		else {
			memcpy(d + o, x->buf + k, len);
			o += len;
		}
	}
	if (xemit(x, d, o, "unicode-fold", s, e) != 0 ||
	    (ot >= SCAN_MIN_SECRET &&
		xemit(x, tg, ot, "unicode-tags", s, e) != 0))
		x->oom = 1;
	return e;
}

/* ---------------------------------------------------------------- */
/* HTML entities and MIME encoded-words. */

static const struct {
	const char *name;
	unsigned char c;
} ents[] = { { "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' },
	{ "apos", '\'' }, { "nbsp", ' ' }, { "sol", '/' }, { "colon", ':' },
	{ "period", '.' }, { "comma", ',' }, { "lowbar", '_' },
	{ "hyphen", '-' }, { "dash", '-' }, { "equals", '=' }, { "plus", '+' },
	{ "excl", '!' }, { "num", '#' }, { "dollar", '$' }, { "percnt", '%' },
	{ "lpar", '(' }, { "rpar", ')' }, { "ast", '*' }, { "semi", ';' },
	{ "quest", '?' }, { "commat", '@' }, { "lsqb", '[' }, { "rsqb", ']' },
	{ "bsol", '\\' }, { "lcub", '{' }, { "rcub", '}' }, { "verbar", '|' },
	{ "grave", '`' }, { "Hat", '^' }, { "tilde", '~' } };

/* An entity at p[0..n) ('&' first): its code point and length, or 0. */
static size_t
entity(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t i, k;
	uint32_t v = 0;

	if (n < 3)
		return 0;
	if (p[1] == '#') {
		int hex = n > 2 && (p[2] | 0x20) == 'x';

		for (i = hex ? 3 : 2; i < n && i < 12; i++) {
			int d = p[i] >= '0' && p[i] <= '9' ?
			    p[i] - '0' :
			    hex && (p[i] | 0x20) >= 'a' &&
				(p[i] | 0x20) <= 'f' ?
			    (p[i] | 0x20) - 'a' + 10 :
			    -1;

			if (d < 0)
				break;
			v = v * (hex ? 16 : 10) + (uint32_t)d;
		}
		if (i == (hex ? 3u : 2u) || v > 0x10ffff)
			return 0;
		*cp = v;
		return i < n && p[i] == ';' ? i + 1 : i;
	}
	if (!scan_is_letter(p[1]))
		return 0; /* "&&", "& ": the common case, no name */
	for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
		size_t l;

		if (ents[k].name[0] != p[1])
			continue;
		l = strlen(ents[k].name);
		if (l + 2 <= n && memcmp(p + 1, ents[k].name, l) == 0 &&
		    p[l + 1] == ';') {
			*cp = ents[k].c;
			return l + 2;
		}
	}
	return 0;
}

/*
 * The rotations over letters (bit k: rot-k, 1..25) under which p[0..n)
 * ('&' first) is an entity that entity() does not read as it is: a hex
 * one ("&#x" + hex digits + ";", its 'x' and letter digits rotated: the
 * 'x' says which rotation) or a named one. Rotating a line of entities
 * leaves '&', '#', ';' and the decimal ones as they were: these show it.
 */
static uint32_t
rot_entity(const unsigned char *p, size_t n)
{
	size_t i, l, k;
	uint32_t m = 0;
	unsigned r, c;

	if (n < 4)
		return 0;
	undo_init_once();
	if (p[1] == '#') {
		if (!scan_is_letter(p[2]))
			return 0;
		r = ((unsigned)(p[2] | 0x20) - 'x' + 26) % 26;
		if (r == 0)
			return 0;
		for (i = 3; i < n && i < 12 && p[i] != ';'; i++) {
			c = unrot[r][p[i]] | 0x20;
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				return 0;
		}
		return i > 3 && i < n && p[i] == ';' ? (uint32_t)1 << r : 0;
	}
	for (l = 1; l < n && l < 8 && scan_is_letter(p[l]); l++)
		;
	if (l == 1 || l >= n || p[l] != ';')
		return 0;
	for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
		if (strlen(ents[k].name) != l - 1 ||
		    (ents[k].name[0] & 0x20) != (p[1] & 0x20))
			continue;
		r = ((unsigned)p[1] - (unsigned)ents[k].name[0] + 26) % 26;
		for (i = 1; i < l && unrot[r][p[i]] == ents[k].name[i - 1]; i++)
			;
		if (i == l && r != 0)
			m |= (uint32_t)1 << r;
	}
	return m;
}

/*
 * The region buf[s..e) rotated back by each rotation in rots (at most 3)
 * that its entities showed, scanned one level deeper, where the entities
 * are read.
 */
static void
amp_rots(struct xp *x, size_t s, size_t e, uint32_t rots)
{
	unsigned char *u;
	size_t k;
	int r, tried = 0;

	if (__builtin_popcount(rots) > 3 ||
	    (u = scratch(&x->w, &x->wcap, e - s, &x->oom)) == NULL)
		return;
	for (r = 1; r < 26 && tried < 3; r++) {
		if (!(rots & ((uint32_t)1 << r)))
			continue;
		tried++;
		for (k = s; k < e; k++)
			u[k - s] = unrot[r][x->buf[k]];
		scan_budget_spend(x->bg, e - s);
		if (xemit(x, u, e - s, rot_name[r], s, e) != 0) {
			x->oom = 1;
			return;
		}
	}
}

static size_t
on_amp(struct xp *x, size_t i, size_t floor)
{
	size_t s = i, e, k, o = 0, l, found = 0, rfound = 0;
	unsigned char *d;
	uint32_t cp, rots = 0, rk;

	if (!entity(x->buf + i, x->n - i, &cp) &&
	    !rot_entity(x->buf + i, x->n - i))
		return i + 1;
	while (s > floor && i - s < MAX_LINE && x->buf[s - 1] != '\n' &&
	    x->buf[s - 1] != '\0')
		s--;
	e = region_end(x, i, 1);
	scan_budget_spend(x->bg, e - s);
	if ((d = scratch(&x->u, &x->ucap, 4 * (e - s) + 4, &x->oom)) == NULL)
		return e;
	for (k = s; k < e;) {
		if (x->buf[k] == '&' &&
		    (l = entity(x->buf + k, e - k, &cp)) != 0) {
			put_utf8(d, &o, cp);
			k += l;
			found++;
		} else {
			if (x->buf[k] == '&' &&
			    (rk = rot_entity(x->buf + k, e - k)) != 0) {
				rots |= rk;
				rfound++;
			}
			d[o++] = x->buf[k++];
		}
	}
	if (found >= 2 && xemit(x, d, o, "html-unescape", s, e) != 0)
		x->oom = 1;
	if (rots != 0 && found + rfound >= 2 && !x->oom)
		amp_rots(x, s, e, rots);
	return e;
}

/* "=?charset?B?...?=" or "?Q?": the word's bytes. */
static size_t
on_mime(struct xp *x, size_t i)
{
	const unsigned char *p = x->buf + i;
	size_t n = x->n - i, q1, k, o = 0, e;
	unsigned char *d;
	int enc, v1, v2;

	for (q1 = 2; q1 < n && q1 < 64 && p[q1] != '?'; q1++)
		;
	if (q1 + 3 >= n || p[q1 + 2] != '?')
		return i + 1;
	enc = p[q1 + 1] | 0x20;
	if (enc != 'b' && enc != 'q')
		return i + 1;
	for (e = q1 + 3; e + 1 < n && e < MAX_LINE; e++)
		if (p[e] == '?' && p[e + 1] == '=')
			break;
	if (e + 1 >= n || p[e] != '?')
		return i + 1;
	if ((d = scratch(&x->u, &x->ucap, e, &x->oom)) == NULL)
		return i + e;
	if (enc == 'b') {
		unsigned acc = 0;
		int bits = 0, v;

		for (k = q1 + 3; k < e; k++) {
			if ((v = rval[R_B64][p[k]]) < 0)
				continue;
			acc = (acc << 6) | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				d[o++] = (unsigned char)(acc >> bits);
			}
		}
	} else {
		for (k = q1 + 3; k < e; k++) {
			if (p[k] == '_')
				d[o++] = ' ';
			else if (p[k] == '=' && k + 2 < e &&
			    (v1 = rval[R_HEX][p[k + 1]]) >= 0 &&
			    (v2 = rval[R_HEX][p[k + 2]]) >= 0) {
				d[o++] = (unsigned char)(v1 << 4 | v2);
				k += 2;
			} else
				d[o++] = p[k];
		}
	}
	if (xemit(x, d, o, "mime-word", i, i + e + 2) != 0)
		x->oom = 1;
	return i + e + 2;
}

/* ---------------------------------------------------------------- */
/* XOR with one byte, below the top level. */

static int
on_delta(void *ctx, const struct scan_trig *t, size_t pos)
{
	struct xp *x = ctx;
	unsigned char k = (unsigned char)(x->buf[pos] ^ t->orig[0]);
	int i;

	if (k == 0)
		return 0;
	for (i = 0; i < x->nxkey; i++)
		if (x->xkey[i] == k)
			return 0;
	if (x->nxkey < 4)
		x->xkey[x->nxkey++] = k;
	return 0;
}

static int
try_xor(struct xp *x)
{
	unsigned char *d;
	size_t i;
	int k;

	if (x->n < SCAN_MIN_SECRET || x->n > (1u << 20))
		return 0;
	if ((d = scratch(&x->u, &x->ucap, x->n, &x->oom)) == NULL)
		return -1;
	xor_delta(x->buf, x->n, d);
	scan_budget_spend(x->bg, x->n);
	x->nxkey = 0;
	if (scan_trig_scan(x->sc, d, x->n - 1, TRIG_DELTA, on_delta, x) != 0)
		return -1;
	/* else XOR of text a text decoder reads: the keys that show it */
	if (x->nxkey == 0 && x->n <= 4096) {
		size_t looked;

		x->nxkey = (int)xor_text_keys(x->buf, x->n, x->xkey,
		    sizeof(x->xkey), &looked);
		scan_budget_spend(x->bg, looked);
	}
	for (k = 0; k < x->nxkey; k++) {
		unsigned char *t = scratch(&x->t, &x->tcap, x->n, &x->oom);

		if (t == NULL)
			return -1;
		for (i = 0; i < x->n; i++)
			t[i] = x->buf[i] ^ x->xkey[k];
		if (xemit(x, t, x->n, "xor", 0, x->n) != 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Runs already decoded (scan_int.h, struct scan_memo). */

#define MEMO_MIN	 MIN_RUN     /* characters of a run worth keeping */
#define MEMO_BYTES	 (16u << 20) /* bytes of runs kept, at most */
#define MEMO_MAX_ENTRIES (1u << 19)  /* runs kept, at most */
#define MEMO_HASHED	 128	     /* bytes of a run hashed, at most */
#define MEMO_SAME	 4	     /* other runs of one hash compared */

/* The table: a run's hash and its entry (number + 1; 0: empty). */
struct memo_slot {
	uint64_t h;
	uint32_t ent;
};

struct memo_ent {
	size_t off, len; /* in bytes */
	size_t f, nf;	 /* its findings */
	uint64_t work;	 /* work units decoding it spent */
	size_t left;	 /* decoded bytes it spent */
	unsigned hit;	 /* budget bits it set (depth) */
	unsigned tag;	 /* which pass decoded it (scan_memo_run) */
	int shared;	 /* another entry has its hash */
};

void
scan_memo_clear(struct scan_memo *m)
{
	free(m->slot);
	free(m->ent);
	free(m->bytes);
	free(m->f);
	memset(m, 0, sizeof(*m));
}

#ifdef __SSE2__
/* One step of memo_hash: 16 bytes into the state. */
static inline __m128i
memo_step(__m128i a, const unsigned char *p)
{
	__m128i x = _mm_xor_si128(a,
	    _mm_loadu_si128((const __m128i *)(const void *)p));

	return _mm_add_epi64(_mm_mul_epu32(x, _mm_srli_epi64(x, 32)),
	    _mm_shuffle_epi32(x, 0x4e));
}
#endif

/*
 * A run's hash: 16 bytes a step (SSE2) where there are 16, each step
 * two 32x32-bit products of the state and the bytes, added to the state
 * with its halves swapped (a chain, so the order of the blocks counts).
 * A run longer than MEMO_HASHED is hashed by its length and its first and
 * last MEMO_HASHED / 2 bytes: the wire's long runs (a request's JSON,
 * a blob) cost a few steps, not one per 16 bytes. Only the memo's probes
 * depend on it (memo_find compares the bytes, and gives up after
 * MEMO_SAME other runs of the same hash, so runs made to share one cost
 * a few compares each and are decoded as if not seen), and its seed
 * differs from one scanner to the next anyway.
 */
static uint64_t
memo_hash(const unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15u), w;
	size_t i = 0;

#ifdef __SSE2__
	if (n >= 16) {
		__m128i a = _mm_set_epi64x((long long)h,
		    (long long)(seed * 0xbf58476d1ce4e5b9u + n));
		uint64_t l[2];
		size_t lo = n > MEMO_HASHED ? MEMO_HASHED / 2 : n;

		for (; i + 16 <= lo; i += 16) {
			a = memo_step(a, p + i);
		}
		/* a long run's last MEMO_HASHED / 2 bytes */
		for (i = lo < n ? n - MEMO_HASHED / 2 : i; i + 16 <= n;
		     i += 16) {
			a = memo_step(a, p + i);
		}
		/* the last 16 bytes again, when n is not a multiple of 16 */
		if (i < n) {
			a = memo_step(a, p + n - 16);
		}
		_mm_storeu_si128((__m128i *)(void *)l, a);
		h = (l[0] ^ h) * 0xbf58476d1ce4e5b9u;
		h ^= h >> 31;
		h = (h ^ l[1]) * 0x94d049bb133111ebu;
		return h ^ (h >> 29);
	}
#endif
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9u;
		h ^= h >> 31;
	}
	w = 0;
	memcpy(&w, p + i, n - i);
	h = (h ^ w) * 0x94d049bb133111ebu;
	return h ^ (h >> 29);
}

/*
 * Whether the n bytes at a and b are the same: from 8 to 64 bytes 8 or
 * 16 at a time, the last 8 or 16 read from the end (they overlap), where
 * memcmp's call and its choice of a way cost more than the compare (the
 * text's runs, a line of code, a JSON key and value, are 12 to 64
 * bytes); memcmp else.
 */
static inline int
memo_same(const unsigned char *a, const unsigned char *b, size_t n)
{
	uint64_t a0, a1, b0, b1;

	if (n >= 8 && n <= 16) {
		memcpy(&a0, a, 8);
		memcpy(&a1, a + n - 8, 8);
		memcpy(&b0, b, 8);
		memcpy(&b1, b + n - 8, 8);
		return ((a0 ^ b0) | (a1 ^ b1)) == 0;
	}
#ifdef __SSE2__
	if (n > 16 && n <= 64) {
		__m128i d = _mm_xor_si128(_mm_loadu_si128((
					      const __m128i *)(const void *)(a +
					      n - 16)),
		    _mm_loadu_si128(
			(const __m128i *)(const void *)(b + n - 16)));
		size_t k;

		for (k = 0; k + 16 < n; k += 16)
			d = _mm_or_si128(d,
			    _mm_xor_si128(_mm_loadu_si128((
					      const __m128i *)(const void *)(a +
					      k)),
				_mm_loadu_si128(
				    (const __m128i *)(const void *)(b + k))));
		return _mm_movemask_epi8(
			   _mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xffff;
	}
#endif
	return memcmp(a, b, n) == 0;
}

size_t
scan_memo_same_differ(const unsigned char *p, size_t n)
{
	size_t a, b, l, k, bad = 0;

	for (l = 0; l <= 72 && l <= n; l++)
		for (a = 0; a + l <= n; a++)
			for (b = 0; b + l <= n; b++) {
				for (k = 0; k < l && p[a + k] == p[b + k]; k++)
					;
				bad += memo_same(p + a, p + b, l) != (k == l);
			}
	return bad;
}

/*
 * The key of p[0..n) in a tag's recent entries: its length, first and
 * last 8 bytes (its bytes, zero-filled, when it is shorter), mixed; its top
 * bits choose the place (RKEY_AT), 32 bits below them are kept there
 * beside the entry (RKEY_CHECK), so that a run whose place holds
 * another's costs no look at that entry.
 */
#define RKEY_AT(k)    ((size_t)((k) >> 57) & (SCAN_MEMO_RECENT - 1))
#define RKEY_CHECK(k) ((k) >> 25 & 0xffffffffu)

static uint64_t
memo_rkey(const unsigned char *p, size_t n)
{
	uint64_t a = 0, b = 0;

	if (n >= 8) { /* (constant lengths: two loads) */
		memcpy(&a, p, 8);
		memcpy(&b, p + n - 8, 8);
	} else
		memcpy(&a, p, n);
	return (a ^ (b << 29 | b >> 35) ^ n * 0x9e3779b97f4a7c15u) *
	    0xbf58476d1ce4e5b9u;
}

/*
 * The slot of p[0..n) (hash h), or the empty slot where it would go; NULL
 * after MEMO_SAME other runs of hash h (not kept then). With mark set
 * (a run about to be kept), the other runs of hash h it meets are marked
 * shared, and *same says whether there was one.
 */
static struct memo_slot *
memo_find(struct scan_memo *m, const unsigned char *p, size_t n, uint64_t h,
    unsigned tag, int mark, size_t *same_)
{
	size_t i = (size_t)(h >> 20) & (m->nslot - 1), same = 0;
	struct memo_slot *sl;
	struct memo_ent *en;

	for (;; i = (i + 1) & (m->nslot - 1)) {
		sl = &m->slot[i];
		if (sl->ent == 0)
			break;
		if (sl->h != h)
			continue;
		en = &m->ent[sl->ent - 1];
		if (en->len == n && en->tag == tag &&
		    memo_same(m->bytes + en->off, p, n))
			break;
		if (mark)
			en->shared = 1;
		if (++same >= MEMO_SAME)
			return NULL;
	}
	if (same_ != NULL)
		*same_ = same;
	return sl;
}

/*
 * Is entry k the run p[0..n) of tag, and not shared (memo_get)? k may be
 * past the entries.
 */
static inline int
memo_is(const struct scan_memo *m, size_t k, const unsigned char *p, size_t n,
    unsigned tag)
{
	const struct memo_ent *en;

	if (k >= m->nent)
		return 0;
	en = &m->ent[k];
	return en->len == n && en->tag == tag && !en->shared &&
	    memo_same(m->bytes + en->off, p, n);
}

/*
 * The entry the memo holds for p[0..n) of tag (< SCAN_MEMO_TAGS) where
 * the sequence of runs seen before goes on or under the run's key, or
 * NULL (memo_get's first probes, below); *rk_ gets the run's key.
 * Inlined where runs are found: a run that comes back costs these
 * compares and no call.
 */
static inline struct memo_ent *
memo_probe(struct scan_memo *m, const unsigned char *p, size_t n, unsigned tag,
    uint64_t *rk_)
{
	size_t *next = m->next[tag], k;
	uint64_t rk, v;

	if (memo_is(m, k = next[0], p, n, tag) ||
	    memo_is(m, k = next[1], p, n, tag)) {
		next[0] = next[1] = k + 1;
		return &m->ent[k];
	}
	*rk_ = rk = memo_rkey(p, n);
	v = m->recent[tag][RKEY_AT(rk)];
	if (v >> 32 != RKEY_CHECK(rk) ||
	    !memo_is(m, k = (size_t)(v & 0xffffffffu) - 1, p, n, tag))
		return NULL;
	next[0] = k + 1;
	return &m->ent[k];
}

/*
 * The entry the memo holds for p[0..n) of tag, or NULL; *h_ gets the
 * run's hash (0 when it was not needed), *sl_ its slot (as memo_find).
 * probed: memo_probe has looked (and found nothing), *rk_ is its key.
 *
 * First two entries where the sequence of runs seen before may go on:
 * the wire resends runs in the order it sent them, so the run after one
 * found is most often the entry kept after that one's, and comparing its
 * bytes costs no hash and no probe of the table (a cache miss each).
 * next[tag][0] is the entry after the last one found, next[tag][1] the
 * one after the last found this way or kept: a run that comes back
 * often (a line of code in the text) is found in the table, far back,
 * and the sequence goes on after it. Then the entry last found or kept
 * under the run's key (memo_rkey: its length and ends, direct-mapped):
 * a run that comes back often (the same line of code all over the
 * text) costs a compare there, not a hash and a probe of the table. Only
 * an entry whose hash no other entry has (not shared): memo_find then
 * finds it too, so what is found is what memo_find gives (and where it
 * gives it, next[tag][0] goes on after it as there).
 */
static struct memo_ent *
memo_get(struct scan_memo *m, const unsigned char *p, size_t n, unsigned tag,
    int probed, uint64_t *h_, struct memo_slot **sl_, uint64_t *rk_)
{
	struct memo_slot *sl;
	struct memo_ent *en;

	*h_ = 0;
	*sl_ = NULL;
	if (tag < SCAN_MEMO_TAGS && !probed &&
	    (en = memo_probe(m, p, n, tag, rk_)) != NULL)
		return en;
	*h_ = memo_hash(p, n, m->seed ^ tag);
	if (m->nslot == 0)
		return NULL;
	*sl_ = sl = memo_find(m, p, n, *h_, tag, 0, NULL);
	if (sl == NULL || sl->ent == 0)
		return NULL;
	if (tag < SCAN_MEMO_TAGS) {
		m->next[tag][0] = sl->ent;
		m->recent[tag][RKEY_AT(*rk_)] = RKEY_CHECK(*rk_) << 32 |
		    sl->ent;
	}
	return &m->ent[sl->ent - 1];
}

/* Room for one more run of n bytes and nf findings; 0 when none. */
static int
memo_room(struct scan_memo *m, size_t n, size_t nf)
{
	size_t i, cap;
	void *q;

	if (m->full || m->nbytes + n > MEMO_BYTES ||
	    m->nent >= MEMO_MAX_ENTRIES)
		return m->full = 1, 0;
	if (m->nent + 1 > m->nslot / 2) {
		struct memo_slot *old = m->slot;
		size_t nold = m->nslot;

		m->nslot = nold ? 2 * nold : 64;
		if ((m->slot = calloc(m->nslot, sizeof(*m->slot))) == NULL) {
			m->slot = old;
			m->nslot = nold;
			return m->full = 1, 0;
		}
		for (i = 0; i < nold; i++)
			if (old[i].ent != 0) {
				size_t k = (size_t)(old[i].h >> 20) &
				    (m->nslot - 1);

				while (m->slot[k].ent != 0)
					k = (k + 1) & (m->nslot - 1);
				m->slot[k] = old[i];
			}
		free(old);
	}
	if (m->nent == m->capent) {
		cap = m->capent ? 2 * m->capent : 32;
		if ((q = realloc(m->ent, cap * sizeof(*m->ent))) == NULL)
			return m->full = 1, 0;
		m->ent = q;
		m->capent = cap;
	}
	if (m->nbytes + n > m->capbytes) {
		for (cap = m->capbytes ? m->capbytes : 4096;
		     cap < m->nbytes + n; cap *= 2)
			;
		if ((q = realloc(m->bytes, cap)) == NULL)
			return m->full = 1, 0;
		m->bytes = q;
		m->capbytes = cap;
	}
	if (m->nf + nf > m->capf) {
		for (cap = m->capf ? m->capf : 16; cap < m->nf + nf; cap *= 2)
			;
		if ((q = realloc(m->f, cap * sizeof(*m->f))) == NULL)
			return m->full = 1, 0;
		m->f = q;
		m->capf = cap;
	}
	return 1;
}

static int on_run(struct xp *x, size_t s, size_t e);

/*
 * A run the memo holds (en), which the budget can pay for: its findings
 * again at s, what decoding it spent spent again. 0, or -1 when out of
 * memory.
 */
static inline int
memo_replay(const struct scan_memo *m, struct scan_budget *bg,
    const struct memo_ent *en, size_t s, struct scan_result *res)
{
	size_t i;

	scan_budget_spend(bg, en->work);
	bg->left -= en->left;
	bg->hit |= en->hit;
	for (i = 0; i < en->nf; i++) {
		struct scan_finding f = m->f[en->f + i];

		f.offset += s;
		if (scan_res_push(res, &f) != 0)
			return -1;
	}
	return 0;
}

/*
 * scan_memo_run after memo_probe (probed): en, the entry it found, which
 * the budget cannot pay for, or NULL (the hash and the table next); rk,
 * the run's key. Without a probe (a tag of none), probed is 0.
 */
static __attribute__((noinline)) int
memo_decode(struct scan_budget *bg, const unsigned char *buf, size_t s,
    size_t e, unsigned tag, struct scan_result *res,
    int (*fn)(void *ctx, size_t s, size_t e), void *ctx, struct memo_ent *en,
    int probed, uint64_t rk)
{
	struct scan_memo *m = bg->memo;
	const unsigned char *p = buf + s;
	size_t n = e - s, n0, i, same;
	struct memo_slot *sl = NULL;
	uint64_t h = 0, w0;
	size_t l0;
	unsigned saved, got;

	if (m->seed == 0)
		m->seed = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15u | 1;
	if (en == NULL) {
		en = memo_get(m, p, n, tag, probed, &h, &sl, &rk);
		if (en != NULL && bg->work > en->work && bg->left >= en->left)
			return memo_replay(m, bg, en, s, res);
	}
	if (en != NULL)
		sl = NULL; /* decoded again, kept as it was */
	saved = bg->hit;
	bg->hit = 0;
	w0 = bg->work;
	l0 = bg->left;
	n0 = res->n;
	if (fn(ctx, s, e) != 0)
		return -1;
	got = bg->hit;
	bg->hit |= saved;
	if ((got & (SCAN_BUDGET_WORK | SCAN_BUDGET_BYTES)) || bg->work == 0 ||
	    (m->nslot > 0 && sl == NULL) || !memo_room(m, n, res->n - n0))
		return 0;
	if ((sl = memo_find(m, p, n, h, tag, 1, &same)) == NULL)
		return 0;
	en = &m->ent[m->nent];
	en->shared = same > 0;
	if (tag < SCAN_MEMO_TAGS) {
		m->next[tag][0] = m->next[tag][1] = m->nent + 1;
		m->recent[tag][RKEY_AT(rk)] = RKEY_CHECK(rk) << 32 |
		    (m->nent + 1);
	}
	en->off = m->nbytes;
	en->len = n;
	en->f = m->nf;
	en->nf = res->n - n0;
	en->work = w0 - bg->work;
	en->left = l0 - bg->left;
	en->hit = got;
	en->tag = tag;
	sl->h = h;
	sl->ent = (uint32_t)++m->nent;
	memcpy(m->bytes + m->nbytes, p, n);
	m->nbytes += n;
	for (i = n0; i < res->n; i++) {
		m->f[m->nf] = res->v[i];
		m->f[m->nf].offset -= s;
		m->nf++;
	}
	return 0;
}

/*
 * fn(ctx, s, e), which decodes the run buf[s..e) and pushes its findings
 * to res, through the memo (tag: which decoder, so that two passes keep
 * apart what each gave for the same bytes): a run decoded before gives
 * its findings again at s and spends what decoding it spent (when that
 * much is left: else it is decoded again, and the budget stops it where
 * it would have). The first probes and the replay are inlined where
 * the transform pass finds its runs (memo_run): most of its runs came
 * before, and cost no call; the rest is memo_decode.
 */
static inline int
memo_run_(struct scan_budget *bg, const unsigned char *buf, size_t s, size_t e,
    unsigned tag, struct scan_result *res,
    int (*fn)(void *ctx, size_t s, size_t e), void *ctx)
{
	struct memo_ent *en = NULL;
	uint64_t rk = 0;

	if (tag < SCAN_MEMO_TAGS) {
		en = memo_probe(bg->memo, buf + s, e - s, tag, &rk);
		if (en != NULL && bg->work > en->work && bg->left >= en->left)
			return memo_replay(bg->memo, bg, en, s, res);
	}
	return memo_decode(bg, buf, s, e, tag, res, fn, ctx, en,
	    tag < SCAN_MEMO_TAGS, rk);
}

int
scan_memo_run(struct scan_budget *bg, const unsigned char *buf, size_t s,
    size_t e, unsigned tag, struct scan_result *res,
    int (*fn)(void *ctx, size_t s, size_t e), void *ctx)
{
	return memo_run_(bg, buf, s, e, tag, res, fn, ctx);
}

static int
on_run_cb(void *ctx, size_t s, size_t e)
{
	return on_run(ctx, s, e);
}

/* on_run through the memo (scan_memo_run). */
static int
memo_run(struct xp *x, size_t s, size_t e)
{
	return memo_run_(x->bg, x->buf, s, e, 0, x->res, on_run_cb, x);
}

/* ---------------------------------------------------------------- */
/* The pass. */

#ifdef __SSE2__
/*
 * Bit k set when p[k] may be in a run (0x21..0x7e): one compare, as
 * adding 0x5f takes 0x21..0x7e to -128..-35 (signed) and every other
 * byte above.
 */
static inline unsigned
runmask16(const unsigned char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i x = _mm_add_epi8(v, _mm_set1_epi8(0x5f));

	return (unsigned)_mm_movemask_epi8(
	    _mm_cmplt_epi8(x, _mm_set1_epi8(-34)));
}
#else
static inline unsigned
runmask16(const unsigned char *p)
{
	unsigned m = 0, k;

	for (k = 0; k < 16; k++)
		if (runc[p[k]])
			m |= 1u << k;
	return m;
}
#endif

/*
 * Are all 16 bytes at p bit groups, with 8 or more bits? 1: '0', '1' and
 * separators; 2: the same under rot47 ('_' and '`', blanks); else 0.
 */
static inline unsigned
bitsmask16(const unsigned char *p)
{
#ifdef __SSE2__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i b = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('0')),
	    _mm_cmpeq_epi8(v, _mm_set1_epi8('1')));
	__m128i us = _mm_cmpeq_epi8(v, _mm_set1_epi8('_'));
	__m128i bl = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
	__m128i sep = _mm_or_si128(_mm_or_si128(bl,
				       _mm_cmpeq_epi8(v, _mm_set1_epi8(','))),
	    _mm_or_si128(us, _mm_cmpeq_epi8(v, _mm_set1_epi8('-'))));
	__m128i b47 = _mm_or_si128(us, _mm_cmpeq_epi8(v, _mm_set1_epi8('`')));
	unsigned mb, m, m47;

	/* a byte above '`': none of a bit group's is (text: a small letter) */
	if (_mm_movemask_epi8(
		_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x60)), v)) !=
	    0xffff)
		return 0;
	mb = (unsigned)_mm_movemask_epi8(b);
	m = mb | (unsigned)_mm_movemask_epi8(sep);
	if (m == 0xffff)
		return __builtin_popcount(mb) >= 8 ? 1 : 0;
	/* under rot47: no '0' or '1', and 8 bits hold a '_' */
	if (mb != 0 || _mm_movemask_epi8(us) == 0)
		return 0;
	m47 = (unsigned)_mm_movemask_epi8(b47);
	return (m47 | (unsigned)_mm_movemask_epi8(bl)) == 0xffff &&
		__builtin_popcount(m47) >= 8 ?
	    2 :
	    0;
#else
	unsigned k, bits = 0, b47 = 0, plain = 1, r47 = 1;

	for (k = 0; k < 16; k++) {
		unsigned c = p[k];

		bits += c == '0' || c == '1';
		b47 += c == '_' || c == '`';
		plain &= c == '0' || c == '1' || c == ' ' || c == ',' ||
		    c == '_' || c == '-';
		r47 &= c == '_' || c == '`' || c == ' ';
	}
	return plain && bits >= 8 ? 1 : r47 && b47 >= 8 ? 2 : 0;
#endif
}

/*
 * Bit k set when p[k] is from 0xc2, '&' before a letter or '#' (what
 * entity() reads), or '=' before '?' (what on_mime() reads); p[16] is
 * read.
 */
static inline unsigned
specmask16(const unsigned char *p)
{
#ifdef __SSE2__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i w = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));
	__m128i hi = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8((char)0xc2)),
	    v);
	__m128i l = _mm_sub_epi8(_mm_or_si128(w, _mm_set1_epi8(0x20)),
	    _mm_set1_epi8('a'));
	__m128i letter = _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(25)), l);
	__m128i amp = _mm_and_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('&')),
	    _mm_or_si128(letter, _mm_cmpeq_epi8(w, _mm_set1_epi8('#'))));
	__m128i mime = _mm_and_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('=')),
	    _mm_cmpeq_epi8(w, _mm_set1_epi8('?')));

	return (unsigned)_mm_movemask_epi8(
	    _mm_or_si128(hi, _mm_or_si128(amp, mime)));
#else
	unsigned m = 0, k;

	for (k = 0; k < 16; k++)
		if (p[k] >= 0xc2 || p[k] == '&' || p[k] == '=')
			m |= 1u << k;
	return m;
#endif
}

/*
 * Whether specmask16 is 0 at p, p + 16, p + 32 and p + 48 (p[64] is
 * read): none of the 64 bytes is from 0xc2 or a '&', and none of p[1] to
 * p[64] is a '?'. A few operations a byte fewer than the masks, for text
 * that has none.
 */
static inline int
spec_none64(const unsigned char *p)
{
#ifdef __SSE2__
	const __m128i amp = _mm_set1_epi8('&'), qm = _mm_set1_epi8('?');
	__m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	__m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
	__m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
	__m128i hi, acc;

	/*
	 * Written out, not as a loop over the four lanes: -O2 keeps such a
	 * loop rolled, and this runs on every 64 bytes of text (73
	 * instructions a block rolled, 52 written out).
	 * '&' and '?' in acc; the greatest byte of each lane in hi.
	 */
	hi = _mm_max_epu8(_mm_max_epu8(v0, v1), _mm_max_epu8(v2, v3));
	acc = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v0, amp),
			       _mm_cmpeq_epi8(v1, amp)),
	    _mm_or_si128(_mm_cmpeq_epi8(v2, amp), _mm_cmpeq_epi8(v3, amp)));
	acc = _mm_or_si128(acc,
	    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v0, qm),
			     _mm_cmpeq_epi8(v1, qm)),
		_mm_or_si128(_mm_cmpeq_epi8(v2, qm), _mm_cmpeq_epi8(v3, qm))));
	acc = _mm_or_si128(acc,
	    _mm_cmpeq_epi8(_mm_max_epu8(hi, _mm_set1_epi8((char)0xc2)), hi));
	return _mm_movemask_epi8(acc) == 0 && p[64] != '?';
#else
	(void)p;
	return 0;
#endif
}

/* specmask16 of the 64 bytes at p (p[64] is read), as specials_scan
 * takes them */
static inline uint64_t
specmask64(const unsigned char *p)
{
	return (uint64_t)specmask16(p) | (uint64_t)specmask16(p + 16) << 16 |
	    (uint64_t)specmask16(p + 32) << 32 |
	    (uint64_t)specmask16(p + 48) << 48;
}

/*
 * Where the blocks that hold nothing for specials_scan (specmask64 0)
 * from i, 64 bytes a step, end: the first block from i that holds
 * something (its specmask64 in *m), or that is not whole before n (with
 * the byte after it). spec_none64 passes most blocks of text at once; a
 * block it does not pass (a '&' before a blank, as in "&&", a '?') is
 * passed when its masks are 0, where specials_scan would have taken
 * them in vain.
 */
static inline size_t
spec_skip_sse2(const unsigned char *buf, size_t i, size_t n, uint64_t *m)
{
	for (; i + 65 <= n; i += 64)
		if (!spec_none64(buf + i) && (*m = specmask64(buf + i)) != 0)
			break;
	return i;
}

#ifdef SCAN_AVX2
/* specmask16 of the 32 bytes at p (p[32] is read) */
SCAN_AVX2 static inline uint32_t
specmask32_avx2(const unsigned char *p)
{
	__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
	__m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(p + 1));
	__m256i hi = _mm256_cmpeq_epi8(_mm256_max_epu8(v,
					   _mm256_set1_epi8((char)0xc2)),
	    v);
	__m256i l = _mm256_sub_epi8(_mm256_or_si256(w, _mm256_set1_epi8(0x20)),
	    _mm256_set1_epi8('a'));
	__m256i letter = _mm256_cmpeq_epi8(_mm256_min_epu8(l,
					       _mm256_set1_epi8(25)),
	    l);
	__m256i amp = _mm256_and_si256(_mm256_cmpeq_epi8(v,
					   _mm256_set1_epi8('&')),
	    _mm256_or_si256(letter,
		_mm256_cmpeq_epi8(w, _mm256_set1_epi8('#'))));
	__m256i mime = _mm256_and_si256(_mm256_cmpeq_epi8(v,
					    _mm256_set1_epi8('=')),
	    _mm256_cmpeq_epi8(w, _mm256_set1_epi8('?')));

	return (uint32_t)_mm256_movemask_epi8(
	    _mm256_or_si256(hi, _mm256_or_si256(amp, mime)));
}

/* spec_skip_sse2, with spec_none64 and the masks 32 bytes at a time */
SCAN_AVX2 static size_t
spec_skip_avx2(const unsigned char *buf, size_t i, size_t n, uint64_t *m)
{
	const __m256i amp = _mm256_set1_epi8('&'), qm = _mm256_set1_epi8('?');
	const __m256i c2 = _mm256_set1_epi8((char)0xc2);

	for (; i + 65 <= n; i += 64) {
		__m256i a = _mm256_loadu_si256(
		    (const __m256i *)(const void *)(buf + i));
		__m256i b = _mm256_loadu_si256(
		    (const __m256i *)(const void *)(buf + i + 32));
		__m256i hi = _mm256_max_epu8(a, b), acc;

		acc = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(a, amp),
					  _mm256_cmpeq_epi8(b, amp)),
		    _mm256_or_si256(_mm256_cmpeq_epi8(a, qm),
			_mm256_cmpeq_epi8(b, qm)));
		acc = _mm256_or_si256(acc,
		    _mm256_cmpeq_epi8(_mm256_max_epu8(hi, c2), hi));
		if ((!_mm256_testz_si256(acc, acc) || buf[i + 64] == '?') &&
		    (*m = specmask32_avx2(buf + i) |
			    (uint64_t)specmask32_avx2(buf + i + 32) << 32) != 0)
			break;
	}
	return i;
}
#endif

static inline size_t
spec_skip(const unsigned char *buf, size_t i, size_t n, uint64_t *m)
{
#ifdef SCAN_AVX2
	if (scan_avx2)
		return spec_skip_avx2(buf, i, n, m);
#endif
	return spec_skip_sse2(buf, i, n, m);
}

/*
 * 64 bytes at p at a time, for the passes below to step over what holds
 * nothing for them. runmask64: bit k set when p[k] may be in a run
 * (runmask16). bits_none64: can none of their 16-byte windows be a bit
 * group (bitsmask16 0 for each)? So when each window has a byte above
 * '`' (a bit group's are all up to it: a small letter of text is not),
 * or when fewer than 8 of the 64 are '0', '1', '_' or '`' (a bit group's
 * characters, plain or under rot47, as bitsmask16 reads them).
 */
#ifdef __SSE2__
static inline uint64_t
runmask64(const unsigned char *p)
{
	return (uint64_t)runmask16(p) | (uint64_t)runmask16(p + 16) << 16 |
	    (uint64_t)runmask16(p + 32) << 32 |
	    (uint64_t)runmask16(p + 48) << 48;
}

static inline __m128i
bitc16(const unsigned char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);

	/* '0' and '1' are 0x30 and 0x31 */
	return _mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(v,
					       _mm_set1_epi8((char)0xfe)),
				_mm_set1_epi8('0')),
	    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('_')),
		_mm_cmpeq_epi8(v, _mm_set1_epi8('`'))));
}

/* Bit k set when p[k] is up to '`' (0x60), as all of a bit group's are. */
static inline unsigned
low60_16(const unsigned char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);

	return (unsigned)_mm_movemask_epi8(
	    _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x60)), v));
}

static inline int
bits_none64(const unsigned char *p)
{
	__m128i b0, b1, b2, b3;
	uint64_t b;
	int k;

	/* each window has a byte above '`' (no bit group's is) */
	if ((((low60_16(p) + 1) | (low60_16(p + 16) + 1) |
		 (low60_16(p + 32) + 1) | (low60_16(p + 48) + 1)) &
		0x10000u) == 0)
		return 1;
	b0 = bitc16(p);
	b1 = bitc16(p + 16);
	b2 = bitc16(p + 32);
	b3 = bitc16(p + 48);
	if (_mm_movemask_epi8(
		_mm_or_si128(_mm_or_si128(b0, b1), _mm_or_si128(b2, b3))) == 0)
		return 1;
	b = (uint64_t)(unsigned)_mm_movemask_epi8(b0) |
	    (uint64_t)(unsigned)_mm_movemask_epi8(b1) << 16 |
	    (uint64_t)(unsigned)_mm_movemask_epi8(b2) << 32 |
	    (uint64_t)(unsigned)_mm_movemask_epi8(b3) << 48;
	for (k = 0; k < 8 && b != 0; k++)
		b &= b - 1;
	return k < 8;
}

#else
static inline uint64_t
runmask64(const unsigned char *p)
{
	uint64_t r = 0;
	int k;

	for (k = 0; k < 64; k++)
		r |= (uint64_t)runc[p[k]] << k;
	return r;
}

static inline int
bits_none64(const unsigned char *p)
{
	int k, n = 0;

	for (k = 0; k < 64; k++)
		n += p[k] == '0' || p[k] == '1' || p[k] == '_' || p[k] == '`';
	return n < 8;
}

#endif

static int
binary(const unsigned char *p, size_t n)
{
	size_t i, bad = 0;

	for (i = 0; i < n && i < 256; i++)
		if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' &&
			p[i] != '\t') ||
		    p[i] == 0x7f)
			bad++;
	return bad * 8 > i;
}

/*
 * Quoted-printable under rot47: its soft line breaks read "l\n" ('='
 * rotated; rot47 leaves line breaks and blanks alone), so no decoder
 * sees them and no line holds the whole secret. The lines of run
 * characters around the run [s, e) joined by such breaks (back from s,
 * on from e) are rotated back, breaks kept, and scanned one level
 * deeper, where quoted-printable reads them ("rot47>quoted-printable").
 * Returns where the region ends (e when there is none), or 0 when out of
 * memory.
 */
#define R47QP_MAX (64u << 10) /* characters of one region */

static size_t
soft47_before(const unsigned char *buf, size_t a)
{
	/* a: a line's start; the break before it, when an 'l' ends the
	 * line before: that 'l''s position + 1, else 0 */
	if (a >= 2 && buf[a - 1] == '\n' && buf[a - 2] == 'l')
		return a - 1;
	if (a >= 3 && buf[a - 1] == '\n' && buf[a - 2] == '\r' &&
	    buf[a - 3] == 'l')
		return a - 2;
	return 0;
}

static size_t
on_soft47(struct xp *x, size_t s, size_t e)
{
	const unsigned char *buf = x->buf;
	size_t len = x->n, a = s, b = e, q, t;
	unsigned char *u;

	/* back over the lines before, each ending in a soft break */
	while (s - a < R47QP_MAX && (q = soft47_before(buf, a)) != 0 &&
	    runc[buf[q - 1]]) {
		for (a = q; a > 0 && runc[buf[a - 1]]; a--)
			;
	}
	/* on over the lines after, while each ends in one */
	while (b - a < R47QP_MAX && b > 0 && buf[b - 1] == 'l') {
		t = b < len && buf[b] == '\n'				? 1 :
		    b + 1 < len && buf[b] == '\r' && buf[b + 1] == '\n' ? 2 :
									  0;
		if (t == 0 || b + t >= len || !runc[buf[b + t]])
			break;
		for (b += t; b < len && runc[buf[b]]; b++)
			;
	}
	if (a == s && b == e)
		return e;
	if ((u = scratch(&x->w, &x->wcap, b - a, &x->oom)) == NULL)
		return 0;
	scan_budget_spend(x->bg, b - a);
	for (q = a; q < b; q++)
		u[q - a] = buf[q] > 0x20 && buf[q] < 0x7f ?
		    (unsigned char)(33 + (buf[q] - 33 + 47) % 94) :
		    buf[q];
	if (xemit(x, u, b - a, "rot47", a, b) != 0)
		return 0;
	return b;
}

/* Bit k of the result: bits k to k + n - 1 of m are all set (n >= 1). */
static inline uint64_t
run_n64(uint64_t m, unsigned n)
{
	uint64_t r = m;
	unsigned k;

	for (k = 1; 2 * k <= n; k *= 2)
		r &= r >> k;
	return k < n ? r & (r >> (n - k)) : r;
}

/*
 * Whether the 64 bytes at buf, whose run characters are m64, can be
 * stepped over: none of their windows would do anything in runs_scan, as
 * there are no MIN_RUN run characters in a row (a whole window, or top +
 * bottom across a window's end) within them or across the end of the
 * window before them (top), and none of the windows is a bit group
 * (bits_none64).
 */
static int
runs_plain64(const unsigned char *buf, uint64_t m64, unsigned top)
{
	return run_n64(m64, MIN_RUN) == 0 &&
	    top + (unsigned)__builtin_ctzll(~m64) < MIN_RUN && bits_none64(buf);
}

/*
 * The top that a block of run characters m64 leaves for the window
 * after it: the run characters that end it (not all of its last 16, in
 * a block runs_plain64 passes).
 */
static inline unsigned
runs_top(uint64_t m64)
{
	return (unsigned)__builtin_clz(
	    (~(unsigned)(m64 >> 48) & 0xffffu) << 16);
}

/*
 * Where the blocks runs_scan steps over (runs_plain64) from i, 64
 * bytes a step, end, *top carried from one to the next: the first block
 * from i that is not plain, its run characters in *m64, or the first
 * that is not whole before n.
 */
static inline size_t
runs_skip_sse2(const unsigned char *buf, size_t i, size_t n, unsigned *top,
    uint64_t *m64)
{
	for (; i + 64 <= n; i += 64) {
		*m64 = runmask64(buf + i);
		if (!runs_plain64(buf + i, *m64, *top))
			break;
		*top = runs_top(*m64);
	}
	return i;
}

#ifdef SCAN_AVX2
/* bitc16, of 32 bytes */
SCAN_AVX2 static inline __m256i
bitc32_avx2(__m256i v)
{
	return _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v,
						     _mm256_set1_epi8(
							 (char)0xfe)),
				   _mm256_set1_epi8('0')),
	    _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('_')),
		_mm256_cmpeq_epi8(v, _mm256_set1_epi8('`'))));
}

/* runs_skip_sse2, 32 bytes at a time */
SCAN_AVX2 static size_t
runs_skip_avx2(const unsigned char *buf, size_t i, size_t n, unsigned *top,
    uint64_t *m64)
{
	const __m256i k5f = _mm256_set1_epi8(0x5f), lim = _mm256_set1_epi8(-34);
	const __m256i c60 = _mm256_set1_epi8(0x60);
	unsigned t = *top;

	for (; i + 64 <= n; i += 64) {
		__m256i a = _mm256_loadu_si256(
		    (const __m256i *)(const void *)(buf + i));
		__m256i b = _mm256_loadu_si256(
		    (const __m256i *)(const void *)(buf + i + 32));
		uint64_t m, low, bits;

		m = (uint32_t)_mm256_movemask_epi8(
			_mm256_cmpgt_epi8(lim, _mm256_add_epi8(a, k5f))) |
		    (uint64_t)(uint32_t)_mm256_movemask_epi8(
			_mm256_cmpgt_epi8(lim, _mm256_add_epi8(b, k5f)))
			<< 32;
		*m64 = m;
		/* runs_plain64: no MIN_RUN run characters in a row */
		if (run_n64(m, MIN_RUN) != 0 ||
		    t + (unsigned)__builtin_ctzll(~m) >= MIN_RUN)
			break;
		/* bits_none64: each window has a byte above '`', */
		low = (uint32_t)_mm256_movemask_epi8(
			  _mm256_cmpeq_epi8(_mm256_min_epu8(a, c60), a)) |
		    (uint64_t)(uint32_t)_mm256_movemask_epi8(
			_mm256_cmpeq_epi8(_mm256_min_epu8(b, c60), b))
			<< 32;
		if (scan_lane_full(low)) {
			/* or fewer than 8 are '0', '1', '_' or '`' */
			bits = (uint32_t)_mm256_movemask_epi8(bitc32_avx2(a)) |
			    (uint64_t)(uint32_t)_mm256_movemask_epi8(
				bitc32_avx2(b))
				<< 32;
			if (__builtin_popcountll(bits) >= 8)
				break;
		}
		t = runs_top(m);
	}
	*top = t;
	return i;
}
#endif

static inline size_t
runs_skip(const unsigned char *buf, size_t i, size_t n, unsigned *top,
    uint64_t *m64)
{
#ifdef SCAN_AVX2
	if (scan_avx2)
		return runs_skip_avx2(buf, i, n, top, m64);
#endif
	return runs_skip_sse2(buf, i, n, top, m64);
}

/* Bit k set when p[k] is a NUL. */
static inline unsigned
nulmask16(const unsigned char *p)
{
#ifdef __SSE2__
	return (unsigned)_mm_movemask_epi8(
	    _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p),
		_mm_setzero_si128()));
#else
	(void)p;
	return 0;
#endif
}

static const unsigned char nul_tab[256] = { 1 }; /* NUL alone */

/* Where the NULs from i end, not past n (a bomb's megabytes of them). */
static size_t
nul_span(const unsigned char *buf, size_t i, size_t n)
{
	return scan_span16(buf, i, n, nulmask16, nul_tab);
}

#if defined(SCAN_AVX2) && defined(__SSE2__)
/*
 * worth(), nul_parity and high_count on p[0..l) against their byte loops
 * (worth_bytes) for the lengths where their steps change: how many
 * differ.
 */
static size_t
worth_differ(const unsigned char *p, size_t n)
{
	static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 31, 32, 33, 47,
		48, 63, 64, 65, 80 };
	size_t j, l, i, e1, o1, e2, o2, h2, bad = 0;

	for (j = 0; j < sizeof(lens) / sizeof(lens[0]) && lens[j] <= n; j++) {
		l = lens[j];
		bad += worth(p, l) != worth_bytes(p, l);
		nul_parity(p, l, &e1, &o1);
		for (i = 0, e2 = o2 = h2 = 0; i < l; i++) {
			e2 += i % 2 == 0 && p[i] == 0;
			o2 += i % 2 == 1 && p[i] == 0;
			h2 += p[i] >= 0x80;
		}
		bad += e1 != e2 || o1 != o2 || high_count(p, l) != h2;
	}
	return bad;
}

/*
 * key_at and worth() (also with a magic planted), 16 or 8 bytes at a
 * time, against their byte loops at every offset of p[0..n).
 */
static size_t
scalar_differ(const unsigned char *p, size_t n)
{
	size_t i, k, e2, bad = 0;

	/* key_at, 16 bytes at a time and a byte at a time */
	for (i = 0; i < n; i++)
		for (k = 1; k <= 64 && i + k <= n; k += 1 + k / 16) {
			for (e2 = 0; e2 < k && e2 < 40 && p[i + e2] != '=' &&
			     p[i + e2] != ':';
			     e2++)
				;
			bad += key_at(p + i, k, n - i) != e2;
		}
	/* worth() and xor_hit's count, also with a magic planted */
	for (i = 0; i < n; i++) {
		static const char *const mg[] = { "\x1f\x8b", "\x78\xda", "BZh",
			"\xfd"
			"7zX",
			"PK\x03\x04", "\x28\xb5\x2f\xfd", "\x04\x22\x4d\x18" };
		unsigned char m[80];
		const char *g = mg[i % 7];

		bad += worth_differ(p + i, n - i);
		k = n - i < sizeof(m) ? n - i : sizeof(m);
		memcpy(m, p + i, k);
		if (i % 17 + strlen(g) <= k)
			memcpy(m + i % 17, g, strlen(g));
		bad += worth_differ(m, k);
	}
	return bad;
}
#endif

#if defined(SCAN_AVX2) && defined(__SSE2__)
/* specmask16's bit for p[0] (p[1] read), by compares of the byte */
static int
spec_byte(const unsigned char *p)
{
	unsigned c = p[0], w = p[1];

	return c >= 0xc2 ||
	    (c == '&' &&
		(((w | 0x20) >= 'a' && (w | 0x20) <= 'z') || w == '#')) ||
	    (c == '=' && w == '?');
}

/* specmask64 by a byte loop (p[64] is read) */
static uint64_t
spec_mask_bytes(const unsigned char *p)
{
	uint64_t m = 0;
	size_t k;

	for (k = 0; k < 64; k++)
		if (spec_byte(p + k))
			m |= (uint64_t)1 << k;
	return m;
}

/*
 * spec_skip by a byte loop: the first block of 64 from i, 64 bytes a
 * step, with a byte spec_byte takes (p[64] read), or the first not whole.
 */
static size_t
spec_skip_bytes(const unsigned char *p, size_t i, size_t n)
{
	for (; i + 65 <= n; i += 64)
		if (spec_mask_bytes(p + i) != 0)
			break;
	return i;
}
#endif

size_t
scan_xform_simd_differ(const unsigned char *p, size_t n)
{
	size_t bad = 0;
#ifdef SCAN_AVX2
	static const unsigned tops[] = { 0, 1, 4, 8, 11, 12, 16 };
	uint64_t m1, m2;
	unsigned t1, t2;
	size_t i, k, e1, e2;

	tables_init();
#ifdef __SSE2__
	/* (not AVX2: the keys of xor_text_keys, by window and a byte at a
	 * time) */
	/* (nor these: nul_span and xor_delta, and their byte loops) */
	for (i = 0; i <= n; i++) {
		unsigned char d1[1200], d2[1200];

		for (e2 = i; e2 < n && p[e2] == '\0'; e2++)
			;
		bad += nul_span(p, i, n) != e2;
		if (n - i > sizeof(d1) || n - i < 2)
			continue;
		xor_delta(p + i, n - i, d1);
		for (e2 = 0; e2 + 1 < n - i; e2++)
			d2[e2] = p[i + e2] ^ p[i + e2 + 1];
		bad += memcmp(d1, d2, n - i - 1) != 0;
	}
	bad += scalar_differ(p, n);
	for (i = 0; i < n; i += 5) {
		unsigned char w64[64] = { 0 }, t64[64];
		unsigned key, x1, x2;

		k = n - i < 64 ? n - i : 64;
		memcpy(w64, p + i, k);
		for (key = 0; key < 256; key += 1 + i % 3)
			bad += xor_trial(w64, k, key, &x1, t64) !=
				xor_trial_bytes(w64, k, key, &x2) ||
			    x1 != x2;
	}
#endif
	for (i = 0; i <= n; i++) {
		m1 = m2 = 0;
		e1 = spec_skip_avx2(p, i, n, &m1);
		e2 = spec_skip_sse2(p, i, n, &m2);
		bad += e1 != e2 || (e1 + 65 <= n && m1 != m2);
#ifdef __SSE2__
		bad += e2 != spec_skip_bytes(p, i, n) ||
		    (e2 + 65 <= n && m2 != spec_mask_bytes(p + e2));
#endif
		for (k = 0; k < sizeof(tops) / sizeof(tops[0]); k++) {
			m1 = m2 = 0;
			t1 = t2 = tops[k];
			e1 = runs_skip_avx2(p, i, n, &t1, &m1);
			e2 = runs_skip_sse2(p, i, n, &t2, &m2);
			bad += e1 != e2 || t1 != t2 ||
			    (e1 + 64 <= n && m1 != m2);
		}
	}
#else
	(void)p;
	(void)n;
#endif
	return bad;
}

/*
 * Runs, and bit groups (windows of '0', '1' and separators). A run of 16
 * or more either holds a whole window or crosses one window's end into
 * the next: the ones at the top of one mask and at the bottom of the next
 * add up to 16; one of 12 to 15 crosses (the same sum, MIN_RUN or more)
 * or lies inside a window (run_n64 of its mask). Where a secret is shorter
 * than MIN_RUN (8 to 11 bytes: its rotations are runs that short), runs
 * from its length are looked at, every window (no block is stepped over:
 * runs_plain64 counts 12): runs_scan_ with minrun below MIN_RUN and
 * skip 0, each a constant where it is inlined. -1: out of memory.
 */
static inline __attribute__((always_inline)) int
runs_scan_(struct xp *x, unsigned minrun, int skip)
{
	const unsigned char *buf = x->buf;
	size_t len = x->n, i, s, e, floor = 0, k, blk;
	struct scan_budget *bg = x->bg;
	uint64_t m64 = 0;
	unsigned top;
	int have;

	for (i = 0, top = 0, blk = 0, have = 0; i < len && !x->oom; i += 16) {
		unsigned m = 0, bottom, ntop, bm, rn;

		/*
		 * The run characters of 64 bytes, kept for their windows;
		 * plain blocks stepped over (runs_skip), top carried
		 */
		if (skip && (!have || i >= blk + 64) &&
		    (have = i + 64 <= len)) {
			i = runs_skip(buf, i, len, &top, &m64);
			if (i >= len)
				break;
			blk = i;
			have = i + 64 <= len;
		}
		if (have)
			m = (unsigned)(m64 >> (i - blk)) & 0xffffu;
		else if (i + 16 <= len)
			m = runmask16(buf + i);
		else /* the tail: its missing bytes are not in a run */
			for (k = i; k < len; k++)
				m |= (unsigned)runc[buf[k]] << (k - i);

		ntop = m == 0xffff ?
		    0 :
		    (unsigned)__builtin_clz((~m & 0xffffu) << 16);
		bottom = m == 0xffff ? 16 : (unsigned)__builtin_ctz(~m);
		s = e = 0;
		if (m == 0xffff && i >= floor) {
			/* top, the window before's last run characters: in */
			s = i - top >= floor ? i - top : floor;
			e = i + 16;
		} else if (top + bottom >= minrun && i - top >= floor) {
			s = i - top;
			e = i + bottom;
		}
		top = ntop;
		if (e == 0 && (rn = (unsigned)run_n64(m, minrun)) != 0 &&
		    i + (unsigned)__builtin_ctz(rn) >= floor) {
			/* a run of minrun to 15 inside the window */
			s = i + (unsigned)__builtin_ctz(rn);
			e = s + minrun;
		}
		if (e == 0) {
			if (i >= floor && i + 16 <= len &&
			    (bm = bitsmask16(buf + i)) != 0)
				floor = bm == 1 ? on_bits(x, i) :
						  on_bits47(x, i);
			continue;
		}
		for (; s > floor && runc[buf[s - 1]]; s--)
			;
		/* on: to the first byte outside a run in the first window
		 * not all run characters */
		e = scan_span16(buf, e, len, runmask16, runc);
		if (scan_budget_late(bg))
			break;
		if ((x->depth == 0 && bg->memo != NULL && e - s >= MEMO_MIN ?
			    memo_run(x, s, e) :
			    on_run(x, s, e)) != 0)
			return -1;
		floor = e;
		if (e >= i + 16) { /* on after the run */
			i = (e & ~(size_t)15) - 16;
			top = 0;
		}
	}
	return x->oom ? -1 : 0;
}

static int
runs_scan(struct xp *x)
{
	size_t m = scan_min_secret(x->sc);

	return m < MIN_RUN ? runs_scan_(x, (unsigned)m, 0) :
			     runs_scan_(x, MIN_RUN, 1);
}

/* NULs: UTF-16 and UTF-32. -1: out of memory. */
static int
nuls_scan(struct xp *x)
{
	const unsigned char *buf = x->buf, *z;
	size_t len = x->n, i, e, floor, k;

	for (floor = 0, i = 0; i < len; i = k) {
		z = memchr(buf + i, '\0', len - i);
		if (z == NULL)
			break;
		k = (size_t)(z - buf);
		for (e = k; e < len && e - k < 4 && buf[e] == '\0'; e++)
			;
		if (e - k > 3) { /* no text unit holds 4 NULs: skip them */
			e = nul_span(buf, e, len);
			k = e;
			continue;
		}
		/* a unit of UTF-16 or UTF-32 text: an ASCII byte beside */
		if (!((k > 0 && buf[k - 1] >= 0x20 && buf[k - 1] < 0x7f) ||
			(k + 1 < len && buf[k + 1] >= 0x20 &&
			    buf[k + 1] < 0x7f))) {
			k++;
			continue;
		}
		if (scan_budget_late(x->bg))
			break;
		k = on_nul(x, k, floor);
		floor = k;
		if (x->oom)
			return -1;
	}
	return 0;
}

/*
 * Line feeds after an 'l' between run characters: quoted-printable under
 * rot47 (on_soft47). -1: out of memory.
 */
static int
soft47_scan(struct xp *x)
{
	const unsigned char *buf = x->buf, *z;
	size_t len = x->n, i, k, s, l;

	for (i = 0; i < len; i = k + 1) {
		z = memchr(buf + i, '\n', len - i);
		if (z == NULL)
			break;
		k = (size_t)(z - buf);
		l = k >= 1 && buf[k - 1] == '\r' ? k - 1 : k; /* the break */
		if (l < 2 || buf[l - 1] != 'l' || !runc[buf[l - 2]] ||
		    k + 1 >= len || !runc[buf[k + 1]])
			continue;
		if (scan_budget_late(x->bg))
			break;
		for (s = l - 1; s > 0 && runc[buf[s - 1]]; s--)
			;
		if ((k = on_soft47(x, s, l)) == 0)
			return -1;
	}
	return 0;
}

/* Look-alikes, invisibles, entities, MIME words: in text. -1: out of
 * memory. */
static int
specials_scan(struct xp *x)
{
	const unsigned char *buf = x->buf;
	size_t len = x->n, i, w, uf = 0, af = 0, mf = 0;

	/*
	 * One floor per kind: a line one decoder read (entities that are
	 * not, under look-alikes) is still read by the others, whose
	 * output is scanned again, so they compose in either order.
	 */
	for (i = 0; i < len; i += w) {
		uint64_t m = 0;

		/* 64 bytes at once (one loop over their bits, spec_skip's
		 * mask), the last 16 */
		if (i + 65 <= len)
			i = spec_skip(buf, i, len, &m);
		if (i + 65 <= len)
			w = 64;
		else {
			m = i + 17 <= len ? specmask16(buf + i) :
					    (unsigned)((1u << (len - i)) - 1);
			w = 16;
		}
		while (m != 0 && !x->oom) {
			size_t j = i + (size_t)__builtin_ctzll(m);
			unsigned c = buf[j];

			m &= m - 1;
			if (c >= 0xc2 && c != 0xc3 && foldable(buf, len, j)) {
				if (j < uf)
					continue;
				if (scan_budget_late(x->bg))
					return 0;
				uf = on_unicode(x, j, uf);
			} else if (c == '&' && j + 2 < len) {
				if (j < af)
					continue;
				if (scan_budget_late(x->bg))
					return 0;
				af = on_amp(x, j, af);
			} else if (c == '=' && j + 1 < len &&
			    buf[j + 1] == '?') {
				if (j < mf)
					continue;
				if (scan_budget_late(x->bg))
					return 0;
				mf = on_mime(x, j);
			}
		}
		if (x->oom)
			return -1;
	}
	return 0;
}

int
xform_pass(const struct scan *sc, const unsigned char *buf, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res)
{
	struct xp x;
	size_t k;
	int bin, rc = 0;

	tables_init();
	memset(&x, 0, sizeof(x));
	x.sc = sc;
	x.buf = buf;
	x.n = len;
	x.depth = depth;
	x.bg = bg;
	x.res = res;
	for (k = 0; k < scan_nsecrets(sc); k++) {
		size_t l;

		scan_secret_bytes(sc, k, &l);
		if (l > x.maxsecret)
			x.maxsecret = l;
	}
	if (depth + 1 > bg->maxdepth)
		goto out;
	bin = depth > 0 && binary(buf, len);
	if (runs_scan(&x) != 0 || nuls_scan(&x) != 0 ||
	    (!bin && (specials_scan(&x) != 0 || soft47_scan(&x) != 0)))
		rc = -1;
	else if (depth > 0 && (len <= 4 * x.maxsecret + 64 || bin) &&
	    try_xor(&x) != 0)
		rc = -1;
	/* bytes a decoder gave that are not text: a brotli stream too */
	else if (depth > 0 && bin && len <= 4096 &&
	    try_brotli(&x, buf, len, NULL, 0, len) != 0)
		rc = -1;
out:
	free(x.t);
	free(x.u);
	free(x.v);
	free(x.w);
	return rc;
}
