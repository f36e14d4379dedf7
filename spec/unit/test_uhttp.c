/*
 * uhttp.c against a server of the test's own on a Unix socket, which
 * answers each connection from a thread of its own: a request completes
 * with its status and body; requests started with uhttp_start are in
 * flight together (four slow ones take about the time of one, where one
 * after another they take four times as long); a job ends by itself
 * (uhttp_done), hands back its answer or its error once (uhttp_finish),
 * and owns copies of its arguments. Runs under ASan and, as it starts
 * threads, under TSan (make tsan-units).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "uhttp.h"

#define SLOW_MS 300

static char sock_path[108];
static int listen_fd = -1;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One connection: reads the head and a Content-Length body, then answers
 * "METHOD PATH BODY" (after SLOW_MS for a path starting /slow; 404 for
 * /missing) and closes.
 */
static void *
serve_one(void *arg)
{
	int fd = (int)(long)arg;
	char buf[8192], method[16] = "", path[256] = "", out[9000];
	size_t got = 0;
	char *end = NULL, *cl;
	long want = 0;
	ssize_t n;
	int status, len;

	while (got < sizeof(buf) - 1) {
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end != NULL) {
			cl = strcasestr(buf, "content-length:");
			want = cl != NULL && cl < end ? atol(cl + 15) : 0;
			if ((long)(got - (size_t)(end + 4 - buf)) >= want)
				break;
		}
	}
	if (end == NULL) {
		close(fd);
		return NULL;
	}
	sscanf(buf, "%15s %255s", method, path);
	if (strncmp(path, "/slow", 5) == 0)
		usleep(SLOW_MS * 1000);
	status = strcmp(path, "/missing") == 0 ? 404 : 200;
	*(end + 4 + want) = '\0';
	len = snprintf(out, sizeof(out), "%s %s %s", method, path, end + 4);
	if (strncmp(path, "/chunked", 8) == 0 || strcmp(path, "/cut") == 0) {
		/* as Go's server frames a body it did not measure: in chunks
		 * (one with an extension), then the last chunk and a trailer;
		 * /cut ends before its last chunk */
		int half = len / 2;

		dprintf(fd,
		    "HTTP/1.1 %d X\r\nTransfer-Encoding: chunked\r\n"
		    "Connection: close\r\n\r\n%x\r\n%.*s\r\n%x;x=1\r\n%s\r\n%s",
		    status, half, half, out, len - half, out + half,
		    strcmp(path, "/cut") == 0 ? "" : "0\r\nX-T: 1\r\n\r\n");
		close(fd);
		return NULL;
	}
	dprintf(fd,
	    "HTTP/1.1 %d X\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
	    "%s",
	    status, len, out);
	close(fd);
	return NULL;
}

static void *
serve(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_t t;
		int fd = accept(listen_fd, NULL, NULL);

		if (fd == -1) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (pthread_create(&t, NULL, serve_one, (void *)(long)fd) != 0)
			close(fd);
		else
			pthread_detach(t);
	}
}

static void
start_server(void)
{
	struct sockaddr_un a;
	pthread_t t;

	snprintf(sock_path, sizeof(sock_path), "/tmp/lb-uhttp-%d.sock",
	    (int)getpid());
	unlink(sock_path);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (listen_fd == -1 ||
	    bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(listen_fd, 64) == -1) {
		perror("test_uhttp: server");
		exit(1);
	}
	pthread_create(&t, NULL, serve, NULL);
	pthread_detach(t);
}

static void
test_request(void)
{
	struct uhttp_resp r;
	char err[512] = "";

	is_int(uhttp_request(sock_path, "POST", "/echo", "{\"a\":1}", 7, 5000,
		   &r, err, sizeof(err)),
	    0, "a request completes: %s", err);
	is_int(r.status, 200, "with its status");
	is_str(r.body, "POST /echo {\"a\":1}", "and its body");
	uhttp_resp_free(&r);
	is_int(uhttp_request(sock_path, "GET", "/missing", NULL, 0, 5000, &r,
		   err, sizeof(err)),
	    0, "any HTTP status is a result");
	is_int(r.status, 404, "a 404 with it");
	uhttp_resp_free(&r);
}

