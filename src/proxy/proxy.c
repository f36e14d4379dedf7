/*
 * Forwarding, streaming and recording one client connection at a time (see
 * proxy.h). The path of a request:
 *
 *   http_read_request -> headers rebuilt (hop-by-hop, host and credentials
 *   dropped, the real credential added) -> curl_easy_perform, whose header
 *   callback sends the response head to the client as soon as the upstream's
 *   is complete and whose write callback passes each piece of body on at
 *   once (chunked when the upstream gave no length) -> response file,
 *   record line, log line.
 *
 * Invariants: the client always gets either the upstream's response or,
 * when nothing of it was sent yet, a 502 in the Messages API's error shape;
 * a failure after the head was sent closes the connection (so the client
 * cannot take a cut response for a whole one). Nothing the proxy writes
 * (records, response files, log lines, error bodies) holds the credential.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/chunked.h"
#include "common/errmsg.h"
#include "proxy/proxy.h"

/* ---- set-up ---- */

static void
share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *u)
{
	struct proxy *p = u;

	(void)h;
	(void)access;
	pthread_mutex_lock(&p->share_mu[data]);
}

static void
share_unlock(CURL *h, curl_lock_data data, void *u)
{
	struct proxy *p = u;

	(void)h;
	pthread_mutex_unlock(&p->share_mu[data]);
}

int
proxy_check_upstream(const char *url, char **norm, char *err, size_t errlen)
{
	CURLU *u;
	char *host = NULL, *q = NULL, *frag = NULL, *scheme = NULL, *s;
	size_t n;
	int rc = -1;

	*norm = NULL;
	u = curl_url();
	if (u == NULL || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		snprintf(err, errlen,
		    "cannot use upstream '%s': expected an "
		    "http:// or https:// URL",
		    url);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_QUERY, &q, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK) {
		snprintf(err, errlen,
		    "cannot use upstream '%s': a base URL "
		    "takes no query or fragment",
		    url);
		goto out;
	}
	s = strdup(url);
	if (s == NULL)
		goto out;
	n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
	*norm = s;
	rc = 0;
out:
	curl_free(host);
	curl_free(q);
	curl_free(frag);
	curl_free(scheme);
	curl_url_cleanup(u);
	return rc;
}

/* Reads a whole small file. 0 with a malloc'd buffer, or -1 (errno). */
static int
slurp(const char *path, char **out, size_t *outlen)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			if (cap > 64 * 1024 * 1024) {
				errno = EFBIG;
				break;
			}
			nb = realloc(buf, cap + 1);
			if (nb == NULL)
				break;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				break;
			close(fd);
			buf[len] = '\0';
			*out = buf;
			*outlen = len;
			return 0;
		}
		len += (size_t)n;
	}
	n = errno;
	close(fd);
	free(buf);
	errno = (int)n;
	return -1;
}

static void
say_errno(char *err, size_t errlen, const char *what, const char *path, int e)
{
	char why[128];

	snprintf(why, sizeof(why), "%s", strerror(e));
	if (why[0] >= 'A' && why[0] <= 'Z' && why[1] >= 'a' && why[1] <= 'z')
		why[0] = (char)(why[0] - 'A' + 'a');
	snprintf(err, errlen, "%s '%s': %s", what, path, why);
}

/*
 * The CA blob: the system bundle libcurl would use, then the extra CA, so
 * that the extra one adds trust instead of replacing it.
 */
static int
load_ca(struct proxy *p, const char *path, char *err, size_t errlen)
{
	const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
	const char *sys = v->cainfo ? v->cainfo :
				      "/etc/ssl/certs/ca-certificates.crt";
	char *extra = NULL, *sysbuf = NULL;
	size_t elen, slen = 0;

	if (slurp(path, &extra, &elen) < 0) {
		say_errno(err, errlen, "cannot read CA file", path, errno);
		return -1;
	}
	if (strstr(extra, "-----BEGIN CERTIFICATE-----") == NULL) {
		snprintf(err, errlen,
		    "cannot use CA file '%s': no PEM "
		    "certificate in it",
		    path);
		free(extra);
		return -1;
	}
	if (slurp(sys, &sysbuf, &slen) < 0)
		slen = 0;
	p->ca_blob = malloc(slen + elen + 2);
	if (p->ca_blob == NULL) {
		free(extra);
		free(sysbuf);
		snprintf(err, errlen, "cannot read CA file '%s': out of memory",
		    path);
		return -1;
	}
	if (slen)
		memcpy(p->ca_blob, sysbuf, slen);
	p->ca_blob[slen] = '\n';
	memcpy(p->ca_blob + slen + 1, extra, elen);
	p->ca_len = slen + 1 + elen;
	p->ca_blob[p->ca_len] = '\0';
	free(extra);
	free(sysbuf);
	return 0;
}

