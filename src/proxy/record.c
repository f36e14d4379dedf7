/*
 * Writing the proxy's records (see record.h for the format and the
 * guarantees). Nothing here is lossy: bodies are either valid UTF-8 text
 * or base64 of the exact bytes, and decoding a compressed body only ever
 * adds fields next to the original.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "common/errmsg.h"
#include "common/files.h"
#include "common/jsonw.h"
#include "proxy/record.h"

static const char *const secret_headers[] = { "x-api-key", "authorization",
	"proxy-authorization", "cookie", NULL };

int
wire_is_secret_header(const char *name)
{
	for (int i = 0; secret_headers[i] != NULL; i++)
		if (strcasecmp(name, secret_headers[i]) == 0)
			return 1;
	return 0;
}

/* One inflate pass with the given window bits. 0, or -1 with *why. */
static int
inflate_with(const unsigned char *in, size_t len, int wbits,
    unsigned char **out, size_t *outlen, const char **why)
{
	z_stream z;
	unsigned char *buf = NULL, *nb;
	size_t cap = 0, used = 0;
	int rc;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, wbits) != Z_OK) {
		*why = "cannot start zlib";
		return -1;
	}
	z.next_in = (unsigned char *)(uintptr_t)in;
	for (;;) {
		/* Feed in slices: avail_in is only 32 bits wide. */
		if (z.avail_in == 0 && (size_t)(z.next_in - in) < len) {
			size_t left = len - (size_t)(z.next_in - in);

			z.avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
		}
		if (cap - used < 65536) {
			size_t ncap = cap ? cap * 2 : 65536 + len * 2;

			if (ncap > WIRE_MAX_DECODED + 65536)
				ncap = WIRE_MAX_DECODED + 65536;
			if (ncap <= cap) {
				*why = WIRE_DECODED_OVER;
				goto fail;
			}
			nb = realloc(buf, ncap + 1);
			if (nb == NULL) {
				*why = "out of memory";
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		z.next_out = buf + used;
		z.avail_out = (uInt)(cap - used);
		rc = inflate(&z, Z_NO_FLUSH);
		used = cap - z.avail_out;
		if (used > WIRE_MAX_DECODED) {
			*why = WIRE_DECODED_OVER;
			goto fail;
		}
		if (rc == Z_STREAM_END)
			break;
		if (rc == Z_BUF_ERROR && z.avail_in == 0 &&
		    (size_t)(z.next_in - in) >= len) {
			*why = "compressed body is truncated";
			goto fail;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			*why = rc == Z_DATA_ERROR ?
			    "compressed body is corrupt" :
			    "cannot decompress the body";
			goto fail;
		}
	}
	if ((size_t)(z.next_in - in) != len) {
		*why = "bytes after the end of the compressed body";
		goto fail;
	}
	inflateEnd(&z);
	buf[used] = '\0';
	*out = buf;
	*outlen = used;
	return 0;
fail:
	inflateEnd(&z);
	free(buf);
	return -1;
}

int
wire_inflate(const unsigned char *in, size_t len, int gzip, unsigned char **out,
    size_t *outlen, const char **why)
{
	if (gzip)
		return inflate_with(in, len, 16 + MAX_WBITS, out, outlen, why);
	/* "deflate" is zlib-wrapped by the standard, raw in the wild. */
	if (inflate_with(in, len, MAX_WBITS, out, outlen, why) == 0)
		return 0;
	if (strcmp(*why, WIRE_DECODED_OVER) == 0)
		return -1; /* it was zlib, and too big: say so */
	return inflate_with(in, len, -MAX_WBITS, out, outlen, why);
}

json_t *
wire_text(const char *s, size_t n)
{
	json_t *j;
	char *u;

	if (jw_utf8_valid(s, n) && (j = json_stringn(s, n)) != NULL)
		return j;
	u = malloc(2 * n + 1);
	if (u == NULL)
		return NULL;
	j = json_stringn(u, jw_latin1(s, n, u));
	free(u);
	return j;
}

/*
 * Adds key (text) or key_base64 to obj for the bytes, scrubbed of the
 * credential first: text when they are valid UTF-8 and the escapes of
 * their control bytes keep them within 62 bytes of base64 (a short text
 * stays readable). Returns whether the bytes were valid UTF-8; -1 when out
 * of memory.
 */
static int
add_bytes(json_t *obj, const char *key, const unsigned char *data, size_t len,
    const struct cred *cred)
{
	unsigned char *scrubbed;
	size_t slen, extra;
	char k64[64];
	int utf8;

	scrubbed = cred_scrub(cred, data, len, &slen);
	if (scrubbed != NULL) {
		data = scrubbed;
		len = slen;
	}
	utf8 = jw_utf8_scan(data, len, &extra);
	if (utf8 && len + 2 + extra <= (len + 2) / 3 * 4 + 64) {
		/* Checked just above: spare jansson a second pass. */
		json_object_set_new(obj, key,
		    json_stringn_nocheck((const char *)data, len));
	} else {
		char *b = jw_base64(data, len);

		snprintf(k64, sizeof(k64), "%s_base64", key);
		json_object_set_new(obj, k64, b ? json_string(b) : json_null());
		free(b);
	}
	free(scrubbed);
	return utf8;
}

/* Adds content_encoding and the decoded body (or decode_error). */
static void
add_decoded(json_t *rec, const struct http_request *req,
    const struct cred *cred)
{
	const char *ce = http_header(req, "content-encoding");
	unsigned char *dec = NULL;
	size_t dlen = 0;
	const char *why = NULL;
	int gzip;

	if (ce == NULL)
		return;
	json_object_set_new(rec, "content_encoding", wire_text(ce, strlen(ce)));
	if (strcasecmp(ce, "gzip") == 0 || strcasecmp(ce, "x-gzip") == 0)
		gzip = 1;
	else if (strcasecmp(ce, "deflate") == 0)
		gzip = 0;
	else
		return;
	if (wire_inflate(req->body, req->body_len, gzip, &dec, &dlen, &why) ==
	    0) {
		add_bytes(rec, "body_decoded", dec, dlen, cred);
		free(dec);
	} else {
		json_object_set_new(rec, "decode_error", json_string(why));
	}
}

/* "2026-11-29T16:05:01.123Z" */
static json_t *
iso_time(const struct timespec *ts)
{
	struct tm tm;
	char buf[96];

	gmtime_r(&ts->tv_sec, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, ts->tv_nsec / 1000000);
	return json_string(buf);
}

/* A JSON string of text that may hold the credential. */
static json_t *
scrubbed_text(const char *s, size_t n, const struct cred *cred)
{
	size_t sl;
	unsigned char *sc = cred_scrub(cred, s, n, &sl);
	json_t *j;

	j = sc ? wire_text((char *)sc, sl) : wire_text(s, n);
	free(sc);
	return j;
}

json_t *
wire_request_record(const struct http_request *req, unsigned long seq,
    const struct timespec *when, const struct cred *cred)
{
	json_t *rec, *hdrs;
	size_t i;
	int utf8;

	rec = json_object();
	hdrs = json_array();
	if (rec == NULL || hdrs == NULL) {
		json_decref(rec);
		json_decref(hdrs);
		return NULL;
	}
	json_object_set_new(rec, "seq", json_integer((json_int_t)seq));
	json_object_set_new(rec, "time", iso_time(when));
	json_object_set_new(rec, "method", json_string(req->method));
	json_object_set_new(rec, "target",
	    scrubbed_text(req->target, strlen(req->target), cred));
	json_object_set_new(rec, "path",
	    scrubbed_text(req->path, strlen(req->path), cred));
	for (i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];
		json_t *pair = json_array();

		json_array_append_new(pair, json_string(h->name));
		if (wire_is_secret_header(h->name))
			json_array_append_new(pair, json_string("[removed]"));
		else
			json_array_append_new(pair,
			    scrubbed_text(h->value, strlen(h->value), cred));
		json_array_append_new(hdrs, pair);
	}
	json_object_set_new(rec, "headers", hdrs);
	utf8 = add_bytes(rec, "body", req->body, req->body_len, cred);
	json_object_set_new(rec, "body_utf8", json_boolean(utf8 == 1));
	add_decoded(rec, req, cred);
	return rec;
}

