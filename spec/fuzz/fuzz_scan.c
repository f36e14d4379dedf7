/*
 * libFuzzer target for the leak scanner (src/scan.c). When the input's
 * first byte is 16 or more, the rest is data for a scanner compiled once
 * from three fixed secrets (ASCII canary, JSON specials and UTF-8,
 * binary); otherwise that byte picks how many secrets (1-3), the next
 * bytes their lengths (8-40), the secrets are cut from the input after
 * that and the rest is the data (compiling is the slow part). The data is scanned whole (scan_buffer), in chunks (scan_fd
 * through a temporary file, every 64th input), for fragments, and a
 * snippet is made for every finding. Invariants: findings lie inside the
 * data, sorted by offset; every raw occurrence of a secret is found; a
 * "raw" finding holds exactly the secret; no snippet holds a secret.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scan_secret sec[3];
	struct scan_fragment frag[3];
	struct scan_result r = { 0 };
	struct scan *sc;
	char err[256];
	size_t ns, i, k, pos;
	static unsigned runs;
	static struct scan *fixed;
#define F1 "sk-live-0123456789abcdef"
#define F2 "p\"w/\xc3\xa9&<>\\x'\n\xf0\x9f\x98\x80"
#define F3 "\x00\xff\xfb\xef\xbe\x01\x02\x03"
	static const struct scan_secret fixed_sec[3] = {
		{ F1, sizeof(F1) - 1 },
		{ F2, sizeof(F2) - 1 },
		{ F3, sizeof(F3) - 1 },
	};

	if (size < 4)
		return 0;
	if (data[0] >= 16) {
		if (fixed == NULL &&
		    scan_compile(&fixed, fixed_sec, 3, SCAN_PARTIAL, 0, err,
			sizeof(err)) != 0)
			abort();
		sc = fixed;
		ns = 3;
		memcpy(sec, fixed_sec, sizeof(sec));
		pos = 1;
		goto scan;
	}
	ns = 1 + data[0] % 3;
	pos = 1 + ns;
	if (pos > size)
		return 0;
	for (i = 0; i < ns; i++) {
		size_t len = 8 + data[1 + i] % 33;

		if (pos + len > size)
			return 0;
		sec[i].bytes = data + pos;
		sec[i].len = len;
		pos += len;
	}
	if (scan_compile(&sc, sec, ns, SCAN_PARTIAL, 0, err, sizeof(err)) != 0)
		abort(); /* valid secrets always compile */
scan:
	data += pos;
	size -= pos;
	if (scan_buffer(sc, data, size, &r) != 0)
		abort();
	for (i = 0; i < r.n; i++) {
		const struct scan_finding *f = &r.v[i];
		char *snip;

		if (f->offset > size || f->length > size - f->offset ||
		    f->secret >= ns || (i > 0 && f->offset < r.v[i - 1].offset))
			abort();
		if (strcmp(f->form, "raw") == 0 &&
		    (f->length != sec[f->secret].len ||
			memcmp(data + f->offset, sec[f->secret].bytes,
			    f->length) != 0))
			abort();
		snip = scan_snippet(sc, data, size, r.v, r.n, i, 16);
		if (snip == NULL)
			abort();
		for (k = 0; k < ns; k++)
			if (memmem(snip, strlen(snip), sec[k].bytes,
				sec[k].len) != NULL)
				abort();
		free(snip);
	}
	/* every raw occurrence is reported (as raw, or as an equal form) */
	for (k = 0; k < ns; k++) {
		const uint8_t *p = data, *end = data + size, *q;

		while ((q = memmem(p, (size_t)(end - p), sec[k].bytes,
			    sec[k].len)) != NULL) {
			size_t off = (size_t)(q - data);
			int found = 0;

			for (i = 0; i < r.n && !found; i++)
				found = r.v[i].offset == off &&
				    r.v[i].length == sec[k].len;
			if (!found)
				abort();
			p = q + 1;
		}
	}
	if (scan_partial(sc, data, size, frag) != 0)
		abort();
	for (k = 0; k < ns; k++)
		if (frag[k].length > 0 &&
		    (frag[k].offset + frag[k].length > size ||
			frag[k].secret_offset + frag[k].length > sec[k].len ||
			memcmp(data + frag[k].offset,
			    (const uint8_t *)sec[k].bytes +
				frag[k].secret_offset,
			    frag[k].length) != 0))
			abort();
	if (++runs % 64 == 0) {
		FILE *tf = tmpfile();
		struct scan_result b = { 0 };

		if (tf != NULL) {
			fwrite(data, 1, size, tf);
			fflush(tf);
			rewind(tf);
			if (scan_fd(sc, fileno(tf), &b) != 0 || b.n != r.n)
				abort();
			for (i = 0; i < b.n; i++)
				if (b.v[i].offset != r.v[i].offset ||
				    b.v[i].pattern != r.v[i].pattern)
					abort();
			scan_result_free(&b);
			fclose(tf);
		}
	}
	scan_result_free(&r);
	if (sc != fixed)
		scan_free(sc);
	return 0;
}
