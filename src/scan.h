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

#define SCAN_MIN_SECRET 8     /* bytes; shorter secrets are refused */
#define SCAN_MAX_SECRET 65536 /* bytes */

/* scan_compile flags */
#define SCAN_PARTIAL 0x1 /* also prepare scan_partial() */

struct scan;

struct scan_secret {
	const void *bytes;
	size_t len;
};

struct scan_finding {
	size_t secret;	       /* index into the secrets given */
	const char *form;      /* "raw", "base64@1", "hex+wrapped", ... */
	size_t offset;	       /* in the scanned buffer */
	size_t length;	       /* bytes covered, line breaks included */
	unsigned pattern;      /* internal pattern number */
	unsigned char wrapped; /* found by the line-wrapped pass */
	unsigned char xform;   /* found through a transform (scan_xform.c) */
};

struct scan_result {
	struct scan_finding *v;
	size_t n, cap;
	unsigned budget; /* SCAN_BUDGET_*: what was cut */
};

/*
 * Decode-through budgets, per scan_buffer call (and per chunk of
 * scan_fd): decoded bytes at most SCAN_DECODE_FACTOR times the input plus
 * SCAN_DECODE_MIN, SCAN_DECODE_DEPTH levels of nesting, and
 * SCAN_DECODE_WORK_MIN plus SCAN_DECODE_WORK_PER_BYTE per input byte of
 * work units. A unit is one byte a decoder looked at, produced or handed
 * to a deeper scan: counted, never timed, so a verdict does not depend on
 * the machine's load (or on a sanitizer). When one stops a decoder, its
 * bit is set in scan_result.budget.
 */
#define SCAN_DECODE_FACTOR	  3
#define SCAN_DECODE_MIN		  (64u << 10)
#define SCAN_DECODE_DEPTH	  4
#define SCAN_DECODE_WORK_MIN	  (1u << 20)
#define SCAN_DECODE_WORK_PER_BYTE 16

#define SCAN_BUDGET_BYTES 0x1 /* a decoder's output was cut */
#define SCAN_BUDGET_DEPTH 0x2 /* a region was too deep to decode */
#define SCAN_BUDGET_WORK  0x4 /* decoding stopped: work units spent */

/* Longest raw fragment of one secret found by scan_partial. */
struct scan_fragment {
	size_t length;	      /* 0: nothing of at least the minimum */
	size_t offset;	      /* in the scanned buffer */
	size_t secret_offset; /* where the fragment starts in the secret */
};

/*
 * Compiles a scanner. partial_min is the shortest fragment scan_partial
 * reports, at least 4 (0 means SCAN_MIN_SECRET). Secrets are numbered from
 * 1 in messages. Returns 0 and sets *out, or -1 with a message in err
 * ("secret 2 is 5 bytes long, shorter than the minimum of 8"); running out
 * of memory is reported the same way.
 */
int scan_compile(struct scan **out, const struct scan_secret *secrets,
    size_t nsecrets, unsigned flags, size_t partial_min, char *err,
    size_t errlen);
void scan_free(struct scan *sc);

size_t scan_nsecrets(const struct scan *sc);

/*
 * Scans len bytes and appends every finding to res, sorted by offset,
 * then secret, then form; one finding per (secret, form, offset). Returns 0,
 * or -1 when out of memory (res keeps what it had).
 */
int scan_buffer(const struct scan *sc, const void *buf, size_t len,
    struct scan_result *res);
void scan_result_free(struct scan_result *res);

/*
 * The same over everything read from fd (to its end), in chunks (a
 * regular file up to SCAN_FD_WHOLE in one): the
 * findings are those scan_buffer would give for the whole contents,
 * offsets from where reading began. Returns 0, or -1 with errno set (a
 * read error, or ENOMEM); res keeps what was found before the error.
 */
int scan_fd(const struct scan *sc, int fd, struct scan_result *res);

/* Regular files up to this size are read and scanned whole by scan_fd. */
#define SCAN_FD_WHOLE (16u << 20)

