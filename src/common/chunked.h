/*
 * The one decoder of HTTP/1.1 chunked framing (RFC 9112 section 7.1), for
 * http.c's request bodies, the proxy's upstream responses and the trap's
 * requests. It is fed bytes as they come, in pieces of any size, hands the
 * payload to a sink as it finds it, and says where the message ends, so
 * that the bytes after it (a pipelined request) are left to the caller.
 * No Lua, nothing allocated.
 *
 * Grammar: a size of 1 to 15 hex digits; then, strict, optional blanks and
 * an optional ";extension" of visible bytes (tab and obs-text allowed),
 * or, lenient, anything after a ';', blank or tab; the line ends in CRLF
 * or a bare LF. After the data, CRLF or LF. After the last (size 0) chunk,
 * trailer lines up to an empty one: strict, each "name:..." with a token
 * for its name and no bare CR; lenient, anything.
 *
 * Zero the struct, set the limits, feed it; chunked_reset starts again
 * with the same limits.
 */
#ifndef LEAKBENCH_COMMON_CHUNKED_H
#define LEAKBENCH_COMMON_CHUNKED_H

#include <stddef.h>

struct chunked {
	/* Limits, set before the first byte; 0 means none. */
	unsigned long long max_total; /* payload bytes of the message */
	size_t max_line;	      /* bytes of a size or trailer line */
	size_t max_trailer;	      /* trailer bytes, line ends included */
	int strict;		      /* the strict grammar above */
	/* State. */
	int state;
	int digits;
	unsigned long long left;  /* payload bytes left in this chunk */
	unsigned long long total; /* payload bytes announced so far */
	size_t line;		  /* bytes of the current line */
	size_t trailer;		  /* trailer bytes so far */
};

enum {
	CHUNKED_MORE = 0,	/* every byte used; the message goes on */
	CHUNKED_DONE = 1,	/* the message ended (see *used) */
	CHUNKED_BAD = -1,	/* malformed framing, or a line too long */
	CHUNKED_TOO_LARGE = -2, /* payload over max_total */
	CHUNKED_TRAILER_TOO_LARGE = -3, /* trailers over max_trailer */
	CHUNKED_SINK = -4		/* the sink returned -1 */
};

/* Receives n payload bytes; 0 to go on, -1 to stop. */
typedef int chunked_sink(void *ctx, const char *p, size_t n);

/*
 * Decodes p[0..n): the payload to sink(ctx, ...), *used set to the bytes
 * taken (up to the message's end with CHUNKED_DONE; all n with
 * CHUNKED_MORE). Returns one of the codes above. After the end, every
 * further call returns CHUNKED_DONE, after a framing error CHUNKED_BAD,
 * using nothing; after CHUNKED_SINK the decoder stands where the sink
 * stopped it.
 */
int chunked_feed(struct chunked *d, const char *p, size_t n, size_t *used,
    chunked_sink *sink, void *ctx);

/* Whether the message has ended. */
int chunked_done(const struct chunked *d);

/* The state of a new message; the limits are kept. */
void chunked_reset(struct chunked *d);

#endif
