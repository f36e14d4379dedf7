/*
 * libFuzzer target for decode-through (src/scan_decode.c), the pieces
 * and the DNS labels. The first byte picks a frame put before the rest
 * of the input, so the fuzzer reaches each decoder's inner loop: none
 * (dumps, lists, base85 lines, runs), a gzip, zlib, bzip2, xz or zip
 * header, an od or xxd line, "begin 644 x\n" (uuencode), "<~" (Ascii85),
 * a base64 gzip prefix ("H4sI"). The framed data is scanned by a scanner
 * of three fixed secrets; the input's lines are also given to scan_dns
 * as names and its NUL-separated parts to a splitter as segments.
 * Invariants: findings lie inside the data and are sorted by offset;
 * every raw occurrence of a secret is found; a DNS finding names names
 * that exist; a split chain covers its secret in order, each piece of at
 * least SCAN_SPLIT_MIN bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define F1 "sk-live-0123456789abcdef"
#define F2 "p\"w/\xc3\xa9&<>\\x'\n\xf0\x9f\x98\x80"
#define F3 "\x00\xff\xfb\xef\xbe\x01\x02\x03"

static const struct scan_secret fixed_sec[3] = {
	{ F1, sizeof(F1) - 1 },
	{ F2, sizeof(F2) - 1 },
	{ F3, sizeof(F3) - 1 },
};

static const struct {
	const char *p;
	size_t n;
} frames[] = {
	{ "", 0 },
	{ "\x1f\x8b\x08\0\0\0\0\0\0\x03", 10 },
	{ "\x78\x9c", 2 },
	{ "BZh91AY&SY", 10 },
	{ "\xfd"
	  "7zXZ\0\0\x04\xe6\xd6\xb4\x46",
	    12 },
	{ "PK\x03\x04\x14\0\0\0\x08\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
	  "\0\0",
	    30 },
	{ "0000000 6b73 6c2d ", 18 },
	{ "00000000: 736b 2d6c  ", 21 },
	{ "begin 644 x\n", 12 },
	{ "<~", 2 },
	{ "H4sI", 4 },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct scan *sc;
	struct scan_result r = { 0 };
	struct scan_split *sp;
	const struct scan_piece *pv;
	unsigned char *buf;
	const char *names[64];
	size_t lens[64], nn = 0, i, k, n, f, seg, start, np;
	char err[256];

	if (size < 1)
		return 0;
	if (sc == NULL &&
	    scan_compile(&sc, fixed_sec, 3, 0, 0, err, sizeof(err)) != 0)
		abort();
	f = data[0] % (sizeof(frames) / sizeof(frames[0]));
	n = frames[f].n + size - 1;
	if ((buf = malloc(n + 1)) == NULL)
		return 0;
	memcpy(buf, frames[f].p, frames[f].n);
	memcpy(buf + frames[f].n, data + 1, size - 1);

	if (scan_buffer(sc, buf, n, &r) != 0)
		abort();
	for (i = 0; i < r.n; i++) {
		if (r.v[i].offset > n || r.v[i].length > n - r.v[i].offset)
			abort();
		if (i > 0 && r.v[i].offset < r.v[i - 1].offset)
			abort();
	}
	for (k = 0; k < 3; k++)
		for (i = 0; i + fixed_sec[k].len <= n; i++)
			if (memcmp(buf + i, fixed_sec[k].bytes,
				fixed_sec[k].len) == 0) {
				size_t j;
				int found = 0;

				for (j = 0; j < r.n; j++)
					if (r.v[j].secret == k &&
					    r.v[j].offset == i &&
					    strcmp(r.v[j].form, "raw") == 0)
						found = 1;
				if (!found)
					abort();
			}
	scan_result_free(&r);

	/* the lines as DNS names */
	for (start = 0, i = 0; i <= n && nn < 64; i++)
		if (i == n || buf[i] == '\n') {
			names[nn] = (const char *)buf + start;
			lens[nn] = i - start;
			nn++;
			start = i + 1;
		}
	if (scan_dns(sc, names, lens, nn, &r) != 0)
		abort();
	for (i = 0; i < r.n; i++)
		if (r.v[i].offset >= nn || r.v[i].length == 0 ||
		    r.v[i].length > nn - r.v[i].offset)
			abort();
	scan_result_free(&r);

	/* NUL-separated parts as a channel's segments */
	if (scan_split_new(&sp, sc, 0) != 0)
		abort();
	for (start = 0, seg = 0, i = 0; i <= n; i++)
		if (i == n || buf[i] == '\0') {
			if (scan_split_add(sp, buf + start, i - start, seg++) !=
			    0)
				abort();
			start = i + 1;
		}
	for (k = 0; k < 3; k++) {
		size_t reach = 0;

		if (scan_split_result(sp, k, &pv, &np) < 0)
			abort();
		for (i = 0; i < np; i++) {
			if (pv[i].length < SCAN_SPLIT_MIN ||
			    pv[i].secret_offset > reach ||
			    pv[i].secret_offset + pv[i].length >
				fixed_sec[k].len)
				abort();
			if (i > 0 && pv[i].segment < pv[i - 1].segment)
				abort();
			reach = pv[i].secret_offset + pv[i].length;
		}
		if (np > 0 && (np < 2 || reach != fixed_sec[k].len))
			abort();
	}
	scan_split_free(sp);
	free(buf);
	return 0;
}
