/*
 * The servers' usage errors and number parsing (see usage.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/usage.h"

int
usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try '%s --help')\n", prog);
	return 2;
}

int
usage_bad_option(const char *prog, int ch, char *const argv[], int ind)
{
	const char *opt = ind > 0 ? argv[ind - 1] : "";

	if (ch == ':')
		return usage_error(prog, "option '%s' needs a value", opt);
	return usage_error(prog, "unknown option '%s'", opt);
}

int
usage_count(const char *s, int suffix, unsigned long long max,
    unsigned long long *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (suffix && *end != '\0' && end[1] == '\0') {
		switch (*end) {
		case 'K':
		case 'k':
			mul = 1ULL << 10;
			end++;
			break;
		case 'M':
		case 'm':
			mul = 1ULL << 20;
			end++;
			break;
		case 'G':
		case 'g':
			mul = 1ULL << 30;
			end++;
			break;
		default:
			break;
		}
	}
	if (errno != 0 || *end != '\0' || v == 0 || v > max / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int
usage_seconds(const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) || v > max)
		return -1;
	*out = v;
	return 0;
}
