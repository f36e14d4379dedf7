/*
 * HTTP over a Unix socket (uhttp.h): fdpass.c's plain client, with no
 * descriptors along; a request of uhttp_start in a thread of its own,
 * which owns its job until it sets job->done, after which only
 * uhttp_finish touches it. (It used libcurl, whose dependencies, gnutls
 * and krb5 among them, cost every leakbench process about 16 ms of CPU
 * at its start: issue 26.)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "fdpass.h"
#include "uhttp.h"

int
uhttp_request(const char *sock, const char *method, const char *path,
    const char *body, size_t len, long timeout_ms, struct uhttp_resp *resp,
    char *err, size_t errlen)
{
	return fdpass_request(sock, method, path, body, body != NULL ? len : 0,
	    NULL, 0, timeout_ms, resp, err, errlen);
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
		/* one byte more: a NUL after it, for tests that read it so */
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
