/*
 * The trap's TLS (see trap.h): a CA made at start, whose EC P-256 key
 * exists only in this process's memory (never written, never logged), and
 * a leaf certificate per host signed by it, made when a client first asks
 * for that host and cached. One leaf key serves every leaf.
 *
 * The host comes from the client's SNI when it is a plausible DNS name,
 * else from the CONNECT target (the SSL's app data), else "localhost". An
 * IP address literal gets an IP SAN, anything else a DNS SAN; the subject
 * CN repeats it when it fits in 64 bytes. Leaves are valid from a day
 * before start for 30 days, with serverAuth only.
 *
 * Threads: the cache is under a mutex; a leaf is made outside it, so two
 * first handshakes for the same host may both make one (the second is
 * dropped).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/errmsg.h"
#include "common/files.h"
#include "trap/trap.h"

#define CACHE_MAX 4096
#define DAY	  (24L * 60 * 60)

struct leaf {
	char *host;
	X509 *cert;
};

struct trap_tls {
	EVP_PKEY *ca_key;
	X509 *ca;
	char *ca_pem;
	EVP_PKEY *leaf_key;
	SSL_CTX *ctx;
	pthread_mutex_t mu;
	struct leaf *cache;
	size_t ncache;
};

/* The first queued OpenSSL error as text, or fallback. */
static const char *
ssl_why(const char *fallback)
{
	static __thread char buf[256];
	unsigned long e = ERR_get_error();

	if (e == 0)
		return fallback;
	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return buf;
}

static int
random_serial(X509 *x)
{
	BIGNUM *bn = BN_new();
	int ok = 0;

	if (bn != NULL &&
	    BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL)
		ok = 1;
	BN_free(bn);
	return ok;
}

static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (ext == NULL)
		return 0;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok;
}

/* A certificate with the common fields; NULL on failure. */
static X509 *
cert_base(EVP_PKEY *pub, const char *cn)
{
	X509 *x = X509_new();
	X509_NAME *name;

	if (x == NULL)
		return NULL;
	name = X509_get_subject_name(x);
	if (X509_set_version(x, 2) != 1 || !random_serial(x) ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -DAY) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), 30 * DAY) == NULL ||
	    X509_set_pubkey(x, pub) != 1 ||
	    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
		(const unsigned char *)"leakbench", -1, -1, 0) != 1 ||
	    (cn != NULL &&
		X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
		    (const unsigned char *)cn, -1, -1, 0) != 1)) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Whether s is a DNS name we can put in a SAN: [A-Za-z0-9-_.*], 1..253. */
static int
plausible_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253 || s[0] == '.' || strstr(s, "..") != NULL)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '.' ||
			c == '_' || c == '*'))
			return 0;
	}
	return 1;
}

static int
is_ip(const char *s)
{
	unsigned char b[16];

	return inet_pton(AF_INET, s, b) == 1 || inet_pton(AF_INET6, s, b) == 1;
}

