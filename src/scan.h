/*
 * The leak scanner: finds secrets in any bytes, in every form a reader
 * could undo. Pure C, no Lua.
 *
 * A scanner is compiled once from N secrets (any bytes, NUL and UTF-8
 * included, at least SCAN_MIN_SECRET long). Each secret becomes a set of
 * literal patterns, one per encoded variant ("forms": raw, the JSON escape
 * dialects, base64 and base32 at every byte alignment, hex, percent
 * encoding, reversed, ...; scan_forms lists the families). All patterns
 * are matched in one pass over the data by a sampled q-gram filter with
 * exact verification; a second pass joins line-wrapped base64/hex runs
 * (real or JSON-escaped line breaks) so wrapped encodings are found too.
 * A radix match (base64, base32) is only reported when every bit of the
 * secret is present: the partial characters at both ends are checked, so a
 * secret one character off never matches.
 *
 * Invariants: findings never hold secret bytes, only indexes, form names
 * (static for the scanner's life), offsets and lengths. Reports print a
 * secret only as scan_mask() and scan_hash8() make it.
 *
 * Ownership: scan_compile returns a scanner freed by scan_free. A struct
 * scan_result is owned by the caller: zero it, pass it to scan_buffer (which
 * appends), free its array with scan_result_free. Form strings belong to
 * the scanner. Strings returned by scan_mask/scan_snippet are malloc'd and
 * freed by the caller.
 */
#ifndef LEAKBENCH_SCAN_H
#define LEAKBENCH_SCAN_H

#include <stddef.h>

#define SCAN_MIN_SECRET	8		/* bytes; shorter secrets are refused */
#define SCAN_MAX_SECRET	65536		/* bytes */

/* scan_compile flags */
#define SCAN_PARTIAL	0x1		/* also prepare scan_partial() */

struct scan;

struct scan_secret {
	const void	*bytes;
	size_t		 len;
};

struct scan_finding {
	size_t		 secret;	/* index into the secrets given */
	const char	*form;		/* "raw", "base64@1", "hex+wrapped", ... */
	size_t		 offset;	/* in the scanned buffer */
	size_t		 length;	/* bytes covered, line breaks included */
	unsigned	 pattern;	/* internal pattern number */
	unsigned char	 wrapped;	/* found by the line-wrapped pass */
};

struct scan_result {
	struct scan_finding	*v;
	size_t			 n, cap;
	unsigned		 budget;	/* SCAN_BUDGET_*: what was cut */
};

/*
 * Decode-through budgets, per scan_buffer call (and per chunk of
 * scan_fd): decoded bytes at most SCAN_DECODE_FACTOR times the input plus
 * SCAN_DECODE_MIN, SCAN_DECODE_DEPTH levels of nesting, and
 * SCAN_DECODE_NS_MIN plus SCAN_DECODE_NS_PER_BYTE per input byte of wall
 * time. When one stops a decoder, its bit is set in scan_result.budget.
 */
#define SCAN_DECODE_FACTOR	4
#define SCAN_DECODE_MIN		(256u << 10)
#define SCAN_DECODE_DEPTH	4
#define SCAN_DECODE_NS_MIN	5000000u	/* 5 ms */
#define SCAN_DECODE_NS_PER_BYTE	6

#define SCAN_BUDGET_BYTES	0x1	/* a decoder's output was cut */
#define SCAN_BUDGET_DEPTH	0x2	/* a region was too deep to decode */
#define SCAN_BUDGET_TIME	0x4	/* decoding stopped for time */

/* Longest raw fragment of one secret found by scan_partial. */
struct scan_fragment {
	size_t	length;		/* 0: nothing of at least the minimum */
	size_t	offset;		/* in the scanned buffer */
	size_t	secret_offset;	/* where the fragment starts in the secret */
};

/*
 * Compiles a scanner. partial_min is the shortest fragment scan_partial
 * reports, at least 4 (0 means SCAN_MIN_SECRET). Secrets are numbered from
 * 1 in messages. Returns 0 and sets *out, or -1 with a message in err
 * ("secret 2 is 5 bytes long, shorter than the minimum of 8"); running out
 * of memory is reported the same way.
 */
int	 scan_compile(struct scan **out, const struct scan_secret *secrets,
	    size_t nsecrets, unsigned flags, size_t partial_min,
	    char *err, size_t errlen);
void	 scan_free(struct scan *sc);

size_t	 scan_nsecrets(const struct scan *sc);

/*
 * Scans len bytes and appends every finding to res, sorted by offset,
 * then secret, then form; one finding per (secret, form, offset). Returns 0,
 * or -1 when out of memory (res keeps what it had).
 */
int	 scan_buffer(const struct scan *sc, const void *buf, size_t len,
	    struct scan_result *res);
void	 scan_result_free(struct scan_result *res);

/*
 * The same over everything read from fd (to its end), in chunks: the
 * findings are those scan_buffer would give for the whole contents,
 * offsets from where reading began. Returns 0, or -1 with errno set (a
 * read error, or ENOMEM); res keeps what was found before the error.
 */
int	 scan_fd(const struct scan *sc, int fd, struct scan_result *res);

/*
 * For each secret, the longest substring (at least the compiled minimum)
 * found raw in buf; frags has scan_nsecrets() entries and is overwritten.
 * Returns 0, or -1 when the scanner was compiled without SCAN_PARTIAL.
 */
int	 scan_partial(const struct scan *sc, const void *buf, size_t len,
	    struct scan_fragment *frags);

/* The patterns, for tools and benchmarks (grep -F -f comparisons). */
size_t	 scan_npatterns(const struct scan *sc);
void	 scan_pattern(const struct scan *sc, size_t i, const unsigned char **p,
	    size_t *len, size_t *secret, const char **form);

/* The most bytes a finding can cover (a wrapped one included). */
size_t	 scan_maxspan(const struct scan *sc);

/* A NULL-terminated list of the form families, for documentation. */
extern const char *const scan_forms[];

/* out gets the first 8 hex digits of SHA-256(secret) and a NUL. */
void	 scan_hash8(const void *secret, size_t len, char out[9]);

/*
 * The secret as reports may show it: its first two characters (printable
 * ASCII, else '?'), an ellipsis, its length: "sk…40". malloc'd; NULL when
 * out of memory.
 */
char	*scan_mask(const void *secret, size_t len);

/*
 * A printable snippet of ctx bytes either side of finding f[which] (f
 * sorted by offset, as scan_buffer gives it), with every finding of f
 * that overlaps the window replaced by «secret:HASH»,
 * any fragment of 4 or more bytes of a secret replaced by '*', and other
 * bytes escaped (\n, \t, \xNN). malloc'd; NULL when out of memory.
 */
char	*scan_snippet(const struct scan *sc, const void *buf, size_t len,
	    const struct scan_finding *f, size_t nf, size_t which, size_t ctx);

#endif
