/*
 * Serving the scripted model over HTTP/1.1 (see server.h). Each connection
 * thread reads requests with http_read_request, answers them and keeps the
 * connection while the client wants it. A request that cannot be read gets
 * its error answer and the connection is closed; a request that can be read
 * but is not acceptable gets an error body and the connection stays.
 *
 * Streams use chunked transfer so that keep-alive survives them (HTTP/1.0
 * clients get a close-delimited stream); events are written in as few
 * chunks as the answer allows: one for the whole stream, more only when a
 * delay fault spaces them with pings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <uuid.h>

#include "model/server.h"

int
model_server_init(struct model_server *srv, struct engine *e, FILE *log)
{
	uuid_t u;
	int rc;

	memset(srv, 0, sizeof(*srv));
	srv->engine = e;
	srv->log = log;
	http_limits_default(&srv->limits);
	uuid_generate_random(u);
	uuid_unparse_lower(u, srv->org_id);
	if ((rc = pthread_mutex_init(&srv->log_lock, NULL)) != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

void
model_server_fini(struct model_server *srv)
{
	pthread_mutex_destroy(&srv->log_lock);
}

/* The path for a log line: printable ASCII only, at most 100 bytes. */
static void
log_path(const char *path, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; path[i] != '\0' && i + 1 < outlen && i < 100; i++)
		/* cppcheck-suppress arrayIndexOutOfBounds ; stops at the NUL */
		out[i] = (path[i] > ' ' && path[i] < 0x7f) ? path[i] : '?';
	out[i] = '\0';
}

/*
 * With --record-dir, saves a request's head and body as NNNN.http (mode
 * 0600): a debugging aid for script authors and the source of the request
 * fixtures. Failures are ignored: recording must not change the answers.
 */
static void
record(struct model_server *srv, const struct http_request *req,
    unsigned long n)
{
	char path[4096];
	size_t i;
	FILE *f;
	int fd;

	if (srv->record_dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%04lu.http", srv->record_dir, n);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "%s %s HTTP/1.%d\r\n", req->method, req->target, req->minor);
	for (i = 0; i < req->nheaders; i++)
		fprintf(f, "%s: %s\r\n", req->headers[i].name,
		    req->headers[i].value);
	fputs("\r\n", f);
	fwrite(req->body, 1, req->body_len, f);
	fclose(f);
}

__attribute__((format(printf, 3, 4))) static void
logf_req(struct model_server *srv, const struct http_request *req,
    const char *fmt, ...)
{
	char path[128], line[512];
	unsigned long n;
	va_list ap;

	log_path(req ? req->path : "-", path, sizeof(path));
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&srv->log_lock);
	n = ++srv->nreq;
	fprintf(srv->log, "lb-model: #%lu %s %s %s\n", n,
	    req ? req->method : "-", path, line);
	fflush(srv->log);
	pthread_mutex_unlock(&srv->log_lock);
	if (req != NULL)
		record(srv, req, n);
}

/* The headers every API answer carries; extra may add lines. */
static void
api_headers(struct model_server *srv, const char *request_id, int retry_after,
    char *out, size_t outlen)
{
	int n;

	n = snprintf(out, outlen,
	    "request-id: %s\r\n"
	    "anthropic-organization-id: %s\r\n",
	    request_id, srv->org_id);
	if (retry_after >= 0 && n > 0 && (size_t)n < outlen)
		snprintf(out + n, outlen - (size_t)n, "retry-after: %d\r\n",
		    retry_after);
}

/* Answers with the API's error body. 0, or -1 if the write failed. */
static int
send_error(struct model_server *srv, int fd, int status, const char *type,
    const char *msg, const char *request_id, int retry_after, int keep_alive)
{
	struct buf body = { 0 };
	char rid[IDS_BUF], hdr[256];
	int rc;

	if (request_id == NULL) {
		engine_request_id(srv->engine, rid);
		request_id = rid;
	}
	api_headers(srv, request_id, retry_after, hdr, sizeof(hdr));
	if (render_error(&body, type, msg, request_id) < 0) {
		buf_free(&body);
		return -1;
	}
	rc = http_respond(fd, status, "application/json", hdr, body.p, body.len,
	    keep_alive);
	buf_free(&body);
	return rc;
}