/* The most bytes n bytes can become when the credential is scrubbed. */
static size_t
scrub_max(const struct cred *c, size_t n)
{
	const size_t ml = sizeof(CRED_MARK) - 1;

	if (c == NULL || c->token == NULL || c->len == 0 || c->len >= ml)
		return n;
	return n + n / c->len * (ml - c->len);
}

size_t
wire_request_bound(const struct http_request *req, const struct cred *cred)
{
	size_t b, i;

	if (http_header(req, "content-encoding") != NULL)
		return 0;
	/* Keys, seq, time, punctuation, body_utf8. */
	b = 256;
	/* A JSON escape is at most 6 bytes a byte, Latin-1 only 2. */
	b += 6 * strlen(req->method);
	b += 6 * scrub_max(cred, strlen(req->target));
	b += 6 * scrub_max(cred, strlen(req->path));
	for (i = 0; i < req->nheaders; i++)
		b += 8 + 6 * strlen(req->headers[i].name) +
		    6 * scrub_max(cred, strlen(req->headers[i].value));
	/*
	 * add_bytes: text while its control escapes keep it within 62 bytes
	 * of base64; quotes and backslashes may add one byte each on top.
	 */
	b += 16 + scrub_max(cred, req->body_len) * 7 / 3 + 72;
	return b;
}

