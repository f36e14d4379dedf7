/*
 * Internals shared by the scanner's files (scan.c, scan_decode.c,
 * scan_xform.c, scan_dns.c); not part of the scanner's contract (scan.h).
 *
 * Decode-through: scan_at() scans one buffer at a nesting depth with
 * every literal form, then decode_pass() finds candidate regions in it
 * (dumps, byte lists, uuencoded blocks, compressed streams, long base64
 * or hex runs), decodes each and scans the result with scan_at() one
 * level deeper. One budget is shared by the whole tree of one top-level
 * scan: decoded bytes, depth and work units; what was cut short is said in
 * the budget's hit bits (SCAN_BUDGET_*).
 */
#ifndef LEAKBENCH_SCAN_INT_H
#define LEAKBENCH_SCAN_INT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
/* A kernel compiled for AVX2, called where scan_avx2 is set. */
#define SCAN_AVX2 __attribute__((target("avx2,bmi2,popcnt")))
#endif

#include "scan.h"

/*
 * Kernels: the passes' tests of 64 bytes at a time (the transform pass's
 * runs and specials, the decode pass's text, the wrapped pass's breaks)
 * have an AVX2 version beside the SSE2 one (a byte loop without SSE2),
 * which takes 32 bytes an instruction and does without SSE2's register
 * copies; each steps over the blocks where its pass has nothing to do. Each gives the
 * same answers as the SSE2 one; scan_simd_differ counts where they do
 * not, for tests. scan_avx2 is set once from the CPU (scan_simd_init,
 * from scan_compile); scan_simd_set(0) turns the AVX2 kernels off, for
 * tests, and returns whether they are on.
 */
extern int scan_avx2;
void scan_simd_init(void);
int scan_simd_set(int on);

/*
 * The kernels of scan.c, scan_decode.c and scan_xform.c at every offset
 * of p[0..n), with AVX2 and without (and xor_text_keys' trial of a key,
 * worth()'s magics, NULs and high bytes and a run's key, 8 or 16 bytes
 * at a time and a byte at a time): how many answers differ (0 without
 * AVX2).
 */
size_t scan_simd_differ(const unsigned char *p, size_t n);
size_t scan_decode_simd_differ(const unsigned char *p, size_t n);

/*
 * The decode pass steps over windows of 16 NULs where their events would
 * be none (on: as it does; off, for tests: each window as any other);
 * returns whether it did.
 */
int scan_decode_nul_skip(int on);

/*
 * The decode pass's reading of a hex dump line's data (its tokens, from
 * masks of 64 bytes, the check of its first token, and their bytes, all
 * at once; an offset column's value, both readings in one loop) against
 * its byte loops, from every offset of p[0..n) for every length up to
 * 70, the bytes from budgets short of them and not: how many answers
 * differ.
 */
size_t scan_decode_hex_differ(const unsigned char *p, size_t n);
size_t scan_xform_simd_differ(const unsigned char *p, size_t n);

/*
 * The AVX2 walks along a class (scan_b64_span_avx2, and its hex digits)
 * against byte loops, from every start of p[0..n) 32 bytes or more
 * before an end, for the ends from n - 40 to n: how many answers differ
 * (0 without AVX2).
 */
size_t scan_span_differ(const unsigned char *p, size_t n);

/* Is a 16-bit lane of m (four of them) all ones? */
static inline int
scan_lane_full(uint64_t m)
{
	uint64_t x = ~m;
	/* a lane of x not zero: its low 15 bits carry into its top bit */
	uint64_t nz = ((x & 0x7fff7fff7fff7fffu) + 0x7fff7fff7fff7fffu) | x;

	return (nz & 0x8000800080008000u) != 0x8000800080008000u;
}

/* Is a 16-bit lane of m (four of them) zero? */
static inline int
scan_lane_empty(uint64_t m)
{
	return scan_lane_full(~m);
}

/*
 * Runs the transform pass has already decoded at the top level (the wire
 * resends the whole conversation with every request, so the same runs
 * come back): by their bytes, what decoding one gave (its findings, at
 * offsets from the run's start) and what it cost. A run seen again is not
 * decoded again: its findings are reported at its own place and its cost
 * is spent again, so the findings and the budgets are those of decoding
 * it (scan_xform.c). Zeroed to start; scan_memo_clear frees it.
 */
struct memo_slot;
struct memo_ent;

