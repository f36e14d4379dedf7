/*
 * The simulated internet's plumbing in lb-net (see trap/sim.c for what the
 * trap does with it): inside the run's own network namespace, and only
 * there, 198.18.0.0/15 becomes local (a "local" route on lo, so that
 * nothing about it is routed anywhere) and every TCP connection and UDP
 * datagram to it is handed to one TCP listener and one UDP socket on
 * 127.0.0.1:PORT (nftables TPROXY, which keeps the address the client
 * meant: the accepted socket's local address, the datagram's
 * IP_ORIGDSTADDR).
 *
 * Capabilities: this needs CAP_NET_ADMIN in the namespace (podman
 * --cap-add=NET_ADMIN on the sidecar alone; rootless, that is the
 * capability of the sidecar's user namespace, which owns the network
 * namespace), for the route, the rules and IP_TRANSPARENT on the two
 * sockets, and CAP_NET_RAW for the ICMP socket, only at setup: sim_drop_caps then empties every capability
 * set it may (effective, permitted, inheritable, ambient) before any thread
 * or child exists, and checks it did. The agent's container joins the
 * namespace with no capability at all.
 *
 * The route is made over rtnetlink; the rules with nftables' `nft`, run
 * from PATH (in the servers image).
 */
#ifndef LEAKBENCH_NET_SIM_H
#define LEAKBENCH_NET_SIM_H

#include <stddef.h>

#define SIM_CIDR "198.18.0.0/15"
/* The same, as numbers (the trap's, trap/sim.c; test_trap_dns checks all
 * three agree). */
#define SIM_NET	 0xc6120000u /* 198.18.0.0, host order */
#define SIM_MASK 0xfffe0000u /* /15 */

/*
 * Makes SIM_CIDR local and binds the two sockets on 127.0.0.1:port
 * (close-on-exec), in a namespace whose only interface is lo (anything
 * else is refused before any change); and opens *icmp_fd, a raw ICMP
 * socket that gets a copy of every echo request the namespace receives
 * (ICMP_FILTER lets no other type through), for the trap to record the
 * pings sent into SIM_CIDR, which the kernel answers itself (CAP_NET_RAW,
 * at setup only as the rest). 0, or -1 with a message in err.
 */
int sim_setup(int port, int *tcp_fd, int *udp_fd, int *icmp_fd, char *err,
    size_t errlen);

/*
 * Drops every capability of the calling thread (call it while it is the
 * only one). 0, or -1 with a message in err when one is left.
 */
int sim_drop_caps(char *err, size_t errlen);

#endif
