/*
 * One growable byte buffer for the servers (and anything else in plain C):
 * appends grow it by doubling, the bytes stay NUL-terminated, and a failed
 * append is remembered (oom) so that a writer can append a whole line and
 * check once at the end. No Lua.
 *
 * A zeroed struct buf is an empty buffer. Ownership: the buffer owns p
 * until buf_free (or buf_take, which hands p to the caller). Not
 * thread-safe: one writer at a time.
 */
#ifndef LEAKBENCH_COMMON_BUF_H
#define LEAKBENCH_COMMON_BUF_H

#include <stddef.h>

struct buf {
	char *p;    /* NULL until the first append; then NUL-terminated */
	size_t len; /* bytes held, the NUL not counted */
	size_t cap; /* bytes allocated */
	int oom;    /* an append failed: every later one does nothing */
};

/*
 * Room for n more bytes and the NUL, growing by doubling from `first`
 * bytes (0: 4096). 0, or -1 (and oom set) when out of memory or once oom.
 */
int buf_grow(struct buf *b, size_t n, size_t first);

/* Appends n bytes of s. 0, or -1 (and oom set); see buf_grow. */
int buf_add(struct buf *b, const void *s, size_t n);

/* Appends a NUL-terminated string. 0, or -1 (and oom set). */
int buf_adds(struct buf *b, const char *s);

/*
 * Drops the first n bytes (all of them when n >= len): what a reader has
 * used. The rest moves to the front, NUL-terminated.
 */
void buf_drop(struct buf *b, size_t n);

/* Empties the buffer and clears oom; the memory is kept. */
void buf_reset(struct buf *b);

/* Frees the bytes; the buffer is empty (and zeroed) again. */
void buf_free(struct buf *b);

/*
 * The bytes, NUL-terminated, handed to the caller (free them); their
 * length in *len when len is not NULL. NULL when the buffer is oom (it is
 * then freed) or empty without an allocation. The buffer is zeroed.
 */
char *buf_take(struct buf *b, size_t *len);

#endif
