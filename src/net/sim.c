/*
 * The simulated internet's plumbing (see net/sim.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>

#include "net/sim.h"

extern char **environ;

#ifndef IP_TRANSPARENT
#define IP_TRANSPARENT 19
#endif
#ifndef IP_RECVORIGDSTADDR
#define IP_RECVORIGDSTADDR 20
#endif
/* linux/icmp.h's, which cannot be included with net/if.h */
#define SIM_ICMP_FILTER 1
#define SIM_ICMP_ECHO	8

static const char rules[] =
    "table ip leakbench {\n"
    "  chain sim {\n"
    "    type filter hook prerouting priority mangle; policy accept;\n"
    "    ip daddr " SIM_CIDR " meta l4proto tcp tproxy to 127.0.0.1:%d "
    "accept\n"
    "    ip daddr " SIM_CIDR " meta l4proto udp tproxy to 127.0.0.1:%d "
    "accept\n"
    "  }\n"
    "}\n";

/* The lowercased strerror of e into buf. */
static const char *
why(int e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strerror(e));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && buf[1] >= 'a' && buf[1] <= 'z')
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

/*
 * Runs argv (from PATH) with input on its standard input (NULL: none) and
 * waits. 0 when it exits 0, else -1 with a message in err. Spawned, not
 * forked (leakbench runs this in a thread of a large process: a fork
 * would leave its whole heap copy-on-write), with no signal blocked.
 */
static int
run(const char *const argv[], const char *input, const char *what, char *err,
    size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char wb[128];
	int in[2] = { -1, -1 }, status, e;
	sigset_t none;
	pid_t pid;

	if (input != NULL && pipe2(in, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot %s: %s", what,
		    why(errno, wb, sizeof(wb)));
		return -1;
	}
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_init(&fa);
	if (in[0] >= 0)
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	e = posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv,
	    environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (e != 0) {
		snprintf(err, errlen, "cannot %s: cannot run '%s': %s", what,
		    argv[0], why(e, wb, sizeof(wb)));
		if (in[0] >= 0) {
			close(in[0]);
			close(in[1]);
		}
		return -1;
	}
	if (in[0] >= 0) {
		size_t n = strlen(input), off = 0;
		ssize_t w;

		close(in[0]);
		while (off < n) {
			w = write(in[1], input + off, n - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				break;
			off += (size_t)w;
		}
		close(in[1]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errlen, "cannot %s: %s", what,
			    why(errno, wb, sizeof(wb)));
			return -1;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(err, errlen, "cannot %s: '%s' %s %d", what, argv[0],
	    WIFEXITED(status) ? "exited with status" : "was killed by signal",
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return -1;
}

/*
 * The receive queue of the UDP and ICMP sockets, set past the system's
 * cap while CAP_NET_ADMIN is held (rootful; rootless, up to the cap): an
 * agent that sends a burst of datagrams gets them recorded rather than
 * dropped by the kernel (what is dropped all the same is counted by the
 * harness, sandbox.lua's settle_egress).
 */
#define SIM_UDP_RCVBUF (8 << 20)

/*
 * FD's receive queue to N bytes past the system's cap where this process
 * may (CAP_NET_ADMIN over the initial user namespace: rootful), else as
 * far as the cap allows (rootless). 0, or -1 with errno.
 */
static int
grow_rcvbuf(int fd, int n)
{
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &n, sizeof(n)) == 0)
		return 0;
	return setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &n, sizeof(n));
}

/* A socket of type on 127.0.0.1:port with IP_TRANSPARENT. The fd, or -1. */
static int
transparent_socket(int type, int port, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	char wb[128];
	int fd, on = 1, rcvbuf = SIM_UDP_RCVBUF;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    (type == SOCK_STREAM &&
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) <
		    0) ||
	    setsockopt(fd, SOL_IP, IP_TRANSPARENT, &on, sizeof(on)) < 0 ||
	    (type == SOCK_DGRAM &&
		(setsockopt(fd, SOL_IP, IP_RECVORIGDSTADDR, &on, sizeof(on)) <
			0 ||
		    grow_rcvbuf(fd, rcvbuf) < 0)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)) {
		snprintf(err, errlen,
		    "cannot open the simulated internet's %s socket on "
		    "'127.0.0.1:%d': %s",
		    type == SOCK_STREAM ? "TCP" : "UDP", port,
		    why(errno, wb, sizeof(wb)));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * The namespace must be sealed before anything is made local in it: no
 * interface but lo (so that nothing of it can be routed anywhere, and so
 * that lb-net run by mistake on a host, as root, changes nothing there).
 * 0, or -1 with a message in err.
 */
static int
sealed(char *err, size_t errlen)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	char wb[128];
	int rc = 0;

	if (ifs == NULL) {
		snprintf(err, errlen, "cannot list the network interfaces: %s",
		    why(errno, wb, sizeof(wb)));
		return -1;
	}
	for (i = ifs; i->if_index != 0 && i->if_name != NULL; i++) {
		if (strcmp(i->if_name, "lo") != 0) {
			snprintf(err, errlen,
			    "refusing to simulate the internet in a network "
			    "namespace with interface '%s': only lo may exist",
			    i->if_name);
			rc = -1;
			break;
		}
	}
	if_freenameindex(ifs);
	return rc;
}

