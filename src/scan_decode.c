/*
 * Decode-through for the leak scanner (see scan_int.h): the forms no
 * literal pattern can match, because the secret's bytes are interleaved
 * with layout (dumps, wrapped byte lists, uuencoded lines) or transformed
 * as a whole (compression).
 *
 * Candidates are found in one pass over the buffer, 16 bytes at a time
 * (SSE2 where there is one), before anything is decoded:
 *   - line starts (after '\n' or NUL): the dump and list parsers try the
 *     lines from there and stop at the first line that is not theirs;
 *   - control bytes: a compressed stream's magic within 64 bytes before
 *     one (gzip, zlib, bzip2, xz, zstd, lz4, zip local headers); text
 *     has none;
 *   - 16-byte windows made only of base64/hex characters: the run around
 *     one is decoded when it is long enough and its first bytes are a
 *     magic, text (a tower of encodings), or else as raw deflate.
 * Every decoded region is scanned with every form (scan_at, one level
 * deeper); findings are named "DECODER>FORM". A dump's findings keep the
 * offsets of their first and last byte in the dump; others cover the
 * whole region.
 *
 * Tar needs no decoder: its members are stored whole, so a secret in one
 * is found in the tar as it is (or in the tar after gunzip, unxz, ...).
 * Every decoder writes into a buffer the budget bounds; a stream that
 * would produce more is cut and SCAN_BUDGET_BYTES set.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <bzlib.h>
#include <lz4frame.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "scan_int.h"

#define MIN_REGION     SCAN_MIN_SECRET /* decoded bytes worth a scan */
#define MIN_RUN	       48	       /* base64/hex characters */
#define MAX_LINE_BYTES 256	       /* bytes one dump line may hold */
#define OUT_CHUNK      (64u << 10)

static signed char hexv[256];	 /* hex digit values, or -1 */
static unsigned char runch[256]; /* base64 (both), '=' */
static void tables_init(void);

/* Decoder states kept for a whole pass (their setup costs more than a
 * small stream's decoding). */
struct probe {
	z_stream z;
	int init; /* 1: z holds an inflate state */
	lzma_stream x;
	int xinit; /* 1: x holds a decoder */
};

/* ---------------------------------------------------------------- */
/* Interned form names. */

/*
 * An open-addressed table of the names (FNV-1a), at most half full:
 * FORMS_MAX names for the life of the process. Chains compose, so a
 * long fuzz run or a long-lived process meets thousands of them (4096
 * were reached by 20000 generated cases, after which every new chain
 * was "decoded").
 */
#define FORMS_SLOTS (1u << 17)
#define FORMS_MAX   (FORMS_SLOTS / 2)

static pthread_mutex_t forms_lock = PTHREAD_MUTEX_INITIALIZER;
static char **forms; /* FORMS_SLOTS, allocated on first use */
static size_t nforms;

const char *
scan_form_join(const char *outer, const char *inner)
{
	char name[256];
	const char *r = "decoded";
	size_t i, h = 2166136261u;

	snprintf(name, sizeof(name), "%s>%s", outer, inner);
	for (i = 0; name[i] != '\0'; i++)
		h = ((h ^ (unsigned char)name[i]) * 16777619u) & 0xffffffffu;
	pthread_mutex_lock(&forms_lock);
	if (forms == NULL &&
	    (forms = calloc(FORMS_SLOTS, sizeof(*forms))) == NULL)
		goto out;
	for (h &= FORMS_SLOTS - 1; forms[h] != NULL;
	     h = (h + 1) & (FORMS_SLOTS - 1))
		if (strcmp(forms[h], name) == 0) {
			r = forms[h];
			goto out;
		}
	if (nforms < FORMS_MAX && (forms[h] = strdup(name)) != NULL) {
		r = forms[h];
		nforms++;
	}
out:
	pthread_mutex_unlock(&forms_lock);
	return r;
}

/* ---------------------------------------------------------------- */
/* Decoded bytes, with the source offset of each (dumps) or none. */

struct out {
	unsigned char *p;
	size_t *map; /* NULL: the region as a whole */
	size_t n, cap;
	int oom, full;
	struct scan_budget *bg;
};

static int
out_grow(struct out *o, size_t more, int mapped)
{
	size_t cap;
	void *p;

	if (o->oom || o->full)
		return -1;
	if (more > o->bg->left) {
		o->bg->hit |= SCAN_BUDGET_BYTES;
		o->full = 1;
		return -1;
	}
	if (o->n + more <= o->cap)
		return 0;
	cap = o->cap ? o->cap : 256;
	while (cap < o->n + more)
		cap *= 2;
	if ((p = realloc(o->p, cap)) == NULL)
		goto oom;
	o->p = p;
	if (mapped) {
		if ((p = realloc(o->map, cap * sizeof(*o->map))) == NULL)
			goto oom;
		o->map = p;
	}
	o->cap = cap;
	return 0;
oom:
	o->oom = 1;
	return -1;
}

static inline void
out_byte(struct out *o, unsigned v, size_t src)
{
	if (o->n >= o->cap || o->bg->left == 0) {
		if (out_grow(o, 1, 1) != 0)
			return;
	}
	o->p[o->n] = (unsigned char)v;
	o->map[o->n] = src;
	o->n++;
	o->bg->left--;
}

static void
out_free(struct out *o)
{
	free(o->p);
	free(o->map);
	memset(o, 0, sizeof(*o));
}

/*
 * Scans the decoded region o (from buf[start..end)) one level deeper and
 * appends its findings as "name>FORM". Inner "raw" and "json" findings
 * are dropped when skip_raw (a base64/hex run: the literal forms base64,
 * json+base64, hex, json+hex found them already).
 */
static int
emit(const struct scan *sc, struct out *o, const char *name, size_t start,
    size_t end, unsigned depth, int skip_raw, struct scan_result *res)
{
	struct scan_result in = { 0 };
	struct scan_finding f;
	size_t i, a, b;

	if (o->n < MIN_REGION)
		return 0;
	scan_budget_spend(o->bg, o->n);
	if (scan_at(sc, o->p, o->n, depth + 1, o->bg, &in) != 0) {
		scan_result_free(&in);
		return -1;
	}
	for (i = 0; i < in.n; i++) {
		f = in.v[i];
		if (skip_raw &&
		    (strcmp(f.form, "raw") == 0 || strcmp(f.form, "json") == 0))
			continue; /* FORM+base64, FORM+hex found it */
		f.form = scan_form_join(name, f.form);
		if (o->map != NULL) {
			a = o->map[f.offset];
			b = o->map[f.offset + f.length - 1] + 2;
			f.offset = a;
			f.length = (b > end ? end : b) - a;
		} else {
			f.offset = start;
			f.length = end - start;
		}
		f.wrapped = 0;
		/* (f.xform kept: found through a transform inside) */
		if (scan_res_push(res, &f) != 0) {
			scan_result_free(&in);
			return -1;
		}
	}
	scan_result_free(&in);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Dumps and byte lists, line by line. */

enum { I_HEX, I_HEXLE, I_OCT, I_DEC, I_CHAR, I_LIST, I_LISTOCT, I_COUNT };

static const char *const interp_name[I_COUNT] = {
	"dump-hex",
	"dump-hex-le",
	"dump-octal",
	"dump-decimal",
	"dump-char",
	"byte-list",
	"byte-list-octal",
};

static int
hexval(unsigned c)
{
	if (c >= '0' && c <= '9')
		return (int)c - '0';
	if (c >= 'a' && c <= 'f')
		return (int)c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return (int)c - 'A' + 10;
	return -1;
}

static int
is_blank(unsigned c)
{
	return c == ' ' || c == '\t';
}

/* Per-region parser state. */
struct dstate {
	int interp;
	size_t n;      /* the buffer's length */
	size_t width;  /* hex token width, from line 1 */
	size_t gutter; /* xxd: the gutter's column, or 0 */
	int lines;
	int repeat;	  /* a '*' line is pending */
	size_t last_from; /* previous line's bytes in out */
	size_t last_n;
	unsigned long last_off; /* previous line's offset value */
	int last_has_off;
};

#define LINE_BAD ((size_t)-1)

#define MAX_LINE 1024 /* characters of one dump line */

/*
 * The end of the line at ls: the next '\n' or NUL, or n; LINE_BAD when
 * it is longer than any dump line (so a long line costs MAX_LINE, not its
 * length, per parser). A NUL ends a line as it starts one (the pass
 * starts lines after both): decoded JSON values are joined by NUL, and a
 * dump at the end of a value has lost its final newline.
 */
static size_t
line_end(const unsigned char *buf, size_t n, size_t ls)
{
	size_t max = n - ls < MAX_LINE ? n - ls : MAX_LINE;
	const unsigned char *e = memchr(buf + ls, '\n', max), *z;

	if (e != NULL)
		max = (size_t)(e - (buf + ls));
	if ((z = memchr(buf + ls, '\0', max)) != NULL)
		return (size_t)(z - buf);
	if (e != NULL)
		return (size_t)(e - buf);
	return ls + max == n ? n : LINE_BAD;
}

/* The offset column's value in hex or octal (od's default), or 0. */
static unsigned long
offset_value(const unsigned char *p, size_t len, int *octal)
{
	unsigned long v = 0, v8 = 0;
	size_t i;

	/* (both readings at once: an octal column's digits are '0'..'7') */
	*octal = len == 7;
	for (i = 0; i < len; i++) {
		if (p[i] > '7')
			*octal = 0;
		v = v * 16 + (unsigned long)hexv[p[i]];
		v8 = v8 * 8 + (unsigned long)hexv[p[i]];
	}
	return *octal ? v8 : v;
}

/*
 * Whether the token buf[p..t) of tl digits on the line to le is an offset
 * column (followed by a colon, by a token of another length, or by
 * nothing where the dump's lines so far had offsets); if so, notes its
 * value and moves *pp past it. 1: the line is an offset alone.
 */
static int
hex_offset(const unsigned char *buf, size_t *pp, size_t t, size_t next,
    size_t le, int colon, struct dstate *st)
{
	size_t p = *pp, tl = t - p, n2 = colon ? t + 1 : next, e2;
	int oct;

	if (tl < 6 || tl > 10)
		return 0;
	while (n2 < le && is_blank(buf[n2]))
		n2++;
	e2 = n2;
	while (e2 < le && hexv[buf[e2]] >= 0)
		e2++;
	if (!(colon || e2 == n2 || e2 - n2 != tl))
		return 0;
	/* a token alone ends a dump with offsets (od's total); in one
	 * without (od -An) it is the last word */
	if (e2 == n2 && !colon && st->lines > 0 && !st->last_has_off)
		return 0;
	/* an offset column */
	st->last_off = offset_value(buf + p, tl, &oct);
	st->last_has_off = 1;
	*pp = colon ? t + 1 : t;
	return e2 == n2 && !colon;
}

/*
 * A gutter (xxd's after the data, hexdump -C's between bars) shows
 * the bytes: the reading whose bytes it does not show is not this
 * dump's (xxd's 2-byte groups are big-endian, xxd -e's little). 0: the
 * gutter shows other bytes than o's from before.
 */
static int
gutter_agrees(const unsigned char *buf, size_t p, size_t dend, size_t le,
    int colon, const struct out *o, size_t before)
{
	const unsigned char *g = NULL;
	size_t gl = 0, q;

	if (colon && dend < le) {
		for (q = dend; q < le && is_blank(buf[q]); q++)
			;
		g = buf + q;
		gl = le - q;
	} else if (p < le && buf[p] == '|') {
		g = buf + p + 1;
		gl = le - p - 1;
	}
	if (g == NULL || gl < o->n - before)
		return 1;
	for (q = 0; q < o->n - before; q++) {
		unsigned b = o->p[before + q];

		if (b >= 0x20 && b < 0x7f ? g[q] != b : g[q] != '.')
			return 0;
	}
	return 1;
}

/* Where the data of an offset-and-colon line [ls, le) ends, its data
 * from p: the column the first line's first double blank is at. */
static size_t
data_end(const unsigned char *buf, size_t ls, size_t p, size_t le,
    struct dstate *st)
{
	size_t i;

	if (st->gutter == 0) {
		/* line 1: the data ends at the first double blank */
		for (i = p + 1; i + 1 < le; i++)
			if (is_blank(buf[i]) && is_blank(buf[i + 1]) &&
			    i > p + 1)
				break;
		st->gutter = i - ls;
	}
	return ls + st->gutter < le ? ls + st->gutter : le;
}

/*
 * The tokens of a hex dump line's data buf[*pp..dend): runs of hex
 * digits between blanks, up to a '|' (hexdump -C's gutter) or dend;
 * each of an even number of digits, followed by a blank, a '|' or dend.
 * Notes where each starts and its length, moves *pp to where the data
 * ends; returns how many, or LINE_BAD when the data is not so. A byte
 * at a time.
 */
static size_t
hex_tokens_slow(const unsigned char *buf, size_t *pp, size_t dend, size_t *tok,
    size_t *tlen)
{
	size_t p = *pp, t, nl = 0;

	while (p < dend) {
		while (p < dend && is_blank(buf[p]))
			p++;
		if (p >= dend || buf[p] == '|')
			break;
		t = p;
		while (t < dend && hexv[buf[t]] >= 0)
			t++;
		if (t == p ||
		    (t < dend && !is_blank(buf[t]) && buf[t] != '|') ||
		    (t - p) % 2 != 0 || nl == MAX_LINE_BYTES)
			return LINE_BAD;
		tok[nl] = p;
		tlen[nl] = t - p;
		nl++;
		p = t;
	}
	*pp = p;
	return nl;
}

#ifdef __SSE2__
/*
 * hex_tokens_slow's answer for data of up to 64 bytes (p[0..64) readable,
 * its bytes from len not the data's), from masks of its hex digits,
 * blanks and '|': the data ends at the first '|' (the byte loop reaches
 * it after a token or blanks, or fails before); before it every byte is
 * a hex digit or a blank (any other fails the byte loop), the tokens
 * are the runs of hex digits. Returns LINE_BAD where the byte loop does
 * (leaving *end, as it leaves *pp).
 */
static size_t
hex_tokens64(const unsigned char *p, size_t len, size_t at, size_t *end,
    size_t *tok, size_t *tlen)
{
	const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
	const __m128i la = _mm_set1_epi8('a'), five = _mm_set1_epi8(5);
	const __m128i low = _mm_set1_epi8(0x20), sp = _mm_set1_epi8(' ');
	const __m128i tab = _mm_set1_epi8('\t'), bar = _mm_set1_epi8('|');
	uint64_t hex = 0, blank = 0, bars = 0, lim, starts, ends;
	size_t nl = 0, stop;
	int k;

	for (k = 0; 16 * (size_t)k < len; k++) {
		__m128i v = _mm_loadu_si128(
		    (const __m128i *)(const void *)(p + 16 * k));
		__m128i d = _mm_sub_epi8(v, zero);
		__m128i a = _mm_sub_epi8(_mm_or_si128(v, low), la);
		__m128i h = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(d, nine),
					     d),
		    _mm_cmpeq_epi8(_mm_min_epu8(a, five), a));
		__m128i b = _mm_or_si128(_mm_cmpeq_epi8(v, sp),
		    _mm_cmpeq_epi8(v, tab));

		hex |= (uint64_t)(unsigned)_mm_movemask_epi8(h) << (16 * k);
		blank |= (uint64_t)(unsigned)_mm_movemask_epi8(b) << (16 * k);
		bars |= (uint64_t)(unsigned)_mm_movemask_epi8(
			    _mm_cmpeq_epi8(v, bar))
		    << (16 * k);
	}
	lim = len == 64 ? ~(uint64_t)0 : ((uint64_t)1 << len) - 1;
	bars &= lim;
	stop = bars != 0 ? (size_t)__builtin_ctzll(bars) : len;
	lim = stop == 64 ? ~(uint64_t)0 : ((uint64_t)1 << stop) - 1;
	if (((hex | blank) & lim) != lim)
		return LINE_BAD;
	hex &= lim;
	starts = hex & ~(hex << 1);
	ends = hex & ~(hex >> 1); /* each run's last digit */
	for (; starts != 0; starts &= starts - 1, ends &= ends - 1) {
		size_t s = (size_t)__builtin_ctzll(starts);
		size_t l = (size_t)__builtin_ctzll(ends) + 1 - s;

		if (l % 2 != 0 || nl == MAX_LINE_BYTES)
			return LINE_BAD;
		tok[nl] = at + s;
		tlen[nl] = l;
		nl++;
	}
	*end = at + stop;
	return nl;
}
#endif

