/*
 * HTTP over a Unix socket with libcurl (uhttp.h): one easy handle per
 * request, the response body gathered in memory up to UHTTP_MAX; a
 * request of uhttp_start in a thread of its own, which owns its job
 * until it sets job->done, after which only uhttp_finish touches it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "common/errmsg.h"
#include "uhttp.h"

struct sink {
	char *buf;
	size_t len, cap;
	int over; /* the body passed UHTTP_MAX */
	int oom;
};

static size_t
sink_write(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t add = size * n;

	if (add > UHTTP_MAX - s->len) {
		s->over = 1;
		return 0;
	}
	if (s->len + add + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *p;

		while (cap < s->len + add + 1)
			cap *= 2;
		p = realloc(s->buf, cap);
		if (p == NULL) {
			s->oom = 1;
			return 0;
		}
		s->buf = p;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, add);
	s->len += add;
	s->buf[s->len] = '\0';
	return add;
}

/*
 * The request on c: method on url through the Unix socket sock, within
 * timeout_ms, its error in cerr (CURL_ERROR_SIZE bytes), the answer to s.
 */
static void
set_request(CURL *c, const char *sock, const char *url, const char *method,
    long timeout_ms, char *cerr, struct sink *s)
{
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
}

/* libcurl's global state, set up once, before any request's thread. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void
curl_setup(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int
uhttp_request(const char *sock, const char *method, const char *path,
    const char *body, size_t len, long timeout_ms, struct uhttp_resp *resp,
    char *err, size_t errlen)
{
	struct sink s = { NULL, 0, 0, 0, 0 };
	struct curl_slist *hdr = NULL;
	char url[2048], cerr[CURL_ERROR_SIZE] = "";
	CURL *c = NULL;
	CURLcode rc;
	int ret = -1;

	memset(resp, 0, sizeof(*resp));
	pthread_once(&curl_once, curl_setup);
	if (snprintf(url, sizeof(url), "http://d%s", path) >=
	    (int)sizeof(url)) {
		snprintf(err, errlen, "cannot request '%s': path too long",
		    path);
		return -1;
	}
	c = curl_easy_init();
	if (c == NULL) {
		snprintf(err, errlen, "cannot request '%s': out of memory",
		    path);
		return -1;
	}
	set_request(c, sock, url, method, timeout_ms, cerr, &s);
	if (body != NULL) {
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		if (hdr == NULL) {
			snprintf(err, errlen,
			    "cannot request '%s': out of memory", path);
			goto out;
		}
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)len);
	}
	rc = curl_easy_perform(c);
	if (s.over) {
		snprintf(err, errlen,
		    "cannot request '%s': the answer is over %u bytes", path,
		    UHTTP_MAX);
		goto out;
	}
	if (s.oom) {
		snprintf(err, errlen, "cannot request '%s': out of memory",
		    path);
		goto out;
	}
	if (rc != CURLE_OK) {
		errmsg_lower(cerr);
		snprintf(err, errlen, "cannot request '%s' on '%s': %s", path,
		    sock, cerr[0] ? cerr : curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	if (s.buf == NULL) {
		s.buf = calloc(1, 1);
		if (s.buf == NULL) {
			snprintf(err, errlen,
			    "cannot request '%s': out of memory", path);
			goto out;
		}
	}
	resp->body = s.buf;
	resp->len = s.len;
	s.buf = NULL;
	ret = 0;
out:
	free(s.buf);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	return ret;
}

void
uhttp_resp_free(struct uhttp_resp *resp)
{
	free(resp->body);
	memset(resp, 0, sizeof(*resp));
}

struct uhttp_job {
	pthread_t thread;
	char *sock, *method, *path, *body; /* copies, freed by uhttp_finish */
	size_t len;
	long timeout_ms;
	int ret; /* uhttp_request's, with resp and err: set before done */
	struct uhttp_resp resp;
	char err[512];
	int done; /* set (atomically) by the thread as its last act */
};

static void
job_free(struct uhttp_job *job)
{
	free(job->sock);
	free(job->method);
	free(job->path);
	free(job->body);
	free(job);
}

static void *
job_run(void *arg)
{
	struct uhttp_job *job = arg;

	job->ret = uhttp_request(job->sock, job->method, job->path, job->body,
	    job->len, job->timeout_ms, &job->resp, job->err, sizeof(job->err));
	__atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct uhttp_job *
uhttp_start(const char *sock, const char *method, const char *path,
    const char *body, size_t len, long timeout_ms, char *err, size_t errlen)
{
	struct uhttp_job *job;
	sigset_t all, old;
	int e;

	job = calloc(1, sizeof(*job));
	if (job == NULL)
		goto oom;
	job->sock = strdup(sock);
	job->method = strdup(method);
	job->path = strdup(path);
	if (body != NULL) {
		/* one byte more: curl reads POSTFIELDS by its size, tests by NUL */
		job->body = malloc(len + 1);
		if (job->body != NULL) {
			memcpy(job->body, body, len);
			job->body[len] = '\0';
		}
	}
	if (job->sock == NULL || job->method == NULL || job->path == NULL ||
	    (body != NULL && job->body == NULL))
		goto oom;
	job->len = len;
	job->timeout_ms = timeout_ms;
	pthread_once(&curl_once, curl_setup);
	/* the thread starts with every signal blocked: they stay ours */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&job->thread, NULL, job_run, job);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		char why[128];

		errmsg_strerror(e, why, sizeof(why));
		snprintf(err, errlen,
		    "cannot request '%s': cannot start a thread: %s", path,
		    why);
		job_free(job);
		return NULL;
	}
	return job;
oom:
	snprintf(err, errlen, "cannot request '%s': out of memory", path);
	if (job != NULL)
		job_free(job);
	return NULL;
}

int
uhttp_done(struct uhttp_job *job)
{
	return __atomic_load_n(&job->done, __ATOMIC_ACQUIRE);
}

int
uhttp_finish(struct uhttp_job *job, struct uhttp_resp *resp, char *err,
    size_t errlen)
{
	int ret;

	pthread_join(job->thread, NULL);
	ret = job->ret;
	*resp = job->resp;
	if (ret == -1)
		snprintf(err, errlen, "%s", job->err);
	job_free(job);
	return ret;
}
