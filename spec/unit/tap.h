/*
 * A minimal TAP producer for the C unit tests. Each check prints one
 * "ok N - name" or "not ok N - name" line; tap_done() prints the plan and
 * returns the exit status. spec/run sums the lines of every tier.
 *
 *	int main(void) {
 *		ok(1 + 1 == 2, "arithmetic");
 *		is_str(got, "want", "greeting");
 *		return tap_done();
 *	}
 */
#ifndef LEAKBENCH_TAP_H
#define LEAKBENCH_TAP_H

#include <stdio.h>
#include <stdarg.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) \
	do { \
		long long g_ = (long long)(got), w_ = (long long)(want); \
		if (!tap_ok(g_ == w_, __FILE__, __LINE__, __VA_ARGS__)) \
			printf("#   got %lld, want %lld\n", g_, w_); \
	} while (0)

#define is_str(got, want, ...) \
	do { \
		const char *g_ = (got), *w_ = (want); \
		int same_ = (g_ == NULL && w_ == NULL) || \
		    (g_ != NULL && w_ != NULL && strcmp(g_, w_) == 0); \
		if (!tap_ok(same_, __FILE__, __LINE__, __VA_ARGS__)) \
			printf("#   got \"%s\"\n#  want \"%s\"\n", \
			    g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

__attribute__((format(printf, 4, 5))) static int
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		tap_failed++;
		printf("#   at %s:%d\n", file, line);
	}
	fflush(stdout);
	return pass;
}

static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}

#endif