/*
 * hex_tokens_slow, through hex_tokens64 when the data is 64 bytes or
 * fewer (n: the buffer's length; a line near its end is copied first).
 */
static inline __attribute__((always_inline)) size_t
hex_tokens(const unsigned char *buf, size_t n, size_t *pp, size_t dend,
    size_t *tok, size_t *tlen)
{
#ifdef __SSE2__
	unsigned char pad[64];
	size_t p = *pp;

	if (p >= dend || dend - p > 64)
		return hex_tokens_slow(buf, pp, dend, tok, tlen);
	if (p + 64 <= n)
		return hex_tokens64(buf + p, dend - p, p, pp, tok, tlen);
	memset(pad, 0, sizeof(pad));
	memcpy(pad, buf + p, dend - p);
	return hex_tokens64(pad, dend - p, p, pp, tok, tlen);
#else
	(void)n;
	return hex_tokens_slow(buf, pp, dend, tok, tlen);
#endif
}

/*
 * Does hex_tokens fail at the data's first token, buf[p..t) (from a hex
 * digit at p to the end of the hex digits, up to the line's end), so
 * that a line need not be read on (a line of text that starts with a
 * word of hex digits)?
 */
static inline int
hex_first_bad(const unsigned char *buf, size_t p, size_t t, size_t dend)
{
	return t <= dend &&
	    ((t < dend && !is_blank(buf[t]) && buf[t] != '|') ||
		(t - p) % 2 != 0);
}

/*
 * The bytes of a hex dump line's nl tokens to o (each token's from its
 * end when rev): all at once when o has room and the budget bytes for
 * them, else a byte at a time (out_byte: the budget stops it where it
 * would). Inlined: rev is known where parse_hex_line calls it.
 */
static inline __attribute__((always_inline)) void
hex_bytes(const unsigned char *buf, const size_t *tok, const size_t *tlen,
    size_t nl, int rev, struct out *o)
{
	size_t i, k, j, nb, all = 0, *m;
	const unsigned char *d;
	unsigned char *q;

	for (i = 0; i < nl; i++)
		all += tlen[i] / 2;
	if (o->oom || o->full || all > o->bg->left ||
	    out_grow(o, all, 1) != 0) {
		for (i = 0; i < nl; i++)
			for (k = 0, nb = tlen[i] / 2; k < nb; k++) {
				j = rev ? nb - 1 - k : k;
				d = buf + tok[i] + 2 * j;
				out_byte(o,
				    (unsigned)(hexv[d[0]] << 4 | hexv[d[1]]),
				    tok[i] + 2 * j);
			}
		return;
	}
	q = o->p + o->n;
	m = o->map + o->n;
	for (i = 0; i < nl; i++) {
		d = buf + tok[i];
		nb = tlen[i] / 2;
		if (rev)
			for (j = nb; j-- > 0;) {
				*q++ = (unsigned char)(hexv[d[2 * j]] << 4 |
				    hexv[d[2 * j + 1]]);
				*m++ = tok[i] + 2 * j;
			}
		else
			for (j = 0; j < nb; j++) {
				*q++ = (unsigned char)(hexv[d[2 * j]] << 4 |
				    hexv[d[2 * j + 1]]);
				*m++ = tok[i] + 2 * j;
			}
	}
	o->n += all;
	o->bg->left -= all;
}

/*
 * One line of a hex dump: [offset[:]] groups of hex digits [gutter].
 * Appends its bytes to o; returns LINE_BAD when the line is not one.
 */
static size_t
parse_hex_line(const unsigned char *buf, size_t ls, size_t le,
    struct dstate *st, struct out *o, int *only_offset)
{
	size_t p = ls, p0, t, tl, nl, next, dend = le, i, before = o->n;
	int colon = 0;
	size_t tok[MAX_LINE_BYTES], tlen[MAX_LINE_BYTES];

	*only_offset = 0;
	while (p < le && is_blank(buf[p]))
		p++;
	/* tokens up to the gutter */
	t = p0 = p;
	while (t < le && hexv[buf[t]] >= 0)
		t++;
	tl = t - p;
	if (tl == 0)
		return LINE_BAD;
	next = t;
	while (next < le && is_blank(buf[next]))
		next++;
	if (t < le && buf[t] == ':')
		colon = 1;
	if (hex_offset(buf, &p, t, next, le, colon, st)) {
		*only_offset = 1;
		return le;
	}
	if (colon)
		dend = data_end(buf, ls, p, le, st);
	/* no offset: most lines that are no dump's end at the first token */
	if (p == p0 && hex_first_bad(buf, p, t, dend))
		return LINE_BAD;
	nl = hex_tokens(buf, st->n, &p, dend, tok, tlen);
	if (nl == LINE_BAD || nl == 0)
		return LINE_BAD;
	if (st->width == 0)
		st->width = tlen[0];
	if (st->width > 16)
		return LINE_BAD; /* xxd -p: the wrapped pass reads it */
	for (i = 0; i < nl; i++)
		if (tlen[i] > st->width || (tlen[i] != st->width && i + 1 < nl))
			return LINE_BAD;
	/* (cppcheck cannot follow width's bound across the caller) */
	/* cppcheck-suppress knownConditionTrueFalse */
	if (st->interp == I_HEXLE && (st->width < 4 || st->width > 16))
		return LINE_BAD;
	hex_bytes(buf, tok, tlen, nl, st->interp == I_HEXLE, o);
	if (st->lines == 0 && o->n > before &&
	    !gutter_agrees(buf, p, dend, le, colon, o, before))
		return LINE_BAD;
	st->last_from = before;
	st->last_n = o->n - before;
	return le;
}

/* A list of byte values: Python, JS, JSON, C arrays. Appends them to o;
 * returns le, or LINE_BAD when the line is not one. */
