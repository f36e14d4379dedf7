/*
 * lb-conmon: the exit command's options are dropped in both spellings and
 * nothing else is (a real argv from podman 4.3, options that share a
 * prefix, a value that looks like an option, a last option without its
 * value); the real conmon is the first executable regular file of the
 * list that is not the running binary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conmon.h"
#include "tap.h"

/* filters argv (NULL ended) and joins what is left with spaces */
static const char *
filtered(const char **argv)
{
	static char line[4096];
	const char *out[64];
	size_t i, n;
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	n = conmon_filter(argc, argv, out);
	line[0] = '\0';
	for (i = 1; i < n; i++) {
		if (i > 1)
			strcat(line, " ");
		strcat(line, out[i]);
	}
	ok(out[n] == NULL, "the filtered argv ends in NULL");
	return line;
}

static void
test_filter(void)
{
	/* conmon's argv as podman 4.3's service gave it here (cut) */
	const char *podman[] = { "lb-conmon", "--api-version", "1", "-c", "abc",
		"-u", "abc", "-r", "/usr/sbin/runc", "-b", "/b", "-p",
		"/b/pidfile", "-n", "lb-x-claude", "--exit-dir",
		"/run/libpod/exits", "--full-attach", "-s", "-l",
		"k8s-file:/b/ctr.log", "--log-level", "warning",
		"--runtime-arg", "--log-format=json", "--conmon-pidfile",
		"/b/conmon.pid", "--exit-command", "/usr/bin/podman",
		"--exit-command-arg", "--root", "--exit-command-arg",
		"/var/lib/containers/storage", "--exit-command-arg",
		"container", "--exit-command-arg", "cleanup",
		"--exit-command-arg", "abc", NULL };
	const char *eq[] = { "lb-conmon", "--exit-command=/usr/bin/podman",
		"-c", "x", "--exit-command-arg=--root", "--exit-delay=5",
		"--exit-dir=/e", NULL };
	const char *near[] = { "lb-conmon", "--exit-commandx", "a",
		"--exit-command-args", "b", "--exit-dirs", "--exit", "c",
		NULL };
	const char *value[] = { "lb-conmon", "--exit-command-arg", "--exit-dir",
		"-c", "x", "--exit-delay", "3", "-n", "y", NULL };
	const char *last[] = { "lb-conmon", "-c", "x", "--exit-command", NULL };
	const char *none[] = { "lb-conmon", NULL };

	is_str(filtered(podman),
	    "--api-version 1 -c abc -u abc -r /usr/sbin/runc -b /b -p "
	    "/b/pidfile -n lb-x-claude --exit-dir /run/libpod/exits "
	    "--full-attach -s -l k8s-file:/b/ctr.log --log-level warning "
	    "--runtime-arg --log-format=json --conmon-pidfile /b/conmon.pid",
	    "podman's argv loses its exit command and keeps the rest in order");
	is_str(filtered(eq), "-c x --exit-dir=/e",
	    "the '=' spellings are dropped, --exit-dir is kept");
	is_str(filtered(near),
	    "--exit-commandx a --exit-command-args b --exit-dirs --exit c",
	    "options that only begin like the dropped ones are kept");
	is_str(filtered(value), "-c x -n y",
	    "a dropped option's value goes with it, even one that looks "
	    "like an option");
	is_str(filtered(last), "-c x",
	    "a dropped option at the end without its value is dropped");
	is_str(filtered(none), "", "no arguments, none out");
}

static char top[] = "/tmp/lb-conmon-XXXXXX";

static const char *
make(const char *name, const char *kind)
{
	static char buf[8][256];
	static int k;
	char *p;
	FILE *f;

	k = (k + 1) % 8;
	p = buf[k];
	snprintf(p, sizeof(buf[k]), "%s/%s", top, name);
	if (strcmp(kind, "dir") == 0) {
		mkdir(p, 0755);
	} else if (strcmp(kind, "none") != 0) {
		f = fopen(p, "w");
		if (f != NULL) {
			fputs("#!/bin/sh\n", f);
			fclose(f);
		}
		chmod(p, strcmp(kind, "exe") == 0 ? 0755 : 0644);
	}
	return p;
}

static void
test_real(void)
{
	char buf[256], small[8];
	const char *paths[7];
	const char *self, *r;

	if (mkdtemp(top) == NULL) {
		ok(0, "mkdtemp");
		return;
	}
	paths[0] = make("missing", "none");
	paths[1] = make("folder", "dir");
	paths[2] = make("plain", "file");
	paths[3] = self = make("self", "exe");
	paths[4] = make("conmon", "exe");
	paths[5] = make("later", "exe");
	paths[6] = NULL;
	r = conmon_real(paths, self, buf, sizeof(buf));
	is_str(r ? r : "(null)", paths[4],
	    "the first executable file, past a missing path, a folder, "
	    "a file that is not executable and the running binary");
	/* a link to the running binary is the running binary */
	if (symlink(self, make("link", "none")) != 0)
		ok(0, "symlink");
	paths[3] = make("link", "none");
	r = conmon_real(paths + 3, self, buf, sizeof(buf));
	is_str(r ? r : "(null)", paths[4],
	    "a link to the running binary is skipped too");
	r = conmon_real(paths, NULL, buf, sizeof(buf));
	is_str(r ? r : "(null)", paths[3],
	    "without a running binary to skip, the first executable");
	paths[4] = paths[5] = NULL;
	r = conmon_real(paths, self, buf, sizeof(buf));
	ok(r == NULL, "no conmon but the running binary: none");
	r = conmon_real(paths + 3, NULL, small, sizeof(small));
	ok(r == NULL, "a path longer than the buffer is not cut short");
	if (system("rm -rf /tmp/lb-conmon-??????") != 0)
		ok(0, "rm");
}

int
main(void)
{
	test_filter();
	test_real();
	return tap_done();
}
