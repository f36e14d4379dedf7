/*
 * A socket bound to a host and port: see sock.h.
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/sock.h"

/* The port FD is bound to, or 0. */
static int
bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)(void *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)(void *)&ss)->sin6_port);
	return 0;
}

int
sock_bind(const char *host, const char *port, int socktype, int flags,
    int *port_out, int *gai)
{
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1, on = 1, saved = EADDRNOTAVAIL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = socktype;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | flags;
	*gai = getaddrinfo(host, port, &hints, &res);
	if (*gai != 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (socktype == SOCK_STREAM)
			(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on,
			    sizeof(on));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    (socktype != SOCK_STREAM || listen(fd, SOMAXCONN) == 0))
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		errno = saved;
		return -1;
	}
	if (port_out != NULL)
		*port_out = bound_port(fd);
	return fd;
}