static size_t
parse_list_line(const unsigned char *buf, size_t ls, size_t le,
    const struct dstate *st, struct out *o)
{
	size_t p = ls, t, count = 0;

	while (p < le &&
	    (is_blank(buf[p]) || buf[p] == '[' || buf[p] == '{' ||
		buf[p] == '('))
		p++;
	while (p < le) {
		unsigned v = 0;
		int base = 10;

		t = p;
		if (p + 2 < le && buf[p] == '0' &&
		    (buf[p + 1] == 'x' || buf[p + 1] == 'X')) {
			base = 16;
			t = p + 2;
		} else if (st->interp == I_LISTOCT && buf[p] == '0' &&
		    p + 1 < le && buf[p + 1] >= '0' && buf[p + 1] <= '7')
			base = 8;
		p = t;
		while (t < le && t - p < 3 && hexval(buf[t]) >= 0 &&
		    hexval(buf[t]) < base) {
			v = v * (unsigned)base + (unsigned)hexval(buf[t]);
			t++;
		}
		if (t == p || v > 255 || (t < le && hexval(buf[t]) >= 0))
			return LINE_BAD;
		out_byte(o, v, p);
		count++;
		p = t;
		while (p < le && is_blank(buf[p]))
			p++;
		if (p < le && buf[p] == ',') {
			p++;
			while (p < le && is_blank(buf[p]))
				p++;
			continue;
		}
		while (p < le &&
		    (is_blank(buf[p]) || buf[p] == ']' || buf[p] == '}' ||
			buf[p] == ')' || buf[p] == ';'))
			p++;
		if (p < le)
			return LINE_BAD;
	}
	return count > 0 ? le : LINE_BAD;
}

/* od -c's cells of 4 columns from p: a character, an escape, or octal
 * (od -b's lines are all octal cells and are not od -c's). Returns how
 * many, or 0 when the line is not od -c's. */
static size_t
parse_odc_cells(const unsigned char *buf, size_t p, size_t le, struct out *o)
{
	size_t count = 0;
	int chars = 0;

	while (p + 4 <= le) {
		const unsigned char *c = buf + p;
		unsigned v;

		if (c[0] == ' ' && c[1] == ' ' && c[2] == ' ' && c[3] >= 0x20 &&
		    c[3] < 0x7f)
			v = c[3], chars = 1;
		else if (c[0] == ' ' && c[1] == ' ' && c[2] == '\\') {
			const char *e = strchr("0abtnvfr", c[3]);
			static const unsigned char val[] = { 0, 7, 8, 9, 10, 11,
				12, 13 };

			if (e == NULL || c[3] == '\0')
				return 0;
			v = val[e - "0abtnvfr"];
			chars = 1;
		} else if (c[0] == ' ' && c[1] >= '0' && c[1] <= '3' &&
		    c[2] >= '0' && c[2] <= '7' && c[3] >= '0' && c[3] <= '7')
			v = (unsigned)((c[1] - '0') * 64 + (c[2] - '0') * 8 +
			    (c[3] - '0'));
		else
			return 0;
		out_byte(o, v, p);
		count++;
		p += 4;
	}
	if (p != le || !chars)
		return 0;
	return count;
}

/* od -b, od -tu1 and od -td1's numbers from p. Returns how many, or
 * LINE_BAD when the line is not such. */
static size_t
parse_od_nums(const unsigned char *buf, size_t p, size_t le,
    const struct dstate *st, struct out *o)
{
	size_t t, count = 0;

	while (p < le) {
		unsigned v = 0;
		int neg = 0;

		while (p < le && is_blank(buf[p]))
			p++;
		if (p >= le)
			break;
		if (st->interp == I_DEC && buf[p] == '-') {
			neg = 1;
			p++;
		}
		t = p;
		while (t < le && buf[t] >= '0' && buf[t] <= '9' && t - p < 3) {
			if (st->interp == I_OCT && buf[t] > '7')
				return LINE_BAD;
			v = v * (st->interp == I_OCT ? 8 : 10) +
			    (unsigned)(buf[t] - '0');
			t++;
		}
		if (t == p || (t < le && !is_blank(buf[t])) ||
		    (st->interp == I_OCT && t - p != 3) ||
		    (neg ? v > 128 : v > 255))
			return LINE_BAD;
		out_byte(o, neg ? 256 - v : v, p);
		count++;
		p = t;
	}
	return count;
}

/* od -b, od -tu1/-td1 and od -c lines; lists. */
static size_t
parse_num_line(const unsigned char *buf, size_t ls, size_t le,
    struct dstate *st, struct out *o, int *only_offset)
{
	size_t p = ls, t, count, before = o->n;
	int oct;

	*only_offset = 0;
	if (st->interp == I_LIST || st->interp == I_LISTOCT)
		return parse_list_line(buf, ls, le, st, o);
	/* the od forms: an optional 7-digit offset first */
	while (p < le && is_blank(buf[p]) && st->interp != I_CHAR)
		p++;
	t = p;
	while (t < le && buf[t] >= '0' && buf[t] <= '9')
		t++;
	if (t - p >= 6 && (t == le || is_blank(buf[t]))) {
		st->last_off = offset_value(buf + p, t - p, &oct);
		st->last_has_off = 1;
		p = t;
		if (p == le) {
			*only_offset = 1;
			return le;
		}
	} else if (st->interp == I_CHAR)
		p = ls; /* od -An -c: cells from column 0 */
	if (st->interp == I_CHAR) {
		if ((count = parse_odc_cells(buf, p, le, o)) == 0)
			return LINE_BAD;
	} else if ((count = parse_od_nums(buf, p, le, st, o)) == LINE_BAD)
		return LINE_BAD;
	st->last_from = before;
	st->last_n = o->n - before;
	return count > 0 ? le : LINE_BAD;
}

/*
 * A '*' line: the previous line's cnt bytes at o->p[from] repeated until
 * this line's offset (prev: the previous line's), this line's bytes moved
 * after the repeats.
 */
static void
expand_repeat(struct out *o, const struct dstate *st, size_t from, size_t cnt,
    unsigned long prev)
{
	unsigned long gap = st->last_off - prev, j;
	size_t add = o->n - st->last_from, base;
	unsigned char *tmp;
	size_t *tm;

	gap = gap > cnt && gap < 65536 ? gap - cnt : 0;
	base = o->n - add;
	for (j = 0; j < gap && !o->oom && !o->full; j++)
		out_byte(o, o->p[from + j % cnt], o->map[from + j % cnt]);
	if (o->oom || o->full || add == 0 || gap == 0)
		return;
	tmp = malloc(add);
	tm = malloc(add * sizeof(*tm));
	if (tmp != NULL && tm != NULL) {
		memcpy(tmp, o->p + base, add);
		memcpy(tm, o->map + base, add * sizeof(*tm));
		memmove(o->p + base, o->p + base + add, gap);
		memmove(o->map + base, o->map + base + add, gap * sizeof(*tm));
		memcpy(o->p + base + gap, tmp, add);
		memcpy(o->map + base + gap, tm, add * sizeof(*tm));
	}
	free(tmp);
	free(tm);
}

/*
 * The region of lines from ls that parse under interp; scans it. Returns
 * the end of the region (ls when no line parsed), or LINE_BAD when out
 * of memory.
 */
static size_t
try_region(const struct scan *sc, const unsigned char *buf, size_t n, size_t ls,
    int interp, unsigned depth, struct scan_budget *bg, struct scan_result *res)
{
	struct dstate st;
	struct out o;
	size_t p = ls, le, r, end = ls, k;
	int only_off, rc = 0;

	memset(&st, 0, sizeof(st));
	memset(&o, 0, sizeof(o));
	st.interp = interp;
	st.n = n;
	o.bg = bg;
	while (p < n) {
		le = line_end(buf, n, p);
		if (le == LINE_BAD)
			break;
		r = le;
		if (le > p && buf[le - 1] == '\r')
			r = le - 1;
		k = p;
		while (k < r && is_blank(buf[k]))
			k++;
		if (k < r && buf[k] == '*' && k + 1 == r && st.lines > 0 &&
		    interp < I_LIST) {
			st.repeat = 1;
		} else {
			size_t from = st.last_from, cnt = st.last_n;
			unsigned long prev = st.last_off;
			int had = st.last_has_off;

			if (interp == I_HEX || interp == I_HEXLE)
				r = parse_hex_line(buf, p, r, &st, &o,
				    &only_off);
			else
				r = parse_num_line(buf, p, r, &st, &o,
				    &only_off);
			if (r == LINE_BAD)
				break;
			if (st.repeat && had && st.last_has_off && cnt > 0)
				expand_repeat(&o, &st, from, cnt, prev);
			st.repeat = 0;
			if (only_off) {
				end = le;
				st.lines++;
				break;
			}
		}
		st.lines++;
		end = le;
		if (le >= n || buf[le] == '\0') /* a NUL ends the value */
			break;
		p = le + 1;
		if (o.full || o.oom)
			break;
	}
	scan_budget_spend(bg, end - ls + 1);
	if (o.oom)
		rc = -1;
	else if ((interp >= I_LIST && st.lines < 2) || o.n < MIN_REGION)
		rc = 0;
	else
		rc = emit(sc, &o, interp_name[interp], ls, end, depth, 0, res);
	out_free(&o);
	if (rc != 0)
		return LINE_BAD;
	return end;
}

/* uuencode: "begin MODE NAME" then length-prefixed lines, "end". */
static size_t
try_uu(const struct scan *sc, const unsigned char *buf, size_t n, size_t ls,
    unsigned depth, struct scan_budget *bg, struct scan_result *res)
{
	struct out o;
	size_t p, le, k, len, end;
	unsigned acc = 0;
	int bits, rc;

	if (n - ls < 10 || memcmp(buf + ls, "begin ", 6) != 0)
		return ls;
	memset(&o, 0, sizeof(o));
	o.bg = bg;
	p = line_end(buf, n, ls);
	if (p == LINE_BAD)
		return ls;
	end = p;
	while (p < n) {
		p++;
		le = line_end(buf, n, p);
		if (le == LINE_BAD)
			break;
		end = le;
		if (le - p >= 3 && memcmp(buf + p, "end", 3) == 0)
			break;
		if (le == p)
			break;
		len = (size_t)((buf[p] - 32) & 63);
		bits = 0;
		for (k = p + 1; k < le && len > 0; k++) {
			unsigned c = buf[k];

			if (c < 32 || c > 96)
				break;
			acc = (acc << 6) | ((c - 32) & 63);
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				out_byte(&o, (acc >> bits) & 255, k);
				len--;
			}
		}
		p = le;
		if (o.full || o.oom)
			break;
	}
	rc = o.oom ? -1 : emit(sc, &o, "uuencode", ls, end, depth, 0, res);
	out_free(&o);
	return rc != 0 ? LINE_BAD : end;
}

/*
 * Base85 wrapped over lines (Python's a85encode(wrapcol=), btoa, git's
 * binary patches): at least two lines of one alphabet's digits, all as
 * long as the first but the last; Ascii85 may be framed by <~ ~> and
 * holds 'z' for four zeros; git lines begin with a length letter.
 */
enum { W_A85, W_B85, W_GIT, W_Z85, W_COUNT };

static const char *const w_name[W_COUNT] = {
	"ascii85",
	"base85",
	"base85-git",
	"z85",
};