/*
 * What earlier proxies left in DIR/responses: the bytes of its files, and
 * the highest NNNNNN of a NNNNNN.body (a sequence number to stay above).
 */
static void
count_responses(const char *dir, unsigned long long *bytes, unsigned long *top)
{
	char *path = NULL;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int dfd;

	if (asprintf(&path, "%s/responses", dir) < 0)
		return;
	d = opendir(path);
	free(path);
	if (d == NULL)
		return;
	dfd = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		char *end;
		unsigned long n;

		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		*bytes += (unsigned long long)st.st_size;
		n = strtoul(e->d_name, &end, 10);
		if (end != e->d_name && strcmp(end, ".body") == 0 && n > *top)
			*top = n;
	}
	closedir(d);
}

int
wire_open(struct wire_log *w, const char *dir, const struct cred *cred,
    char *err, size_t errlen)
{
	char *path = NULL;
	char buf[65536];
	unsigned long lines = 0, top = 0;
	struct stat st;
	ssize_t n;
	int fd;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->cred = cred;
	w->next_seq = 1;
	if (file_mkdirs(dir) < 0) {
		errmsg_set(err, errlen, "cannot create records directory", dir,
		    errno);
		return -1;
	}
	if (asprintf(&path, "%s/responses", dir) < 0 || file_mkdirs(path) < 0) {
		errmsg_set(err, errlen, "cannot create records directory",
		    path ? path : dir, errno);
		free(path);
		return -1;
	}
	free(path);
	if (asprintf(&path, "%s/wire.jsonl", dir) < 0)
		return -1;
	/* Continue the numbering and the totals of what is there. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			for (ssize_t i = 0; i < n; i++)
				lines += buf[i] == '\n';
		close(fd);
	}
	w->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		errmsg_set(err, errlen, "cannot open records file", path,
		    errno);
		free(path);
		return -1;
	}
	free(path);
	if (fstat(w->fd, &st) == 0)
		w->nbytes = (unsigned long long)st.st_size;
	count_responses(dir, &w->nbytes, &top);
	w->nrecords = lines;
	/* Requests refused or lost leave gaps: never reuse a number. */
	w->next_seq = (lines > top ? lines : top) + 1;
	w->dir = strdup(dir);
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->cap_mu, NULL);
	return 0;
}

