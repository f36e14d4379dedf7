/*
 * lb-conmon: conmon without podman's exit command.
 *
 * Podman hands conmon an exit command, `podman ... container cleanup ID`,
 * which conmon runs when the container's process ends: a new podman
 * process (about 0.25 CPU-s before it does anything) that unmounts the
 * container and tears down its network. leakbench removes every container
 * it makes itself, through its service, and a removal does that cleanup;
 * so the suite's service runs conmon through leakbench invoked as
 * "lb-conmon" (a link to the binary), which drops the exit command and
 * runs the real conmon with every other argument as it came.
 */
#ifndef LB_CONMON_H
#define LB_CONMON_H

#include <stddef.h>

/* Where podman looks for conmon when containers.conf names none. */
extern const char *const conmon_paths[];

/*
 * conmon_filter(argc, argv, out) -> the number of arguments put in out:
 * argv[1..argc-1] without --exit-command, --exit-command-arg and
 * --exit-delay and their values (separate or after '='); out[0] is left
 * for the caller. out has room for argc + 1 pointers; out[n] is NULL.
 */
size_t conmon_filter(int argc, const char *const *argv, const char **out);

/*
 * conmon_real(paths, self, buf, size) -> buf, the first of paths (NULL
 * ended) that is an executable regular file and not the file self names
 * (the running binary), or NULL.
 */
const char *conmon_real(const char *const *paths, const char *self, char *buf,
    size_t size);

/* conmon_main(argc, argv): execs the real conmon; returns 127 on failure. */
int conmon_main(int argc, char **argv);

#endif