static const char *const w_alpha[W_COUNT] = {
	"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
	"abcdefghijklmnopqrstu",
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	"!#$%&()*+-;<=>?@^_`{|}~",
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	"!#$%&()*+-;<=>?@^_`{|}~",
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	".-:+=^!/*?&<>()[]{}@%$#",
};

static signed char w_value[W_COUNT][256];

static void
w_setup(void)
{
	int a, i;

	for (a = 0; a < W_COUNT; a++) {
		memset(w_value[a], -1, 256);
		for (i = 0; w_alpha[a][i] != '\0'; i++)
			w_value[a][(unsigned char)w_alpha[a][i]] = (signed char)
			    i;
	}
}

#define W_MIN_LINE 16

static void
b85_flush(struct out *o, uint64_t v, int nd, size_t src)
{
	int k, nb = nd - 1;
	unsigned char g[4];

	if (nd < 2)
		return;
	for (k = nd; k < 5; k++)
		v = v * 85 + 84;
	if (v > 0xffffffffu)
		return;
	g[0] = (unsigned char)(v >> 24);
	g[1] = (unsigned char)(v >> 16);
	g[2] = (unsigned char)(v >> 8);
	g[3] = (unsigned char)v;
	for (k = 0; k < nb; k++)
		out_byte(o, g[k], src);
}

/* Cheap: the first W_MIN_LINE characters from ls must be digits of w,
 * and not all base64 or hex on a line on_line reads as such. */
static int
b85_maybe(const unsigned char *buf, size_t n, size_t ls, int w, int b64_line)
{
	size_t k = ls, from;
	int other = 0;

	if (w == W_A85 && n - ls >= 2 && buf[ls] == '<' && buf[ls + 1] == '~')
		k += 2;
	for (from = k; k < n && k - from < W_MIN_LINE; k++) {
		if (w_value[w][buf[k]] < 0 && !(w == W_A85 && buf[k] == 'z'))
			return 0;
		other |= !runch[buf[k]];
	}
	return other || w == W_GIT || !b64_line;
}

/*
 * The digits of the line [*k, *le) of a block of w: without a CR, Ascii85's
 * "<~" on the first line and "~>" (then *last), git's length letter (0:
 * the line's length is not the letter's).
 */
static int
b85_line(const unsigned char *buf, int w, int lines, size_t *k_, size_t *le_,
    int *last)
{
	size_t k = *k_, le = *le_;

	if (le > k && buf[le - 1] == '\r')
		le--;
	if (lines == 0 && w == W_A85 && le - k >= 2 && buf[k] == '<' &&
	    buf[k + 1] == '~')
		k += 2;
	if (w == W_A85 && le - k >= 2 && buf[le - 2] == '~' &&
	    buf[le - 1] == '>') {
		le -= 2;
		*last = 1;
	}
	if (w == W_GIT) {
		unsigned c = k < le ? buf[k] : 0;
		size_t len = c >= 'A' && c <= 'Z' ? c - 'A' + 1 :
		    c >= 'a' && c <= 'z'	  ? c - 'a' + 27 :
						    0;

		if (len == 0 || le - k - 1 != (len + 3) / 4 * 5)
			return 0;
		k++;
	}
	*k_ = k;
	*le_ = le;
	return 1;
}

static size_t
try_b85(const struct scan *sc, const unsigned char *buf, size_t n, size_t ls,
    int w, int b64_line, unsigned depth, struct scan_budget *bg,
    struct scan_result *res)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct out o;
	size_t p = ls, le, first = 0, end = ls, k;
	uint64_t v = 0;
	int nd = 0, lines = 0, rc, last = 0;

	pthread_once(&once, w_setup);
	if (!b85_maybe(buf, n, ls, w, b64_line))
		return ls;
	memset(&o, 0, sizeof(o));
	o.bg = bg;
	while (p < n && !last) {
		le = line_end(buf, n, p);
		if (le == LINE_BAD)
			break;
		k = p;
		if (!b85_line(buf, w, lines, &k, &le, &last))
			break;
		if (le - k < (lines == 0 ? W_MIN_LINE : 1))
			break;
		if (lines == 0)
			first = le - p;
		else if (le - p > first)
			break;
		for (; k < le; k++) {
			int d = w_value[w][buf[k]];

			if (w == W_A85 && buf[k] == 'z' && nd == 0) {
				out_byte(&o, 0, k);
				out_byte(&o, 0, k);
				out_byte(&o, 0, k);
				out_byte(&o, 0, k);
				continue;
			}
			if (d < 0)
				break;
			v = v * 85 + (unsigned)d;
			if (++nd == 5) {
				b85_flush(&o, v, 5, k);
				v = 0;
				nd = 0;
			}
		}
		if (k < le)
			break;
		lines++;
		end = le;
		if (le - p < first && w != W_GIT)
			last = 1; /* a short line ends the block */
		p = line_end(buf, n, p);
		if (p == LINE_BAD || p >= n)
			break;
		p++;
		if (o.full || o.oom)
			break;
	}
	b85_flush(&o, v, nd, end);
	rc = 0;
	if (o.oom)
		rc = -1;
	else if (lines >= (w == W_GIT ? 1 : 2))
		rc = emit(sc, &o, w_name[w], ls, end, depth, 0, res);
	out_free(&o);
	if (rc != 0)
		return LINE_BAD;
	return lines >= (w == W_GIT ? 1 : 2) ? end : ls;
}

/* ---------------------------------------------------------------- */
/* Compressed streams. */

enum { Z_GZIP, Z_ZLIB, Z_RAW };

/*
 * Inflates from p (kind: gzip, zlib or raw deflate) into o, at most
 * max_in input bytes. Returns the input bytes used; 0 when the stream is
 * bad from its first bytes.
 */
static size_t
inflate_into(const unsigned char *p, size_t max_in, int kind, struct out *o)
{
	z_stream z;
	int zr;
	size_t used;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z,
		kind == Z_GZIP	   ? 31 :
		    kind == Z_ZLIB ? 15 :
				     -15) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)(uintptr_t)p;
	z.avail_in = max_in > UINT32_MAX ? UINT32_MAX : (unsigned)max_in;
	for (;;) {
		size_t chunk = o->bg->left < OUT_CHUNK ? o->bg->left :
							 OUT_CHUNK;

		/* the budget shrinks as output comes (cppcheck misses it) */
		/* cppcheck-suppress knownConditionTrueFalse */
		if (chunk == 0) {
			o->bg->hit |= SCAN_BUDGET_BYTES;
			break;
		}
		if (out_grow(o, chunk, 0) != 0)
			break;
		z.next_out = o->p + o->n;
		z.avail_out = (unsigned)chunk;
		zr = inflate(&z, Z_NO_FLUSH);
		o->n += chunk - z.avail_out;
		o->bg->left -= chunk - z.avail_out;
		scan_budget_spend(o->bg, chunk - z.avail_out);
		if (zr != Z_OK || scan_budget_late(o->bg))
			break;
	}
	used = z.total_in;
	inflateEnd(&z);
	return used;
}

static void
bunzip_into(const unsigned char *p, size_t max_in, struct out *o)
{
	bz_stream b;
	unsigned in;
	int r;

	memset(&b, 0, sizeof(b));
	if (BZ2_bzDecompressInit(&b, 0, 0) != BZ_OK)
		return;
	b.next_in = (char *)(uintptr_t)p;
	b.avail_in = max_in > UINT32_MAX ? UINT32_MAX : (unsigned)max_in;
	for (;;) {
		size_t chunk = o->bg->left < OUT_CHUNK ? o->bg->left :
							 OUT_CHUNK;

		/* the budget shrinks as output comes (cppcheck misses it) */
		/* cppcheck-suppress knownConditionTrueFalse */
		if (chunk == 0) {
			o->bg->hit |= SCAN_BUDGET_BYTES;
			break;
		}
		if (out_grow(o, chunk, 0) != 0)
			break;
		b.next_out = (char *)(o->p + o->n);
		b.avail_out = (unsigned)chunk;
		in = b.avail_in;
		r = BZ2_bzDecompress(&b);
		o->n += chunk - b.avail_out;
		o->bg->left -= chunk - b.avail_out;
		scan_budget_spend(o->bg, chunk - b.avail_out + 1);
		/* a cut stream: no input taken, no output given, BZ_OK */
		if (r != BZ_OK || scan_budget_late(o->bg) ||
		    (b.avail_out == chunk && b.avail_in == in))
			break;
	}
	BZ2_bzDecompressEnd(&b);
}

static void
unxz_into(const unsigned char *p, size_t max_in, struct out *o,
    struct probe *pz)
{
	lzma_stream *xs = &pz->x;
	lzma_ret r;

	if (!pz->xinit) {
		lzma_stream init = LZMA_STREAM_INIT;

		*xs = init;
	}
	/* again on the same stream: liblzma reuses its memory */
	if (lzma_stream_decoder(xs, 256u << 20, 0) != LZMA_OK)
		return;
	pz->xinit = 1;
#define x (*xs)
	x.next_in = p;
	x.avail_in = max_in;
	for (;;) {
		size_t chunk = o->bg->left < OUT_CHUNK ? o->bg->left :
							 OUT_CHUNK;

		/* the budget shrinks as output comes (cppcheck misses it) */
		/* cppcheck-suppress knownConditionTrueFalse */
		if (chunk == 0) {
			o->bg->hit |= SCAN_BUDGET_BYTES;
			break;
		}
		if (out_grow(o, chunk, 0) != 0)
			break;
		x.next_out = o->p + o->n;
		x.avail_out = chunk;
		r = lzma_code(&x, LZMA_FINISH);
		o->n += chunk - x.avail_out;
		o->bg->left -= chunk - x.avail_out;
		scan_budget_spend(o->bg, chunk - x.avail_out);
		if (r != LZMA_OK || scan_budget_late(o->bg))
			break;
	}
#undef x
}

/* zstd frames (and skippable ones before them), cut by the budget. */
static size_t
unzstd_into(const unsigned char *p, size_t max_in, struct out *o)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer in = { p, max_in, 0 };
	size_t r;

	if (z == NULL)
		return 0;
	ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax, 27);
	for (;;) {
		size_t chunk = o->bg->left < OUT_CHUNK ? o->bg->left :
							 OUT_CHUNK;
		ZSTD_outBuffer out;

		/* cppcheck-suppress knownConditionTrueFalse */
		if (chunk == 0) {
			o->bg->hit |= SCAN_BUDGET_BYTES;
			break;
		}
		if (out_grow(o, chunk, 0) != 0)
			break;
		out.dst = o->p + o->n;
		out.size = chunk;
		out.pos = 0;
		r = ZSTD_decompressStream(z, &out, &in);
		o->n += out.pos;
		o->bg->left -= out.pos;
		scan_budget_spend(o->bg, out.pos + 1);
		if (ZSTD_isError(r) || r == 0 || scan_budget_late(o->bg) ||
		    (out.pos == 0 && in.pos == in.size))
			break;
	}
	ZSTD_freeDStream(z);
	return in.pos;
}