static int
send_json(struct model_server *srv, int fd, const struct buf *body,
    const char *request_id, int keep_alive)
{
	char hdr[256];

	api_headers(srv, request_id, -1, hdr, sizeof(hdr));
	return http_respond(fd, 200, "application/json", hdr, body->p,
	    body->len, keep_alive);
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A stream being written: chunked (HTTP/1.1) or close-delimited. */
struct stream {
	int fd;
	int chunked;
	const char *head; /* response head not yet written */
	size_t headlen;
	struct buf buf;	 /* events not yet written */
	struct buf wire; /* what one flush writes */
};

/*
 * Writes what is pending (the head, the events as one chunk, and with last
 * set the terminating chunk) in a single write. 0 or -1.
 */
static int
stream_flush(struct stream *s, int last)
{
	char size[32];
	int n;

	buf_reset(&s->wire);
	if (s->head != NULL && buf_add(&s->wire, s->head, s->headlen) < 0)
		return -1;
	s->head = NULL;
	if (s->buf.len > 0) {
		n = snprintf(size, sizeof(size), "%zx\r\n", s->buf.len);
		if ((s->chunked && buf_add(&s->wire, size, (size_t)n) < 0) ||
		    buf_add(&s->wire, s->buf.p, s->buf.len) < 0 ||
		    (s->chunked && buf_add(&s->wire, "\r\n", 2) < 0))
			return -1;
	}
	if (last && s->chunked && buf_add(&s->wire, "0\r\n\r\n", 5) < 0)
		return -1;
	buf_reset(&s->buf);
	return http_write_all(s->fd, s->wire.p, s->wire.len);
}

/*
 * Streams an answer: message_start, pings through a delay fault, the
 * blocks (cut by an error event for a stream_error fault), message_delta
 * and message_stop. 0, or -1 when the client went away.
 */
static int
stream_answer(struct model_server *srv, int fd, const struct answer *a,
    int http11, int keep_alive)
{
	struct stream s = { fd, http11, NULL, 0, { 0 }, { 0 } };
	char head[512], hdr[256];
	size_t i, cut = (size_t)-1;
	int n, left, rc = -1;

	api_headers(srv, a->request_id, -1, hdr, sizeof(hdr));
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 200 OK\r\n"
	    "Content-Type: text/event-stream; charset=utf-8\r\n"
	    "Cache-Control: no-cache\r\n%s%s"
	    "Connection: %s\r\n\r\n",
	    hdr, http11 ? "Transfer-Encoding: chunked\r\n" : "",
	    http11 && keep_alive ? "keep-alive" : "close");
	s.head = head;
	s.headlen = (size_t)n;
	if (render_sse_start(&s.buf, &a->msg) < 0)
		goto out;
	if (a->fault.kind == FAULT_DELAY) {
		for (left = a->fault.ms; left > 0; left -= SERVER_PING_MS) {
			if (stream_flush(&s, 0) < 0)
				goto out;
			sleep_ms(left < SERVER_PING_MS ? left : SERVER_PING_MS);
			if (render_sse_ping(&s.buf) < 0)
				goto out;
		}
	}
	if (a->fault.kind == FAULT_STREAM_ERROR)
		cut = (size_t)a->fault.after_blocks;
	for (i = 0; i < a->msg.nblocks && i < cut; i++)
		if (render_sse_block(&s.buf, &a->msg, i) < 0)
			goto out;
	if (a->fault.kind == FAULT_STREAM_ERROR) {
		if (render_sse_error(&s.buf, a->error_type, a->error_message) <
		    0)
			goto out;
	} else if (render_sse_end(&s.buf, &a->msg) < 0)
		goto out;
	if (stream_flush(&s, 1) < 0)
		goto out;
	rc = 0;
out:
	buf_free(&s.buf);
	buf_free(&s.wire);
	return rc;
}

