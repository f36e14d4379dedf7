/*
 * A socket bound to a host and port: see sock.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

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

int
sock_adopt(int fd, int socktype)
{
	int type = 0, listening = 0, flags;
	socklen_t sl = sizeof(type);

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) != 0)
		return -1;
	if (type != socktype) {
		errno = ENOTSOCK;
		return -1;
	}
	sl = sizeof(listening);
	if (socktype == SOCK_STREAM &&
	    (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &sl) != 0 ||
		!listening) &&
	    listen(fd, SOMAXCONN) != 0)
		return -1;
	flags = fcntl(fd, F_GETFD);
	if (flags == -1 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == -1)
		return -1;
	return 0;
}

int
sock_name(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	struct sockaddr_un *un = (struct sockaddr_un *)(void *)&ss;
	char host[INET6_ADDRSTRLEN];
	socklen_t sl = sizeof(ss);
	size_t pl;

	memset(&ss, 0, sizeof(ss));
	snprintf(out, len, "?");
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	if (ss.ss_family == AF_INET &&
	    inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)&ss)->sin_addr,
		host, sizeof(host)) != NULL)
		snprintf(out, len, "%s:%d", host, bound_port(fd));
	else if (ss.ss_family == AF_INET6 &&
	    inet_ntop(AF_INET6,
		&((struct sockaddr_in6 *)(void *)&ss)->sin6_addr, host,
		sizeof(host)) != NULL)
		snprintf(out, len, "[%s]:%d", host, bound_port(fd));
	else if (ss.ss_family == AF_UNIX) {
		pl = sl > offsetof(struct sockaddr_un, sun_path) ?
		    sl - offsetof(struct sockaddr_un, sun_path) :
		    0;
		if (pl > 0 && un->sun_path[0] == '\0')
			snprintf(out, len, "unix:@%.*s", (int)(pl - 1),
			    un->sun_path + 1);
		else
			snprintf(out, len, "unix:%.*s",
			    (int)strnlen(un->sun_path, pl), un->sun_path);
	} else
		return -1;
	return 0;
}
