/*
 * The grammar of an environmental error, once (STYLE.md rule 16):
 * lowercase, no final period, the action first, the subject in quotes,
 * the reason last: "cannot read credential file '/run/key': permission
 * denied". Core code: no Lua here, so the servers use it too.
 *
 * Every function writes into a caller's buffer, truncating to fit, and
 * always NUL-terminates (outlen > 0); nothing is allocated.
 */
#ifndef LEAKBENCH_ERRMSG_H
#define LEAKBENCH_ERRMSG_H

#include <stddef.h>

/* "ACTION 'SUBJECT': reason" into out, the reason strerror(e) lowercased. */
void errmsg_set(char *out, size_t outlen, const char *action,
    const char *subject, int e);

/* strerror(e), lowercased ("permission denied"), into out; returns out. */
char *errmsg_strerror(int e, char *out, size_t outlen);

/*
 * Lowercases the first letter of a library's sentence-cased message in
 * place ("Couldn't connect" -> "couldn't connect"), unless it starts an
 * acronym ("SSL ...", "DNS ...").
 */
void errmsg_lower(char *s);

#endif
