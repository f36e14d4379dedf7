/*
 * lb-conmon: conmon without podman's exit command (see conmon.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conmon.h"

/* podman 4.3's default conmon_path (containers.conf), in its order */
const char *const conmon_paths[] = {
	"/usr/libexec/podman/conmon",
	"/usr/local/libexec/podman/conmon",
	"/usr/local/lib/podman/conmon",
	"/usr/bin/conmon",
	"/usr/sbin/conmon",
	"/usr/local/bin/conmon",
	"/usr/local/sbin/conmon",
	"/run/current-system/sw/bin/conmon",
	NULL,
};

/* the options dropped, each with a value */
static const char *const dropped[] = {
	"--exit-command",
	"--exit-command-arg",
	"--exit-delay",
	NULL,
};

/* 1 when a is one of the dropped options with its value in the next
 * argument, 2 when with "=value" in it, 0 when it is not one */
static int
drop(const char *a)
{
	size_t n;
	int i;

	for (i = 0; dropped[i] != NULL; i++) {
		n = strlen(dropped[i]);
		if (strncmp(a, dropped[i], n) != 0)
			continue;
		if (a[n] == '\0')
			return 1;
		if (a[n] == '=')
			return 2;
	}
	return 0;
}

size_t
conmon_filter(int argc, const char *const *argv, const char **out)
{
	size_t n = 1;
	int i;

	for (i = 1; i < argc; i++) {
		switch (drop(argv[i])) {
		case 1:
			i++; /* and its value */
			break;
		case 2:
			break;
		default:
			out[n++] = argv[i];
		}
	}
	out[n] = NULL;
	return n;
}

const char *
conmon_real(const char *const *paths, const char *self, char *buf, size_t size)
{
	struct stat me, st;
	int have_me;
	int i;

	have_me = self != NULL && stat(self, &me) == 0;
	for (i = 0; paths[i] != NULL; i++) {
		if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode) ||
		    access(paths[i], X_OK) != 0)
			continue;
		if (have_me && st.st_dev == me.st_dev && st.st_ino == me.st_ino)
			continue;
		if (strlen(paths[i]) >= size)
			continue;
		return strcpy(buf, paths[i]);
	}
	return NULL;
}

int
conmon_main(int argc, char **argv)
{
	char real[256];
	const char **out;

	if (conmon_real(conmon_paths, "/proc/self/exe", real, sizeof(real)) ==
	    NULL) {
		fprintf(stderr,
		    "lb-conmon: no conmon in podman's places "
		    "(/usr/libexec/podman/conmon, /usr/bin/conmon, ...)\n");
		return 127;
	}
	out = calloc((size_t)argc + 1, sizeof(*out));
	if (out == NULL) {
		fprintf(stderr, "lb-conmon: out of memory\n");
		return 127;
	}
	conmon_filter(argc, (const char *const *)argv, out);
	out[0] = real;
	execv(real, (char *const *)out);
	fprintf(stderr, "lb-conmon: cannot run %s: %s\n", real,
	    strerror(errno));
	free((void *)out);
	return 127;
}
