/*
 * Internals shared by the scanner's files (scan.c, scan_decode.c); not
 * part of the scanner's contract (scan.h).
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

#include "scan.h"

struct scan_budget {
	size_t left; /* decoded bytes still allowed */
	unsigned maxdepth;
	uint64_t work; /* work units still allowed (scan.h) */
	unsigned hit;  /* SCAN_BUDGET_* */
};

/* Spends n work units (down to none). */
static inline void
scan_budget_spend(struct scan_budget *bg, size_t n)
{
	bg->work = n < bg->work ? bg->work - n : 0;
}

/* Are the work units spent? Sets the hit bit when they are. */
int scan_budget_late(struct scan_budget *bg);

/*
 * Scans buf at depth (0: the caller's buffer) and appends its findings
 * to res, sorted and unique as scan_buffer gives them. Returns 0, or -1
 * when out of memory.
 */
int scan_at(const struct scan *sc, const unsigned char *buf, size_t len,
    unsigned depth, struct scan_budget *bg, struct scan_result *res);

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

#endif
