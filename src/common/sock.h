/*
 * A socket bound to a host and port, once for the servers: lb-model's,
 * lb-proxy's and lb-net's TCP listeners (common/http.c, http_listen) and
 * lb-trap's DNS sockets, TCP and UDP (trap/dns.c, trap_bind). Each caller
 * parses its own address grammar and says its own error; this tries every
 * address getaddrinfo gives, in order, and reports the port bound. Also a
 * socket some parent bound and handed down by number (lb-trap's --*-fd
 * options, lb-net's fd:N endpoints): checked, made to listen, named. No
 * Lua; nothing allocated that outlives the call.
 */
#ifndef LEAKBENCH_COMMON_SOCK_H
#define LEAKBENCH_COMMON_SOCK_H

#include <stddef.h>

/*
 * A socket of SOCKTYPE on HOST (NULL: every address) and PORT (a number),
 * close-on-exec; SOCK_STREAM ones with SO_REUSEADDR and listening. FLAGS
 * are added to AI_PASSIVE | AI_NUMERICSERV (AI_NUMERICHOST: no lookup).
 * The socket, its bound port in *port_out (when not NULL; 0 when it has
 * none); or -1 with *gai set to getaddrinfo's error (0 when it had none)
 * and errno to the last socket call's (EADDRNOTAVAIL when none was made).
 */
int sock_bind(const char *host, const char *port, int socktype, int flags,
    int *port_out, int *gai);

/*
 * Takes FD, inherited already bound, as a socket of SOCKTYPE: 0 when it is
 * one (a SOCK_STREAM one is then listening: listen() is called unless it
 * already was), now close-on-exec; -1 when it is closed, not a socket, of
 * another type, or cannot listen (errno says; ENOTSOCK for a wrong type).
 */
int sock_adopt(int fd, int socktype);

/*
 * FD's local address into OUT (LEN bytes): "127.0.0.1:53", "[::1]:53",
 * "unix:PATH" ("unix:@NAME" when abstract, "unix:" when unnamed). 0, or
 * -1 when getsockname fails or the family is another ("?" in OUT).
 */
int sock_name(int fd, char *out, size_t len);

#endif