#define SCAN_MEMO_TAGS	 3   /* scan_memo_run's tags: 0 to 2 */
#define SCAN_MEMO_RECENT 128 /* runs found by hash remembered, by tag */

struct scan_memo {
	struct memo_slot *slot; /* a hash table of the entries */
	size_t nslot;
	struct memo_ent *ent;
	size_t nent, capent;
	unsigned char *bytes; /* the runs' bytes, one after another */
	size_t nbytes, capbytes;
	struct scan_finding *f; /* their findings */
	size_t nf, capf;
	uint64_t seed;
	int full;			/* no more runs are kept */
	size_t next[SCAN_MEMO_TAGS][2]; /* by tag: entries to try first */
	/* by tag and a key of a run's ends: a check << 32 | an entry + 1 */
	uint64_t recent[SCAN_MEMO_TAGS][SCAN_MEMO_RECENT];
};

void scan_memo_clear(struct scan_memo *m);

/*
 * The memo's compare of two runs' bytes against a byte loop, for every
 * length up to 72 and every two offsets of p[0..n): how many answers
 * differ.
 */
size_t scan_memo_same_differ(const unsigned char *p, size_t n);

struct scan_budget;

/*
 * fn(ctx, s, e) decodes the run buf[s..e) and pushes its findings to res;
 * scan_memo_run calls it through bg->memo (not NULL): a run with the same
 * bytes and tag seen before gives its findings again at s, and spends
 * what it spent. Returns fn's result, or -1 when out of memory.
 */
int scan_memo_run(struct scan_budget *bg, const unsigned char *buf, size_t s,
    size_t e, unsigned tag, struct scan_result *res,
    int (*fn)(void *ctx, size_t s, size_t e), void *ctx);

/* Appends *f to res (grown as needed). Returns 0, or -1 when out of memory. */
int scan_res_push(struct scan_result *res, const struct scan_finding *f);

/*
 * scan_buffer with memo (kept from call to call: scan_fd's chunks), or
 * with none (NULL: every run decoded, for tests that compare).
 */
int scan_buffer_memo(const struct scan *sc, const void *data, size_t len,
    struct scan_result *res, struct scan_memo *memo);

struct scan_budget {
	size_t left; /* decoded bytes still allowed */
	unsigned maxdepth;
	uint64_t work;		/* work units still allowed (scan.h) */
	unsigned hit;		/* SCAN_BUDGET_* */
	struct scan_memo *memo; /* or NULL */
};

/* Spends n work units (down to none). */
static inline void
scan_budget_spend(struct scan_budget *bg, size_t n)
{
	bg->work = n < bg->work ? bg->work - n : 0;
}

/*
 * Are the work units spent? Sets the hit bit when they are. Inline: the
 * transform pass asks before each run it decodes (one every few hundred
 * bytes of text), where the call cost more than the test.
 */
static inline int
scan_budget_late(struct scan_budget *bg)
{
	if (bg->work > 0)
		return 0;
	bg->hit |= SCAN_BUDGET_WORK;
	return 1;
}

/*
 * Scans buf at depth (0: the caller's buffer) and appends its findings
 * to res, sorted and unique as scan_buffer gives them. Returns 0, or -1
 * when out of memory.
 */
int scan_at(const struct scan *sc, const unsigned char *buf, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res);

/*
 * The literal forms alone (and their line-wrapped runs) in buf, nothing
 * decoded: for bytes no decoder reads (random-looking bytes a radix gave,
 * which may still hold a binary secret as it is). Returns 0, or -1 when
 * out of memory.
 */
int scan_lit(const struct scan *sc, const unsigned char *buf, size_t len,
    struct scan_result *res);

/*
 * Could scan_lit find anything in p[0..n)? 0 when no sampled gram is a
 * pattern's and no line break starts a wrapped run: exact, and a few
 * operations per sample.
 */
int scan_lit_maybe(const struct scan *sc, const unsigned char *p, size_t n);

/*
 * Finds, decodes and scans the decodable regions of buf (see above);
 * appends findings, unsorted, with forms "DECODER>FORM" and offsets in
 * buf. Returns 0, or -1 when out of memory.
 */
int decode_pass(const struct scan *sc, const unsigned char *buf, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res);

/*
 * "outer>inner", interned for the life of the process (form strings of
 * findings must outlive them); "decoded" when the table is full or memory
 * runs out.
 */