void
wire_close(struct wire_log *w)
{
	if (w->fd >= 0) {
		close(w->fd);
		pthread_mutex_destroy(&w->mu);
		pthread_mutex_destroy(&w->cap_mu);
	}
	free(w->dir);
	w->fd = -1;
	w->dir = NULL;
}

void
wire_set_caps(struct wire_log *w, unsigned long max_records,
    unsigned long long max_bytes)
{
	pthread_mutex_lock(&w->cap_mu);
	w->max_records = max_records;
	w->max_bytes = max_bytes;
	pthread_mutex_unlock(&w->cap_mu);
}

int
wire_reserve(struct wire_log *w, unsigned long records, size_t bytes)
{
	int rc = WIRE_CAP_NONE;

	pthread_mutex_lock(&w->cap_mu);
	if (w->max_records > 0 && records > 0 &&
	    w->nrecords + records > w->max_records)
		rc = WIRE_CAP_RECORDS;
	else if (w->max_bytes > 0 &&
	    (w->nbytes >= w->max_bytes || bytes > w->max_bytes - w->nbytes))
		rc = WIRE_CAP_BYTES;
	if (rc == WIRE_CAP_NONE) {
		w->nrecords += records;
		w->nbytes += bytes;
	}
	pthread_mutex_unlock(&w->cap_mu);
	return rc;
}

void
wire_unreserve(struct wire_log *w, unsigned long records, size_t bytes)
{
	pthread_mutex_lock(&w->cap_mu);
	w->nrecords -= records < w->nrecords ? records : w->nrecords;
	w->nbytes -= bytes < w->nbytes ? bytes : w->nbytes;
	pthread_mutex_unlock(&w->cap_mu);
}

/* Sets the byte total to what was written instead of what was reserved. */
static void
settle(struct wire_log *w, size_t reserved, size_t used)
{
	pthread_mutex_lock(&w->cap_mu);
	w->nbytes -= reserved < w->nbytes ? reserved : w->nbytes;
	w->nbytes += used;
	pthread_mutex_unlock(&w->cap_mu);
}

unsigned long
wire_next_seq(struct wire_log *w)
{
	return __atomic_fetch_add(&w->next_seq, 1, __ATOMIC_RELAXED);
}