int
proxy_init(struct proxy *p, const struct proxy_config *cfg, char *err,
    size_t errlen)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->wire.fd = -1;
	p->log_fd = cfg->log_fd;
	pthread_mutex_init(&p->log_mu, NULL);
	pthread_mutex_init(&p->caps_mu, NULL);
	p->max_conns = cfg->max_conns > 0 ? cfg->max_conns :
					    PROXY_DEFAULT_MAX_CONNS;
	p->max_records = cfg->max_records > 0 ? cfg->max_records :
						PROXY_DEFAULT_MAX_RECORDS;
	p->max_record_bytes = cfg->max_record_bytes > 0 ?
	    cfg->max_record_bytes :
	    PROXY_DEFAULT_MAX_RECORD_BYTES;
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&p->share_mu[i], NULL);
	if (proxy_check_upstream(cfg->upstream ? cfg->upstream :
						 PROXY_DEFAULT_UPSTREAM,
		&p->upstream, err, errlen) < 0)
		return -1;
	if (cfg->upstream_socket != NULL &&
	    (p->upstream_socket = strdup(cfg->upstream_socket)) == NULL) {
		snprintf(err, errlen, "cannot start: out of memory");
		return -1;
	}
	if (cfg->credential_file != NULL &&
	    cred_load(&p->cred, cfg->credential_file, err, errlen) < 0)
		return -1;
	if (cfg->ca_file != NULL && load_ca(p, cfg->ca_file, err, errlen) < 0)
		return -1;
	if (wire_open(&p->wire,
		cfg->records ? cfg->records : PROXY_DEFAULT_RECORDS, &p->cred,
		err, errlen) < 0)
		return -1;
	wire_set_caps(&p->wire, p->max_records, p->max_record_bytes);
	p->timeout_ms = (long)((cfg->upstream_timeout > 0 ?
				       cfg->upstream_timeout :
				       600) *
	    1000);
	p->lim.max_body = 32 * 1024 * 1024;
	p->lim.max_header_bytes = 64 * 1024;
	if (cfg->client_timeout > 0) {
		p->lim.idle_ms = (int)(cfg->client_timeout * 1000);
		p->lim.header_ms = p->lim.idle_ms;
		if (p->lim.idle_ms <= 0)
			p->lim.idle_ms = p->lim.header_ms = 1;
	}
	http_limits_default(&p->lim);
	p->share = curl_share_init();
	if (p->share == NULL) {
		snprintf(err, errlen, "cannot start libcurl: out of memory");
		return -1;
	}
	curl_share_setopt(p->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(p->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(p->share, CURLSHOPT_USERDATA, p);
	curl_share_setopt(p->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(p->share, CURLSHOPT_SHARE,
	    CURL_LOCK_DATA_SSL_SESSION);
	return 0;
}

void
proxy_fini(struct proxy *p)
{
	int i;

	if (p->share != NULL)
		curl_share_cleanup(p->share);
	wire_close(&p->wire);
	cred_free(&p->cred);
	free(p->upstream);
	free(p->upstream_socket);
	free(p->ca_blob);
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&p->share_mu[i]);
	for (i = 0; i < CAP_N; i++)
		free(p->caps[i].message);
	pthread_mutex_destroy(&p->log_mu);
	pthread_mutex_destroy(&p->caps_mu);
	memset(p, 0, sizeof(*p));
	p->wire.fd = -1;
}

/* ---- small helpers ---- */

static double
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
is_hop_by_hop(const char *name, size_t n)
{
	static const char *const hop[] = { "connection", "keep-alive", "te",
		"trailer", "trailers", "transfer-encoding", "upgrade", NULL };

	if (n >= 6 && strncasecmp(name, "proxy-", 6) == 0)
		return 1;
	for (int i = 0; hop[i] != NULL; i++)
		if (strlen(hop[i]) == n && strncasecmp(name, hop[i], n) == 0)
			return 1;
	return 0;
}

/* Writes the log line, scrubbed, with one write(2). */
static void
log_line(struct proxy *p, char *line)
{
	line = cred_scrub_str(&p->cred, line);
	if (line == NULL || p->log_fd < 0) {
		free(line);
		return;
	}
	pthread_mutex_lock(&p->log_mu);
	(void)http_write_all(p->log_fd, line, strlen(line));
	pthread_mutex_unlock(&p->log_mu);
	free(line);
}

/*
 * The Messages API's error body: a malloc'd string, scrubbed. type is one
 * of its error types ("api_error", "invalid_request_error", ...).
 */
static char *
error_body(const struct proxy *p, const char *type, const char *msg)
{
	json_t *e = json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error",
	    "type", type, "message", msg);
	char *s = e ? json_dumps(e, JSON_COMPACT) : NULL;

	json_decref(e);
	return cred_scrub_str(&p->cred, s);
}

/* ---- caps (see proxy.h) ---- */

#define CAP_LOG_LINES  10   /* log lines per cap; then only counted */
#define REFUSED_LOG    100  /* requests refused unread that are logged */
#define LOG_TARGET_MAX 1024 /* bytes of a target in a log line */
/* Reserved for a record's response fields, settled once written. */
#define RECORD_SLACK 4096

static const char *const cap_names[CAP_N] = { "connections", "request_head",
	"request_body", "decoded_body", "records", "record_bytes",
	"response_file" };

const char *
proxy_cap_name(enum proxy_cap cap)
{
	return cap < CAP_N ? cap_names[cap] : "?";
}

static unsigned long long
cap_limit(const struct proxy *p, enum proxy_cap cap)
{
	switch (cap) {
	case CAP_CONNECTIONS:
		return (unsigned long long)p->max_conns;
	case CAP_REQUEST_HEAD:
		return p->lim.max_header_bytes;
	case CAP_REQUEST_BODY:
		return p->lim.max_body;
	case CAP_DECODED_BODY:
		return WIRE_MAX_DECODED;
	case CAP_RECORDS:
		return p->max_records;
	case CAP_RECORD_BYTES:
		return p->max_record_bytes;
	case CAP_RESPONSE_FILE:
		return PROXY_MAX_RESPONSE_FILE;
	default:
		return 0;
	}
}

static void
iso_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&ts->tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, ts->tv_nsec / 1000000);
}