const char *scan_form_join(const char *outer, const char *inner);

/*
 * Triggers (built by scan_compile from the patterns): what a transform of
 * scan_xform.c looks for in a run before it undoes itself there.
 *   TRIG_SIG    rotation signature (scan_rot_sig) of a pattern, from
 *               after its first letter: any rot-N over letters
 *   TRIG_REV    a pattern reversed
 *   TRIG_R47    a pattern under rot47
 *   TRIG_DELTA  a secret's XOR delta (b[i] ^ b[i+1]): any one-byte key
 * TRIG_SIG | TRIG_REV and TRIG_R47 | TRIG_REV are the same of a pattern
 * reversed (two transforms in a row: the run is reversed, and the rest
 * found one level deeper). orig is the pattern untransformed; skip is
 * where the trigger starts in it.
 *
 * Group triggers, a matcher of their own (scan_group_scan):
 *   TRIG_GREV   the whole K-byte groups of a pattern in reverse order
 *               (fold -wK | tac | tr -d '\n'), K = group, 2..8
 *   TRIG_GSWAP  the same groups each reversed in place (byteswapK)
 * skip is the phase: the pattern's bytes before its first whole group;
 * the groups after it (two at least) are the trigger. radix: the pattern
 * is a base64 middle (GREV of quartets), whose partial digits lie in the
 * groups on either side.
 */
enum {
	TRIG_SIG = 1,
	TRIG_REV = 2,
	TRIG_R47 = 4,
	TRIG_DELTA = 8,
	TRIG_GREV = 16,
	TRIG_GSWAP = 32
};

struct scan_trig {
	unsigned kind;
	size_t secret;
	const unsigned char *orig;
	size_t origlen, skip;
	size_t off, len;	    /* the trigger's bytes, in the scanner */
	unsigned char group, radix; /* group triggers only */
	unsigned char tdig;	    /* a radix's partial digit after it */
};

typedef int (*scan_trig_cb)(void *ctx, const struct scan_trig *t, size_t pos);

/*
 * Calls cb for every trigger of a kind in kinds found in p[0..n); one
 * with TRIG_SIG only when kinds has TRIG_SIG (p is a signature).
 */
int scan_trig_scan(const struct scan *sc, const unsigned char *p, size_t n,
    unsigned kinds, scan_trig_cb cb, void *ctx);

/*
 * Calls cb for every group trigger found in p[0..n). scan_group_hex: is
 * some group trigger all hex digits (a run of hex digits may hold one)?
 */
int scan_group_scan(const struct scan *sc, const unsigned char *p, size_t n,
    scan_trig_cb cb, void *ctx);
int scan_group_hex(const struct scan *sc);

/*
 * Could scan_trig_scan over p[0..n) (over its rotation signature when sig
 * is set) find a trigger? 0 when none of the grams the trigger matcher
 * samples there is a trigger's: exact, and a few operations per sample
 * (one every few bytes) where the scan computes the signature of every
 * byte first.
 */
int scan_trig_maybe(const struct scan *sc, const unsigned char *p, size_t n,
    int sig);

/*
 * scan_trig_maybe over the signature of p[s..s+l) (its grams computed as
 * it samples them) against the grams of scan_rot_sig's signature, for
 * every offset s and every length l up to 72: how many answers differ;
 * *hits counts those that could find a trigger.
 */
size_t scan_trig_differ(const struct scan *sc, const unsigned char *p, size_t n,
    size_t *hits);

const unsigned char *scan_secret_bytes(const struct scan *sc, size_t i,
    size_t *len);

/* The length of the shortest secret (SCAN_MIN_SECRET at least). */
size_t scan_min_secret(const struct scan *sc);

/*
 * The rotation signature of p[0..n) into out (n bytes): a letter becomes
 * its distance from the letter before it (mod 26, 'a'+d or 'A'+d in its
 * own case), the first letter 0x01, other bytes stay. Any rot-N over
 * letters leaves it unchanged.
 */
void scan_rot_sig(const unsigned char *p, size_t n, unsigned char *out);

