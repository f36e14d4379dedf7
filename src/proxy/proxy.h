/*
 * The recording proxy (lb-proxy): every request a client sends is forwarded
 * to the upstream with libcurl, its response streamed back as it arrives,
 * and the request recorded byte-exact (record.h). The credential from the
 * credential file replaces whatever the client sent (cred.h), in Messages
 * API requests only (see "Credential" below).
 *
 * Threads: http_serve runs proxy_handler on a thread per client
 * connection; each connection has its own curl handle (reused across its
 * keep-alive requests, so the upstream connection is reused too); DNS and
 * TLS sessions are shared through a locked curl share. Records and log
 * lines are serialized by their own mutexes.
 *
 * Ownership: struct proxy owns everything it points to; proxy_fini frees
 * it. curl_global_init must have been called before proxy_init.
 *
 * Caps. A hostile agent drives the client, so everything the proxy holds
 * or writes is bounded. Each cap has a name; when one is hit, the proxy
 * (1) answers the client with an error in the Messages API's shape whose
 * message names the cap, where a request is refused; (2) says so in a log
 * line (the first 10 hits of each cap; then only counted) and, when a
 * forwarded request was affected, in its record ("cap": NAME); and (3)
 * rewrites DIR/caps.json, the file the harness reads:
 *
 *   {"records":{"limit":20000,"hits":3,"first_hit":"2026-12-01T07:40:00.123Z",
 *    "message":"lb-proxy: cap 'records' reached: ..."}, ...}
 *
 * one member per cap hit at least once, written whole (a temporary file
 * renamed), never holding the credential. No caps.json: no cap was hit.
 *
 *   connections    --max-connections, default 64: connections served at
 *                  once. More wait in the listen backlog until one ends;
 *                  none is refused.
 *   request_head   64 KiB of request line and headers: 431.
 *   request_body   32 MiB of request body: 413.
 *   decoded_body   64 MiB for a gzip or deflate request body, decoded:
 *                  413, not forwarded (what cannot be recorded decoded is
 *                  not sent upstream).
 *   records        --max-records, default 20000 records in DIR: 507, not
 *                  forwarded.
 *   record_bytes   --max-record-bytes, default 1 GiB of wire.jsonl plus
 *                  responses/ in DIR (decoded bodies included): 507, not
 *                  forwarded, when a request's record might not fit (room
 *                  is reserved with a bound of up to 7/3 of its body, so
 *                  near the cap this comes a little early); a response
 *                  arriving when it is reached is still passed to the
 *                  client whole, but its file is cut.
 *   response_file  64 MiB of response body kept in a response file; the
 *                  client gets all of it, the file is cut.
 *
 * Log lines are bounded too: targets are cut at 1 KiB in them, and only
 * the first 100 requests refused unread (400, 408, 413, 431) are logged.
 *
 * Credential. In live mode (a credential file) only POST /v1/messages and
 * POST /v1/messages/count_tokens (exactly these paths, any query) are
 * forwarded, with the credential; every other request is answered 403
 * (permission_error, "lb-proxy: cannot forward 'GET /v1/models' with the
 * credential: only POST /v1/messages and POST /v1/messages/count_tokens
 * are") and recorded with that error, never forwarded. Offline (no
 * credential) every request is forwarded as sent, for the scripted model.
 */
#ifndef LEAKBENCH_PROXY_PROXY_H
#define LEAKBENCH_PROXY_PROXY_H

#include <pthread.h>
#include <stddef.h>

#include <curl/curl.h>

#include "common/http.h"
#include "proxy/cred.h"
#include "proxy/record.h"

#define PROXY_DEFAULT_LISTEN   "0.0.0.0:8080"
#define PROXY_DEFAULT_UPSTREAM "https://api.anthropic.com"
#define PROXY_DEFAULT_RECORDS  "records"
#define PROXY_OAUTH_BETA       "oauth-2025-04-20"
/* Response bytes kept in memory for the response file; the rest is cut. */
#define PROXY_MAX_RESPONSE_FILE	       (64 * 1024 * 1024)
#define PROXY_DEFAULT_MAX_CONNS	       64
#define PROXY_DEFAULT_MAX_RECORDS      20000UL
#define PROXY_DEFAULT_MAX_RECORD_BYTES (1024ULL * 1024 * 1024)
#define PROXY_CAPS_FILE		       "caps.json"

enum proxy_cap {
	CAP_CONNECTIONS,
	CAP_REQUEST_HEAD,
	CAP_REQUEST_BODY,
	CAP_DECODED_BODY,
	CAP_RECORDS,
	CAP_RECORD_BYTES,
	CAP_RESPONSE_FILE,
	CAP_N
};

struct proxy_cap_hits {
	unsigned long hits;
	struct timespec first; /* CLOCK_REALTIME */
	char *message;	       /* the first hit's */
};

struct proxy_config {
	const char *upstream;	     /* http(s) base URL */
	const char *upstream_socket; /* NULL, or a Unix socket to
						   reach the upstream by */
	const char *credential_file; /* NULL: offline */
	const char *records;	     /* directory */
	const char *ca_file;	     /* NULL: system CAs only */
	double upstream_timeout;     /* s: connect, and idle */
	double client_timeout;	     /* s: idle and head deadline */
	int log_fd;		     /* one line per request */
	int max_conns;		     /* 0: the defaults above */
	unsigned long max_records;
	unsigned long long max_record_bytes;
};

struct proxy {
	char *upstream;	       /* no trailing slash */
	char *upstream_socket; /* NULL: by the URL's host */
	struct cred cred;
	struct wire_log wire;
	struct http_limits lim;
	char *ca_blob; /* system CAs + the extra one */
	size_t ca_len;
	long timeout_ms;
	CURLSH *share;
	pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];
	int log_fd;
	pthread_mutex_t log_mu;
	int max_conns;
	unsigned long max_records;
	unsigned long long max_record_bytes;
	pthread_mutex_t caps_mu;
	struct proxy_cap_hits caps[CAP_N];
	unsigned long refused; /* refused unread */
};

/*
 * Checks an upstream URL (http or https, a host, no query or fragment) and
 * returns it without trailing slashes in *norm (malloc'd). 0, or -1 with a
 * message in err.
 */
int proxy_check_upstream(const char *url, char **norm, char *err,
    size_t errlen);

/*
 * Loads the credential, opens the records, reads the CA file. 0, or -1
 * with a message in err (the credential's content is never in it).
 */
int proxy_init(struct proxy *p, const struct proxy_config *cfg, char *err,
    size_t errlen);
void proxy_fini(struct proxy *p);

/* The http_handler: serves one client connection (ctx: struct proxy). */
void proxy_handler(struct http_conn *c, void *ctx);

/* http_serve_max's on_full: the cap 'connections' was reached. */
void proxy_on_full(void *ctx, int max_conns);

/* The name of a cap, as in caps.json ("records"). */
const char *proxy_cap_name(enum proxy_cap cap);

#endif
