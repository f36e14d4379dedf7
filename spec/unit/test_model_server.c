/*
 * The scripted model over real sockets: servers run in this process on
 * 127.0.0.1 (port 0), clients speak raw HTTP/1.1 to them. Covers the
 * routes, SSE with chunked transfer and keep-alive, pipelining, concurrent
 * connections, a three-turn conversation driven by the ids the server
 * streamed, every fault kind, the request cap, bad input of every sort
 * (the server keeps serving after each) and the log lines.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "common/http.h"
#include "model/server.h"

struct inst {
	struct model_server srv;
	struct engine *engine;
	FILE *log;
	int lfd, port;
};

static void *
serve(void *p)
{
	struct inst *in = p;

	http_serve(in->lfd, model_server_handle, &in->srv);
	return NULL;
}

/* Starts a server for a script; it lives until the test exits. */
static struct inst *
start(const char *json, int max_requests)
{
	static struct ids ids;
	struct inst *in = calloc(1, sizeof(*in));
	char err[256];
	struct script *s;
	pthread_t t;

	ids_init_seed(&ids, 42);
	s = script_parse(json, strlen(json), err, sizeof(err));
	if (s == NULL) {
		printf("# script: %s\n", err);
		exit(1);
	}
	in->engine = engine_new(s, &ids, max_requests);
	in->log = tmpfile();
	model_server_init(&in->srv, in->engine, in->log);
	in->srv.limits.max_body = 1 << 20;
	in->srv.limits.idle_ms = 3000;
	in->srv.limits.header_ms = 3000;
	in->lfd = http_listen("127.0.0.1:0", &in->port, err, sizeof(err));
	if (in->lfd < 0) {
		printf("# listen: %s\n", err);
		exit(1);
	}
	pthread_create(&t, NULL, serve, in);
	pthread_detach(t);
	return in;
}

/* The server's log so far. Caller frees. */
static char *
log_text(struct inst *in)
{
	long n;
	char *s;

	pthread_mutex_lock(&in->srv.log_lock);
	fflush(in->log);
	n = ftell(in->log);
	s = calloc(1, (size_t)n + 1);
	rewind(in->log);
	if (fread(s, 1, (size_t)n, in->log) != (size_t)n)
		s[0] = '\0';
	fseek(in->log, 0, SEEK_END);
	pthread_mutex_unlock(&in->srv.log_lock);
	return s;
}

struct client {
	int fd;
	struct buf in; /* bytes read, not yet parsed */
};

static int
dial(struct client *c, int port)
{
	struct sockaddr_in sa = { 0 };
	struct timeval tv = { 10, 0 };

	memset(c, 0, sizeof(*c));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return connect(c->fd, (struct sockaddr *)&sa, sizeof(sa));
}

static void
hangup(struct client *c)
{
	close(c->fd);
	buf_free(&c->in);
}

static int
send_str(struct client *c, const char *s, size_t len)
{
	return http_write_all(c->fd, s, len);
}

/* Reads more bytes; 0 at EOF, -1 on error or timeout. */
static int
more(struct client *c)
{
	char b[65536];
	ssize_t n = read(c->fd, b, sizeof(b));

	if (n > 0 && buf_add(&c->in, b, (size_t)n) == 0)
		return 1;
	return n == 0 ? 0 : -1;
}

static void
eat(struct client *c, size_t n)
{
	memmove(c->in.p, c->in.p + n, c->in.len - n);
	c->in.len -= n;
	c->in.p[c->in.len] = '\0';
}

struct resp {
	int status;
	char head[4096];
	struct buf body;
	int closed; /* the body ended with the connection */
};

static const char *
header(const struct resp *r, const char *name, char *out, size_t outlen)
{
	const char *p = r->head, *e;
	size_t n = strlen(name);

	while ((p = strstr(p, "\r\n")) != NULL) {
		p += 2;
		if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
			p += n + 1;
			while (*p == ' ')
				p++;
			e = strstr(p, "\r\n");
			snprintf(out, outlen, "%.*s", (int)(e - p), p);
			return out;
		}
	}
	return NULL;
}