/*
 * For each secret, the longest substring (at least the compiled minimum)
 * found raw in buf; frags has scan_nsecrets() entries and is overwritten.
 * Returns 0, or -1 when the scanner was compiled without SCAN_PARTIAL.
 */
int scan_partial(const struct scan *sc, const void *buf, size_t len,
    struct scan_fragment *frags);

/*
 * Pieces ("split"): a secret none of whose whole forms is in a channel,
 * but all of whose bytes are, in order, in two or more fragments of at
 * least SCAN_SPLIT_MIN bytes each: raw, or decoded from a base64 or hex
 * run (head -c 20 then tail -c +21, each piece base64'd, ...). Fragments
 * may lie in different segments (requests, tool results) of the channel;
 * "in order" means each fragment lies after the one before it, counting
 * segments in the order they were added. 8 is the shortest fragment that
 * keeps the near-miss controls (a secret one byte off, a prefix, another
 * secret sharing its prefix, random hex and base64 dumps) at zero: with 4,
 * random hex text covers a hex secret (spec/unit/test_scan.c).
 *
 * scan_split_new copies what it needs of the scanner (which may then be
 * freed); scan_split_add scans one segment; scan_split_result gives, for
 * one secret, the fragments of the first covering chain found (in channel
 * order) or none. The array stays valid until the next add or the free.
 */
#define SCAN_SPLIT_MIN	      8
#define SCAN_SPLIT_MAX_PIECES 8192 /* per secret; more are dropped */

struct scan_piece {
	size_t segment; /* the caller's number */
	size_t offset;	/* in the segment (a run's start) */
	size_t length;	/* bytes of the secret */
	size_t secret_offset;
	const char *form; /* "raw", "base64" or "hex" */
};

struct scan_split;

int scan_split_new(struct scan_split **out, const struct scan *sc,
    size_t min_piece);
int scan_split_add(struct scan_split *sp, const void *buf, size_t len,
    size_t segment);
int scan_split_result(struct scan_split *sp, size_t secret,
    const struct scan_piece **v, size_t *n);
void scan_split_free(struct scan_split *sp);

/*
 * DNS labels ("egress"): a secret's encoding spread over the labels of
 * the names looked up, in the order given. The labels of each name are
 * joined without dots, with the last 0 to 3 labels (the domain) left off
 * and a leading all-digit label (a sequence number) with or without; the
 * names are joined in order (a name repeated at once counts once); the
 * result is scanned as it is and upper-cased (base32 and hex in any
 * case). Findings get forms "dns>FORM", offset = index of the first name
 * the match touches and length = how many names it spans. Returns 0, or
 * -1 when out of memory.
 */
int scan_dns(const struct scan *sc, const char *const *names,
    const size_t *lens, size_t n, struct scan_result *res);

/* The patterns, for tools and benchmarks (grep -F -f comparisons). */
size_t scan_npatterns(const struct scan *sc);
void scan_pattern(const struct scan *sc, size_t i, const unsigned char **p,
    size_t *len, size_t *secret, const char **form);

/* The most bytes a finding can cover (a wrapped one included). */
size_t scan_maxspan(const struct scan *sc);

/* A NULL-terminated list of the form families, for documentation. */
extern const char *const scan_forms[];

/* out gets the first 8 hex digits of SHA-256(secret) and a NUL. */
void scan_hash8(const void *secret, size_t len, char out[9]);

/*
 * The secret as reports may show it: its first two characters (printable
 * ASCII, else '?'), an ellipsis, its length: "sk…40". malloc'd; NULL when
 * out of memory.
 */
char *scan_mask(const void *secret, size_t len);

/*
 * A printable snippet of ctx bytes either side of finding f[which] (f
 * sorted by offset, as scan_buffer gives it), with every finding of f
 * that overlaps the window replaced by «secret:HASH»,
 * any fragment of 4 or more bytes of a secret replaced by '*', and other
 * bytes escaped (\n, \t, \xNN). malloc'd; NULL when out of memory.
 */
char *scan_snippet(const struct scan *sc, const void *buf, size_t len,
    const struct scan_finding *f, size_t nf, size_t which, size_t ctx);

#endif