/* Rewrites DIR/caps.json from p->caps, whole; caps_mu is held. */
static void
write_caps(struct proxy *p)
{
	json_t *o = json_object(), *e;
	char *text = NULL, *tmp = NULL, *path = NULL, when[64];
	size_t len;
	int fd, i, rc = -1;

	for (i = 0; i < CAP_N && o != NULL; i++) {
		const struct proxy_cap_hits *h = &p->caps[i];

		if (h->hits == 0)
			continue;
		iso_time(&h->first, when, sizeof(when));
		e = json_pack("{s:I, s:I, s:s, s:s}", "limit",
		    (json_int_t)cap_limit(p, (enum proxy_cap)i), "hits",
		    (json_int_t)h->hits, "first_hit", when, "message",
		    h->message ? h->message : "");
		json_object_set_new(o, cap_names[i], e);
	}
	if (o != NULL && (text = wire_dump(o, &len)) != NULL &&
	    asprintf(&tmp, "%s/%s.tmp", p->wire.dir, PROXY_CAPS_FILE) >= 0 &&
	    asprintf(&path, "%s/%s", p->wire.dir, PROXY_CAPS_FILE) >= 0) {
		text[len++] = '\n'; /* wire_dump leaves a spare byte */
		text[len] = '\0';
		text = cred_scrub_str(&p->cred, text);
		len = text ? strlen(text) : 0;
		fd = text ?
		    open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) :
		    -1;
		if (fd >= 0) {
			rc = http_write_all(fd, text, len);
			if (close(fd) < 0)
				rc = -1;
			if (rc == 0)
				rc = rename(tmp, path);
		}
	}
	if (rc < 0)
		fprintf(stderr, "lb-proxy: cannot write '%s/%s': %s\n",
		    p->wire.dir, PROXY_CAPS_FILE, strerror(errno));
	json_decref(o);
	free(text);
	free(tmp);
	free(path);
}

/*
 * Counts a hit of cap, msg saying what happened: caps.json is rewritten,
 * and for the first CAP_LOG_LINES hits (log set) a log line says msg.
 */
static void
cap_hit(struct proxy *p, enum proxy_cap cap, const char *msg, int log)
{
	struct proxy_cap_hits *h = &p->caps[cap];
	unsigned long n;
	char *line = NULL;

	pthread_mutex_lock(&p->caps_mu);
	n = ++h->hits;
	if (n == 1) {
		clock_gettime(CLOCK_REALTIME, &h->first);
		h->message = strdup(msg);
	}
	write_caps(p);
	pthread_mutex_unlock(&p->caps_mu);
	if (log && n <= CAP_LOG_LINES &&
	    asprintf(&line, "%s%s\n", msg,
		n == CAP_LOG_LINES ?
		    " (further hits are only counted, in " PROXY_CAPS_FILE ")" :
		    "") >= 0)
		log_line(p, line);
}

void
proxy_on_full(void *ctx, int max_conns)
{
	struct proxy *p = ctx;
	char msg[160];

	snprintf(msg, sizeof(msg),
	    "lb-proxy: cap 'connections' reached: %d "
	    "connections open, new ones wait (--max-connections)",
	    max_conns);
	cap_hit(p, CAP_CONNECTIONS, msg, 1);
}

/*
 * Answers a request refused by a cap (413 or 507) without forwarding or
 * recording it. Returns whether the connection may be kept.
 */
static int
refuse_cap(struct proxy *p, struct http_conn *c, const struct http_request *req,
    enum proxy_cap cap, int status)
{
	char msg[256], *body;
	int keep = req->keep_alive;

	switch (cap) {
	case CAP_DECODED_BODY:
		snprintf(msg, sizeof(msg),
		    "lb-proxy: cap 'decoded_body' "
		    "reached: the request body decodes to over 64 MiB, which "
		    "cannot be recorded; not forwarded");
		break;
	case CAP_RECORDS:
		snprintf(msg, sizeof(msg),
		    "lb-proxy: cap 'records' reached: "
		    "%lu requests recorded, no more are forwarded "
		    "(--max-records)",
		    p->max_records);
		break;
	default:
		snprintf(msg, sizeof(msg),
		    "lb-proxy: cap 'record_bytes' "
		    "reached: %llu bytes recorded, no more requests are "
		    "forwarded (--max-record-bytes)",
		    p->max_record_bytes);
		break;
	}
	/* On disk before the client can see it, like a record. */
	cap_hit(p, cap, msg, 1);
	body = error_body(p, status == 413 ? "request_too_large" : "api_error",
	    msg);
	if (body == NULL ||
	    http_respond(c->fd, status, "application/json", NULL, body,
		strlen(body), keep) < 0)
		keep = 0;
	free(body);
	return keep;
}

/* ---- one exchange ---- */

struct xfer {
	struct proxy *p;
	struct http_conn *c;
	const struct http_request *req;
	int status; /* upstream's, 0 if none */
	char reason[64];
	struct buf head; /* response head built */
	int has_cl, has_te;
	long long cl; /* upstream's length */
	int head_sent, keep_alive;
	int chunked_out;   /* we frame chunks */
	int raw_chunked;   /* upstream's chunks pass */
	int decode_out;	   /* de-chunk to client */
	struct chunked dc; /* libcurl passes the upstream's chunks through:
			    * this finds their payload and their end */
	int held;	   /* held_byte pending */
	char held_byte;
	int client_failed;
	int frame_error; /* bad upstream chunks */
	struct buf resp; /* for the response file */
	int resp_cut;
	int cut_by;  /* CAP_*, or -1 */
	size_t sent; /* body bytes to client */
};

/*
 * Writes iov fully to the client. 0 or -1. MSG_NOSIGNAL: a client that
 * went away must not kill the proxy.
 */
