/*
 * Environmental error messages in the house grammar (see errmsg.h).
 */
#include <stdio.h>
#include <string.h>

#include "common/errmsg.h"

void
errmsg_lower(char *s)
{
	if (s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z')
		s[0] = (char)(s[0] - 'A' + 'a');
}

char *
errmsg_strerror(int e, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s", strerror(e));
	errmsg_lower(out);
	return out;
}

void
errmsg_set(char *out, size_t outlen, const char *action, const char *subject,
    int e)
{
	char why[128];

	snprintf(out, outlen, "%s '%s': %s", action, subject,
	    errmsg_strerror(e, why, sizeof(why)));
}