/* An LZ4 frame (lz4(1)), cut by the budget. */
static size_t
unlz4_into(const unsigned char *p, size_t max_in, struct out *o)
{
	LZ4F_dctx *z;
	size_t used = 0, r;

	if (LZ4F_isError(LZ4F_createDecompressionContext(&z, LZ4F_VERSION)))
		return 0;
	for (;;) {
		size_t chunk = o->bg->left < OUT_CHUNK ? o->bg->left :
							 OUT_CHUNK;
		size_t dst, src = max_in - used;

		/* cppcheck-suppress knownConditionTrueFalse */
		if (chunk == 0) {
			o->bg->hit |= SCAN_BUDGET_BYTES;
			break;
		}
		if (out_grow(o, chunk, 0) != 0)
			break;
		dst = chunk;
		r = LZ4F_decompress(z, o->p + o->n, &dst, p + used, &src, NULL);
		o->n += dst;
		o->bg->left -= dst;
		used += src;
		scan_budget_spend(o->bg, dst + 1);
		if (LZ4F_isError(r) || r == 0 || scan_budget_late(o->bg) ||
		    (dst == 0 && src == 0) || used >= max_in)
			break;
	}
	LZ4F_freeDecompressionContext(z);
	return used;
}

static uint32_t
le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t
le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

/* The compressed stream whose magic p's avail (8 or more) bytes start
 * with: its name, or NULL. */
static const char *
magic_name(const unsigned char *p, size_t avail)
{
	if (p[0] == 0x1f && p[1] == 0x8b && p[2] == 8)
		return "gzip";
	if (p[0] == 0x78 &&
	    (p[1] == 0x01 || p[1] == 0x5e || p[1] == 0x9c || p[1] == 0xda))
		return "zlib";
	if (memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
	    avail >= 10 && memcmp(p + 4, "1AY&SY", 6) == 0)
		return "bzip2";
	/* cppcheck-suppress knownConditionTrueFalse */
	if (avail >= 6 &&
	    memcmp(p,
		"\xfd"
		"7zXZ\0",
		6) == 0)
		return "xz";
	if (avail >= 30 && memcmp(p, "PK\x03\x04", 4) == 0)
		return "zip";
	if (memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0)
		return "zstd";
	if (memcmp(p, "\x04\x22\x4d\x18", 4) == 0)
		return "lz4";
	return NULL;
}

/*
 * A compressed stream starting at q? Decodes and scans it. Returns the
 * input bytes it took (0: no magic, nothing done), or LINE_BAD when out
 * of memory.
 */
static size_t
try_magic(const struct scan *sc, const unsigned char *buf, size_t n, size_t q,
    unsigned depth, struct scan_budget *bg, struct scan_result *res,
    struct probe *pz)
{
	const unsigned char *p = buf + q;
	size_t avail = n - q, used = 0;
	const char *name = NULL;
	struct out o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.bg = bg;
	if (avail < 8)
		return 0;
	if ((name = magic_name(p, avail)) == NULL)
		return 0;
	if (depth + 1 > bg->maxdepth) {
		bg->hit |= SCAN_BUDGET_DEPTH;
		return 0;
	}
	if (bg->left == 0) {
		bg->hit |= SCAN_BUDGET_BYTES;
		return 0;
	}
	if (scan_budget_late(bg))
		return 0;
	if (strcmp(name, "gzip") == 0)
		used = inflate_into(p, avail, Z_GZIP, &o);
	else if (strcmp(name, "zlib") == 0)
		used = inflate_into(p, avail, Z_ZLIB, &o);
	else if (strcmp(name, "bzip2") == 0)
		bunzip_into(p, avail, &o);
	else if (strcmp(name, "xz") == 0)
		unxz_into(p, avail, &o, pz);
	else if (strcmp(name, "zstd") == 0)
		used = unzstd_into(p, avail, &o);
	else if (strcmp(name, "lz4") == 0)
		used = unlz4_into(p, avail, &o);
	else {
		uint32_t method = le16(p + 8), csize = le32(p + 18);
		size_t data = 30 + le16(p + 26) + le16(p + 28);

		if (data < avail) {
			size_t max = avail - data;

			if (csize != 0 && csize < max)
				max = csize;
			if (method == 8)
				used = inflate_into(p + data, max, Z_RAW, &o);
			else
				name = NULL; /* stored: scanned as it is */
			used += data;
		}
	}
	rc = 0;
	if (o.oom)
		rc = -1;
	else if (name != NULL)
		rc = emit(sc, &o, name, q,
		    used > 0 && used <= avail ? q + used : n, depth, 0, res);
	out_free(&o);
	if (rc != 0)
		return LINE_BAD;
	return used > 0 ? used : 1;
}

/* ---------------------------------------------------------------- */
/* Long base64 and hex runs. */

static signed char b64v[256];
static unsigned char hexch[256];
static unsigned char magic_first[256]; /* a compressed stream's byte 0 */
static signed char hexv[256];

static void
tables_setup(void)
{
	static const char al[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	int i;

	memset(b64v, -1, sizeof(b64v));
	for (i = 0; i < 64; i++)
		b64v[(unsigned char)al[i]] = (signed char)i;
	b64v['-'] = 62;
	b64v['_'] = 63;
	magic_first[0x1f] = magic_first[0x78] = magic_first['B'] = 1;
	magic_first[0xfd] = magic_first['P'] = 1;
	magic_first[0x28] = magic_first[0x04] = 1; /* zstd, lz4 */
	for (i = 0; i < 256; i++) {
		runch[i] = b64v[i] >= 0 || i == '=';
		hexch[i] = hexval((unsigned)i) >= 0;
		hexv[i] = (signed char)hexval((unsigned)i);
	}
}

static void
tables_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, tables_setup);
}

/* A line break token at i (as the wrapped pass knows them), or 0. */
static size_t
break_len(const unsigned char *buf, size_t n, size_t i)
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

/*
 * Decodes the run's characters from s to e as hex or base64 into o (at
 * most max bytes, SIZE_MAX: all), skipping breaks, '=' and JSON's "\/".
 */
static void
run_decode(const unsigned char *buf, size_t s, size_t e, int hex, struct out *o,
    size_t max)
{
	unsigned acc = 0;
	int bits = 0, v, step = hex ? 4 : 6;
	size_t i, need = (e - s) * (size_t)step / 8 + 1;
	unsigned char *d;

	if (need > max)
		need = max;
	if (out_grow(o, need, 0) != 0)
		return;
	d = o->p + o->n;
	for (i = s; i < e && need > 0; i++) {
		unsigned c = buf[i];

		if (c == '\\' && i + 1 < e && buf[i + 1] == '/')
			c = '/', i++;
		if (c == '=' && !hex) {
			acc = 0;  /* padding ends a quantum: concatenated */
			bits = 0; /* base64 starts afresh */
			continue;
		}
		v = hex ? hexv[c] : b64v[c];
		if (v < 0)
			continue;
		acc = (acc << step) | (unsigned)v;
		bits += step;
		if (bits >= 8) {
			bits -= 8;
			*d++ = (unsigned char)(acc >> bits);
			need--;
		}
	}
	o->bg->left -= (size_t)(d - (o->p + o->n));
	o->n = (size_t)(d - o->p);
}

static int
has_magic(const unsigned char *p, size_t n)
{
	if (n < 4)
		return 0;
	return (p[0] == 0x1f && p[1] == 0x8b) ||
	    (p[0] == 0x78 &&
		(p[1] == 0x01 || p[1] == 0x5e || p[1] == 0x9c ||
		    p[1] == 0xda)) ||
	    memcmp(p, "BZh", 3) == 0 ||
	    memcmp(p,
		"\xfd"
		"7zX",
		4) == 0 ||
	    memcmp(p, "PK\x03\x04", 4) == 0 ||
	    memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0 ||
	    memcmp(p, "\x04\x22\x4d\x18", 4) == 0;
}

static int
printable(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' &&
			p[i] != '\t') ||
		    p[i] == 0x7f)
			return 0;
	return 1;
}

/* UTF-16 or UTF-32 text (of ASCII): NULs at every other byte or more. */
static int
utf16ish(const unsigned char *p, size_t n)
{
	size_t i, z[2] = { 0, 0 };

	for (i = 0; i + 1 < n; i += 2) {
		z[0] += p[i] == 0;
		z[1] += p[i + 1] == 0;
	}
	return n >= 16 && (z[0] * 4 >= n || z[1] * 4 >= n);
}

/* Decodes the first bytes of the run at s into probe; returns how many. */
static size_t
probe_at(const unsigned char *buf, size_t s, size_t e, int hex,
    unsigned char probe[48], const struct scan_budget *bg)
{
	struct scan_budget pb = *bg;
	struct out po;

	memset(&po, 0, sizeof(po));
	po.p = probe;
	po.cap = 48;
	pb.left = 48;
	po.bg = &pb;
	run_decode(buf, s, e, hex, &po, 48);
	return po.n;
}

/*
 * Where a run holding i starts: the start of i's line of run characters
 * (after a JSON "\n" escape, not at its 'n'), then back over line breaks
 * (real or JSON-escaped) through the lines before it while each is as
 * long as the line after it: a wrapped run's lines are as long as each
 * other but the last, and a line before the run ("-----BEGIN ...",
 * "data:" and so on) is shorter. A run found in its second line is then
 * decoded from its first, at the right alignment.
 */
static size_t
line_back(const unsigned char *buf, size_t s, size_t floor)
{
	while (s > floor && runch[buf[s - 1]])
		s--;
	if (s > floor && buf[s - 1] == '\\' && buf[s] == 'n')
		s++;
	return s;
}

static size_t
run_back(const unsigned char *buf, size_t n, size_t i, size_t floor)
{
	size_t s = line_back(buf, i, floor), w, ps, pe, t;

	/* the line's width (up to MAX_LINE) */
	w = scan_b64_span(buf, s, n - s > MAX_LINE ? s + MAX_LINE : n, runch) -
	    s;
	for (;;) {
		size_t back = s - floor; /* bytes before s there may be */

		t = 0;
		if (back >= 1 && buf[s - 1] == '\n')
			t = back >= 2 && buf[s - 2] == '\r' ? 2 : 1;
		if (t == 0 && back >= 2 && buf[s - 2] == '\\' &&
		    buf[s - 1] == 'n')
			t = back >= 4 && buf[s - 4] == '\\' &&
				buf[s - 3] == 'r' ?
			    4 :
			    2;
		if (t == 0 || s - t <= floor)
			return s;
		pe = s - t;
		ps = line_back(buf, pe, floor);
		if (pe - ps < w || pe - ps < 16)
			return s;
		w = pe - ps;
		s = ps;
	}
}

/*
 * Where the run characters from e end, not past n; *hex cleared when one
 * of them is no hex digit: scan_b64_span_avx2 where 32 bytes may be
 * read, else 16 at a time, then a byte at a time.
 */
static inline size_t
run_span(const unsigned char *buf, size_t e, size_t n, int *hex)
{
	size_t f = e;
#ifdef __SSE2__
	unsigned hm, m;

#ifdef SCAN_AVX2
	if (scan_avx2 && e + 32 <= n)
		return scan_b64_hex_span_avx2(buf, e, n, hex);
#endif
	while (f + 16 <= n && (m = scan_run_mask16(buf + f, &hm)) == 0xffff) {
		*hex &= hm == 0xffff;
		f += 16;
	}
	/* the window's run characters before its first other */
	if (f + 16 <= n) {
		unsigned k = (unsigned)__builtin_ctz(~m), low = (1u << k) - 1;

		*hex &= (hm & low) == low;
		f += k;
	}
#endif
	while (f < n && runch[buf[f]]) {
		*hex &= hexch[buf[f]];
		f++;
	}
	return f;
}