static void
test_together(void)
{
	struct uhttp_job *jobs[4];
	struct uhttp_resp r;
	char err[512], path[32], body[32], want[96];
	double t0 = now(), took;
	int i, all = 1;

	for (i = 0; i < 4; i++) {
		/* the arguments are copied: these buffers change at once */
		snprintf(path, sizeof(path), "/slow/%d", i);
		snprintf(body, sizeof(body), "body-%d", i);
		jobs[i] = uhttp_start(sock_path, "DELETE", path, body,
		    strlen(body), 5000, err, sizeof(err));
		ok(jobs[i] != NULL, "job %d started: %s", i,
		    jobs[i] ? "" : err);
		memset(path, 'x', sizeof(path) - 1);
		memset(body, 'y', sizeof(body) - 1);
	}
	ok(!uhttp_done(jobs[0]), "a slow job has not ended at once");
	for (i = 0; i < 4; i++) {
		if (jobs[i] == NULL)
			continue;
		if (uhttp_finish(jobs[i], &r, err, sizeof(err)) != 0) {
			all = 0;
			continue;
		}
		snprintf(want, sizeof(want), "DELETE /slow/%d body-%d", i, i);
		all = all && r.status == 200 && strcmp(r.body, want) == 0;
		uhttp_resp_free(&r);
	}
	took = now() - t0;
	ok(all, "each job hands back its own answer");
	ok(took < 2.5 * SLOW_MS / 1000.0,
	    "four slow requests were in flight together: %.3f s, one takes "
	    "%.3f s",
	    took, SLOW_MS / 1000.0);
}

static void
test_done(void)
{
	struct uhttp_job *j;
	struct uhttp_resp r;
	char err[512];
	double deadline = now() + 5;

	j = uhttp_start(sock_path, "GET", "/quick", NULL, 0, 5000, err,
	    sizeof(err));
	ok(j != NULL, "a quick job started");
	if (j == NULL)
		return;
	while (!uhttp_done(j) && now() < deadline)
		usleep(1000);
	ok(uhttp_done(j), "it ends by itself, before anyone waits for it");
	is_int(uhttp_finish(j, &r, err, sizeof(err)), 0, "and hands it back");
	is_str(r.body, "GET /quick ", "its body");
	uhttp_resp_free(&r);
}

/* Chunked answers are put together; one cut before its last chunk fails. */
static void
test_chunked(void)
{
	struct uhttp_resp r;
	char err[512] = "";

	is_int(uhttp_request(sock_path, "POST", "/chunked", "{\"b\":22}", 8,
		   5000, &r, err, sizeof(err)),
	    0, "a chunked answer completes: %s", err);
	is_int(r.status, 200, "with its status");
	is_str(r.body, "POST /chunked {\"b\":22}", "and its chunks joined");
	is_int((long)r.len, 22, "and their length");
	uhttp_resp_free(&r);
	is_int(uhttp_request(sock_path, "GET", "/cut", NULL, 0, 5000, &r, err,
		   sizeof(err)),
	    -1, "one without its last chunk fails");
	ok(strstr(err, "': the answer's chunks were cut short") != NULL,
	    "with the reason: %s", err);
	ok(r.body == NULL, "and no answer");
}

static void
test_failure(void)
{
	struct uhttp_job *j;
	struct uhttp_resp r;
	char err[512] = "";

	j = uhttp_start("/nonexistent/lb.sock", "GET", "/_ping", NULL, 0, 2000,
	    err, sizeof(err));
	ok(j != NULL, "a job to no socket starts");
	if (j == NULL)
		return;
	is_int(uhttp_finish(j, &r, err, sizeof(err)), -1,
	    "and fails when waited for");
	ok(strncmp(err,
	       "cannot request '/_ping' on '/nonexistent/lb.sock': ", 51) == 0,
	    "with the reason: %s", err);
	ok(r.body == NULL && r.len == 0, "and no answer");
}

int
main(void)
{
	start_server();
	test_request();
	test_together();
	test_done();
	test_chunked();
	test_failure();
	close(listen_fd);
	unlink(sock_path);
	return tap_done();
}
