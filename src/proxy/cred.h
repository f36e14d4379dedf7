/*
 * The recording proxy's upstream credential: read once from a file
 * ("apikey:KEY" or "oauth:TOKEN", one trailing newline allowed), kept in
 * memory only, never printed. cred_scrub replaces its bytes in anything
 * the proxy is about to write (defence in depth: nothing should contain it).
 *
 * Ownership: struct cred owns token; cred_free wipes and frees it.
 */
#ifndef LEAKBENCH_PROXY_CRED_H
#define LEAKBENCH_PROXY_CRED_H

#include <stddef.h>

#define CRED_MAX_FILE 4096
#define CRED_MARK     "[credential]"

enum cred_kind {
	CRED_NONE = 0, /* offline: headers pass unchanged */
	CRED_APIKEY,   /* sent as x-api-key */
	CRED_OAUTH     /* sent as authorization: Bearer */
};

struct cred {
	enum cred_kind kind;
	char *token; /* NUL-terminated, printable ASCII */
	size_t len;
};

/*
 * Reads and checks the credential file. 0, or -1 with a message in err
 * that names the file and the problem but never quotes its content.
 */
int cred_load(struct cred *c, const char *path, char *err, size_t errlen);

/* Same, from bytes already read (tests). */
int cred_parse(struct cred *c, const char *data, size_t len, const char *path,
    char *err, size_t errlen);

/* Wipes and frees the token; c becomes CRED_NONE. Harmless twice. */
void cred_free(struct cred *c);

/*
 * Returns a malloc'd copy of data[0..len) with every occurrence of the
 * token replaced by CRED_MARK, NUL-terminated, its length in *outlen; or
 * NULL when the token does not occur (or there is none), meaning "use data
 * as it is". The caller frees the copy. Aborts when out of memory rather
 * than let the unscrubbed bytes through.
 */
unsigned char *cred_scrub(const struct cred *c, const void *data, size_t len,
    size_t *outlen);

/* Scrubs a NUL-terminated string in place when it can, else a new copy:
 * returns s itself or a malloc'd replacement (s is then freed). */
char *cred_scrub_str(const struct cred *c, char *s);

#endif