static X509 *
make_leaf(struct trap_tls *tls, const char *host)
{
	char san[300];
	X509 *x;

	x = cert_base(tls->leaf_key, strlen(host) <= 64 ? host : NULL);
	if (x == NULL)
		return NULL;
	snprintf(san, sizeof(san), "%s:%s", is_ip(host) ? "IP" : "DNS", host);
	if (X509_set_issuer_name(x, X509_get_subject_name(tls->ca)) != 1 ||
	    !add_ext(x, tls->ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, tls->ca, NID_key_usage,
		"critical,digitalSignature,keyEncipherment") ||
	    !add_ext(x, tls->ca, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, tls->ca, NID_subject_key_identifier, "hash") ||
	    !add_ext(x, tls->ca, NID_authority_key_identifier,
		"keyid:always") ||
	    !add_ext(x, tls->ca, NID_subject_alt_name, san) ||
	    X509_sign(x, tls->ca_key, EVP_sha256()) == 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

void *
trap_tls_leaf(struct trap_tls *tls, const char *host)
{
	X509 *x = NULL;
	size_t i;

	pthread_mutex_lock(&tls->mu);
	for (i = 0; i < tls->ncache; i++)
		if (strcasecmp(tls->cache[i].host, host) == 0) {
			x = tls->cache[i].cert;
			X509_up_ref(x);
			break;
		}
	pthread_mutex_unlock(&tls->mu);
	if (x != NULL)
		return x;
	x = make_leaf(tls, host);
	if (x == NULL)
		return NULL;
	pthread_mutex_lock(&tls->mu);
	if (tls->ncache < CACHE_MAX) {
		char *h = strdup(host);

		if (h != NULL) {
			tls->cache[tls->ncache].host = h;
			tls->cache[tls->ncache].cert = x;
			tls->ncache++;
			X509_up_ref(x);
		}
	}
	pthread_mutex_unlock(&tls->mu);
	return x;
}

/* The host a handshake's certificate is for (see the top of the file). */
static void
pick_host(SSL *ssl, char *out, size_t outlen)
{
	const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	const char *connect = SSL_get_app_data(ssl);

	if (sni != NULL && (plausible_name(sni) || is_ip(sni))) {
		snprintf(out, outlen, "%s", sni);
		return;
	}
	if (connect != NULL && *connect != '\0') {
		/* "host:port", "[v6]:port" */
		const char *h = connect, *e;
		size_t n;

		if (*h == '[') {
			h++;
			e = strchr(h, ']');
		} else {
			e = strrchr(h, ':');
		}
		n = e ? (size_t)(e - h) : strlen(h);
		if (n < outlen) {
			memcpy(out, h, n);
			out[n] = '\0';
			if (plausible_name(out) || is_ip(out))
				return;
		}
	}
	snprintf(out, outlen, "localhost");
}

static int
cert_cb(SSL *ssl, void *arg)
{
	struct trap_tls *tls = arg;
	char host[300];
	X509 *x;
	int ok;

	pick_host(ssl, host, sizeof(host));
	x = trap_tls_leaf(tls, host);
	if (x == NULL)
		return 0;
	ok = SSL_use_certificate(ssl, x) == 1 &&
	    SSL_use_PrivateKey(ssl, tls->leaf_key) == 1;
	X509_free(x);
	return ok;
}

/* ALPN: HTTP/1.1 when offered, else none (the client may go on without). */
static int
alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned int i = 0;

	(void)ssl;
	(void)arg;
	while (i < inlen) {
		unsigned int n = in[i];

		if (i + 1 + n > inlen)
			break;
		if (n == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = (unsigned char)n;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

struct trap_tls *
trap_tls_new(char *err, size_t errlen)
{
	struct trap_tls *tls = calloc(1, sizeof(*tls));
	BIO *mem = NULL;
	char *p;
	long n;

	if (tls == NULL) {
		snprintf(err, errlen, "cannot make the CA: out of memory");
		return NULL;
	}
	pthread_mutex_init(&tls->mu, NULL);
	tls->cache = calloc(CACHE_MAX, sizeof(*tls->cache));
	tls->ca_key = EVP_EC_gen("P-256");
	tls->leaf_key = EVP_EC_gen("P-256");
	if (tls->cache == NULL || tls->ca_key == NULL || tls->leaf_key == NULL)
		goto fail;
	tls->ca = cert_base(tls->ca_key, "leakbench egress trap CA");
	if (tls->ca == NULL ||
	    X509_set_issuer_name(tls->ca, X509_get_subject_name(tls->ca)) !=
		1 ||
	    !add_ext(tls->ca, tls->ca, NID_basic_constraints,
		"critical,CA:TRUE,pathlen:0") ||
	    !add_ext(tls->ca, tls->ca, NID_key_usage,
		"critical,keyCertSign,cRLSign") ||
	    !add_ext(tls->ca, tls->ca, NID_subject_key_identifier, "hash") ||
	    X509_sign(tls->ca, tls->ca_key, EVP_sha256()) == 0)
		goto fail;
	mem = BIO_new(BIO_s_mem());
	if (mem == NULL || PEM_write_bio_X509(mem, tls->ca) != 1)
		goto fail;
	n = BIO_get_mem_data(mem, &p);
	tls->ca_pem = strndup(p, (size_t)n);
	BIO_free(mem);
	mem = NULL;
	if (tls->ca_pem == NULL)
		goto fail;
	tls->ctx = SSL_CTX_new(TLS_server_method());
	if (tls->ctx == NULL ||
	    SSL_CTX_set_min_proto_version(tls->ctx, TLS1_2_VERSION) != 1)
		goto fail;
	SSL_CTX_set_options(tls->ctx,
	    SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_session_cache_mode(tls->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_cert_cb(tls->ctx, cert_cb, tls);
	SSL_CTX_set_alpn_select_cb(tls->ctx, alpn_cb, NULL);
	return tls;
fail:
	snprintf(err, errlen, "cannot make the CA: %s",
	    ssl_why("out of memory"));
	BIO_free(mem);
	trap_tls_free(tls);
	return NULL;
}

void
trap_tls_free(struct trap_tls *tls)
{
	size_t i;

	if (tls == NULL)
		return;
	for (i = 0; i < tls->ncache; i++) {
		free(tls->cache[i].host);
		X509_free(tls->cache[i].cert);
	}
	free(tls->cache);
	SSL_CTX_free(tls->ctx);
	X509_free(tls->ca);
	EVP_PKEY_free(tls->ca_key);
	EVP_PKEY_free(tls->leaf_key);
	free(tls->ca_pem);
	pthread_mutex_destroy(&tls->mu);
	free(tls);
}

const char *
trap_tls_ca_pem(const struct trap_tls *tls)
{
	return tls->ca_pem;
}

void *
trap_tls_ctx(struct trap_tls *tls)
{
	return tls->ctx;
}

/*
 * Writes a and then b to path through path.tmp and rename, mode 0644.
 * 0, or -1 with a message in err.
 */
static int
write_atomic(const char *path, const char *a, size_t alen, const char *b,
    size_t blen, char *err, size_t errlen)
{
	char *tmp = NULL;
	int fd, e;

	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		snprintf(err, errlen, "cannot write '%s': out of memory", path);
		return -1;
	}
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, 0644) < 0 || file_write_all(fd, a, alen) < 0 ||
	    file_write_all(fd, b, blen) < 0 || fsync(fd) < 0) {
		e = errno;
		close(fd);
		errno = e;
		goto fail;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0)
		goto fail;
	free(tmp);
	return 0;
fail:
	e = errno;
	errmsg_set(err, errlen, "cannot write", path, e);
	(void)unlink(tmp);
	free(tmp);
	return -1;
}

/* Reads at most 16 MiB of path; NULL (and *len 0) when it cannot. */
static char *
read_small(const char *path, size_t *len)
{
	char *buf = NULL, *nb;
	size_t cap = 0;
	ssize_t n;
	int fd;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - *len < 65536) {
			if (cap >= 16 * 1024 * 1024)
				break;
			nb = realloc(buf, cap + 65536);
			if (nb == NULL)
				break;
			buf = nb;
			cap += 65536;
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	return buf;
}

int
trap_tls_write(const struct trap_tls *tls, const char *dir,
    const char *sysbundle, char *err, size_t errlen)
{
	char *path = NULL, *sys = NULL;
	size_t slen = 0;
	int rc = -1;

	if (file_mkdirs(dir) < 0) {
		errmsg_set(err, errlen, "cannot create directory", dir, errno);
		return -1;
	}
	if (asprintf(&path, "%s/ca.pem", dir) < 0)
		goto oom;
	if (write_atomic(path, tls->ca_pem, strlen(tls->ca_pem), "", 0, err,
		errlen) < 0)
		goto out;
	free(path);
	path = NULL;
	if (sysbundle != NULL)
		sys = read_small(sysbundle, &slen);
	/* A bundle without a final newline must not glue onto ours. */
	if (sys != NULL && slen > 0 && sys[slen - 1] != '\n') {
		char *nb = realloc(sys, slen + 1);

		if (nb == NULL)
			goto oom;
		sys = nb;
		sys[slen++] = '\n';
	}
	if (asprintf(&path, "%s/bundle.pem", dir) < 0)
		goto oom;
	rc = write_atomic(path, sys ? sys : "", slen, tls->ca_pem,
	    strlen(tls->ca_pem), err, errlen);
	goto out;
oom:
	snprintf(err, errlen, "cannot write the CA files: out of memory");
out:
	free(path);
	free(sys);
	return rc;
}
