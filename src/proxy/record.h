/*
 * The proxy's records: records/wire.jsonl, one JSON object per forwarded
 * request, appended as each request completes, and responses/NNNNNN.body,
 * the response body bytes as sent to the client. These are the `wire`
 * evidence, so a body is stored exactly as received: as a JSON string when
 * it is valid UTF-8, else losslessly in base64 and flagged; gzip and
 * deflate bodies are also stored decoded. Credential-bearing header values
 * are "[removed]", and the credential's bytes are scrubbed from everything
 * written (cred_scrub).
 *
 * Concurrency: one mutex serializes appends; each line goes out with
 * write(2) as soon as it is complete, so a killed proxy loses only the
 * requests in flight. Sequence numbers continue after the lines already in
 * wire.jsonl, so a restarted proxy never overwrites a response file.
 */
#ifndef LEAKBENCH_PROXY_RECORD_H
#define LEAKBENCH_PROXY_RECORD_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "http.h"
#include "proxy/cred.h"

/* Decoded bodies above this are not stored (decode_error says so). */
#define WIRE_MAX_DECODED	(64 * 1024 * 1024)

struct wire_log {
	int			 fd;		/* wire.jsonl */
	char			*dir;
	pthread_mutex_t		 mu;
	unsigned long		 next_seq;
	const struct cred	*cred;		/* borrowed */
};

/*
 * Creates DIR and DIR/responses as needed and opens DIR/wire.jsonl for
 * appending. 0, or -1 with a message in err.
 */
int	 wire_open(struct wire_log *w, const char *dir, const struct cred *cred,
	    char *err, size_t errlen);
void	 wire_close(struct wire_log *w);

/* The next sequence number (thread-safe). */
unsigned long wire_next_seq(struct wire_log *w);

/*
 * The request half of a record: seq, time, method, target, path, headers,
 * body fields. A new reference; the caller adds the response fields and
 * passes it to wire_append. NULL when out of memory.
 */
json_t	*wire_request_record(const struct http_request *req,
	    unsigned long seq, const struct timespec *when,
	    const struct cred *cred);

/*
 * Writes DIR/responses/NNNNNN.body and sets "response_file" and
 * "response_bytes" in rec. 0 or -1 (errno set).
 */
int	 wire_write_response(struct wire_log *w, unsigned long seq,
	    const void *data, size_t len, json_t *rec);

/*
 * Compact JSON text of v, as json_dumps(JSON_COMPACT |
 * JSON_REAL_PRECISION(12)) would write it but an order of magnitude faster
 * on long strings (a request body is 85 KB and up). malloc'd, its length
 * in *len (one spare byte after the NUL); NULL when out of memory.
 */
char	*wire_dump(json_t *v, size_t *len);

/* Appends rec as one line of wire.jsonl. 0 or -1 (errno set). */
int	 wire_append(struct wire_log *w, json_t *rec);

/* Whether the header carries a credential (its value is never recorded). */
int	 wire_is_secret_header(const char *name);

/* Helpers, exposed for the tests. */
int	 wire_utf8_valid(const unsigned char *s, size_t n);
char	*wire_base64(const unsigned char *s, size_t n);	/* malloc'd */
/*
 * Inflates a gzip (gzip = 1) or deflate (zlib or raw) body. 0 with a
 * malloc'd *out, or -1 with a static reason in *why.
 */
int	 wire_inflate(const unsigned char *in, size_t len, int gzip,
	    unsigned char **out, size_t *outlen, const char **why);
/* A JSON string of bytes: as UTF-8 when valid, else read as Latin-1. */
json_t	*wire_text(const char *s, size_t n);

#endif