int
wire_write_response(struct wire_log *w, unsigned long seq, const void *data,
    size_t len, json_t *rec)
{
	char rel[64], *path = NULL;
	unsigned char *sc;
	size_t sl;
	int fd, rc;

	snprintf(rel, sizeof(rel), "responses/%06lu.body", seq);
	json_object_set_new(rec, "response_file", json_string(rel));
	json_object_set_new(rec, "response_bytes",
	    json_integer((json_int_t)len));
	if (asprintf(&path, "%s/%s", w->dir, rel) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	free(path);
	if (fd < 0)
		return -1;
	sc = cred_scrub(w->cred, data, len, &sl);
	rc = sc ? file_write_all(fd, sc, sl) : file_write_all(fd, data, len);
	if (sc != NULL)
		settle(w, len, sl);
	free(sc);
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

static void
ob_value(struct buf *o, json_t *v)
{
	char num[64];
	const char *key;
	json_t *x;
	size_t i;
	int n, first = 1;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		buf_add(o, "{", 1);
		json_object_foreach(v, key, x)
		{
			if (!first)
				buf_add(o, ",", 1);
			first = 0;
			jw_string(o, key, strlen(key));
			buf_add(o, ":", 1);
			ob_value(o, x);
		}
		buf_add(o, "}", 1);
		break;
	case JSON_ARRAY:
		buf_add(o, "[", 1);
		json_array_foreach(v, i, x)
		{
			if (i > 0)
				buf_add(o, ",", 1);
			ob_value(o, x);
		}
		buf_add(o, "]", 1);
		break;
	case JSON_STRING:
		jw_string(o, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		buf_add(o, num, (size_t)n);
		break;
	case JSON_REAL:
		/* As jansson: "1e21" (no '+', no leading exponent zeros),
		 * and ".0" on anything that would read as an integer. */
		n = snprintf(num, sizeof(num), "%.12g", json_real_value(v));
		{
			char *e = strchr(num, 'e'), *d, *z;

			if (e != NULL) {
				d = e + 1;
				if (*d == '-')
					d++;
				z = d;
				while (*z == '+' || *z == '0')
					z++;
				memmove(d, z, strlen(z) + 1);
				n = (int)strlen(num);
			} else if (strchr(num, '.') == NULL) {
				n += snprintf(num + n, sizeof(num) - (size_t)n,
				    ".0");
			}
		}
		buf_add(o, num, (size_t)n);
		break;
	case JSON_TRUE:
		buf_add(o, "true", 4);
		break;
	case JSON_FALSE:
		buf_add(o, "false", 5);
		break;
	default:
		buf_add(o, "null", 4);
		break;
	}
}

char *
wire_dump(json_t *v, size_t *len)
{
	struct buf o = { 0 };
	size_t guess = 4096;

	/* Most of a record is its body: start big enough for it. */
	if (json_is_object(v)) {
		const char *k;
		json_t *x;

		json_object_foreach(v, k, x) if (json_is_string(x))
		    guess += json_string_length(x) + json_string_length(x) / 8;
	}
	buf_grow(&o, 0, guess);
	ob_value(&o, v);
	/* Room for the spare byte after the NUL that wire_dump promises. */
	buf_grow(&o, 1, 0);
	return buf_take(&o, len);
}

/* Scrubs and writes one whole line; the bytes written in *written. */
static int
write_line(struct wire_log *w, char *line, size_t len, size_t *written)
{
	unsigned char *sc;
	size_t sl;
	int rc;

	sc = cred_scrub(w->cred, line, len, &sl);
	pthread_mutex_lock(&w->mu);
	rc = sc ? file_write_all(w->fd, sc, sl) :
		  file_write_all(w->fd, line, len);
	pthread_mutex_unlock(&w->mu);
	*written = sc ? sl : len;
	free(sc);
	return rc;
}

int
wire_append(struct wire_log *w, json_t *rec)
{
	char *line;
	size_t len, written;
	int rc;

	line = wire_dump(rec, &len);
	if (line == NULL) {
		errno = ENOMEM;
		return -1;
	}
	line[len] = '\n'; /* overwrites the NUL; length is tracked */
	rc = write_line(w, line, len + 1, &written);
	pthread_mutex_lock(&w->cap_mu);
	w->nrecords++;
	w->nbytes += written;
	pthread_mutex_unlock(&w->cap_mu);
	free(line);
	return rc;
}

int
wire_append_parts(struct wire_log *w, char *head, size_t head_len, json_t *tail,
    size_t reserved)
{
	char *t, *line;
	size_t tlen, len, written;
	int rc;

	if (head_len < 2 || head[0] != '{' || head[head_len - 1] != '}') {
		free(head);
		errno = EINVAL;
		return -1;
	}
	t = wire_dump(tail, &tlen);
	/* In place: the head is most of the line (its body). */
	if (t == NULL || (line = realloc(head, head_len + tlen + 1)) == NULL) {
		free(t);
		free(head);
		errno = ENOMEM;
		return -1;
	}
	/* "{a}" + "{b}" -> "{a,b}\n"; an empty side adds no comma. */
	len = head_len - 1;
	if (tlen > 2 && head_len > 2)
		line[len++] = ',';
	memcpy(line + len, t + 1, tlen - 1);
	len += tlen - 1;
	line[len++] = '\n';
	free(t);
	rc = write_line(w, line, len, &written);
	settle(w, reserved, rc == 0 ? written : 0);
	free(line);
	return rc;
}
