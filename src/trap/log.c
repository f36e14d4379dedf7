/*
 * The trap's records (see trap.h): JSON lines built by hand, so that the
 * field order is fixed and "t" keeps its milliseconds, and the capped,
 * locked egress.jsonl they go to. Strings are written by the one JSON
 * writer (src/common/jsonw.h) in its dialect; since issue 28 that writes
 * \b and \f short, where \u0008 and \u000c were written before (the
 * format has no version field; both parse to the same strings).
 *
 * Every line begins {"t":1764574021.123,"kind":"...". The kinds:
 *
 *	dns	 proto "udp"|"tcp", name, type ("A"... or a number), class
 *		 ("IN"... or a number); or, for a message that does not
 *		 parse: proto, error, raw|raw_base64 (the packet, capped)
 *	http	 method, target, version, headers [[name, value], ...] (read
 *		 as UTF-8, else Latin-1), head|head_base64 (the request line
 *		 and headers byte-exact), body|body_base64 (at most the body
 *		 cap), body_bytes (the full length), truncated, tls, and with
 *		 tls: sni (null without SNI); connect (the CONNECT target,
 *		 "" for direct TLS, absent outside a tunnel); error when the
 *		 body was cut short or malformed. Bytes that never made a
 *		 head (not HTTP, cut short, too long, too slow) give only
 *		 head|head_base64, tls, sni, connect and error
 *	connect	 target, head|head_base64
 *	tunnel	 connect, data|data_base64 (first bytes of a tunnel that is
 *		 not TLS), data_bytes, truncated
 *	tls	 connect, sni, error (a handshake that failed: e.g. the
 *		 client did not trust the CA)
 *	busy	 max_conns, data|data_base64, data_bytes, truncated: a
 *		 connection over the concurrency cap and what it sent within a
 *		 second (up to TRAP_RAW_CAP); on the simulated internet also
 *		 name, addr, port
 *	tcp	 name (null for an address no name was given), addr, port,
 *		 tls (and sni), proto "raw"|"smtp"|"ftp", data|data_base64
 *		 (what the client sent, up to the body cap), data_bytes,
 *		 truncated, error; "connect" instead of name/addr/port for an
 *		 SMTP or FTP dialog inside a CONNECT
 *	udp	 name, addr, port, data|data_base64, data_bytes, truncated
 *	icmp	 name, addr, type (8: an echo request, which the kernel
 *		 answers), id, seq, data|data_base64, data_bytes, truncated
 *	http	 (and tls) on the simulated internet: name, addr, port too
 *	cap	 reason "records"|"bytes", records, bytes: the last record
 *	dropped	 count, kept: at exit, attempts not stored after the cap,
 *		 and those stored after it because they hold a secret
 *
 * Caps: at most max_records lines (the cap record included) and max_bytes
 * bytes; the cap record is written while both still allow it, so the file
 * never exceeds either (the final "dropped" line excepted), except for
 * the attempts kept past the cap (trap_log_keep), at most TRAP_MAX_KEPT
 * bytes more.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/files.h"
#include "common/jsonw.h"
#include "trap/trap.h"

/* Room kept for the cap record under max_bytes. */
#define CAP_RESERVE 160

static void
jl_key(struct jline *j, const char *key)
{
	if (j->nfields++ > 0)
		buf_add(&j->b, ",", 1);
	jw_string(&j->b, key, strlen(key));
	buf_add(&j->b, ":", 1);
}

void
jl_begin_at(struct jline *j, const char *kind, long long sec, long msec)
{
	char t[64];
	int n;

	memset(j, 0, sizeof(*j));
	buf_grow(&j->b, 0, 512);
	n = snprintf(t, sizeof(t), "{\"t\":%lld.%03ld", sec, msec);
	buf_add(&j->b, t, (size_t)n);
	j->nfields = 1;
	jl_str(j, "kind", kind, strlen(kind));
}

void
jl_begin(struct jline *j, const char *kind)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	jl_begin_at(j, kind, (long long)ts.tv_sec, ts.tv_nsec / 1000000);
}

