/*
 * The servers' command lines in one grammar (lb-model, lb-proxy, lb-net,
 * lb-trap): a misuse is one line on stderr, the program's name first and
 * the way to help last, as leakbench's own CLI says it, and exit status 2:
 *
 *	lb-proxy: unknown option '--bogus' (try 'lb-proxy --help')
 *	lb-trap: cannot use --max-conns '0': expected a positive number (try
 *	'lb-trap --help')
 *
 * and the number parsers their flags share. No Lua; nothing allocated.
 */
#ifndef LEAKBENCH_COMMON_USAGE_H
#define LEAKBENCH_COMMON_USAGE_H

#include <stddef.h>

/*
 * Prints "PROG: MESSAGE (try 'PROG --help')" on stderr; returns 2, the
 * exit status of bad usage.
 */
__attribute__((format(printf, 2, 3))) int usage_error(const char *prog,
    const char *fmt, ...);

/*
 * usage_error for what getopt_long returned when it did not know the
 * option (ch '?') or found it without its value (ch ':', with ":" leading
 * the optstring): "unknown option '--x'", "option '--x' needs a value".
 * optind and argv as getopt_long left them. Returns 2.
 */
int usage_bad_option(const char *prog, int ch, char *const argv[], int ind);

/*
 * A whole number from 1 to max, decimal digits only (no sign, no blank);
 * with suffix set, an optional K, M or G after it (any case, powers of
 * 1024), still at most max. 0 with *out set, or -1.
 */
int usage_count(const char *s, int suffix, unsigned long long max,
    unsigned long long *out);

/* A number of seconds above 0 and at most max (fractions allowed). 0, or
 * -1. */
int usage_seconds(const char *s, double max, double *out);

#endif