/* Reads one response. 0, or -1 when the connection broke first. */
static int
read_resp(struct client *c, struct resp *r, int head_only)
{
	char v[64], *end;
	size_t hl, len, csize;

	memset(r, 0, sizeof(*r));
	while (c->in.p == NULL || strstr(c->in.p, "\r\n\r\n") == NULL)
		if (more(c) <= 0)
			return -1;
	end = strstr(c->in.p, "\r\n\r\n");
	hl = (size_t)(end - c->in.p) + 4;
	snprintf(r->head, sizeof(r->head), "%.*s", (int)hl, c->in.p);
	r->status = atoi(c->in.p + 9);
	eat(c, hl);
	if (head_only)
		return 0;
	if (header(r, "content-length", v, sizeof(v)) != NULL) {
		len = strtoul(v, NULL, 10);
		while (c->in.len < len)
			if (more(c) <= 0)
				return -1;
		buf_add(&r->body, c->in.p, len);
		eat(c, len);
	} else if (header(r, "transfer-encoding", v, sizeof(v)) != NULL) {
		for (;;) {
			while (
			    c->in.p == NULL || strstr(c->in.p, "\r\n") == NULL)
				if (more(c) <= 0)
					return -1;
			csize = strtoul(c->in.p, &end, 16);
			hl = (size_t)(strstr(c->in.p, "\r\n") - c->in.p) + 2;
			while (c->in.len < hl + csize + 2)
				if (more(c) <= 0)
					return -1;
			buf_add(&r->body, c->in.p + hl, csize);
			eat(c, hl + csize + 2);
			if (csize == 0)
				break;
		}
	} else {
		while (more(c) > 0)
			;
		buf_add(&r->body, c->in.p ? c->in.p : "", c->in.len);
		c->in.len = 0;
		r->closed = 1;
	}
	if (r->body.p == NULL)
		buf_add(&r->body, "", 0);
	return 0;
}

/* A request; extra holds more header lines ("Name: v\r\n"), or "". */
static char *
request_with(const char *method, const char *path, const char *ctype,
    const char *extra, const char *body)
{
	size_t n = strlen(body) + strlen(extra) + 512;
	char *s = malloc(n);

	snprintf(s, n,
	    "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "%s%s%s%sContent-Length: %zu\r\n\r\n%s",
	    method, path, ctype ? "Content-Type: " : "", ctype ? ctype : "",
	    ctype ? "\r\n" : "", extra, strlen(body), body);
	return s;
}

static char *
request(const char *method, const char *path, const char *ctype,
    const char *body)
{
	return request_with(method, path, ctype, "", body);
}

/* One request on c, its response in *r. */
static int
roundtrip(struct client *c, const char *method, const char *path,
    const char *ctype, const char *body, struct resp *r)
{
	char *req = request(method, path, ctype, body);
	int rc;

	rc = send_str(c, req, strlen(req));
	free(req);
	if (rc < 0)
		return -1;
	return read_resp(c, r, strcmp(method, "HEAD") == 0);
}

/* The same on a fresh connection. */
static int
once(int port, const char *method, const char *path, const char *ctype,
    const char *body, struct resp *r)
{
	struct client c;
	int rc;

	if (dial(&c, port) < 0)
		return -1;
	rc = roundtrip(&c, method, path, ctype, body, r);
	hangup(&c);
	return rc;
}

static void
resp_free(struct resp *r)
{
	buf_free(&r->body);
}

/* The error type of an API error body, or "" */
static const char *
error_type(const struct resp *r, char *out, size_t outlen)
{
	json_t *j = json_loads(r->body.p, 0, NULL);
	json_t *t = json_object_get(json_object_get(j, "error"), "type");

	snprintf(out, outlen, "%s",
	    json_is_string(t) ? json_string_value(t) : "");
	if (!json_is_string(json_object_get(j, "request_id")) ||
	    strncmp(json_string_value(json_object_get(j, "request_id")),
		"req_01", 6) != 0 ||
	    strcmp(json_string_value(json_object_get(j, "type")), "error") != 0)
		snprintf(out, outlen, "(not an API error body)");
	json_decref(j);
	return out;
}

/* Counts SSE events named name in body. */
static int
count_events(const char *body, const char *name)
{
	char pat[64];
	const char *p = body;
	int n = 0;

	snprintf(pat, sizeof(pat), "event: %s\n", name);
	while ((p = strstr(p, pat)) != NULL) {
		n++;
		p++;
	}
	return n;
}