static inline int
scan_is_letter(unsigned c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

/*
 * Bit k set when p[k] is a base64 character (either alphabet) or '=':
 * what the wrapped pass (enc_char) and the decode pass (runch) take for
 * a run, 16 at a time for their loops along a run; *hexmask: bit k set
 * when p[k] is a hex digit (either case). 0 and 0 without SSE2 (the
 * callers' byte loops then do it all). A caller that drops *hexmask (as
 * scan_b64_mask16 does) has its compares left out when this is inlined.
 */
static inline unsigned
scan_run_mask16(const unsigned char *p, unsigned *hexmask)
{
#ifdef __SSE2__
	const __m128i z = _mm_setzero_si128();
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i x = _mm_or_si128(v, _mm_set1_epi8(0x20)); /* letters: lower */
	__m128i dig = _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(v,
						       _mm_set1_epi8('0')),
					 _mm_set1_epi8(9)),
	    z);
	__m128i let = _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(x,
						       _mm_set1_epi8('a')),
					 _mm_set1_epi8(25)),
	    z);
	__m128i hx = _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(x,
						      _mm_set1_epi8('a')),
					_mm_set1_epi8(5)),
	    z);
	__m128i sp = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v,
						   _mm_set1_epi8('+')),
				      _mm_cmpeq_epi8(v, _mm_set1_epi8('/'))),
	    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('-')),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8('_'))),
		_mm_cmpeq_epi8(v, _mm_set1_epi8('='))));

	*hexmask = (unsigned)_mm_movemask_epi8(_mm_or_si128(dig, hx));
	return (unsigned)_mm_movemask_epi8(
	    _mm_or_si128(_mm_or_si128(dig, let), sp));
#else
	(void)p;
	*hexmask = 0;
	return 0;
#endif
}

/* scan_run_mask16 without the hex digits. */
static inline unsigned
scan_b64_mask16(const unsigned char *p)
{
	unsigned hm;

	return scan_run_mask16(p, &hm);
}

/* Whether the 16 bytes at p are all base64 characters or '='. */
static inline int
scan_b64_all16(const unsigned char *p)
{
	return scan_b64_mask16(p) == 0xffff;
}

/*
 * Where the stretch of characters of a class (tab[c] set) from i ends,
 * not past n: 16 at a time while mask16 (the same class, bit k for p[k])
 * has all of them, to the first clear bit of the first window that has
 * not, then a byte at a time (the last 15 bytes; all of them where mask16
 * is 0, without SSE2). The walks along a run of the wrapped pass, the
 * decode pass and the transform pass.
 */
static inline size_t
scan_span16(const unsigned char *buf, size_t i, size_t n,
    unsigned (*mask16)(const unsigned char *), const unsigned char *tab)
{
	unsigned m = 0;

	while (i + 16 <= n && (m = mask16(buf + i)) == 0xffff)
		i += 16;
	if (i + 16 <= n) /* to the window's first other byte */
		i += (size_t)__builtin_ctz(~m);
	while (i < n && tab[buf[i]])
		i++;
	return i;
}

#ifdef SCAN_AVX2
/*
 * scan_span16 over scan_run_mask16's class (base64 characters, either
 * alphabet, and '='; runch, enc_char) from i, where i + 32 <= n: 32
 * bytes at a time, each byte's class looked up by its two halves (two
 * table shuffles), the last 32 before n read again for the tail.
 * scan_b64_hex_span_avx2 also clears *hex when a character of the
 * stretch is no hex digit (either case).
 */
size_t scan_b64_span_avx2(const unsigned char *buf, size_t i, size_t n);
size_t scan_b64_hex_span_avx2(const unsigned char *buf, size_t i, size_t n,
    int *hex);
#endif

/*
 * Where the stretch of base64 characters or '=' from i ends, not past n
 * (tab: the class's table, for the byte loop): scan_b64_span_avx2 where
 * 32 bytes may be read, scan_span16 else.
 */
static inline size_t
scan_b64_span(const unsigned char *buf, size_t i, size_t n,
    const unsigned char *tab)
{
#ifdef SCAN_AVX2
	if (scan_avx2 && i + 32 <= n)
		return scan_b64_span_avx2(buf, i, n);
#endif
	return scan_span16(buf, i, n, scan_b64_mask16, tab);
}

/*
 * The transforms (scan_xform.c): runs and regions of buf decoded by
 * every transform that fits, each scanned one level deeper; findings
 * "TRANSFORM>FORM", covering the run. Returns 0, or -1 when out of memory.
 */
int xform_pass(const struct scan *sc, const unsigned char *buf, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res);

#endif