void
jl_str(struct jline *j, const char *key, const char *s, size_t n)
{
	jl_key(j, key);
	jw_text(&j->b, s, n);
}

void
jl_bytes(struct jline *j, const char *key, const void *s, size_t n)
{
	char k64[64], *b;

	if (jw_utf8_valid(s, n)) {
		jl_key(j, key);
		jw_string(&j->b, s, n);
		return;
	}
	snprintf(k64, sizeof(k64), "%s_base64", key);
	jl_key(j, k64);
	b = jw_base64(s, n);
	if (b == NULL) {
		j->b.oom = 1;
		return;
	}
	jw_string(&j->b, b, strlen(b));
	free(b);
}

void
jl_headers(struct jline *j, const char *key, const struct http_header *h,
    size_t n)
{
	size_t i;

	jl_key(j, key);
	buf_add(&j->b, "[", 1);
	for (i = 0; i < n; i++) {
		buf_add(&j->b, i ? ",[" : "[", i ? 2 : 1);
		jw_text(&j->b, h[i].name, strlen(h[i].name));
		buf_add(&j->b, ",", 1);
		jw_text(&j->b, h[i].value, strlen(h[i].value));
		buf_add(&j->b, "]", 1);
	}
	buf_add(&j->b, "]", 1);
}

void
jl_int(struct jline *j, const char *key, long long v)
{
	char num[32];
	int n;

	jl_key(j, key);
	n = snprintf(num, sizeof(num), "%lld", v);
	buf_add(&j->b, num, (size_t)n);
}

void
jl_bool(struct jline *j, const char *key, int v)
{
	jl_key(j, key);
	buf_add(&j->b, v ? "true" : "false", v ? 4 : 5);
}

void
jl_raw(struct jline *j, const char *key, const char *json)
{
	jl_key(j, key);
	buf_add(&j->b, json, strlen(json));
}

void
jl_end(struct jline *j)
{
	buf_add(&j->b, "}\n", 2);
}

void
jl_free(struct jline *j)
{
	buf_free(&j->b);
	j->nfields = 0;
}

size_t
trap_escape_label(const unsigned char *s, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (o + 5 > outlen)
			break;
		if (c == '.' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c > 0x20 && c < 0x7f) {
			out[o++] = (char)c;
		} else {
			o += (size_t)snprintf(out + o, outlen - o, "\\%03u", c);
		}
	}
	if (o < outlen)
		out[o] = '\0';
	return o;
}

int
trap_log_open(struct trap_log *l, const char *dir, unsigned long max_records,
    size_t max_bytes, char *err, size_t errlen)
{
	char *path = NULL;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->max_records = max_records < 1 ? 1 : max_records;
	l->max_bytes = max_bytes < CAP_RESERVE ? CAP_RESERVE : max_bytes;
	if (file_mkdirs(dir) < 0) {
		errmsg_set(err, errlen, "cannot create records directory", dir,
		    errno);
		return -1;
	}
	if (asprintf(&path, "%s/egress.jsonl", dir) < 0) {
		snprintf(err, errlen, "cannot open records: out of memory");
		return -1;
	}
	l->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (l->fd < 0) {
		errmsg_set(err, errlen, "cannot open records file", path,
		    errno);
		free(path);
		return -1;
	}
	(void)fchmod(l->fd, 0644);
	free(path);
	pthread_mutex_init(&l->mu, NULL);
	return 0;
}

/* Writes the cap record; the lock is held. */
static void
put_cap(struct trap_log *l, const char *reason)
{
	struct jline c;

	jl_begin(&c, "cap");
	jl_str(&c, "reason", reason, strlen(reason));
	jl_int(&c, "records", (long long)l->records + 1);
	jl_int(&c, "bytes", (long long)l->bytes);
	jl_end(&c);
	if (!c.b.oom && file_write_all(l->fd, c.b.p, c.b.len) == 0) {
		l->records++;
		l->bytes += c.b.len;
	}
	jl_free(&c);
	l->capped = 1;
}