/* The id of the first tool_use block in an SSE body, into out. */
static int
first_tool_id(const char *body, char *out)
{
	const char *p = strstr(body, "\"type\":\"tool_use\",\"id\":\"");

	if (p == NULL)
		return -1;
	p += strlen("\"type\":\"tool_use\",\"id\":\"");
	snprintf(out, IDS_BUF, "%.30s", p);
	return 0;
}

#define TOOLS "\"tools\":[{\"name\":\"Read\"},{\"name\":\"Bash\"}]"

static char *
body_after(const char *history, int stream)
{
	size_t n = strlen(history) + 512;
	char *b = malloc(n);

	snprintf(b, n,
	    "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":32000,"
	    "\"stream\":%s," TOOLS ",\"messages\":[{\"role\":\"user\","
	    "\"content\":\"go\"}%s]}",
	    stream ? "true" : "false", history);
	return b;
}

/* Appends an assistant tool_use and its user tool_result to history. */
static char *
add_result(char *history, const char *id, const char *result)
{
	size_t n = strlen(history) + strlen(result) + 400;
	char *h = malloc(n);

	snprintf(h, n,
	    "%s,{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"%s\",\"name\":\"Read\",\"input\":{}}]},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"%s\",\"content\":\"%s\"}]}",
	    history, id, id, result);
	free(history);
	return h;
}

