/*
 * The JSON string writer (see jsonw.h for the dialect). Strings are most
 * of a record (a request body is 85 KB and up): runs that need no escape
 * are found eight bytes at a time and copied whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"

/* SWAR constants: a byte of 1s and a byte of high bits, eight times. */
#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* The high bit of each byte of v that equals c, exactly. */
static inline uint64_t
eq_mask(uint64_t v, unsigned char c)
{
	uint64_t x = v ^ (ONES * c);

	return ~(((x & ~HIGHS) + ~HIGHS) | x) & HIGHS;
}

/* The high bit of each byte of v that the dialect escapes as a control:
 * below 0x20, or DEL. */
static inline uint64_t
ctl_mask(uint64_t v)
{
	return (~(((v & ~HIGHS) + ONES * (0x80 - 0x20)) | v) & HIGHS) |
	    eq_mask(v, 0x7f);
}

/* Whether any of the eight bytes in v needs an escape. */
static inline int
needs_escape8(uint64_t v)
{
	return (ctl_mask(v) | eq_mask(v, '"') | eq_mask(v, '\\')) != 0;
}

/* The short escape letter of c, or 0 when c takes \u00xx. */
static char
short_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return '"';
	case '\\':
		return '\\';
	case '\b':
		return 'b';
	case '\f':
		return 'f';
	case '\n':
		return 'n';
	case '\r':
		return 'r';
	case '\t':
		return 't';
	default:
		return 0;
	}
}

void
jw_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;
	char esc[6];

	buf_add(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c;

		/* Eight bytes at a time while none needs an escape. */
		while (n - i >= 8) {
			uint64_t v;

			memcpy(&v, s + i, 8);
			if (needs_escape8(v))
				break;
			i += 8;
		}
		if (i >= n)
			break;
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		buf_add(b, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		if ((esc[1] = short_escape(c)) != 0) {
			buf_add(b, esc, 2);
			continue;
		}
		memcpy(esc + 1, "u00", 3);
		esc[4] = hex[c >> 4];
		esc[5] = hex[c & 15];
		buf_add(b, esc, 6);
	}
	buf_add(b, s + run, n - run);
	buf_add(b, "\"", 1);
}

size_t
jw_latin1(const void *s, size_t n, char *out)
{
	const unsigned char *p = s;
	char *o = out;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] < 0x80) {
			*o++ = (char)p[i];
		} else {
			*o++ = (char)(0xc0 | (p[i] >> 6));
			*o++ = (char)(0x80 | (p[i] & 0x3f));
		}
	}
	return (size_t)(o - out);
}

void
jw_text(struct buf *b, const char *s, size_t n)
{
	char *u;

	if (jw_utf8_valid(s, n)) {
		jw_string(b, s, n);
		return;
	}
	if (n > SIZE_MAX / 2 - 1 || (u = malloc(2 * n + 1)) == NULL) {
		b->oom = 1;
		return;
	}
	jw_string(b, u, jw_latin1(s, n, u));
	free(u);
}

int
jw_utf8_scan(const void *p, size_t n, size_t *extra)
{
	const unsigned char *s = p;
	size_t i = 0, x = 0;

	while (i < n) {
		unsigned char c;
		size_t k;
		unsigned long cp;
		uint64_t v;

		while (n - i >= 8) { /* ASCII, eight bytes at a time */
			memcpy(&v, s + i, 8);
			if ((v & HIGHS) || (extra != NULL && ctl_mask(v)))
				break;
			i += 8;
		}
		if (i >= n)
			break;
		c = s[i];
		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				x += short_escape(c) ? 1 : 5;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (n - i <= k)
			return 0;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k + 1;
	}
	if (extra != NULL)
		*extra = x;
	return 1;
}

int
jw_utf8_valid(const void *s, size_t n)
{
	return jw_utf8_scan(s, n, NULL);
}

char *
jw_base64(const void *p, size_t n)
{
	static const char t[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = p;
	char *out, *o;
	size_t i;

	if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	out = malloc((n + 2) / 3 * 4 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	for (i = 0; i + 2 < n; i += 3) {
		*o++ = t[s[i] >> 2];
		*o++ = t[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
		*o++ = t[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)];
		*o++ = t[s[i + 2] & 63];
	}
	if (i < n) {
		*o++ = t[s[i] >> 2];
		if (i + 1 < n) {
			*o++ = t[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
			*o++ = t[(s[i + 1] & 15) << 2];
		} else {
			*o++ = t[(s[i] & 3) << 4];
			*o++ = '=';
		}
		*o++ = '=';
	}
	*o = '\0';
	return out;
}