static int
send_iov(int fd, struct iovec *iov, int n)
{
	struct msghdr m;
	ssize_t w;

	while (n > 0) {
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		m.msg_iovlen = (size_t)n;
		w = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Sends the response head; decides the framing towards the client. */
static void
send_head(struct xfer *x)
{
	const struct http_request *req = x->req;
	int no_body;
	char line[160];
	struct iovec iov[2];
	int n;

	if (x->head_sent)
		return;
	x->head_sent = 1;
	no_body = strcmp(req->method, "HEAD") == 0 || x->status == 204 ||
	    x->status == 304;
	x->keep_alive = req->keep_alive;
	if (!no_body && x->has_te) {
		if (req->minor >= 1)
			x->raw_chunked = 1;
		else
			x->decode_out = 1;
	} else if (!no_body && !x->has_cl && req->minor >= 1) {
		x->chunked_out = 1;
	}
	if (x->decode_out ||
	    (!no_body && !x->raw_chunked && !x->chunked_out && !x->has_cl))
		x->keep_alive = 0; /* HTTP/1.0: ends when we close */
	n = snprintf(line, sizeof(line), "HTTP/1.1 %d %s\r\n", x->status,
	    x->reason[0] ? x->reason : http_reason(x->status));
	iov[0].iov_base = line;
	iov[0].iov_len = (size_t)n;
	if (x->chunked_out || x->raw_chunked)
		buf_add(&x->head, "Transfer-Encoding: chunked\r\n", 28);
	else if (x->has_cl && !x->has_te) {
		/* Never both: chunked framing wins (RFC 9112 §6.3). */
		char cl[48];
		int len;

		len = snprintf(cl, sizeof(cl), "Content-Length: %lld\r\n",
		    x->cl);
		buf_add(&x->head, cl, (size_t)len);
	}
	if (x->keep_alive)
		buf_add(&x->head, "Connection: keep-alive\r\n\r\n", 26);
	else
		buf_add(&x->head, "Connection: close\r\n\r\n", 21);
	iov[1].iov_base = x->head.p;
	iov[1].iov_len = x->head.len;
	if (x->head.len > 0 &&
	    (no_body || (x->has_cl && !x->has_te && x->cl == 0))) {
		/* The head ends the response: keep its last byte back. */
		x->held = 1;
		x->held_byte = x->head.p[x->head.len - 1];
		iov[1].iov_len--;
	}
	if (send_iov(x->c->fd, iov, 2) < 0)
		x->client_failed = 1;
}

/*
 * CURLOPT_HEADERFUNCTION: collects the upstream's status and headers (a
 * 1xx interim response is dropped) and sends the head on the blank line.
 */
static size_t
on_header(char *buf, size_t size, size_t nitems, void *u)
{
	struct xfer *x = u;
	size_t n = size * nitems, nl;

	if (x->head_sent)
		return n; /* trailers: not forwarded */
	nl = n;
	while (nl > 0 && (buf[nl - 1] == '\r' || buf[nl - 1] == '\n'))
		nl--;
	if (n >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
		const char *sp = memchr(buf, ' ', nl);
		size_t rl;

		x->status = 0;
		x->reason[0] = '\0';
		buf_reset(&x->head);
		x->has_cl = x->has_te = 0;
		x->cl = -1;
		if (sp == NULL || nl - (size_t)(sp - buf) < 4)
			return 0;
		x->status = atoi(sp + 1);
		if (x->status < 100 || x->status > 999)
			return 0;
		rl = nl - (size_t)(sp + 4 - buf);
		if (rl > 0 && sp[4] == ' ') {
			rl--;
			if (rl >= sizeof(x->reason))
				rl = sizeof(x->reason) - 1;
			memcpy(x->reason, sp + 5, rl);
			x->reason[rl] = '\0';
			for (size_t i = 0; i < rl; i++)
				if ((unsigned char)x->reason[i] < 0x20 ||
				    x->reason[i] == 0x7f)
					x->reason[0] = '\0';
		}
		return n;
	}
	if (nl == 0) {
		if (x->status >= 200)
			send_head(x);
		else
			buf_reset(&x->head); /* interim: wait for more */
		return x->client_failed ? 0 : n;
	}
	{
		const char *colon = memchr(buf, ':', nl);

		if (colon == NULL)
			return n;
		if (is_hop_by_hop(buf, (size_t)(colon - buf))) {
			if ((size_t)(colon - buf) == 17 &&
			    strncasecmp(buf, "transfer-encoding", 17) == 0) {
				char v[256];

				snprintf(v, sizeof(v), "%.*s",
				    (int)(nl - (size_t)(colon + 1 - buf)),
				    colon + 1);
				x->has_te |= http_has_token(v, "chunked");
			}
			return n;
		}
		if ((size_t)(colon - buf) == 14 &&
		    strncasecmp(buf, "content-length", 14) == 0) {
			/* Added back by send_head, unless chunked wins. */
			x->has_cl = 1;
			x->cl = strtoll(colon + 1, NULL, 10);
			return n;
		}
		if (buf_add(&x->head, buf, nl) < 0 ||
		    buf_add(&x->head, "\r\n", 2) < 0)
			return 0;
	}
	return n;
}

/*
 * Keeps response bytes for the response file, up to its limit and as long
 * as the records' byte total has room; once cut, the file keeps nothing
 * more (it stays a prefix of the response).
 */
static void
keep_response(struct xfer *x, const char *data, size_t n)
{
	if (x->resp_cut)
		return;
	if (x->resp.len + n > PROXY_MAX_RESPONSE_FILE) {
		x->resp_cut = 1;
		x->cut_by = CAP_RESPONSE_FILE;
		n = PROXY_MAX_RESPONSE_FILE - x->resp.len;
	}
	if (n == 0)
		return;
	if (wire_reserve(&x->p->wire, 0, n) != WIRE_CAP_NONE) {
		x->resp_cut = 1;
		x->cut_by = CAP_RECORD_BYTES;
		return;
	}
	if (buf_grow(&x->resp, n, 16384) < 0) {
		wire_unreserve(&x->p->wire, 0, n);
		x->resp_cut = 1;
		return;
	}
	buf_add(&x->resp, data, n);
}

/* Sends payload bytes to the client as they are. 0 or -1. */
static int
send_plain(struct xfer *x, const char *data, size_t n)
{
	struct iovec iov = { .iov_base = (char *)data, .iov_len = n };

	return n ? send_iov(x->c->fd, &iov, 1) : 0;
}

/* The payload of the upstream's chunks: to the response file, and to
 * the client when decode_out. 0, or -1 when the client is gone. */
static int
chunk_payload(void *ctx, const char *p, size_t n)
{
	struct xfer *x = ctx;

	keep_response(x, p, n);
	if (x->decode_out && send_plain(x, p, n) < 0)
		return -1;
	x->sent += n;
	return 0;
}

/*
 * CURLOPT_WRITEFUNCTION: passes each piece of body to the client at once.
 * The last byte of the message waits (held) until the record is written.
 */
static size_t
on_body(char *data, size_t size, size_t nitems, void *u)
{
	struct xfer *x = u;
	size_t n = size * nitems, end;
	struct iovec iov[3];
	char sz[24];
	int rc;

	if (!x->head_sent)
		send_head(x);
	if (x->client_failed || n == 0)
		return 0;
	if (x->raw_chunked || x->decode_out) {
		if (chunked_done(&x->dc))
			return n; /* after the end: ignored */
		rc = chunked_feed(&x->dc, data, n, &end, chunk_payload, x);
		if (rc == CHUNKED_SINK) {
			x->client_failed = 1;
			return 0;
		}
		if (rc < 0) {
			x->frame_error = 1;
			return 0;
		}
		if (!x->raw_chunked)
			return n;
		if (rc == CHUNKED_DONE) {
			n = end;
			x->held = 1;
			x->held_byte = data[n - 1];
			rc = send_plain(x, data, n - 1);
		} else {
			rc = send_plain(x, data, n);
		}
		if (rc < 0) {
			x->client_failed = 1;
			return 0;
		}
		return size * nitems;
	}
	keep_response(x, data, n);
	if (x->chunked_out) {
		iov[0].iov_base = sz;
		iov[0].iov_len = (size_t)snprintf(sz, sizeof(sz), "%zx\r\n", n);
		iov[1].iov_base = data;
		iov[1].iov_len = n;
		iov[2].iov_base = (char *)"\r\n";
		iov[2].iov_len = 2;
		rc = send_iov(x->c->fd, iov, 3);
	} else if (x->has_cl && x->cl >= 0 &&
	    (long long)(x->sent + n) == x->cl) {
		x->held = 1;
		x->held_byte = data[n - 1];
		rc = send_plain(x, data, n - 1);
	} else {
		rc = send_plain(x, data, n);
	}
	if (rc < 0) {
		x->client_failed = 1;
		return 0;
	}
	x->sent += n;
	return n;
}

/* Whether a Connection header of req names the header `name` (hop-by-hop). */
static int
named_by_connection(const struct http_request *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++)
		if (strcasecmp(req->headers[i].name, "connection") == 0 &&
		    http_has_token(req->headers[i].value, name))
			return 1;
	return 0;
}

/* Appends a line to a curl list. 0, or 1 when out of memory. */
static int
slist_add(struct curl_slist **l, const char *line)
{
	struct curl_slist *t = curl_slist_append(*l, line);

	if (t == NULL)
		return 1;
	*l = t;
	return 0;
}

/*
 * The headers to send upstream: the client's, less hop-by-hop ones (also
 * those its Connection header names), Host,
 * Content-Length and Expect (libcurl frames the request), and, with a
 * credential configured, less x-api-key and authorization, plus the real
 * one. NULL when out of memory.
 */
static struct curl_slist *
upstream_headers(const struct proxy *p, const struct http_request *req,
    int has_body)
{
	struct curl_slist *l = NULL, *t;
	const struct cred *cr = &p->cred;
	int saw_beta = 0, fail = 0;
	char *line;
	size_t i;

	for (i = 0; i < req->nheaders && !fail; i++) {
		const char *name = req->headers[i].name;
		const char *v = req->headers[i].value;
		size_t nl = strlen(name);

		if (is_hop_by_hop(name, nl) || strcasecmp(name, "host") == 0 ||
		    strcasecmp(name, "content-length") == 0 ||
		    strcasecmp(name, "expect") == 0 ||
		    named_by_connection(req, name))
			continue;
		if (cr->kind != CRED_NONE &&
		    (strcasecmp(name, "x-api-key") == 0 ||
			strcasecmp(name, "authorization") == 0))
			continue;
		if (cr->kind == CRED_OAUTH &&
		    strcasecmp(name, "anthropic-beta") == 0 && !saw_beta) {
			saw_beta = 1;
			if (!http_has_token(v, PROXY_OAUTH_BETA)) {
				if (asprintf(&line, "%s: %s%s%s", name, v,
					*v ? "," : "", PROXY_OAUTH_BETA) < 0)
					line = NULL;
				goto append;
			}
		}
		/* "Name;" is libcurl's way of sending an empty value. */
		if (asprintf(&line, *v ? "%s: %s" : "%s;", name, v) < 0)
			line = NULL;
	append:
		if (line == NULL || (t = curl_slist_append(l, line)) == NULL)
			fail = 1;
		else
			l = t;
		free(line);
	}
	line = NULL;
	if (!fail && cr->kind == CRED_APIKEY &&
	    asprintf(&line, "x-api-key: %s", cr->token) < 0)
		fail = 1;
	if (!fail && cr->kind == CRED_OAUTH &&
	    asprintf(&line, "authorization: Bearer %s", cr->token) < 0)
		fail = 1;
	if (line != NULL) {
		if ((t = curl_slist_append(l, line)) == NULL)
			fail = 1;
		else
			l = t;
		explicit_bzero(line, strlen(line));
		free(line);
	}
	if (!fail && cr->kind == CRED_OAUTH && !saw_beta)
		fail = slist_add(&l, "anthropic-beta: " PROXY_OAUTH_BETA);
	/* Keep libcurl from adding headers the client did not send. */
	if (!fail && http_header(req, "accept") == NULL)
		fail = slist_add(&l, "Accept:");
	if (!fail && has_body && http_header(req, "content-type") == NULL)
		fail = slist_add(&l, "Content-Type:");
	if (!fail)
		fail = slist_add(&l, "Expect:");
	if (fail) {
		for (t = l; t != NULL; t = t->next)
			explicit_bzero(t->data, strlen(t->data));
		curl_slist_free_all(l);
		return NULL;
	}
	return l;
}

static void
free_headers(struct curl_slist *l)
{
	for (struct curl_slist *t = l; t != NULL; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	curl_slist_free_all(l);
}

/* Sets up the easy handle for one request. 0 or -1. */
static int
setup_curl(struct proxy *p, CURL *h, struct xfer *x, const char *url,
    struct curl_slist *hdrs, int has_body, char *errbuf)
{
	const struct http_request *req = x->req;
	CURLcode rc = CURLE_OK;

#define SET(opt, val) \
	do { \
		if (rc == CURLE_OK) \
			rc = curl_easy_setopt(h, opt, val); \
	} while (0)
	curl_easy_reset(h);
	SET(CURLOPT_URL, url);
	SET(CURLOPT_PATH_AS_IS, 1L);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	SET(CURLOPT_HTTPHEADER, hdrs);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, x);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_ERRORBUFFER, errbuf);
	SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);
	SET(CURLOPT_HTTP_TRANSFER_DECODING, 0L); /* see struct xfer's dc */
	SET(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
	SET(CURLOPT_CONNECTTIMEOUT_MS, p->timeout_ms);
	SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
	SET(CURLOPT_LOW_SPEED_TIME, (p->timeout_ms + 999) / 1000);
	SET(CURLOPT_SHARE, p->share);
	SET(CURLOPT_TCP_NODELAY, 1L);
	if (p->upstream_socket != NULL)
		SET(CURLOPT_UNIX_SOCKET_PATH, p->upstream_socket);
	if (p->ca_blob != NULL) {
		struct curl_blob b = { .data = p->ca_blob,
			.len = p->ca_len,
			.flags = CURL_BLOB_NOCOPY };

		SET(CURLOPT_CAINFO_BLOB, &b);
	}
	if (strcmp(req->method, "HEAD") == 0) {
		SET(CURLOPT_NOBODY, 1L);
	} else if (has_body) {
		SET(CURLOPT_POST, 1L);
		SET(CURLOPT_POSTFIELDS, req->body);
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		if (strcmp(req->method, "POST") != 0)
			SET(CURLOPT_CUSTOMREQUEST, req->method);
	} else {
		SET(CURLOPT_HTTPGET, 1L);
		if (strcmp(req->method, "GET") != 0)
			SET(CURLOPT_CUSTOMREQUEST, req->method);
	}
#undef SET
	return rc == CURLE_OK ? 0 : -1;
}