/* application/json, with any parameters. */
static int
json_content_type(const struct http_request *req)
{
	const char *ct = http_header(req, "content-type");
	size_t n = strlen("application/json");

	if (ct == NULL || strncasecmp(ct, "application/json", n) != 0)
		return 0;
	return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

static const char *
stop_word(const struct answer *a)
{
	return a->msg.stop_reason ? a->msg.stop_reason : "-";
}

/* "fault=..." for a log line. */
static void
fault_word(const struct answer *a, char *out, size_t outlen)
{
	switch (a->fault.kind) {
	case FAULT_NONE:
		snprintf(out, outlen, "fault=none");
		break;
	case FAULT_HTTP:
		snprintf(out, outlen, "fault=http %d", a->fault.status);
		break;
	case FAULT_STREAM_ERROR:
		snprintf(out, outlen, "fault=stream_error %s after %d",
		    a->error_type, a->fault.after_blocks);
		break;
	case FAULT_DELAY:
		snprintf(out, outlen, "fault=delay %dms", a->fault.ms);
		break;
	}
}

/*
 * The body of REQ as a Messages API request into *r (COUNT: as
 * count_tokens takes it; see mreq_parse). 0; or -1 once answered 400 (a
 * content type that is not JSON, a body that is not such a request), with
 * what the handler returns in *sent.
 */
static int
read_mreq(struct model_server *srv, int fd, const struct http_request *req,
    int keep, int count, struct mreq *r, int *sent)
{
	char err[256];

	if (!json_content_type(req)) {
		logf_req(srv, req,
		    "error 400 content-type is not "
		    "application/json");
		*sent = send_error(srv, fd, 400, "invalid_request_error",
		    "content-type must be application/json", NULL, -1, keep);
		return -1;
	}
	if (mreq_parse(req->body, req->body_len, count, r, err, sizeof(err)) <
	    0) {
		logf_req(srv, req, "error 400 %s", err);
		*sent = send_error(srv, fd, 400, "invalid_request_error", err,
		    NULL, -1, keep);
		return -1;
	}
	return 0;
}

/* POST /v1/messages. Returns 0 to keep the connection, -1 to close. */
static int
messages(struct model_server *srv, int fd, const struct http_request *req,
    int keep)
{
	const char *mode = "json", *who;
	struct buf body = { 0 };
	struct answer a;
	struct mreq r;
	char fw[96];
	int rc;

	if (read_mreq(srv, fd, req, keep, 0, &r, &rc) < 0)
		return rc;
	if (r.stream)
		mode = "stream";
	r.subagent = http_header(req, "x-claude-code-agent-id") != NULL;
	if (engine_answer(srv->engine, &r, &a) < 0) {
		mreq_free(&r);
		logf_req(srv, req, "error 500 out of memory");
		return send_error(srv, fd, 500, "api_error", "out of memory",
		    NULL, -1, 0);
	}
	fault_word(&a, fw, sizeof(fw));
	who = a.subagent ? "subagent " : "";
	switch (a.what) {
	case ANSWER_CAP:
		logf_req(srv, req, "%s error %d %s", mode, a.status,
		    a.error_message + strlen("leakbench scripted model: "));
		break;
	case ANSWER_SIDE:
		logf_req(srv, req, "%s side-request %s", mode, a.side);
		break;
	case ANSWER_REPLY:
		logf_req(srv, req, "%s subject-reply %zu", mode, a.reply);
		break;
	case ANSWER_FINAL:
		logf_req(srv, req, "%s %sexhausted final %s", mode, who, fw);
		break;
	case ANSWER_TURN:
		if (a.fault.kind == FAULT_HTTP)
			logf_req(srv, req, "%s %sturn %zu/%zu %s", mode, who,
			    a.turn + 1, a.nturns, fw);
		else
			logf_req(srv, req, "%s %sturn %zu/%zu %s %s", mode, who,
			    a.turn + 1, a.nturns, stop_word(&a), fw);
		break;
	}
	if (a.status != 200) {
		rc = send_error(srv, fd, a.status, a.error_type,
		    a.error_message, a.request_id,
		    a.fault.kind == FAULT_HTTP ? a.fault.retry_after : -1,
		    keep);
	} else if (r.stream) {
		rc = stream_answer(srv, fd, &a, req->minor >= 1, keep);
		if (req->minor < 1)
			rc = -1; /* the stream ended with the connection */
	} else {
		if (a.fault.kind == FAULT_DELAY)
			sleep_ms(a.fault.ms);
		rc = render_json(&body, &a.msg);
		if (rc == 0)
			rc = send_json(srv, fd, &body, a.request_id, keep);
	}
	buf_free(&body);
	answer_free(&a);
	mreq_free(&r);
	return rc;
}

static int
count_tokens(struct model_server *srv, int fd, const struct http_request *req,
    int keep)
{
	char rid[IDS_BUF], hdr[256], body[64];
	struct mreq r;
	long long n;
	int len;

	if (read_mreq(srv, fd, req, keep, 1, &r, &len) < 0)
		return len;
	n = (long long)(req->body_len / 4) + 1;
	mreq_free(&r);
	logf_req(srv, req, "200 input_tokens=%lld", n);
	engine_request_id(srv->engine, rid);
	api_headers(srv, rid, -1, hdr, sizeof(hdr));
	len = snprintf(body, sizeof(body), "{\"input_tokens\":%lld}", n);
	return http_respond(fd, 200, "application/json", hdr, body, (size_t)len,
	    keep);
}

static int
models(struct model_server *srv, int fd, const struct http_request *req,
    int keep)
{
	const struct script *s = srv->engine->script;
	const char *id = s->model ? s->model : "claude-sonnet-4-5";
	const char *want = req->path + strlen("/v1/models");
	char rid[IDS_BUF], hdr[256];
	struct buf body = { 0 };
	json_t *m, *doc;
	int rc;

	if (*want == '/' && strcmp(want + 1, id) != 0) {
		logf_req(srv, req, "404 unknown model");
		return send_error(srv, fd, 404, "not_found_error",
		    "model not found", NULL, -1, keep);
	}
	m = json_pack("{s:s, s:s, s:s, s:s}", "type", "model", "id", id,
	    "display_name", "leakbench scripted model", "created_at",
	    "2025-01-01T00:00:00Z");
	if (*want == '/')
		doc = m;
	else
		doc = json_pack("{s:[o], s:b, s:s, s:s}", "data", m, "has_more",
		    0, "first_id", id, "last_id", id);
	if (doc == NULL || render_dump(&body, doc) < 0) {
		json_decref(doc);
		buf_free(&body);
		return -1;
	}
	json_decref(doc);
	logf_req(srv, req, "200");
	engine_request_id(srv->engine, rid);
	api_headers(srv, rid, -1, hdr, sizeof(hdr));
	rc = http_respond(fd, 200, "application/json", hdr, body.p, body.len,
	    keep);
	buf_free(&body);
	return rc;
}

/* Answers one request; 0 to keep the connection, -1 to close it. */
static int
dispatch(struct model_server *srv, int fd, const struct http_request *req)
{
	int keep = req->keep_alive, post, get, head;

	post = strcmp(req->method, "POST") == 0;
	get = strcmp(req->method, "GET") == 0;
	head = strcmp(req->method, "HEAD") == 0;
	if (post && strcmp(req->path, "/v1/messages") == 0)
		return messages(srv, fd, req, keep) < 0 || !keep ? -1 : 0;
	if (post && strcmp(req->path, "/v1/messages/count_tokens") == 0)
		return count_tokens(srv, fd, req, keep) < 0 || !keep ? -1 : 0;
	if ((head || get) && strcmp(req->path, "/api/hello") == 0) {
		logf_req(srv, req, "200");
		return http_respond(fd, 200, NULL, NULL, "", 0, keep) < 0 ||
			!keep ?
		    -1 :
		    0;
	}
	if (get &&
	    (strcmp(req->path, "/v1/models") == 0 ||
		strncmp(req->path, "/v1/models/", 11) == 0))
		return models(srv, fd, req, keep) < 0 || !keep ? -1 : 0;
	logf_req(srv, req, "404");
	if (head) {
		char rid[IDS_BUF], hdr[256];

		engine_request_id(srv->engine, rid);
		api_headers(srv, rid, -1, hdr, sizeof(hdr));
		return http_respond(fd, 404, "application/json", hdr, "", 0,
			   keep) < 0 ||
			!keep ?
		    -1 :
		    0;
	}
	return send_error(srv, fd, 404, "not_found_error",
		   "The requested resource could not be found.", NULL, -1,
		   keep) < 0 ||
		!keep ?
	    -1 :
	    0;
}

void
model_server_handle(struct http_conn *c, void *ctx)
{
	struct model_server *srv = ctx;
	struct http_request req;
	const char *type;
	int rc, status;

	for (;;) {
		rc = http_read_request(c, &req, &srv->limits);
		if (rc != HTTP_OK) {
			status = http_error_status(rc);
			if (status == 0)
				return; /* EOF or I/O error */
			type = script_error_type(status);
			logf_req(srv, NULL, "error %d %s from %s", status,
			    rc == HTTP_BAD	     ? "malformed request" :
				rc == HTTP_TIMEOUT   ? "request timed out" :
				rc == HTTP_TOO_LARGE ? "body too large" :
						       "head too large",
			    c->peer);
			(void)send_error(srv, c->fd, status, type,
			    status == 413     ? "request body too large" :
				status == 408 ? "request timed out" :
				status == 431 ? "request headers too large" :
						"malformed HTTP request",
			    NULL, -1, 0);
			return;
		}
		rc = dispatch(srv, c->fd, &req);
		http_request_free(&req);
		if (rc < 0)
			return;
	}
}