/*
 * The extent [*s, returned) of the base64 or hex run around the all-run
 * window at i (not before floor), through escaped slashes and line
 * breaks; *count: its run characters; *hex: whether all are hex digits.
 */
static size_t
run_extent(const unsigned char *buf, size_t n, size_t i, size_t floor,
    size_t *s_, size_t *count, int *hex_)
{
	size_t s, e = i, t;
	int hex = 1;

	s = run_back(buf, n, i, floor);
	for (*count = 0, t = s; t < i; t++) { /* the lines before i's */
		if (!runch[buf[t]] ||
		    ((buf[t] == 'n' || buf[t] == 'r') && t > s &&
			buf[t - 1] == '\\'))
			continue;
		++*count;
		hex &= hexch[buf[t]];
	}
	while (e < n) {
		if (runch[buf[e]]) {
			size_t f = run_span(buf, e, n, &hex);

			*count += f - e;
			e = f;
		} else if (buf[e] == '\\' && e + 1 < n && buf[e + 1] == '/') {
			hex = 0;
			e += 2;
		} else if ((t = break_len(buf, n, e)) != 0 && e + t < n &&
		    runch[buf[e + t]]) {
			e += t;
		} else
			break;
	}
	*s_ = s;
	*hex_ = hex;
	return e;
}

/*
 * Letters glued before a compressed stream's base64 ("lorH4sI..."): the
 * run from the magic's digits. Returns where that run starts, or s.
 */
static size_t
glued_magic(const unsigned char *buf, size_t s, size_t e,
    const struct scan_budget *bg)
{
	static const char *const mag[] = { "H4sI", "eJ", "eNo", "eAE", "eF4",
		"QlpoO", "/Td6WFo", "UEsDB" };
	unsigned char p2[48];
	size_t m, q, n2;

	for (q = s + 1; q < s + 16 && q + 8 < e; q++) {
		unsigned c = buf[q];

		if (c != 'H' && c != 'e' && c != 'Q' && c != '/' && c != 'U')
			continue;
		for (m = 0; m < sizeof(mag) / sizeof(mag[0]); m++)
			if (memcmp(buf + q, mag[m], strlen(mag[m])) == 0 &&
			    (n2 = probe_at(buf, q, e, 0, p2, bg)) > 0 &&
			    has_magic(p2, n2))
				return q;
	}
	return s;
}

/*
 * Whether the probe's pn bytes get through raw deflate without an error
 * and give what looks like text (or a magic): random bytes read as fixed
 * Huffman codes give random bytes. One inflate state for every probe of
 * the pass.
 */
static int
raw_deflate_ok(struct probe *pz, unsigned char *probe, size_t pn)
{
	z_stream zs;
	unsigned char sink[512];
	int zr;

	sink[0] = 0; /* (for cppcheck: inflate fills what is read) */
	/* BTYPE 3 is invalid: a quarter of random runs end here */
	if (pn == 0 || ((probe[0] >> 1) & 3) == 3)
		return 0;
	if (!pz->init) {
		memset(&pz->z, 0, sizeof(pz->z));
		if (inflateInit2(&pz->z, -15) != Z_OK)
			return 0;
		pz->init = 1;
	} else if (inflateReset(&pz->z) != Z_OK)
		return 0;
	pz->z.next_in = probe;
	pz->z.avail_in = (unsigned)pn;
	pz->z.next_out = sink;
	pz->z.avail_out = sizeof(sink);
	zr = inflate(&pz->z, Z_NO_FLUSH);
	zs = pz->z;
	return !((zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) ||
	    sizeof(sink) - zs.avail_out < 16 ||
	    (!printable(sink, 16) && !has_magic(sink, 16)));
}

/* What try_run hands run_body (through the memo: scan_memo_run). */
struct run_ctx {
	const struct scan *sc;
	const unsigned char *buf;
	unsigned depth;
	int hex;
	struct scan_budget *bg;
	struct scan_result *res;
	struct probe *pz;
};

/*
 * The run buf[s..e): decoded and scanned when its first bytes are a
 * magic or text; else tried as raw deflate. Returns 0, or -1 when out of
 * memory.
 */
static int
run_body(void *ctx, size_t s, size_t e)
{
	struct run_ctx *rc_ = ctx;
	const unsigned char *buf = rc_->buf;
	struct scan_budget *bg = rc_->bg;
	size_t pn, q;
	struct out o, z;
	int hex = rc_->hex, rc = 0, kind = 0;
	unsigned char probe[48];

	/* the first bytes decide */
	pn = probe_at(buf, s, e, hex, probe, bg);
	if (has_magic(probe, pn))
		kind = 1;
	else if (printable(probe, pn) || utf16ish(probe, pn))
		kind = 2;
	else if (hex)
		return 0;
	else if ((q = glued_magic(buf, s, e, bg)) != s) {
		s = q;
		kind = 1;
	} else if (!raw_deflate_ok(rc_->pz, probe, pn))
		return 0;
	else
		kind = 3;
	if (rc_->depth + 1 > bg->maxdepth) {
		bg->hit |= SCAN_BUDGET_DEPTH;
		return 0;
	}
	if (scan_budget_late(bg))
		return 0;
	memset(&o, 0, sizeof(o));
	o.bg = bg;
	run_decode(buf, s, e, hex, &o, SIZE_MAX);
	if (o.oom) {
		out_free(&o);
		return -1;
	}
	if (kind != 3) {
		rc = emit(rc_->sc, &o, hex ? "hex" : "base64", s, e, rc_->depth,
		    1, rc_->res);
	} else if (rc_->depth + 2 <= bg->maxdepth) {
		memset(&z, 0, sizeof(z));
		z.bg = bg;
		inflate_into(o.p, o.n, Z_RAW, &z);
		rc = z.oom ? -1 :
			     emit(rc_->sc, &z, "base64>deflate", s, e,
				 rc_->depth + 1, 0, rc_->res);
		out_free(&z);
	}
	out_free(&o);
	return rc != 0 ? -1 : 0;
}

/*
 * The base64 or hex run around the all-run window at i (not before
 * floor), when long enough, to run_body: at the top level through the
 * memo (the wire sends the same blobs again with every request). Returns
 * where the run ends, or LINE_BAD when out of memory.
 */
static size_t
try_run(const struct scan *sc, const unsigned char *buf, size_t n, size_t i,
    size_t floor, unsigned depth, struct scan_budget *bg,
    struct scan_result *res, struct probe *pz)
{
	size_t s, e, count;
	struct run_ctx c;
	int hex;

	e = run_extent(buf, n, i, floor, &s, &count, &hex);
	if (count < MIN_RUN)
		return e;
	scan_budget_spend(bg, e - s);
	/*
	 * Hex: text starts with a digit pair from 09 to 7e, a magic with
	 * 1f, 78, 42, fd or 50; a hash or an id with anything else.
	 */
	if (hex &&
	    !((buf[s] >= '2' && buf[s] <= '7') || buf[s] == '0' ||
		buf[s] == '1' || (buf[s] | 0x20) == 'f'))
		return e;
	c.sc = sc;
	c.buf = buf;
	c.depth = depth;
	c.hex = hex;
	c.bg = bg;
	c.res = res;
	c.pz = pz;
	if ((depth == 0 && bg->memo != NULL ?
		    scan_memo_run(bg, buf, s, e, 1u + (unsigned)hex, res,
			run_body, &c) :
		    run_body(&c, s, e)) != 0)
		return LINE_BAD;
	return e;
}

/* ---------------------------------------------------------------- */
/* Quoted-printable: soft line breaks anywhere. */

#define QP_MAX (64u << 10) /* characters of one quoted-printable region */

/*
 * The line at ls follows a soft line break ("=\n" or "=\r\n"): the
 * region from the start of the line that holds that break (after a '\n'
 * or NUL, at most MAX_LINE back) to the end of the first line that does
 * not end in one is decoded (=XX to its byte, soft breaks removed) and
 * scanned as "quoted-printable". Returns where the region ends (after
 * ls), or LINE_BAD when out of memory.
 */
static size_t
try_qp(const struct scan *sc, const unsigned char *buf, size_t n, size_t ls,
    size_t floor, unsigned depth, struct scan_budget *bg,
    struct scan_result *res)
{
	struct out o;
	size_t s, e, i, from;
	int rc, v1, v2;

	s = ls - (buf[ls - 2] == '=' ? 2 : 3); /* the '=' */
	while (s > floor && ls - s < MAX_LINE && buf[s - 1] != '\n' &&
	    buf[s - 1] != '\0')
		s--;
	/* the end: the first line without a soft break */
	for (e = ls; e < n && e - s < QP_MAX; e++) {
		if (buf[e] == '\0')
			break;
		if (buf[e] != '\n')
			continue;
		if (!(e > 0 && buf[e - 1] == '=') &&
		    !(e > 1 && buf[e - 1] == '\r' && buf[e - 2] == '='))
			break;
	}
	if (depth + 1 > bg->maxdepth) {
		bg->hit |= SCAN_BUDGET_DEPTH;
		return e;
	}
	if (scan_budget_late(bg))
		return e;
	scan_budget_spend(bg, e - s);
	memset(&o, 0, sizeof(o));
	o.bg = bg;
	for (i = s; i < e && !o.full && !o.oom; i++) {
		if (buf[i] != '=') {
			out_byte(&o, buf[i], i);
			continue;
		}
		if (i + 1 < e && buf[i + 1] == '\n') {
			i++;
			continue;
		}
		if (i + 2 < e && buf[i + 1] == '\r' && buf[i + 2] == '\n') {
			i += 2;
			continue;
		}
		if (i + 2 < n && (v1 = hexval(buf[i + 1])) >= 0 &&
		    (v2 = hexval(buf[i + 2])) >= 0) {
			out_byte(&o, (unsigned)(v1 << 4 | v2), i);
			i += 2;
			continue;
		}
		out_byte(&o, '=', i);
	}
	from = res->n;
	rc = o.oom ? -1 : emit(sc, &o, "quoted-printable", s, e, depth, 0, res);
	/* a transform (a literal form inside it says it already) */
	for (; rc == 0 && from < res->n; from++)
		res->v[from].xform = 1;
	out_free(&o);
	return rc != 0 ? LINE_BAD : e;
}

/* ---------------------------------------------------------------- */
/* The pass. */

struct pass {
	const struct scan *sc;
	const unsigned char *buf;
	size_t n;
	unsigned depth;
	struct scan_budget *bg;
	struct scan_result *res;
	/* run_floor is used by the SSE2 loop only */
	/* cppcheck-suppress unusedStructMember */
	size_t line_floor, run_floor, magic_floor, qp_floor;
	struct probe pz;
};