/*
 * Whether req is a Messages API request, the only kind the credential is
 * sent with: POST /v1/messages or /v1/messages/count_tokens, any query.
 * The path must be exactly that (no dot segments, escapes, doubled or
 * trailing slashes), so no upstream can read it as another resource.
 */
static int
messages_api(const struct http_request *req)
{
	return strcmp(req->method, "POST") == 0 &&
	    (strcmp(req->path, "/v1/messages") == 0 ||
		strcmp(req->path, "/v1/messages/count_tokens") == 0);
}

/* The 403 message for a request messages_api refuses; malloc'd or NULL. */
static char *
not_messages_api(const struct proxy *p, const struct http_request *req)
{
	/* Scrubbed before they are cut, so no piece of a token is left. */
	char *m = cred_scrub_str(&p->cred, strdup(req->method));
	char *path = cred_scrub_str(&p->cred, strdup(req->path)), *msg;
	size_t n = path ? strlen(path) : 0;

	if (m == NULL || path == NULL ||
	    asprintf(&msg,
		"lb-proxy: cannot "
		"forward '%.16s %.200s%s' with the credential: only POST "
		"/v1/messages and POST /v1/messages/count_tokens are",
		m, path, n > 200 ? "..." : "") < 0)
		msg = NULL;
	free(m);
	free(path);
	return msg;
}