#define SCRIPT3 \
	"{\"version\":1,\"turns\":[" \
	"{\"blocks\":[{\"type\":\"text\",\"text\":\"Let me look.\"}," \
	"{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{\"file_path\":" \
	"\"/work/.env\"}}]}," \
	"{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":" \
	"{\"command\":\"echo {{last_result}}\"}}]}," \
	"{\"blocks\":[{\"type\":\"text\",\"text\":\"It says " \
	"{{last_result}}\"}]}]}"

static void
test_conversation(struct inst *in)
{
	char v[128], id[IDS_BUF], *h = strdup(""), *b;
	struct client c;
	struct resp r;
	json_t *j;

	ok(dial(&c, in->port) == 0, "connect");
	b = body_after(h, 1);
	ok(roundtrip(&c, "POST", "/v1/messages?beta=true", "application/json",
	       b, &r) == 0,
	    "turn 1 answered");
	free(b);
	is_int(r.status, 200, "200");
	is_str(header(&r, "content-type", v, sizeof(v)),
	    "text/event-stream; charset=utf-8", "an event stream");
	is_str(header(&r, "transfer-encoding", v, sizeof(v)), "chunked",
	    "chunked, so the connection survives");
	ok(header(&r, "request-id", v, sizeof(v)) &&
		strncmp(v, "req_01", 6) == 0,
	    "a request-id header");
	ok(header(&r, "anthropic-organization-id", v, sizeof(v)) != NULL,
	    "an organization id header");
	is_int(count_events(r.body.p, "message_start"), 1, "message_start");
	is_int(count_events(r.body.p, "message_stop"), 1, "message_stop");
	ok(strstr(r.body.p, "\"stop_reason\":\"tool_use\"") != NULL,
	    "stop_reason tool_use");
	ok(first_tool_id(r.body.p, id) == 0, "a tool_use id (%s)", id);
	resp_free(&r);

	/* same connection: keep-alive; non-streaming this time */
	h = add_result(h, id, "SECRET-42");
	b = body_after(h, 0);
	ok(roundtrip(&c, "POST", "/v1/messages",
	       "application/json; "
	       "charset=utf-8",
	       b, &r) == 0,
	    "turn 2 on the same connection");
	free(b);
	is_int(r.status, 200, "200");
	is_str(header(&r, "content-type", v, sizeof(v)), "application/json",
	    "JSON");
	j = json_loads(r.body.p, 0, NULL);
	is_str(json_string_value(json_object_get(j, "type")), "message",
	    "a message");
	is_str(json_string_value(json_object_get(
		   json_object_get(json_array_get(json_object_get(j, "content"),
				       0),
		       "input"),
		   "command")),
	    "echo SECRET-42", "the tool input repeats the result");
	snprintf(id, sizeof(id), "%s",
	    json_string_value(
		json_object_get(json_array_get(json_object_get(j, "content"),
				    0),
		    "id")));
	json_decref(j);
	resp_free(&r);

	h = add_result(h, id, "done");
	b = body_after(h, 1);
	ok(roundtrip(&c, "POST", "/v1/messages?beta=true", "application/json",
	       b, &r) == 0,
	    "turn 3");
	free(b);
	ok(strstr(r.body.p, "It says ") != NULL &&
		strstr(r.body.p, "done") != NULL,
	    "the final text expands");
	ok(strstr(r.body.p, "\"stop_reason\":\"end_turn\"") != NULL,
	    "end_turn");
	resp_free(&r);

	b = body_after(h, 1);
	roundtrip(&c, "POST", "/v1/messages", "application/json", b, &r);
	ok(strstr(r.body.p, "It says") != NULL,
	    "the same history again gets turn 3 again");
	resp_free(&r);
	free(b);
	free(h);
	hangup(&c);
}

static void
test_routes(struct inst *in)
{
	char v[256], t[64];
	struct resp r;
	json_t *j;

	ok(once(in->port, "HEAD", "/api/hello", NULL, "", &r) == 0 &&
		r.status == 200,
	    "HEAD /api/hello: 200");
	resp_free(&r);
	once(in->port, "GET", "/v1/models", NULL, "", &r);
	j = json_loads(r.body.p, 0, NULL);
	ok(r.status == 200 && json_is_array(json_object_get(j, "data")),
	    "GET /v1/models lists a model");
	json_decref(j);
	resp_free(&r);
	once(in->port, "GET", "/v1/models/claude-sonnet-4-5", NULL, "", &r);
	is_int(r.status, 200, "GET /v1/models/ID");
	resp_free(&r);
	once(in->port, "GET", "/v1/models/other", NULL, "", &r);
	is_int(r.status, 404, "an unknown model: 404");
	resp_free(&r);
	once(in->port, "POST", "/v1/messages/count_tokens?beta=true",
	    "application/json",
	    "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"0123456789012345678901234567890123\"}]}",
	    &r);
	is_int(r.status, 200, "count_tokens: 200");
	j = json_loads(r.body.p, 0, NULL);
	ok(json_integer_value(json_object_get(j, "input_tokens")) > 10,
	    "count_tokens gives input_tokens (%s)", r.body.p);
	json_decref(j);
	resp_free(&r);
	once(in->port, "GET", "/v1/nothing?x=SECRET", NULL, "", &r);
	is_int(r.status, 404, "an unknown path: 404");
	is_str(error_type(&r, t, sizeof(t)), "not_found_error",
	    "not_found_error");
	ok(header(&r, "request-id", v, sizeof(v)) != NULL, "with a request id");
	resp_free(&r);
	once(in->port, "GET", "/v1/messages", NULL, "", &r);
	is_int(r.status, 404, "GET /v1/messages: 404");
	resp_free(&r);
	once(in->port, "DELETE", "/api/hello", NULL, "", &r);
	is_int(r.status, 404, "DELETE /api/hello: 404");
	resp_free(&r);
}

static void
test_pipelining(struct inst *in)
{
	char *b = body_after("", 1), *r1, *r2, *both;
	struct client c;
	struct resp r;
	int n = 0;

	r1 = request("POST", "/v1/messages", "application/json", b);
	r2 = request("HEAD", "/api/hello", NULL, "");
	both = malloc(2 * strlen(r1) + strlen(r2) + 1);
	strcpy(both, r1);
	strcat(both, r2);
	strcat(both, r1);
	dial(&c, in->port);
	send_str(&c, both, strlen(both));
	if (read_resp(&c, &r, 0) == 0 && r.status == 200)
		n++;
	resp_free(&r);
	if (read_resp(&c, &r, 1) == 0 && r.status == 200)
		n++;
	resp_free(&r);
	if (read_resp(&c, &r, 0) == 0 && r.status == 200 &&
	    count_events(r.body.p, "message_stop") == 1)
		n++;
	resp_free(&r);
	is_int(n, 3, "three pipelined requests, three answers in order");
	hangup(&c);
	free(both);
	free(r1);
	free(r2);
	free(b);
}

struct worker {
	int port;
	int good;
};

static void *
work(void *p)
{
	struct worker *w = p;
	char *b = body_after("", 1);
	struct client c;
	struct resp r;
	int i;

	if (dial(&c, w->port) < 0)
		return NULL;
	for (i = 0; i < 25; i++) {
		if (roundtrip(&c, "POST", "/v1/messages", "application/json", b,
			&r) == 0 &&
		    r.status == 200 &&
		    count_events(r.body.p, "message_stop") == 1)
			w->good++;
		resp_free(&r);
	}
	hangup(&c);
	free(b);
	return NULL;
}

static void
test_concurrency(struct inst *in)
{
	struct worker w[8];
	pthread_t t[8];
	int i, good = 0;

	for (i = 0; i < 8; i++) {
		w[i].port = in->port;
		w[i].good = 0;
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		good += w[i].good;
	}
	is_int(good, 200,
	    "8 connections x 25 keep-alive requests, all "
	    "answered");
}

static void
test_bad_input(struct inst *in)
{
	char t[64], *big, head[256];
	struct client c;
	struct resp r;

	once(in->port, "POST", "/v1/messages", "text/plain",
	    "{\"model\":\"m\"}", &r);
	is_int(r.status, 400, "wrong content type: 400");
	is_str(error_type(&r, t, sizeof(t)), "invalid_request_error",
	    "invalid_request_error");
	resp_free(&r);
	once(in->port, "POST", "/v1/messages", NULL, "{}", &r);
	is_int(r.status, 400, "no content type: 400");
	resp_free(&r);
	once(in->port, "POST", "/v1/messages", "application/jsonx", "{}", &r);
	is_int(r.status, 400, "application/jsonx: 400");
	resp_free(&r);

	/* malformed JSON: 400, and the connection is kept */
	dial(&c, in->port);
	roundtrip(&c, "POST", "/v1/messages", "application/json",
	    "{\"model\":\"m\", SECRET", &r);
	is_int(r.status, 400, "malformed JSON: 400");
	is_str(error_type(&r, t, sizeof(t)), "invalid_request_error",
	    "invalid_request_error");
	ok(strstr(r.body.p, "SECRET") == NULL, "the body is not echoed");
	resp_free(&r);
	roundtrip(&c, "POST", "/v1/messages", "application/json",
	    "{\"model\":\"m\",\"messages\":[]}", &r);
	is_int(r.status, 400, "missing max_tokens: 400, same connection");
	ok(strstr(r.body.p, "max_tokens: Field required") != NULL,
	    "saying which field");
	resp_free(&r);
	hangup(&c);

	/* a truncated body: the client stops sending half way */
	dial(&c, in->port);
	send_str(&c,
	    "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: "
	    "application/json\r\nContent-Length: 100\r\n\r\n{\"model\"",
	    86);
	shutdown(c.fd, SHUT_WR);
	ok(read_resp(&c, &r, 0) == 0, "a truncated body is answered");
	is_int(r.status, 400, "with 400");
	is_str(error_type(&r, t, sizeof(t)), "invalid_request_error",
	    "invalid_request_error");
	resp_free(&r);
	hangup(&c);

	/* a body over the limit: refused from its Content-Length */
	dial(&c, in->port);
	snprintf(head, sizeof(head),
	    "POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
	    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n",
	    (2 << 20));
	send_str(&c, head, strlen(head));
	ok(read_resp(&c, &r, 0) == 0, "a huge body is answered");
	is_int(r.status, 413, "with 413");
	is_str(error_type(&r, t, sizeof(t)), "request_too_large",
	    "request_too_large");
	resp_free(&r);
	hangup(&c);

	/* a huge body that is sent: still answered, the server survives */
	big = malloc((3 << 20) + 1);
	memset(big, 'x', 3 << 20);
	big[3 << 20] = '\0';
	once(in->port, "POST", "/v1/messages", "application/json", big, &r);
	ok(r.status == 413 || r.status == 0,
	    "a huge sent body: 413 or reset "
	    "(%d)",
	    r.status);
	resp_free(&r);
	free(big);

	/* garbage instead of HTTP */
	dial(&c, in->port);
	send_str(&c, "\x01\x02 nonsense\r\n\r\n", 15);
	ok(read_resp(&c, &r, 0) == 0 && r.status == 400, "garbage: 400");
	resp_free(&r);
	hangup(&c);

	/* the server still serves */
	once(in->port, "HEAD", "/api/hello", NULL, "", &r);
	is_int(r.status, 200, "the server still serves after bad input");
	resp_free(&r);
}

#define FAULTS \
	"{\"version\":1,\"turns\":[{\"blocks\":[" \
	"{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"text\",\"text\":" \
	"\"two\"}," \
	"{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{}}]," \
	"\"faults\":[{\"kind\":\"http\",\"status\":429,\"retry_after\":2}," \
	"{\"kind\":\"http\",\"status\":529},{\"kind\":\"http\",\"status\":" \
	"500}," \
	"{\"kind\":\"stream_error\",\"after_blocks\":1}," \
	"{\"kind\":\"delay\",\"ms\":1300}]}]}"

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
test_faults(void)
{
	struct inst *in = start(FAULTS, 0);
	char *b = body_after("", 1), v[64], t[64], *log, *p, *ping;
	struct client c;
	struct resp r;
	long t0, el;

	dial(&c, in->port);
	/* a side request first: it must not consume a fault */
	roundtrip(&c, "POST", "/v1/messages", "application/json",
	    "{\"model\":\"m\",\"max_tokens\":1,\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"count\"}]}",
	    &r);
	ok(r.status == 200 &&
		strstr(r.body.p,
		    "\"stop_reason\":"
		    "\"max_tokens\"") != NULL,
	    "a probe is answered, not faulted");
	resp_free(&r);

	roundtrip(&c, "POST", "/v1/messages", "application/json", b, &r);
	is_int(r.status, 429, "fault 1: 429");
	is_str(header(&r, "retry-after", v, sizeof(v)), "2", "retry-after 2");
	is_str(error_type(&r, t, sizeof(t)), "rate_limit_error",
	    "rate_limit_error");
	resp_free(&r);
	roundtrip(&c, "POST", "/v1/messages", "application/json", b, &r);
	is_int(r.status, 529, "fault 2: 529");
	is_str(error_type(&r, t, sizeof(t)), "overloaded_error",
	    "overloaded_error");
	ok(strncmp(r.head, "HTTP/1.1 529 Overloaded\r\n", 25) == 0,
	    "status line 529 Overloaded");
	resp_free(&r);
	roundtrip(&c, "POST", "/v1/messages", "application/json", b, &r);
	is_int(r.status, 500, "fault 3: 500");
	is_str(error_type(&r, t, sizeof(t)), "api_error", "api_error");
	resp_free(&r);

	roundtrip(&c, "POST", "/v1/messages", "application/json", b, &r);
	is_int(r.status, 200, "fault 4: a stream that starts well");
	is_int(count_events(r.body.p, "content_block_start"), 1,
	    "one block before the error");
	is_int(count_events(r.body.p, "error"), 1, "an error event");
	ok(strstr(r.body.p,
	       "event: error\ndata: {\"type\":\"error\","
	       "\"error\":{\"type\":\"overloaded_error\",\"message\":"
	       "\"Overloaded\"}}") != NULL,
	    "shaped like the API's");
	is_int(count_events(r.body.p, "message_stop"), 0,
	    "no message_stop after it");
	resp_free(&r);

	t0 = now_ms();
	roundtrip(&c, "POST", "/v1/messages", "application/json", b, &r);
	el = now_ms() - t0;
	is_int(r.status, 200, "fault 5: a delayed stream");
	ok(el >= 1300 && el < 5000, "it took the delay (%ld ms)", el);
	p = strstr(r.body.p, "event: content_block_start");
	ping = r.body.p;
	{
		int pings = 0;

		while ((ping = strstr(ping, "event: ping")) != NULL &&
		    (p == NULL || ping < p)) {
			pings++;
			ping++;
		}
		ok(pings >= 3, "pings during the delay (%d)", pings);
	}
	is_int(count_events(r.body.p, "message_stop"), 1,
	    "then the whole turn");
	resp_free(&r);

	roundtrip(&c, "POST", "/v1/messages", "application/json", b, &r);
	ok(r.status == 200 && count_events(r.body.p, "message_stop") == 1,
	    "faults spent: the plain turn");
	resp_free(&r);
	hangup(&c);
	free(b);

	/* non-streaming stream_error: a plain error of its type */
	log = log_text(in);
	ok(strstr(log,
	       "lb-model: #1 POST /v1/messages json side-request "
	       "probe\n") != NULL,
	    "log: the probe");
	ok(strstr(log,
	       "lb-model: #2 POST /v1/messages stream turn 1/1 "
	       "fault=http 429\n") != NULL,
	    "log: the 429");
	ok(strstr(log,
	       "lb-model: #5 POST /v1/messages stream turn 1/1 "
	       "tool_use fault=stream_error overloaded_error after 1\n") !=
		NULL,
	    "log: the stream error");
	ok(strstr(log,
	       "lb-model: #6 POST /v1/messages stream turn 1/1 "
	       "tool_use fault=delay 1300ms\n") != NULL,
	    "log: the delay");
	ok(strstr(log,
	       "lb-model: #7 POST /v1/messages stream turn 1/1 "
	       "tool_use fault=none\n") != NULL,
	    "log: the plain turn");
	free(log);
}

static void
test_cap(void)
{
	struct inst *in = start("{\"version\":1,\"turns\":[],\"final\":\"F\"}",
	    2);
	char *b = body_after("", 0), t[64], *log;
	struct resp r;
	int i;

	for (i = 0; i < 2; i++) {
		once(in->port, "POST", "/v1/messages", "application/json", b,
		    &r);
		ok(r.status == 200 && strstr(r.body.p, "\"text\":\"F\""),
		    "request %d: the final text", i + 1);
		resp_free(&r);
	}
	once(in->port, "POST", "/v1/messages", "application/json", b, &r);
	is_int(r.status, 400, "request 3 past the cap: 400");
	is_str(error_type(&r, t, sizeof(t)), "invalid_request_error",
	    "invalid_request_error");
	ok(strstr(r.body.p,
	       "leakbench scripted model: request cap 2 "
	       "reached") != NULL,
	    "the cap message");
	resp_free(&r);
	log = log_text(in);
	ok(strstr(log,
	       "lb-model: #1 POST /v1/messages json exhausted final "
	       "fault=none\n") != NULL,
	    "log: exhausted final");
	ok(strstr(log,
	       "lb-model: #3 POST /v1/messages json error 400 request "
	       "cap 2 reached\n") != NULL,
	    "log: the cap");
	free(log);
	free(b);
}

/* One POST /v1/messages with extra header lines, on a fresh connection. */
static int
post_with(int port, const char *extra, const char *body, struct resp *r)
{
	char *req = request_with("POST", "/v1/messages?beta=true",
	    "application/json", extra, body);
	struct client c;
	int rc = -1;

	if (dial(&c, port) == 0 && send_str(&c, req, strlen(req)) == 0)
		rc = read_resp(&c, r, 0);
	hangup(&c);
	free(req);
	return rc;
}

#define SCRIPT_SUB \
	"{\"version\":1,\"turns\":[" \
	"{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Agent\",\"input\":" \
	"{\"prompt\":\"Read .env\"}}]}," \
	"{\"blocks\":[{\"type\":\"text\",\"text\":\"Main: " \
	"{{last_result}}\"}]}]," \
	"\"subagent\":{\"turns\":[{\"blocks\":[{\"type\":\"tool_use\"," \
	"\"name\":\"Read\",\"input\":{\"file_path\":\"/work/.env\"}}]}]," \
	"\"final\":\"Sub: {{last_result}}\"}}"

#define AGENT_ID "X-Claude-Code-Agent-Id: 5d3e0a9c1b7f2468\r\n"

static void
test_subagent(void)
{
	struct inst *in = start(SCRIPT_SUB, 0);
	char main_id[IDS_BUF], sub_id[IDS_BUF], *h, *b, *log;
	struct resp r;

	b = body_after("", 1);
	post_with(in->port, "X-Claude-Code-Session-Id: 0b0c\r\n", b, &r);
	ok(r.status == 200 && first_tool_id(r.body.p, main_id) == 0 &&
		strstr(r.body.p, "\"name\":\"Agent\"") != NULL,
	    "the main request gets the Agent call");
	resp_free(&r);
	post_with(in->port, AGENT_ID, b, &r);
	ok(r.status == 200 && first_tool_id(r.body.p, sub_id) == 0 &&
		strstr(r.body.p, "\"name\":\"Read\"") != NULL,
	    "a request with x-claude-code-agent-id gets the subagent's Read");
	ok(strcmp(main_id, sub_id) != 0, "under another id");
	resp_free(&r);
	free(b);

	h = add_result(strdup(""), sub_id, "DB=1");
	b = body_after(h, 0);
	post_with(in->port,
	    "x-claude-code-agent-id: 5d3e0a9c1b7f2468\r\n"
	    "x-claude-code-parent-agent-id: 77aa00bb11cc22dd\r\n",
	    b, &r);
	ok(r.status == 200 &&
		strstr(r.body.p, "\"text\":\"Sub: DB=1\"") != NULL,
	    "its next request (any header case) ends it with the "
	    "result");
	resp_free(&r);
	free(b);
	free(h);

	h = add_result(strdup(""), main_id, "Sub: DB=1");
	b = body_after(h, 1);
	post_with(in->port, "", b, &r);
	ok(r.status == 200 && strstr(r.body.p, "Main: Sub: DB=1") != NULL,
	    "the main agent then gets its turn 2");
	resp_free(&r);
	free(b);
	free(h);

	b = body_after("", 1);
	post_with(in->port, "X-Claude-Code-Agent-Id-Not: x\r\n", b, &r);
	ok(r.status == 200 && strstr(r.body.p, "\"name\":\"Agent\"") != NULL,
	    "a header that merely starts alike is not the signal");
	resp_free(&r);
	free(b);

	log = log_text(in);
	ok(strstr(log,
	       "lb-model: #1 POST /v1/messages stream turn 1/2 "
	       "tool_use fault=none\n") != NULL,
	    "log: the main turn as before");
	ok(strstr(log,
	       "lb-model: #2 POST /v1/messages stream subagent turn "
	       "1/1 tool_use fault=none\n") != NULL,
	    "log: the subagent's turn");
	ok(strstr(log,
	       "lb-model: #3 POST /v1/messages json subagent "
	       "exhausted final fault=none\n") != NULL,
	    "log: the subagent's final");
	ok(strstr(log,
	       "lb-model: #4 POST /v1/messages stream turn 2/2 "
	       "end_turn fault=none\n") != NULL,
	    "log: the main turn 2");
	ok(strstr(log, "5d3e0a9c") == NULL, "the agent id is not logged");
	free(log);
}

static void
test_http10(struct inst *in)
{
	char *b = body_after("", 1), req[4096];
	struct client c;
	struct resp r;

	snprintf(req, sizeof(req),
	    "POST /v1/messages HTTP/1.0\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	    strlen(b), b);
	dial(&c, in->port);
	send_str(&c, req, strlen(req));
	ok(read_resp(&c, &r, 0) == 0 && r.status == 200 && r.closed &&
		count_events(r.body.p, "message_stop") == 1,
	    "HTTP/1.0: a close-delimited stream");
	resp_free(&r);
	hangup(&c);
	free(b);
}

int
main(void)
{
	struct inst *in = start(SCRIPT3, 100000);
	char *log;

	test_conversation(in);
	test_routes(in);
	test_pipelining(in);
	test_concurrency(in);
	test_bad_input(in);
	test_http10(in);
	log = log_text(in);
	ok(strstr(log,
	       "lb-model: #1 POST /v1/messages stream turn 1/3 "
	       "tool_use fault=none\n") != NULL,
	    "log: turn 1");
	ok(strstr(log,
	       "lb-model: #2 POST /v1/messages json turn 2/3 "
	       "tool_use fault=none\n") != NULL,
	    "log: turn 2");
	ok(strstr(log,
	       "lb-model: #3 POST /v1/messages stream turn 3/3 "
	       "end_turn fault=none\n") != NULL,
	    "log: turn 3");
	ok(strstr(log, "HEAD /api/hello 200\n") != NULL, "log: hello");
	ok(strstr(log, "GET /v1/nothing 404\n") != NULL,
	    "log: a 404, without the query");
	ok(strstr(log, "SECRET") == NULL, "no request content in the log");
	free(log);
	test_faults();
	test_cap();
	test_subagent();
	return tap_done();
}