static int
on_line(struct pass *ps, size_t ls)
{
	size_t end = ls, r;
	int k, b64_line;

	/* after a soft line break: quoted-printable */
	if (ls >= 2 && ls >= ps->qp_floor && ls < ps->n &&
	    ps->buf[ls - 1] == '\n' &&
	    (ps->buf[ls - 2] == '=' ||
		(ls >= 3 && ps->buf[ls - 2] == '\r' &&
		    ps->buf[ls - 3] == '='))) {
		r = try_qp(ps->sc, ps->buf, ps->n, ls, ps->qp_floor, ps->depth,
		    ps->bg, ps->res);
		if (r == LINE_BAD)
			return -1;
		ps->qp_floor = r;
	}
	if (ls < ps->line_floor || ls >= ps->n || scan_budget_late(ps->bg))
		return 0;
	/*
	 * Base64 and hex lines are made of base85 digits too: a base85 line
	 * shows a digit that base64 lacks early (all but 1 in 10^8 within
	 * 64 digits).
	 */
	for (r = ls; r < ps->n && r - ls < 64 && runch[ps->buf[r]]; r++)
		;
	b64_line = r - ls == 64 ||
	    (r < ps->n && (ps->buf[r] == '\n' || ps->buf[r] == '\r'));
	for (k = 0; k < W_COUNT; k++) {
		r = try_b85(ps->sc, ps->buf, ps->n, ls, k, b64_line, ps->depth,
		    ps->bg, ps->res);
		if (r == LINE_BAD)
			return -1;
		if (r > ls) {
			ps->line_floor = r;
			return 0;
		}
	}
	/* a dump, list or uuencode line starts so (after blanks) */
	for (r = ls; r < ps->n && r - ls < 16 && is_blank(ps->buf[r]); r++)
		;
	if (r < ps->n &&
	    (ps->buf[r] == '[' || ps->buf[r] == '{' || ps->buf[r] == '(')) {
		for (r++; r < ps->n && r - ls < 32 && is_blank(ps->buf[r]); r++)
			;
		if (r >= ps->n || hexval(ps->buf[r]) < 0 || ps->buf[r] > '9')
			return 0; /* a list starts with a digit */
	}
	if (r >= ps->n ||
	    (hexval(ps->buf[r]) < 0 && ps->buf[r] != '-' &&
		(r == ls || ps->buf[r] < 0x20 || ps->buf[r] >= 0x7f)))
		return 0;
	r = try_uu(ps->sc, ps->buf, ps->n, ls, ps->depth, ps->bg, ps->res);
	if (r == LINE_BAD)
		return -1;
	if (r > end)
		end = r;
	for (k = 0; k < I_COUNT && end == ls; k++) {
		r = try_region(ps->sc, ps->buf, ps->n, ls, k, ps->depth, ps->bg,
		    ps->res);
		if (r == LINE_BAD)
			return -1;
		if (r > end)
			end = r;
	}
	/* the other readings of the same lines, when one fitted */
	for (; k < I_COUNT && end > ls; k++) {
		r = try_region(ps->sc, ps->buf, ps->n, ls, k, ps->depth, ps->bg,
		    ps->res);
		if (r == LINE_BAD)
			return -1;
	}
	if (end > ps->line_floor)
		ps->line_floor = end;
	return 0;
}

/* Bit k set when p[k] may start a compressed stream (magic_first). */
static unsigned
magic_mask(const unsigned char *p, size_t k)
{
	unsigned m = 0;
	size_t j;

#ifdef __SSE2__
	if (k == 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);

		return (unsigned)_mm_movemask_epi8(
		    _mm_or_si128(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v,
							       _mm_set1_epi8(
								   0x1f)),
						  _mm_cmpeq_epi8(v,
						      _mm_set1_epi8(0x78))),
				     _mm_or_si128(_mm_cmpeq_epi8(v,
						      _mm_set1_epi8('B')),
					 _mm_cmpeq_epi8(v,
					     _mm_set1_epi8('P')))),
			_mm_or_si128(_mm_cmpeq_epi8(v,
					 _mm_set1_epi8((char)0xfd)),
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x28)),
				_mm_cmpeq_epi8(v, _mm_set1_epi8(0x04))))));
	}
#endif
	for (j = 0; j < k; j++)
		if (magic_first[p[j]])
			m |= 1u << j;
	return m;
}

/*
 * A control byte in [i, i + k): any magic from 64 bytes before it (or
 * the floor) to the end of the window is tried. Each byte is looked at
 * once: the floor moves past what was looked at or decoded.
 */
static int
on_ctrl(struct pass *ps, size_t i, size_t k)
{
	size_t q, end = i + k, r, w;
	unsigned m;

	q = i > 64 ? i - 64 : 0;
	if (q < ps->magic_floor)
		q = ps->magic_floor;
	while (q < end) {
		w = end - q < 16 ? end - q : 16;
		m = magic_mask(ps->buf + q, w);
		while (m != 0) {
			size_t at = q + (size_t)__builtin_ctz(m);

			m &= m - 1;
			r = try_magic(ps->sc, ps->buf, ps->n, at, ps->depth,
			    ps->bg, ps->res, &ps->pz);
			if (r == LINE_BAD)
				return -1;
			if (r > 1) {
				ps->magic_floor = at + r;
				return 0;
			}
		}
		q += w;
	}
	if (end > ps->magic_floor)
		ps->magic_floor = end;
	return 0;
}

/*
 * The window of k bytes at i: lm has a bit for each '\n' or NUL that
 * starts a line worth trying (the byte after it is not a control byte: no
 * dump line starts so), ctrl is set when the window holds a control byte
 * (a magic may lie before it).
 */
static int
events(struct pass *ps, size_t i, size_t k, unsigned lm, int ctrl)
{
	size_t j;

	while (lm != 0) {
		j = i + (size_t)__builtin_ctz(lm);
		lm &= lm - 1;
		if (on_line(ps, j + 1) != 0)
			return -1;
	}
	if (ctrl && i + k > ps->magic_floor && on_ctrl(ps, i, k) != 0)
		return -1;
	return 0;
}

/* events() for one byte (the scalar tail). */
static int
events1(struct pass *ps, size_t i)
{
	unsigned c = ps->buf[i];
	unsigned lm = 0;

	if ((c == '\n' || c == '\0') && i + 1 < ps->n &&
	    (ps->buf[i + 1] >= 0x20 || ps->buf[i + 1] == '\t'))
		lm = 1;
	return events(ps, i, 1, lm,
	    c < 0x20 && c != '\t' && c != '\n' && c != '\r');
}

static int nul_skip = 1; /* scan_decode_nul_skip */

int
scan_decode_nul_skip(int on)
{
	int was = nul_skip;

	nul_skip = on;
	return was;
}

#ifdef __SSE2__
/* Bit k set when v's byte k is from '+' to 'z' (as base64's are). */
static inline unsigned
b64range16(__m128i v)
{
	__m128i x = _mm_sub_epi8(v, _mm_set1_epi8('+'));

	return (unsigned)_mm_movemask_epi8(
	    _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8('z' - '+')), x));
}

/*
 * Do the 64 bytes at p hold a byte outside '+' to 'z' in each of their
 * windows of 16 (a blank, or punctuation no base64 run holds), and no
 * byte below 0x20? Then decode_windows() has nothing to do in any of
 * the four windows (text, or JSON and code between runs): none has an
 * event, none is all base64 characters.
 */
static inline int
text64(const unsigned char *p)
{
	const __m128i c1f = _mm_set1_epi8(0x1f);
	__m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	__m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
	__m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
	__m128i mn = _mm_min_epu8(_mm_min_epu8(v0, v1), _mm_min_epu8(v2, v3));

	/* (a mask of 16 bits plus 1 has bit 16 set when it was all ones) */
	return (((b64range16(v0) + 1) | (b64range16(v1) + 1) |
		    (b64range16(v2) + 1) | (b64range16(v3) + 1)) &
		   0x10000u) == 0 &&
	    _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(mn, c1f), mn)) == 0;
}

/* Does none of the 64 bytes at p lie below 0x20 (no event)? */
static inline int
noctrl64(const unsigned char *p)
{
	const __m128i c1f = _mm_set1_epi8(0x1f);
	__m128i mn =
	    _mm_min_epu8(_mm_min_epu8(_mm_loadu_si128(
					  (const __m128i *)(const void *)p),
			     _mm_loadu_si128(
				 (const __m128i *)(const void *)(p + 16))),
		_mm_min_epu8(_mm_loadu_si128(
				 (const __m128i *)(const void *)(p + 32)),
		    _mm_loadu_si128((const __m128i *)(const void *)(p + 48))));

	return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(mn, c1f), mn)) ==
	    0;
}

/*
 * Where the blocks of text (text64) from i, 64 bytes a step, end: the
 * first block from i that is not text, or that is not whole before n.
 * A block whose four windows start before floor (a run decode_windows
 * has decoded: it tries no window of it) needs no byte outside '+' to
 * 'z', only none below 0x20.
 */
static inline size_t
text_skip_sse2(const unsigned char *buf, size_t i, size_t n, size_t floor)
{
	while (i + 64 <= n &&
	    (text64(buf + i) || (i + 48 < floor && noctrl64(buf + i))))
		i += 64;
	return i;
}

#ifdef SCAN_AVX2
/* text_skip_sse2, with text64 32 bytes at a time */
SCAN_AVX2 static size_t
text_skip_avx2(const unsigned char *buf, size_t i, size_t n, size_t floor)
{
	const __m256i plus = _mm256_set1_epi8('+');
	const __m256i span = _mm256_set1_epi8('z' - '+');
	const __m256i c1f = _mm256_set1_epi8(0x1f);

	for (; i + 64 <= n; i += 64) {
		__m256i a = _mm256_loadu_si256(
		    (const __m256i *)(const void *)(buf + i));
		__m256i b = _mm256_loadu_si256(
		    (const __m256i *)(const void *)(buf + i + 32));
		__m256i mn = _mm256_min_epu8(a, b);
		__m256i xa = _mm256_sub_epi8(a, plus),
			xb = _mm256_sub_epi8(b, plus);
		uint64_t in; /* bit k: buf[i + k] is from '+' to 'z' */

		in = (uint32_t)_mm256_movemask_epi8(
			 _mm256_cmpeq_epi8(_mm256_min_epu8(xa, span), xa)) |
		    (uint64_t)(uint32_t)_mm256_movemask_epi8(
			_mm256_cmpeq_epi8(_mm256_min_epu8(xb, span), xb))
			<< 32;
		if ((scan_lane_full(in) && i + 48 >= floor) ||
		    !_mm256_testz_si256(_mm256_cmpeq_epi8(_mm256_min_epu8(mn,
							      c1f),
					    mn),
			_mm256_set1_epi8(-1)))
			break;
	}
	return i;
}
#endif

static inline size_t
text_skip(const unsigned char *buf, size_t i, size_t n, size_t floor)
{
#ifdef SCAN_AVX2
	if (scan_avx2)
		return text_skip_avx2(buf, i, n, floor);
#endif
	return text_skip_sse2(buf, i, n, floor);
}

/*
 * Where decode_windows() goes on from window i: past the blocks of four
 * windows of text from i (each with a byte outside '+' to 'z', none with
 * a byte below 0x20), which its loop would pass over one by one
 * (text_skip), doing nothing; each
 * byte is looked at once (*next64: the first block text_skip stopped at
 * is not text, or not whole, so none is tried before it is passed).
 */