/* One request's way through forward(), phase to phase. */
struct exchange {
	unsigned long seq;
	struct timespec when;
	double t0, ms; /* mono_ms() at the start; the duration */
	char *head;    /* the record's request half, dumped; or NULL */
	size_t head_len;
	size_t reserved; /* room taken for the record */
	char *msg;	 /* the error recorded and logged; or NULL */
	char *body;	 /* the error answered when nothing went out */
	CURLcode res;
};

/*
 * Takes room for the record before anything is forwarded, so what does
 * not fit is refused, not sent. Usually a bound is enough and the record
 * is built after the exchange, off the path to the first byte; a
 * compressed body is decoded first (e->head), to know its size and to
 * refuse what cannot be recorded decoded. 0 when the room is taken; -1
 * when the request was answered instead, *keep saying whether the
 * connection may be kept.
 */
static int
reserve_record(struct proxy *p, struct http_conn *c,
    const struct http_request *req, struct exchange *e, int *keep)
{
	size_t bound = wire_request_bound(req, &p->cred);
	char *body;
	json_t *rec;
	int over = 0, cap;

	if (bound == 0) {
		rec = wire_request_record(req, e->seq, &e->when, &p->cred);
		if (rec != NULL) {
			const char *de = json_string_value(
			    json_object_get(rec, "decode_error"));

			over = de != NULL && strcmp(de, WIRE_DECODED_OVER) == 0;
			e->head = wire_dump(rec, &e->head_len);
			json_decref(rec);
		}
		if (e->head == NULL) {
			body = error_body(p, "api_error",
			    "lb-proxy: cannot "
			    "record the request: out of memory");
			*keep = body != NULL && req->keep_alive;
			if (body == NULL ||
			    http_respond(c->fd, 502, "application/json", NULL,
				body, strlen(body), *keep) < 0)
				*keep = 0;
			free(body);
			return -1;
		}
		if (over) {
			*keep = refuse_cap(p, c, req, CAP_DECODED_BODY, 413);
			return -1;
		}
		bound = e->head_len;
	}
	e->reserved = bound + RECORD_SLACK;
	cap = wire_reserve(&p->wire, 1, e->reserved);
	if (cap != WIRE_CAP_NONE) {
		*keep = refuse_cap(p, c, req,
		    cap == WIRE_CAP_RECORDS ? CAP_RECORDS : CAP_RECORD_BYTES,
		    507);
		return -1;
	}
	return 0;
}

/*
 * Sends the request upstream and streams the answer back (x's callbacks);
 * a request that must not or cannot go gets its status (400, 403, 502)
 * and e->msg instead. e->res is libcurl's outcome.
 */
