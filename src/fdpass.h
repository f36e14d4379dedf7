/*
 * One HTTP request over a Unix socket, descriptors along (SCM_RIGHTS) or
 * not: how the harness hands a run's sockets, bound in the run's network
 * namespace, to lb-net --pool (net/pool.h), and how it talks to the
 * podman service (uhttp.h). A small plain client: HTTP/1.1, one request
 * per connection ("Connection: close"), the answer read to end of stream
 * and framed by its Content-Length, or chunked. Core code: no Lua here.
 *
 * The descriptors go with the request's first bytes; the caller keeps
 * its own (the receiver gets copies) and closes them when it likes. A
 * request either completes (any HTTP status) or fails in the environment
 * (no socket, no answer in time, an answer over UHTTP_MAX or not HTTP),
 * with a message in errmsg.h's grammar.
 */
#ifndef LEAKBENCH_FDPASS_H
#define LEAKBENCH_FDPASS_H

#include <stddef.h>

#include "uhttp.h"

/* The most descriptors one request carries. */
#define FDPASS_MAX 16

/*
 * Sends METHOD PATH with BODY (LEN bytes; NULL for none) through the Unix
 * socket SOCK, FDS[0..NFDS-1] (NFDS at most FDPASS_MAX) with it, and
 * reads the answer, all within TIMEOUT_MS milliseconds. Returns 0 and
 * fills *resp (the caller frees it with uhttp_resp_free), or -1 with the
 * reason in err (errlen bytes, always NUL-terminated) and *resp empty.
 */
int fdpass_request(const char *sock, const char *method, const char *path,
    const char *body, size_t len, const int *fds, int nfds, long timeout_ms,
    struct uhttp_resp *resp, char *err, size_t errlen);

#endif
