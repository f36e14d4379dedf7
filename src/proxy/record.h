/*
 * The proxy's records: records/wire.jsonl, one JSON object per forwarded
 * request, appended as each request completes, and responses/NNNNNN.body,
 * the response body bytes as sent to the client. These are the `wire`
 * evidence, so a body is stored exactly as received: as a JSON string when
 * it is valid UTF-8 and the escapes of its control bytes keep it within
 * 62 bytes of base64, else losslessly in base64 ("body_base64"; body_utf8
 * still says whether the bytes were UTF-8). A body of control bytes, each
 * escaped as \u0001, would take six times its size; now no body takes more
 * than 7/3 of it (text with quotes; base64 takes 4/3).
 * gzip and deflate bodies are also stored decoded ("body_decoded" or
 * "body_decoded_base64", the same rule). Credential-bearing header values
 * are "[removed]", and the credential's bytes are scrubbed from everything
 * written (cred_scrub).
 *
 * Strings are written in the one dialect of src/common/jsonw.h (the
 * trap's and json.lua's too). The format has no version field; its one
 * change so far: since issue 28, DEL is escaped (\u007f) and \u00xx
 * escapes use lowercase hex, where they followed jansson before (DEL as
 * it is, uppercase hex). Both parse to the same strings: readers
 * (src/lua/evidence.lua) decode JSON and see no difference.
 *
 * Caps: a count of records and a byte total of wire.jsonl plus
 * responses/, both per records directory (a run), counting what earlier
 * proxies left there. wire_reserve takes room before a request is
 * forwarded (wire_request_bound's bound, or the exact size), so the totals
 * never pass the caps by more than the response fields of the records in
 * flight (a few hundred bytes each).
 *
 * Concurrency: one mutex serializes appends; each line goes out with
 * write(2) as soon as it is complete, so a killed proxy loses only the
 * requests in flight. Sequence numbers continue after the lines already in
 * wire.jsonl and the response files already there, so a restarted proxy
 * never overwrites a response file.
 */
#ifndef LEAKBENCH_PROXY_RECORD_H
#define LEAKBENCH_PROXY_RECORD_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "common/http.h"
#include "proxy/cred.h"

/* Decoded bodies above this are not stored (decode_error says so). */
#define WIRE_MAX_DECODED  (64 * 1024 * 1024)
#define WIRE_DECODED_OVER "decoded body over 64 MiB, not stored"

/* Which cap wire_reserve found full. */
enum { WIRE_CAP_NONE = 0, WIRE_CAP_RECORDS, WIRE_CAP_BYTES };

struct wire_log {
	int fd; /* wire.jsonl */
	char *dir;
	pthread_mutex_t mu;
	unsigned long next_seq;
	const struct cred *cred;      /* borrowed */
	pthread_mutex_t cap_mu;	      /* the four below */
	unsigned long max_records;    /* 0: no cap */
	unsigned long long max_bytes; /* 0: no cap */
	unsigned long nrecords;	      /* written or reserved */
	unsigned long long nbytes;    /* written or reserved */
};

/*
 * Creates DIR and DIR/responses as needed and opens DIR/wire.jsonl for
 * appending. 0, or -1 with a message in err.
 */
int wire_open(struct wire_log *w, const char *dir, const struct cred *cred,
    char *err, size_t errlen);
void wire_close(struct wire_log *w);

/*
 * Sets the caps (0: none). The totals start from what DIR held at
 * wire_open: its wire.jsonl lines and bytes, and its response files.
 */
void wire_set_caps(struct wire_log *w, unsigned long max_records,
    unsigned long long max_bytes);

/*
 * Takes room for `records` records and `bytes` bytes, all or nothing.
 * WIRE_CAP_NONE (0) when it fits, else the cap that is full. Thread-safe.
 */
int wire_reserve(struct wire_log *w, unsigned long records, size_t bytes);

/* Gives back room taken by wire_reserve and not used. */
void wire_unreserve(struct wire_log *w, unsigned long records, size_t bytes);

/* The next sequence number (thread-safe). */
unsigned long wire_next_seq(struct wire_log *w);

/*
 * The request half of a record: seq, time, method, target, path, headers,
 * body fields. A new reference; the caller adds the response fields and
 * passes it to wire_append. NULL when out of memory.
 */
json_t *wire_request_record(const struct http_request *req, unsigned long seq,
    const struct timespec *when, const struct cred *cred);

/*
 * At least the size of wire_dump(wire_request_record(req, ...)), computed
 * without building it (no pass over the body), so that room can be
 * reserved before a request is forwarded and its record built after. 0
 * when the body has a Content-Encoding: its decoded size is not known
 * until it is decoded.
 */
size_t wire_request_bound(const struct http_request *req,
    const struct cred *cred);

/*
 * Writes DIR/responses/NNNNNN.body and sets "response_file" and
 * "response_bytes" in rec. The len bytes count as already reserved (the
 * proxy takes them as the response arrives). 0 or -1 (errno set).
 */
int wire_write_response(struct wire_log *w, unsigned long seq, const void *data,
    size_t len, json_t *rec);

/*
 * Compact JSON text of v, as json_dumps(JSON_COMPACT |
 * JSON_REAL_PRECISION(12)) would write it but an order of magnitude faster
 * on long strings (a request body is 85 KB and up), and with strings in
 * the dialect of src/common/jsonw.h. malloc'd, its length
 * in *len (one spare byte after the NUL); NULL when out of memory.
 */
char *wire_dump(json_t *v, size_t *len);

/*
 * Appends rec as one line of wire.jsonl. It counts towards the totals but
 * is not checked against the caps. 0 or -1 (errno set).
 */
int wire_append(struct wire_log *w, json_t *rec);

/*
 * Appends one line made of head, the wire_dump of a record's first fields
 * ("{...}", malloc'd; consumed: the line is built in it, then freed), and
 * the fields of tail after them. `reserved` is what was taken with
 * wire_reserve for this line (one record and some bytes); the totals are
 * set to what was actually written. 0 or -1 (errno set).
 */
int wire_append_parts(struct wire_log *w, char *head, size_t head_len,
    json_t *tail, size_t reserved);

/* Whether the header carries a credential (its value is never recorded). */
int wire_is_secret_header(const char *name);

/* Helpers, exposed for the tests. */
/*
 * Inflates a gzip (gzip = 1) or deflate (zlib or raw) body. 0 with a
 * malloc'd *out, or -1 with a static reason in *why.
 */
int wire_inflate(const unsigned char *in, size_t len, int gzip,
    unsigned char **out, size_t *outlen, const char **why);
/* A JSON string of bytes: as UTF-8 when valid, else read as Latin-1. */
json_t *wire_text(const char *s, size_t n);

#endif