static void
exchange_upstream(struct proxy *p, CURL **hp, const struct http_request *req,
    struct xfer *x, struct exchange *e)
{
	struct curl_slist *hdrs = NULL;
	char errbuf[CURL_ERROR_SIZE] = "", *url = NULL;
	int has_body;

	if (p->cred.kind != CRED_NONE && !messages_api(req))
		e->msg = not_messages_api(p, req);
	has_body = req->body_len > 0 || req->chunked ||
	    http_header(req, "content-length") != NULL;
	if (*hp == NULL)
		*hp = curl_easy_init();
	if (p->cred.kind != CRED_NONE && !messages_api(req)) {
		/* Recorded, answered, never sent with the credential. */
		x->status = 403;
	} else if (strcmp(req->target, "*") == 0) {
		if (asprintf(&e->msg,
			"lb-proxy: cannot forward the request "
			"target '*'") < 0)
			e->msg = NULL;
		x->status = 400;
	} else if (*hp == NULL ||
	    asprintf(&url, "%s%s", p->upstream, req->target) < 0 ||
	    (hdrs = upstream_headers(p, req, has_body)) == NULL ||
	    setup_curl(p, *hp, x, url, hdrs, has_body, errbuf) < 0) {
		if (asprintf(&e->msg,
			"lb-proxy: cannot forward to upstream "
			"'%s': out of memory",
			p->upstream) < 0)
			e->msg = NULL;
		x->status = 502;
	} else {
		e->res = curl_easy_perform(*hp);
		if (e->res == CURLE_OK && (x->raw_chunked || x->decode_out) &&
		    !chunked_done(&x->dc))
			x->frame_error = 1;
		if (x->frame_error) {
			e->res = CURLE_RECV_ERROR;
			snprintf(errbuf, sizeof(errbuf),
			    "its chunked framing "
			    "is malformed or cut");
		}
		if (e->res != CURLE_OK && !x->client_failed) {
			if (errbuf[0] == '\0')
				snprintf(errbuf, sizeof(errbuf), "%s",
				    curl_easy_strerror(e->res));
			errmsg_lower(errbuf);
			if (asprintf(&e->msg,
				x->head_sent ?
				    "lb-proxy: upstream "
				    "'%s' failed mid-response: %s" :
				    e->res == CURLE_OPERATION_TIMEDOUT ?
				    "lb-proxy: "
				    "upstream '%s' did not answer in time: %s" :
				    "lb-proxy: cannot reach upstream '%s': %s",
				p->upstream, errbuf) < 0)
				e->msg = NULL;
			if (!x->head_sent)
				x->status = 502;
		}
	}
	free_headers(hdrs);
	free(url);
}

/*
 * When nothing went out yet, the API-shaped error the client gets
 * (e->body, kept for the response file too); and the message of a client
 * that left mid-response.
 */
static void
settle_answer(struct proxy *p, struct xfer *x, struct exchange *e)
{
	if (!x->head_sent) {
		if (x->status != 400 && x->status != 403)
			x->status = 502;
		e->body = error_body(p,
		    x->status == 400	 ? "invalid_request_error" :
			x->status == 403 ? "permission_error" :
					   "api_error",
		    e->msg ? e->msg : "lb-proxy: upstream failed");
		if (e->body != NULL) {
			keep_response(x, e->body, strlen(e->body));
			x->sent = strlen(e->body);
		}
	}
	if (x->client_failed && e->msg == NULL &&
	    asprintf(&e->msg,
		"lb-proxy: the "
		"client closed the connection mid-response") < 0)
		e->msg = NULL;
}

/* Names the cap that cut the response file, if one did. */
static void
note_cut(struct proxy *p, const struct xfer *x, const struct exchange *e)
{
	char cm[256];

	if (x->cut_by < 0)
		return;
	if (x->cut_by == CAP_RESPONSE_FILE)
		snprintf(cm, sizeof(cm),
		    "lb-proxy: cap 'response_file' "
		    "reached: the response to request %lu is over 64 "
		    "MiB, its file is cut",
		    e->seq);
	else
		snprintf(cm, sizeof(cm),
		    "lb-proxy: cap 'record_bytes' "
		    "reached: %llu bytes recorded, the response file "
		    "of "
		    "request %lu is cut (--max-record-bytes)",
		    p->max_record_bytes, e->seq);
	cap_hit(p, (enum proxy_cap)x->cut_by, cm, 1);
}

/*
 * Writes the response file and appends the record (the request half in
 * e->head, built now if it was not before; the response's fields after
 * it). e->head is consumed.
 */
static void
write_record(struct proxy *p, const struct http_request *req,
    const struct xfer *x, struct exchange *e)
{
	json_t *rec;

	if (e->head == NULL) {
		rec = wire_request_record(req, e->seq, &e->when, &p->cred);
		e->head = rec ? wire_dump(rec, &e->head_len) : NULL;
		json_decref(rec);
	}
	rec = e->head ? json_object() : NULL;
	if (rec != NULL) {
		json_object_set_new(rec, "status", json_integer(x->status));
		if (wire_write_response(&p->wire, e->seq, x->resp.p,
			x->resp.len, rec) < 0)
			fprintf(stderr,
			    "lb-proxy: cannot write response file "
			    "%06lu: %s\n",
			    e->seq, strerror(errno));
		json_object_set_new(rec, "response_bytes",
		    json_integer((json_int_t)x->sent));
		if (x->resp_cut)
			json_object_set_new(rec, "response_file_truncated",
			    json_true());
		if (x->cut_by >= 0)
			json_object_set_new(rec, "cap",
			    json_string(cap_names[x->cut_by]));
		json_object_set_new(rec, "duration_ms",
		    json_real(round(e->ms * 1000) / 1000));
		if (e->msg != NULL)
			json_object_set_new(rec, "error", json_string(e->msg));
	}
	if (rec == NULL) {
		free(e->head);
		wire_unreserve(&p->wire, 1, e->reserved);
		fprintf(stderr,
		    "lb-proxy: cannot append to '%s/wire.jsonl': "
		    "out of memory\n",
		    p->wire.dir);
	} else if (wire_append_parts(&p->wire, e->head, e->head_len, rec,
		       e->reserved) < 0) {
		fprintf(stderr,
		    "lb-proxy: cannot append to '%s/wire.jsonl': "
		    "%s\n",
		    p->wire.dir, strerror(errno));
	}
	e->head = NULL;
	json_decref(rec);
}

