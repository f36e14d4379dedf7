/*
 * HTTP over a Unix socket, one request at a time (fdpass.c's client): how
 * leakbench talks to the podman service it starts for a suite (its REST
 * API on unix://<run folder>/podman.sock). Core code: no Lua here.
 *
 * A request either completes (any HTTP status) or fails in the
 * environment (no socket, no answer in time, a body over UHTTP_MAX), with
 * a message in errmsg.h's grammar.
 *
 * uhttp_start sends one from a thread of its own, so that several
 * requests are in flight together (a run's containers created side by
 * side): the caller waits for each with uhttp_finish. The thread touches
 * only its job (struct uhttp_job, private) and runs with every signal
 * blocked (they stay the caller's).
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

/* A request in flight in a thread of its own (uhttp_start). */
struct uhttp_job;

/*
 * Starts uhttp_request(sock, method, path, body, len, timeout_ms) in a
 * thread of its own; every argument is copied, so the caller's may go at
 * once. Returns the job, which the caller hands to uhttp_finish exactly
 * once, or NULL with the reason in err (no thread started).
 */
struct uhttp_job *uhttp_start(const char *sock, const char *method,
    const char *path, const char *body, size_t len, long timeout_ms, char *err,
    size_t errlen);

/* Whether JOB's request has ended (uhttp_finish then does not block). */
int uhttp_done(struct uhttp_job *job);

/*
 * Waits for JOB's request to end, frees JOB and returns what
 * uhttp_request returned: 0 with *resp filled (the caller frees it with
 * uhttp_resp_free), or -1 with the reason in err and *resp empty.
 */
int uhttp_finish(struct uhttp_job *job, struct uhttp_resp *resp, char *err,
    size_t errlen);

#endif
