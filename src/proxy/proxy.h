/*
 * The recording proxy (lb-proxy): every request a client sends is forwarded
 * to the upstream with libcurl, its response streamed back as it arrives,
 * and the request recorded byte-exact (record.h). The credential from the
 * credential file replaces whatever the client sent (cred.h).
 *
 * Threads: http_serve runs proxy_handler on a thread per client
 * connection; each connection has its own curl handle (reused across its
 * keep-alive requests, so the upstream connection is reused too); DNS and
 * TLS sessions are shared through a locked curl share. Records and log
 * lines are serialized by their own mutexes.
 *
 * Ownership: struct proxy owns everything it points to; proxy_fini frees
 * it. curl_global_init must have been called before proxy_init.
 */
#ifndef LEAKBENCH_PROXY_PROXY_H
#define LEAKBENCH_PROXY_PROXY_H

#include <pthread.h>
#include <stddef.h>

#include <curl/curl.h>

#include "http.h"
#include "proxy/cred.h"
#include "proxy/record.h"

#define PROXY_DEFAULT_LISTEN	"0.0.0.0:8080"
#define PROXY_DEFAULT_UPSTREAM	"https://api.anthropic.com"
#define PROXY_DEFAULT_RECORDS	"records"
#define PROXY_OAUTH_BETA	"oauth-2025-04-20"
/* Response bytes kept in memory for the response file; the rest is cut. */
#define PROXY_MAX_RESPONSE_FILE	(64 * 1024 * 1024)

struct proxy_config {
	const char	*upstream;		/* http(s) base URL */
	const char	*upstream_socket;	/* NULL, or a Unix socket to
						   reach the upstream by */
	const char	*credential_file;	/* NULL: offline */
	const char	*records;		/* directory */
	const char	*ca_file;		/* NULL: system CAs only */
	double		 upstream_timeout;	/* s: connect, and idle */
	double		 client_timeout;	/* s: idle and head deadline */
	int		 log_fd;		/* one line per request */
};

struct proxy {
	char			*upstream;	/* no trailing slash */
	char			*upstream_socket; /* NULL: by the URL's host */
	struct cred		 cred;
	struct wire_log		 wire;
	struct http_limits	 lim;
	char			*ca_blob;	/* system CAs + the extra one */
	size_t			 ca_len;
	long			 timeout_ms;
	CURLSH			*share;
	pthread_mutex_t		 share_mu[CURL_LOCK_DATA_LAST];
	int			 log_fd;
	pthread_mutex_t		 log_mu;
};

/*
 * Checks an upstream URL (http or https, a host, no query or fragment) and
 * returns it without trailing slashes in *norm (malloc'd). 0, or -1 with a
 * message in err.
 */
int	 proxy_check_upstream(const char *url, char **norm, char *err,
	    size_t errlen);

/*
 * Loads the credential, opens the records, reads the CA file. 0, or -1
 * with a message in err (the credential's content is never in it).
 */
int	 proxy_init(struct proxy *p, const struct proxy_config *cfg, char *err,
	    size_t errlen);
void	 proxy_fini(struct proxy *p);

/* The http_handler: serves one client connection (ctx: struct proxy). */
void	 proxy_handler(struct http_conn *c, void *ctx);

#endif
