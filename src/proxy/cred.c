/*
 * Credential file parsing and scrubbing (see cred.h). Every error message
 * names the file and the kind of problem only: a malformed file may hold a
 * real key with a typo, and error messages end up in logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "proxy/cred.h"

int
cred_parse(struct cred *c, const char *data, size_t len, const char *path,
    char *err, size_t errlen)
{
	const char *tok;
	size_t tlen, i;
	enum cred_kind kind;

	memset(c, 0, sizeof(*c));
	if (len > CRED_MAX_FILE) {
		snprintf(err, errlen,
		    "cannot use credential file '%s': over "
		    "%d bytes",
		    path, CRED_MAX_FILE);
		return -1;
	}
	if (len > 0 && data[len - 1] == '\n')
		len--;
	if (len >= 7 && memcmp(data, "apikey:", 7) == 0) {
		kind = CRED_APIKEY;
		tok = data + 7;
		tlen = len - 7;
	} else if (len >= 6 && memcmp(data, "oauth:", 6) == 0) {
		kind = CRED_OAUTH;
		tok = data + 6;
		tlen = len - 6;
	} else {
		snprintf(err, errlen,
		    "cannot use credential file '%s': "
		    "expected 'apikey:KEY' or 'oauth:TOKEN'",
		    path);
		return -1;
	}
	if (tlen == 0) {
		snprintf(err, errlen,
		    "cannot use credential file '%s': the "
		    "token is empty",
		    path);
		return -1;
	}
	for (i = 0; i < tlen; i++) {
		unsigned char ch = (unsigned char)tok[i];

		if (ch <= 0x20 || ch >= 0x7f) {
			snprintf(err, errlen,
			    "cannot use credential file "
			    "'%s': the token holds whitespace, control or "
			    "non-ASCII characters",
			    path);
			return -1;
		}
	}
	c->token = malloc(tlen + 1);
	if (c->token == NULL) {
		snprintf(err, errlen,
		    "cannot use credential file '%s': out "
		    "of memory",
		    path);
		return -1;
	}
	memcpy(c->token, tok, tlen);
	c->token[tlen] = '\0';
	c->len = tlen;
	c->kind = kind;
	return 0;
}

int
cred_load(struct cred *c, const char *path, char *err, size_t errlen)
{
	char buf[CRED_MAX_FILE + 2];
	size_t len = 0;
	ssize_t n;
	int fd, rc;

	memset(c, 0, sizeof(*c));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		errmsg_set(err, errlen, "cannot read credential file", path,
		    errno);
		return -1;
	}
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errmsg_set(err, errlen, "cannot read credential file",
			    path, errno);
			close(fd);
			explicit_bzero(buf, sizeof(buf));
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	rc = cred_parse(c, buf, len, path, err, errlen);
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

void
cred_free(struct cred *c)
{
	if (c->token != NULL) {
		explicit_bzero(c->token, c->len);
		free(c->token);
	}
	memset(c, 0, sizeof(*c));
}

unsigned char *
cred_scrub(const struct cred *c, const void *data, size_t len, size_t *outlen)
{
	const unsigned char *p = data, *end = p + len, *hit;
	const size_t ml = sizeof(CRED_MARK) - 1;
	unsigned char *out, *o;
	size_t count = 0;

	if (c == NULL || c->token == NULL || c->len == 0 || len < c->len)
		return NULL;
	for (hit = memmem(p, len, c->token, c->len); hit != NULL;
	     hit = memmem(hit + c->len, (size_t)(end - hit - c->len), c->token,
		 c->len))
		count++;
	if (count == 0)
		return NULL;
	out = malloc(len + count * ml + 1);
	if (out == NULL)
		abort(); /* never hand back the unscrubbed bytes */
	o = out;
	while ((hit = memmem(p, (size_t)(end - p), c->token, c->len)) != NULL) {
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, CRED_MARK, ml);
		o += ml;
		p = hit + c->len;
	}
	memcpy(o, p, (size_t)(end - p));
	o += end - p;
	*o = '\0';
	*outlen = (size_t)(o - out);
	return out;
}

char *
cred_scrub_str(const struct cred *c, char *s)
{
	size_t n;
	unsigned char *r;

	if (s == NULL)
		return NULL;
	r = cred_scrub(c, s, strlen(s), &n);
	if (r == NULL)
		return s;
	free(s);
	return (char *)r;
}
