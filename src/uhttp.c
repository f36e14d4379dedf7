/*
 * HTTP over a Unix socket with libcurl (uhttp.h): one easy handle per
 * request, the response body gathered in memory up to UHTTP_MAX.
 */
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
