/*
 * lb-nodump.so: preloaded into Claude Code by lb-init (see init/main.c).
 *
 * Before the program's own code runs, marks the process non-dumpable, so
 * that the processes it starts (the agent's tools, running as the same
 * uid) can neither open its /proc/PID/fd entries nor read or write its
 * memory nor trace it; then removes itself, the first word of LD_PRELOAD,
 * so that those processes do not load it. exec resets the flag, so every
 * tool the program starts is an ordinary process.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static void nodump(void) __attribute__((constructor));

static void
nodump(void)
{
	const char *v = getenv("LD_PRELOAD");
	const char *rest;

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (v == NULL)
		return;
	rest = v + strcspn(v, " :");
	rest += strspn(rest, " :");
	if (*rest == '\0') {
		unsetenv("LD_PRELOAD");
	} else {
		char *copy = strdup(rest);

		if (copy != NULL) {
			setenv("LD_PRELOAD", copy, 1);
			free(copy);
		}
	}
}
