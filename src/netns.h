/*
 * A network namespace of a run's own, kept by a bind mount of its nsfs file
 * at a path, so that two containers can join it by path and start together
 * (podman --network ns:PATH) where one would otherwise wait for the other to
 * own it. Root only: making a namespace and mounting need CAP_SYS_ADMIN.
 *
 * netns_make(path) creates PATH (a new file, refused if anything is there),
 * makes a network namespace in a forked child (the caller's own namespaces
 * never change), brings its loopback up, and binds the namespace onto PATH.
 * On failure nothing is left at PATH. netns_drop(path) unmounts PATH (lazily:
 * the containers in the namespace keep it alive) and removes it; a PATH that
 * is not mounted is removed all the same, and one that is not there is
 * success. Both return 0, or -1 with errno set and *step naming what failed.
 */
#ifndef LEAKBENCH_NETNS_H
#define LEAKBENCH_NETNS_H

int netns_make(const char *path, const char **step);
int netns_drop(const char *path, const char **step);

#endif