/* An RTM_NEWROUTE request with its two attributes (sim_route). */
struct route_req {
	struct nlmsghdr nh;
	struct rtmsg rt;
	struct rtattr dst_attr;
	uint32_t dst;
	struct rtattr oif_attr;
	uint32_t oif;
};

/* The answer to it: the kernel's ack or error, with the request's header. */
struct route_ack {
	struct nlmsghdr nh;
	struct nlmsgerr e;
};

/* Sends Q to the kernel and reads its answer: 0, or the errno it gives. */
static int
route_ask(const struct route_req *q)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct route_ack a;
	ssize_t n;
	int e, fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return errno;
	n = sendto(fd, q, sizeof(*q), 0, (struct sockaddr *)&kernel,
	    sizeof(kernel));
	if (n != (ssize_t)sizeof(*q)) {
		e = n < 0 ? errno : EIO;
	} else {
		while ((n = recv(fd, &a, sizeof(a), 0)) < 0 && errno == EINTR)
			;
		e = n < 0			   ? errno :
		    n < (ssize_t)sizeof(a)	   ? EIO :
		    a.nh.nlmsg_type != NLMSG_ERROR ? EPROTO :
						     -a.e.error;
	}
	close(fd);
	return e;
}

/*
 * SIM_CIDR made local on lo (what `ip route add local SIM_CIDR dev lo`
 * asks: table local, scope host), over rtnetlink, where `ip` was run for
 * it; or already so. 0, or -1 with a message in err.
 */
static int
sim_route(char *err, size_t errlen)
{
	struct route_req q;
	char wb[128];
	int e;

	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = RTM_NEWROUTE;
	q.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
	    NLM_F_EXCL;
	q.nh.nlmsg_seq = 1;
	q.rt.rtm_family = AF_INET;
	q.rt.rtm_dst_len = (unsigned char)__builtin_popcount(SIM_MASK);
	q.rt.rtm_table = RT_TABLE_LOCAL;
	q.rt.rtm_protocol = RTPROT_BOOT;
	q.rt.rtm_scope = RT_SCOPE_HOST;
	q.rt.rtm_type = RTN_LOCAL;
	q.dst_attr.rta_len = RTA_LENGTH(sizeof(q.dst));
	q.dst_attr.rta_type = RTA_DST;
	q.dst = htonl(SIM_NET);
	q.oif_attr.rta_len = RTA_LENGTH(sizeof(q.oif));
	q.oif_attr.rta_type = RTA_OIF;
	errno = 0;
	q.oif = if_nametoindex("lo");
	e = q.oif == 0 ? (errno != 0 ? errno : ENODEV) : route_ask(&q);
	/*
	 * Already there: the harness made it (a run whose suite's upstream
	 * could not take its sockets, sandbox.lua's pool_fallback), in a
	 * namespace sealed all the same.
	 */
	if (e != 0 && e != EEXIST) {
		snprintf(err, errlen,
		    "cannot make '" SIM_CIDR "' local on lo: %s",
		    why(e, wb, sizeof(wb)));
		return -1;
	}
	return 0;
}

/* The raw ICMP socket of sim_setup, echo requests only. The fd, or -1. */
static int
icmp_socket(char *err, size_t errlen)
{
	uint32_t only_echo = ~(1u << SIM_ICMP_ECHO);
	char wb[128];
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);

	if (fd < 0 ||
	    setsockopt(fd, SOL_RAW, SIM_ICMP_FILTER, &only_echo,
		sizeof(only_echo)) < 0 ||
	    grow_rcvbuf(fd, SIM_UDP_RCVBUF) < 0) {
		snprintf(err, errlen,
		    "cannot open the simulated internet's ICMP socket: %s",
		    why(errno, wb, sizeof(wb)));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int
sim_setup(int port, int *tcp_fd, int *udp_fd, int *icmp_fd, char *err,
    size_t errlen)
{
	const char *const nft[] = { "nft", "-f", "-", NULL };
	char text[sizeof(rules) + 32];

	*tcp_fd = *udp_fd = *icmp_fd = -1;
	if (sealed(err, errlen) < 0)
		return -1;
	if (sim_route(err, errlen) < 0)
		return -1;
	snprintf(text, sizeof(text), rules, port, port);
	if (run(nft, text, "hand '" SIM_CIDR "' to the trap with nftables", err,
		errlen) < 0)
		return -1;
	*tcp_fd = transparent_socket(SOCK_STREAM, port, err, errlen);
	if (*tcp_fd < 0)
		return -1;
	*udp_fd = transparent_socket(SOCK_DGRAM, port, err, errlen);
	if (*udp_fd >= 0)
		*icmp_fd = icmp_socket(err, errlen);
	if (*udp_fd < 0 || *icmp_fd < 0) {
		close(*tcp_fd);
		if (*udp_fd >= 0)
			close(*udp_fd);
		*tcp_fd = *udp_fd = -1;
		return -1;
	}
	return 0;
}

int
sim_drop_caps(char *err, size_t errlen)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	char wb[128];

	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0) {
		snprintf(err, errlen, "cannot drop capabilities: %s",
		    why(errno, wb, sizeof(wb)));
		return -1;
	}
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0 || d[0].effective != 0 ||
	    d[0].permitted != 0 || d[0].inheritable != 0 ||
	    d[1].effective != 0 || d[1].permitted != 0 ||
	    d[1].inheritable != 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_ADMIN, 0, 0) >
		0) {
		snprintf(err, errlen,
		    "cannot drop capabilities: some are left");
		return -1;
	}
	return 0;
}
