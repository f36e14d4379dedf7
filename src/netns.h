/*
 * A network namespace of a run's own, kept by a bind mount of its nsfs file
 * at a path, so that two containers can join it by path and start together
 * (podman --network ns:PATH) where one would otherwise wait for the other to
 * own it. Root only: making a namespace and mounting need CAP_SYS_ADMIN.
 *
 * netns_make(path) creates PATH (a new file, refused if anything is there),
 * makes a network namespace in a thread of its own (the caller's own
 * namespaces never change; a thread, not a forked child, so that the
 * caller's heap is not left copy-on-write), brings its loopback up, and
 * binds the namespace onto PATH. On failure nothing is left at PATH.
 * netns_drop(path) unmounts PATH (lazily: the containers in the namespace
 * keep it alive) and removes it; a PATH that is not mounted is removed all
 * the same, and one that is not there is success. Both return 0, or -1
 * with errno set and *step naming what failed.
 */
#ifndef LEAKBENCH_NETNS_H
#define LEAKBENCH_NETNS_H

int netns_make(const char *path, const char **step);
int netns_drop(const char *path, const char **step);

/* The most descriptors netns_listen hands back. */
#define NETNS_FDS_MAX 16

/*
 * netns_listen(path, socks, nsocks, sim_port, fds, err, errlen): in a
 * thread of its own that enters the namespace kept at PATH, binds each of
 * SOCKS ("tcp:A.B.C.D:PORT", listening, or "udp:A.B.C.D:PORT"), then, with
 * SIM_PORT > 0, makes the simulated internet (net/sim.h: SIM_CIDR local,
 * the nftables rules, spawned from that thread, and its TCP, UDP and raw
 * ICMP sockets, which follow SOCKS in that order). FDS gets them,
 * close-on-exec: the caller keeps the sockets of a namespace it has no
 * process in, for another process to serve. The count, or -1 with the
 * reason in ERR (nothing open). Root only (setns needs CAP_SYS_ADMIN).
 *
 * netns_read(path, names, n, out, cap, err, errlen): the text of each of
 * /proc/net/NAMES[i] as seen from the namespace at PATH (its socket
 * tables and devices), read in a thread of its own that enters it;
 * out[i] is malloc'ed and NUL-ended, at most CAP bytes (a longer file
 * fails). 0, or -1 with the reason in ERR (nothing allocated).
 */
int netns_listen(const char *path, const char *const *socks, int nsocks,
    int sim_port, int *fds, char *err, size_t errlen);
int netns_read(const char *path, const char *const *names, int n, char **out,
    size_t cap, char *err, size_t errlen);

#endif
