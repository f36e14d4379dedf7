/*
 * HTTP over a Unix socket, one request at a time, with libcurl: how
 * leakbench talks to the podman service it starts for a suite (its REST
 * API on unix://<run folder>/podman.sock). Core code: no Lua here.
 *
 * A request either completes (any HTTP status) or fails in the
 * environment (no socket, no answer in time, a body over UHTTP_MAX), with
 * a message in errmsg.h's grammar.
 */
#ifndef LEAKBENCH_UHTTP_H
#define LEAKBENCH_UHTTP_H

#include <stddef.h>

/* The largest response body kept; a longer one fails the request. */
#define UHTTP_MAX (16u << 20)

struct uhttp_resp {
	long status; /* the HTTP status */
	char *body;  /* NUL-terminated, malloc'ed: uhttp_resp_free frees it */
	size_t len;  /* bytes of body, the NUL not counted */
};

/*
 * Sends METHOD to http://d/PATH through the Unix socket SOCK, with BODY
 * (LEN bytes, sent as application/json; NULL for none), within TIMEOUT_MS
 * milliseconds. Returns 0 and fills *resp (the caller frees it with
 * uhttp_resp_free), or -1 with the reason in err (errlen bytes, always
 * NUL-terminated) and *resp empty.
 */
int uhttp_request(const char *sock, const char *method, const char *path,
    const char *body, size_t len, long timeout_ms, struct uhttp_resp *resp,
    char *err, size_t errlen);

/* Frees what uhttp_request put in *resp; harmless on an empty one. */
void uhttp_resp_free(struct uhttp_resp *resp);

#endif