static inline size_t
text_from(const unsigned char *buf, size_t i, size_t len, size_t *next64,
    size_t floor)
{
	size_t j;

	if (i < *next64 || i + 64 > len)
		return i;
	j = text_skip(buf, i, len, floor);
	*next64 = j + 64;
	return j;
}

/*
 * Where decode_windows() goes on from window i (all below 0x20, a NUL
 * first): past the whole windows of NULs from i but the last, when no magic is looked for before i
 * (magic_floor from i). Their events would be none: a NUL before a NUL
 * starts no line (the last window's next byte may start one), NUL is no
 * magic's first byte; and on_ctrl() would move magic_floor past them.
 */
static inline size_t
nul_from(struct pass *ps, size_t i)
{
	const __m128i z = _mm_setzero_si128();
	size_t j = i;

	if (!nul_skip || ps->magic_floor < i)
		return i;
	while (j + 16 <= ps->n &&
	    _mm_movemask_epi8(
		_mm_cmpeq_epi8(_mm_loadu_si128((
				   const __m128i *)(const void *)(ps->buf + j)),
		    z)) == 0xffff)
		j += 16;
	if (j < i + 32)
		return i;
	j -= 16;
	if (j > ps->magic_floor)
		ps->magic_floor = j;
	return j;
}

/*
 * The events of window i (v, its bytes; em, those below 0x20): the line
 * breaks and NULs that start a line (the byte after them is no control
 * byte: byte 16 is the next window's first), and whether a control byte
 * is there.
 */
static inline int
window_events(struct pass *ps, __m128i v, unsigned em, size_t i)
{
	const __m128i nl = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t');
	const __m128i cr = _mm_set1_epi8('\r');
	__m128i nlz = _mm_or_si128(_mm_cmpeq_epi8(v, nl),
	    _mm_cmpeq_epi8(v, _mm_setzero_si128()));
	unsigned lm = (unsigned)_mm_movemask_epi8(nlz);
	unsigned ws = (unsigned)_mm_movemask_epi8(
	    _mm_or_si128(_mm_cmpeq_epi8(v, nl),
		_mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, cr))));
	unsigned after = em >> 1;

	if (i + 16 < ps->n && ps->buf[i + 16] < 0x20 && ps->buf[i + 16] != '\t')
		after |= 0x8000;
	if (i + 16 >= ps->n)
		after |= 0x8000;
	lm &= ~after;
	return events(ps, i, 16, lm, (em & ~ws) != 0);
}

/*
 * The windows of 16 bytes of ps's buffer: the events of its bytes below
 * 0x20 (line breaks, NULs, control bytes), and every window all of
 * base64 characters the run around it. Returns where the windows end,
 * or LINE_BAD when out of memory.
 */
static size_t
decode_windows(struct pass *ps)
{
	const unsigned char *buf = ps->buf;
	size_t len = ps->n, i = 0;
	const __m128i c1f = _mm_set1_epi8(0x1f), sp = _mm_set1_epi8(' ');
	const __m128i plus = _mm_set1_epi8('+');
	const __m128i span = _mm_set1_epi8('z' - '+');
	size_t r, floor = ps->run_floor; /* (events() leave it) */
	size_t next64 = 0;		 /* where text64() may look again */

	for (; i + 16 <= len; i += 16) {
		__m128i v;
		__m128i x;
		unsigned hm, em;
		size_t j;

		/* blocks of four windows of text at once (text_from) */
		if ((j = text_from(buf, i, len, &next64, floor)) != i) {
			i = j - 16;
			continue;
		}
		v = _mm_loadu_si128((const __m128i *)(const void *)(buf + i));

		/*
		 * a run's window has no byte up to 0x20; the others may
		 * have bytes below 0x20: line breaks, NULs, control bytes
		 * (windows of NULs at once: nul_from)
		 */
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, sp), v)) !=
		    0) {
			em = (unsigned)_mm_movemask_epi8(
			    _mm_cmpeq_epi8(_mm_min_epu8(v, c1f), v));
			if (em == 0xffff && buf[i] == 0 &&
			    (j = nul_from(ps, i)) != i)
				i = j - 16;
			else if (em != 0 && window_events(ps, v, em, i) != 0)
				return LINE_BAD;
			continue;
		}
		/*
		 * every window with no blank or below: all base64
		 * characters? Every one, not every other: a wrapped run's
		 * lines of 31 characters or more then always show one,
		 * shorter ones most often.
		 */
		if (i < floor)
			continue;
		/* all from '+' to 'z' (as base64 characters and '=' are)? */
		x = _mm_sub_epi8(v, plus);
		if (_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_min_epu8(x, span), x)) == 0xffff &&
		    scan_run_mask16(buf + i, &hm) == 0xffff) {
			r = try_run(ps->sc, buf, len, i, floor, ps->depth,
			    ps->bg, ps->res, &ps->pz);
			if (r == LINE_BAD)
				return LINE_BAD;
			ps->run_floor = floor = r;
		}
	}
	return i;
}
#endif

#if defined(SCAN_AVX2) && defined(__SSE2__)
/*
 * text_skip by a byte loop: the first block of 64 from i, 64 bytes a
 * step, with a byte below 0x20, or with a window of 16 all from '+' to
 * 'z' when its last window starts from floor on; or the first not
 * whole.
 */
static size_t
text_skip_bytes(const unsigned char *p, size_t i, size_t n, size_t floor)
{
	size_t w, k, out, all;

	for (; i + 64 <= n; i += 64) {
		for (w = i, all = 1; w < i + 64; w += 16) {
			for (k = w, out = 0; k < w + 16; k++) {
				if (p[k] < 0x20)
					return i;
				out += p[k] < '+' || p[k] > 'z';
			}
			all &= out > 0;
		}
		if (!all && i + 48 >= floor)
			return i;
	}
	return i;
}
#endif

size_t
scan_decode_simd_differ(const unsigned char *p, size_t n)
{
	size_t bad = 0;
#if defined(SCAN_AVX2) && defined(__SSE2__)
	size_t i, k;

	for (i = 0; i <= n; i++)
		for (k = 0; k < 5; k++) {
			/* floors: none; at the first block's last window
			 * (it is tried from there on) and after its start;
			 * within the second block; beyond */
			static const size_t fo[5] = { 0, 48, 49, 111, 200 };
			size_t fl = k == 0 ? 0 : i + fo[k];

			bad += text_skip_avx2(p, i, n, fl) !=
				text_skip_sse2(p, i, n, fl) ||
			    text_skip_sse2(p, i, n, fl) !=
				text_skip_bytes(p, i, n, fl);
		}
#else
	(void)p;
	(void)n;
#endif
	return bad;
}

/* hex_bytes' bytes and out_byte's from a budget of left: do they differ? */
static int
hex_bytes_differ(const unsigned char *buf, const size_t *tok,
    const size_t *tlen, size_t nl, int rev, size_t left)
{
	struct scan_budget b1 = { 0 }, b2 = { 0 };
	struct out o1 = { 0 }, o2 = { 0 };
	size_t i, k, j, nb;
	int bad;

	b1.left = b2.left = left;
	o1.bg = &b1;
	o2.bg = &b2;
	hex_bytes(buf, tok, tlen, nl, rev, &o1);
	for (i = 0; i < nl; i++)
		for (k = 0, nb = tlen[i] / 2; k < nb; k++) {
			j = rev ? nb - 1 - k : k;
			out_byte(&o2,
			    (unsigned)(hexv[buf[tok[i] + 2 * j]] << 4 |
				hexv[buf[tok[i] + 2 * j + 1]]),
			    tok[i] + 2 * j);
		}
	bad = o1.n != o2.n || b1.left != b2.left || b1.hit != b2.hit ||
	    o1.full != o2.full || o1.oom || o2.oom ||
	    (o1.n > 0 &&
		(memcmp(o1.p, o2.p, o1.n) != 0 ||
		    memcmp(o1.map, o2.map, o1.n * sizeof(*o1.map)) != 0));
	out_free(&o1);
	out_free(&o2);
	return bad;
}

/* offset_value as it was: which reading, then the value in it. */
static int
offset_value_differs(const unsigned char *p, size_t len)
{
	unsigned long v = 0;
	size_t i;
	int octal = len == 7, oct;

	for (i = 0; i < len; i++)
		if (p[i] > '7')
			octal = 0;
	for (i = 0; i < len; i++)
		v = v * (octal ? 8 : 16) + (unsigned long)hexval(p[i]);
	return offset_value(p, len, &oct) != v || oct != octal;
}

size_t
scan_decode_hex_differ(const unsigned char *p, size_t n)
{
	size_t tok[2][MAX_LINE_BYTES], tlen[2][MAX_LINE_BYTES];
	size_t s, l, t, e0, e1, r0, r1, bad = 0;

	tables_init();
	for (s = 0; s < n; s++) {
		for (t = s; t < n && hexv[p[t]] >= 0;)
			t++;
		for (l = 1; l <= 12 && s + l <= n; l++)
			bad += offset_value_differs(p + s, l);
		for (l = 0; l <= 70 && s + l <= n; l++) {
			e0 = e1 = s;
			r0 = hex_tokens_slow(p, &e0, s + l, tok[0], tlen[0]);
			r1 = hex_tokens(p, n, &e1, s + l, tok[1], tlen[1]);
			if (r0 != r1 || (r0 != LINE_BAD && e0 != e1) ||
			    (r0 != LINE_BAD && r0 > 0 &&
				(memcmp(tok[0], tok[1], r0 * sizeof(size_t)) ||
				    memcmp(tlen[0], tlen[1],
					r0 * sizeof(size_t))))) {
				bad++;
				continue;
			}
			/* hex_first_bad: the byte loop fails too */
			if (hexv[p[s]] >= 0 && r0 != LINE_BAD &&
			    hex_first_bad(p, s, t, s + l))
				bad++;
			if (r0 == LINE_BAD || r0 == 0)
				continue;
			/* budgets short of the line, just enough, more */
			bad += hex_bytes_differ(p, tok[0], tlen[0], r0, 0,
			    (s + l) % 23);
			bad += hex_bytes_differ(p, tok[0], tlen[0], r0, 1,
			    (s * 7 + l) % 41);
			bad += hex_bytes_differ(p, tok[0], tlen[0], r0,
			    (int)(s % 2), 1000);
		}
	}
	return bad;
}

int
decode_pass(const struct scan *sc, const unsigned char *buf, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res)
{
	struct pass ps;
	size_t i = 0;

	tables_init();
	memset(&ps, 0, sizeof(ps));
	ps.sc = sc;
	ps.buf = buf;
	ps.n = len;
	ps.depth = depth;
	ps.bg = bg;
	ps.res = res;
	if (on_line(&ps, 0) != 0)
		return -1;
#ifdef __SSE2__
	if ((i = decode_windows(&ps)) == LINE_BAD)
		goto fail;
#endif
	for (; i < len; i++) {
		if (buf[i] < 0x20 && events1(&ps, i) != 0)
			goto fail;
		/* no run check here: a run worth decoding spans a window */
	}
	if (ps.pz.init)
		inflateEnd(&ps.pz.z);
	if (ps.pz.xinit)
		lzma_end(&ps.pz.x);
	return 0;
fail:
	if (ps.pz.init)
		inflateEnd(&ps.pz.z);
	if (ps.pz.xinit)
		lzma_end(&ps.pz.x);
	return -1;
}