/* The request's log line. */
static void
log_exchange(struct proxy *p, const struct http_request *req,
    const struct xfer *x, const struct exchange *e)
{
	/* Scrubbed before it is cut, so no piece of a token is left. */
	char *tg = cred_scrub_str(&p->cred, strdup(req->target)), *line = NULL;
	size_t tl = tg ? strlen(tg) : 0;

	if (tg != NULL &&
	    asprintf(&line,
		"lb-proxy: %lu %s %.*s%s %d "
		"%zu %zu %.1fms%s%s\n",
		e->seq, req->method,
		(int)(tl > LOG_TARGET_MAX ? LOG_TARGET_MAX : tl), tg,
		tl > LOG_TARGET_MAX ? "..." : "", x->status, req->body_len,
		x->sent, e->ms, e->msg ? " " : "", e->msg ? e->msg : "") >= 0)
		log_line(p, line);
	free(tg);
}

/*
 * Completes the answer once the record is on disk: the error body, or the
 * byte held back and the last chunk. Returns whether the connection may
 * be kept.
 */
static int
finish_client(struct http_conn *c, const struct http_request *req,
    const struct xfer *x, const struct exchange *e)
{
	int keep = 0;

	if (!x->head_sent) {
		keep = req->keep_alive && e->body != NULL;
		if (e->body == NULL ||
		    http_respond(c->fd, x->status, "application/json", NULL,
			e->body, strlen(e->body), keep) < 0)
			keep = 0;
	} else if (e->res == CURLE_OK && !x->client_failed) {
		keep = x->keep_alive;
		if (x->held && http_write_all(c->fd, &x->held_byte, 1) < 0)
			keep = 0;
		if (x->chunked_out && http_write_all(c->fd, "0\r\n\r\n", 5) < 0)
			keep = 0;
	}
	return keep;
}

/*
 * Forwards one request and records it, in phases: room for the record,
 * the exchange with the upstream, the answer when nothing went out, the
 * record (on disk before the client can see the response complete:
 * whoever stops the proxy once the client is done loses nothing), the log
 * line, the end of the answer. Returns whether the client connection may
 * be kept.
 */
static int
forward(struct proxy *p, struct http_conn *c, CURL **hp,
    const struct http_request *req)
{
	struct exchange e;
	struct xfer x;
	int keep;

	memset(&e, 0, sizeof(e));
	e.seq = wire_next_seq(&p->wire);
	e.t0 = mono_ms();
	e.res = CURLE_OK;
	clock_gettime(CLOCK_REALTIME, &e.when);
	if (reserve_record(p, c, req, &e, &keep) < 0) {
		free(e.head);
		return keep;
	}
	memset(&x, 0, sizeof(x));
	x.p = p;
	x.c = c;
	x.req = req;
	x.cut_by = -1;
	exchange_upstream(p, hp, req, &x, &e);
	settle_answer(p, &x, &e);
	e.ms = mono_ms() - e.t0;
	note_cut(p, &x, &e);
	write_record(p, req, &x, &e);
	log_exchange(p, req, &x, &e);
	keep = finish_client(c, req, &x, &e);
	free(e.body);
	free(e.msg);
	buf_free(&x.head);
	buf_free(&x.resp);
	return keep;
}

/* Answers a request that could not be read (400/408/413/431) and logs it. */
static void
refuse(struct proxy *p, struct http_conn *c, int code)
{
	int st = http_error_status(code);
	const char *type = "invalid_request_error", *what;
	char *body, *line = NULL;

	unsigned long n;

	switch (st) {
	case 408:
		what = "lb-proxy: the request did not arrive in time";
		break;
	case 413:
		what = "lb-proxy: cap 'request_body' reached: the request body "
		       "is over 32 MiB";
		type = "request_too_large";
		break;
	case 431:
		what = "lb-proxy: cap 'request_head' reached: the request head "
		       "is over 64 KiB";
		break;
	default:
		what = "lb-proxy: malformed request";
		break;
	}
	if (st == 413 || st == 431)
		cap_hit(p, st == 413 ? CAP_REQUEST_BODY : CAP_REQUEST_HEAD,
		    what, 0);
	body = error_body(p, type, what);
	if (body != NULL)
		(void)http_respond(c->fd, st, "application/json", NULL, body,
		    strlen(body), 0);
	free(body);
	/* Anyone may send garbage forever: the log stays bounded. */
	n = __atomic_add_fetch(&p->refused, 1, __ATOMIC_RELAXED);
	if (n <= REFUSED_LOG &&
	    asprintf(&line,
		"lb-proxy: - %d from %s: "
		"%s%s\n",
		st, c->peer, what + 10,
		n == REFUSED_LOG ? " (further "
				   "refused requests are not logged)" :
				   "") >= 0)
		log_line(p, line);
}

void
proxy_handler(struct http_conn *c, void *ctx)
{
	struct proxy *p = ctx;
	struct http_request req;
	struct timeval tv;
	CURL *h = NULL;
	int rc, keep;

	/* A client that stops reading must not hold the thread forever. */
	tv.tv_sec = p->timeout_ms / 1000;
	tv.tv_usec = (p->timeout_ms % 1000) * 1000;
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		rc = http_read_request(c, &req, &p->lim);
		if (rc != HTTP_OK) {
			if (http_error_status(rc) != 0)
				refuse(p, c, rc);
			break;
		}
		keep = forward(p, c, &h, &req);
		http_request_free(&req);
		if (!keep)
			break;
	}
	if (h != NULL)
		curl_easy_cleanup(h);
}
