/*
 * The one JSON string writer of the C side: how the records (the proxy's
 * wire.jsonl, the trap's egress.jsonl) write a string, and the byte-level
 * helpers they share (UTF-8 validation, Latin-1 text, base64). No Lua, no
 * jansson.
 *
 * The dialect, chosen once and pinned by spec/unit/test_common.c; it is
 * also what src/lua/json.lua writes:
 *
 *	"  \    as \" and \\
 *	BS FF LF CR TAB  as \b \f \n \r \t
 *	every other byte below 0x20, and DEL (0x7f), as \u00xx (lowercase hex)
 *	everything else as it is: '/' and UTF-8 are never escaped
 *
 * So a line of records holds no control byte at all: printed to a terminal
 * it cannot move the cursor or ring the bell. A string is written as
 * UTF-8 only when it is valid UTF-8 (jw_string's caller checks, or uses
 * jw_text, which reads invalid bytes as Latin-1).
 *
 * Ownership: the writers append to the caller's struct buf (buf.h); an
 * append that runs out of memory sets its oom flag. jw_base64 returns
 * malloc'd text the caller frees.
 */
#ifndef LEAKBENCH_COMMON_JSONW_H
#define LEAKBENCH_COMMON_JSONW_H

#include <stddef.h>

#include "common/buf.h"

/* Appends s[0..n), valid UTF-8, as a quoted JSON string in the dialect. */
void jw_string(struct buf *b, const char *s, size_t n);

/* Same for text that may not be UTF-8: when it is not, each byte is read as
 * Latin-1 (so 0xe9 becomes U+00E9). */
void jw_text(struct buf *b, const char *s, size_t n);

/*
 * Whether s[0..n) is valid UTF-8 (no overlong forms, no surrogates, at
 * most U+10FFFF). With extra not NULL, also the bytes the dialect's
 * escapes of its control bytes and DEL add to n (1 for a short escape, 5
 * for \u00xx), in the same pass; quotes and backslashes, which add one
 * byte each, are not counted.
 */
int jw_utf8_scan(const void *s, size_t n, size_t *extra);

/* jw_utf8_scan without the count. */
int jw_utf8_valid(const void *s, size_t n);

/*
 * Writes s[0..n) read as Latin-1 to out as UTF-8 (at most 2n bytes);
 * returns the length written. out may not overlap s.
 */
size_t jw_latin1(const void *s, size_t n, char *out);

/* Standard base64 with padding, NUL-terminated, malloc'd; NULL on OOM. */
char *jw_base64(const void *s, size_t n);

#endif
