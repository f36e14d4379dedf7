/*
 * The growable byte buffer (see buf.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

int
buf_grow(struct buf *b, size_t n, size_t first)
{
	size_t ncap;
	char *np;

	if (b->oom)
		return -1;
	if (b->p != NULL && b->cap - b->len > n)
		return 0;
	/* No single buffer needs a quarter of the address space. */
	if (n > SIZE_MAX / 4 - b->len)
		goto oom;
	ncap = b->cap ? b->cap : first ? first : 4096;
	while (ncap - b->len < n + 1) {
		if (ncap > SIZE_MAX / 2)
			goto oom;
		ncap *= 2;
	}
	if ((np = realloc(b->p, ncap)) == NULL)
		goto oom;
	if (b->p == NULL)
		np[0] = '\0';
	b->p = np;
	b->cap = ncap;
	return 0;
oom:
	b->oom = 1;
	return -1;
}

int
buf_add(struct buf *b, const void *s, size_t n)
{
	if (buf_grow(b, n, 0) < 0)
		return -1;
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int
buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

void
buf_drop(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		if (b->p != NULL)
			b->p[0] = '\0';
		return;
	}
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
	b->p[b->len] = '\0';
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->oom = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

void
buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

char *
buf_take(struct buf *b, size_t *len)
{
	char *p = b->p;

	if (b->oom) {
		free(p);
		p = NULL;
	}
	if (len != NULL)
		*len = p != NULL ? b->len : 0;
	memset(b, 0, sizeof(*b));
	return p;
}
