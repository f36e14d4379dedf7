/*
 * Whole writes and mkdir -p (see files.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"

int
file_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* mkdir that accepts an existing directory. 0 or -1 (errno set). */
static int
mkdir_ok(const char *path)
{
	struct stat st;

	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (errno == EEXIST)
		errno = ENOTDIR;
	return -1;
}

int
file_mkdirs(const char *path)
{
	char *p = strdup(path), *s;
	int rc = 0;

	if (p == NULL)
		return -1;
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		rc = mkdir_ok(p);
		*s = '/';
		if (rc < 0)
			break;
	}
	if (rc == 0)
		rc = mkdir_ok(p);
	free(p);
	return rc;
}