static int
unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
trap_log_keep(struct trap_log *l, const char *path, char *err, size_t errlen)
{
	struct scan_secret sec[64];
	unsigned char *buf[64];
	char line[2 * SCAN_MAX_SECRET + 2];
	size_t n = 0, i, k;
	FILE *f = fopen(path, "re");
	int rc = -1, hi, lo;

	if (f == NULL) {
		errmsg_set(err, errlen, "cannot read secrets file", path,
		    errno);
		return -1;
	}
	while (n < 64 && fgets(line, sizeof(line), f) != NULL) {
		k = strcspn(line, "\r\n");
		if (k == 0)
			continue;
		if (k % 2 != 0 || (buf[n] = malloc(k / 2)) == NULL) {
			snprintf(err, errlen,
			    "cannot read secrets file '%s': line %zu is not "
			    "hex",
			    path, n + 1);
			goto out;
		}
		for (i = 0; i < k / 2; i++) {
			hi = unhex(line[2 * i]);
			lo = unhex(line[2 * i + 1]);
			if (hi < 0 || lo < 0)
				break;
			buf[n][i] = (unsigned char)(hi << 4 | lo);
		}
		sec[n].bytes = buf[n];
		sec[n].len = k / 2;
		n++;
		if (i < k / 2) {
			snprintf(err, errlen,
			    "cannot read secrets file '%s': line %zu is not "
			    "hex",
			    path, n);
			goto out;
		}
	}
	rc = n == 0 ? 0 : scan_compile(&l->keep, sec, n, 0, 0, err, errlen);
out:
	for (i = 0; i < n; i++)
		free(buf[i]);
	fclose(f);
	return rc;
}

/*
 * Past the cap: stores J when it holds a secret and the kept budget
 * allows; the lock is held. 1 when stored.
 */
static int
keep_match(struct trap_log *l, const struct jline *j)
{
	struct scan_result res;
	int found;

	if (l->keep == NULL || j->b.len > TRAP_MAX_KEPT - l->kept_bytes)
		return 0;
	memset(&res, 0, sizeof(res));
	found = scan_buffer(l->keep, j->b.p, j->b.len, &res) == 0 && res.n > 0;
	scan_result_free(&res);
	if (!found || file_write_all(l->fd, j->b.p, j->b.len) != 0)
		return 0;
	l->kept++;
	l->kept_bytes += j->b.len;
	return 1;
}

int
trap_log_put(struct trap_log *l, struct jline *j)
{
	int rc = 0;

	if (j->b.oom || j->b.p == NULL) {
		jl_free(j);
		return -1;
	}
	pthread_mutex_lock(&l->mu);
	if (l->capped) {
		rc = keep_match(l, j) ? 0 : (l->dropped++, 1);
	} else if (l->records + 1 >= l->max_records) {
		put_cap(l, "records");
		rc = keep_match(l, j) ? 0 : (l->dropped++, 1);
	} else if (j->b.len > l->max_bytes - CAP_RESERVE ||
	    l->bytes > l->max_bytes - CAP_RESERVE - j->b.len) {
		put_cap(l, "bytes");
		rc = keep_match(l, j) ? 0 : (l->dropped++, 1);
	} else if (file_write_all(l->fd, j->b.p, j->b.len) == 0) {
		l->records++;
		l->bytes += j->b.len;
	} else {
		rc = -1;
	}
	pthread_mutex_unlock(&l->mu);
	jl_free(j);
	return rc;
}

void
trap_log_finish(struct trap_log *l)
{
	struct jline d;

	if (l->fd < 0)
		return;
	pthread_mutex_lock(&l->mu);
	if (l->dropped > 0 || l->kept > 0) {
		jl_begin(&d, "dropped");
		jl_int(&d, "count", (long long)l->dropped);
		jl_int(&d, "kept", (long long)l->kept);
		jl_end(&d);
		if (!d.b.oom)
			(void)file_write_all(l->fd, d.b.p, d.b.len);
		jl_free(&d);
		l->dropped = 0;
	}
	pthread_mutex_unlock(&l->mu);
}

void
trap_log_close(struct trap_log *l)
{
	scan_free(l->keep);
	l->keep = NULL;
	if (l->fd >= 0) {
		close(l->fd);
		pthread_mutex_destroy(&l->mu);
	}
	l->fd = -1;
}
