/*
 * File-system primitives; see fs.h. The tree walks (rmtree, chown) hold one
 * directory descriptor per level and name entries relative to it, so a
 * link or rename inside the tree cannot send them outside it. Depth is
 * capped (FS_MAX_DEPTH) so a hostile tree cannot exhaust descriptors.
 */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "fs.h"

#define FS_MAX_DEPTH 256

static void
set_err(char *err, size_t errlen, const char *what, const char *path, int e)
{
	snprintf(err, errlen, "%s '%s': %s", what, path, strerror(e));
}

/* "dir/name", malloc'd; NULL when out of memory. */
static char *
join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *s = malloc(a + b + 2);

	if (s == NULL)
		return NULL;
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, name, b + 1);
	return s;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
fs_free_list(char **names)
{
	size_t i;

	if (names == NULL)
		return;
	for (i = 0; names[i] != NULL; i++)
		free(names[i]);
	free(names);
}

/*
 * The sorted names in the directory open at fd (fd stays open and ours).
 * Returns a list for fs_free_list, or NULL with errno set.
 */
static char **
list_fd(int fd, size_t *count)
{
	char **names = NULL, **nn;
	size_t n = 0, size = 0;
	struct dirent *de;
	DIR *d;
	int dfd, e;

	if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return NULL;
	if ((d = fdopendir(dfd)) == NULL) {
		e = errno;
		close(dfd);
		errno = e;
		return NULL;
	}
	rewinddir(d);
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n + 2 > size) {
			size = size ? size * 2 : 16;
			if ((nn = realloc(names, size * sizeof(*names))) ==
			    NULL)
				goto fail;
			names = nn;
		}
		if ((names[n] = strdup(de->d_name)) == NULL)
			goto fail;
		names[++n] = NULL;
	}
	if (errno != 0)
		goto fail;
	closedir(d);
	if (names == NULL && (names = calloc(1, sizeof(*names))) == NULL)
		return NULL;
	qsort(names, n, sizeof(*names), cmp_names);
	*count = n;
	return names;
fail:
	e = errno ? errno : ENOMEM;
	if (names != NULL) {
		names[n] = NULL;
		fs_free_list(names);
	}
	closedir(d);
	errno = e;
	return NULL;
}

char **
fs_listdir(const char *path, size_t *n, char *err, size_t errlen)
{
	char **names;
	int fd;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		set_err(err, errlen, "cannot list", path, errno);
		return NULL;
	}
	if ((names = list_fd(fd, n)) == NULL)
		set_err(err, errlen, "cannot list", path, errno);
	close(fd);
	return names;
}

/* Removes everything in the directory open at fd; path is for messages. */
static int
rm_contents(int fd, const char *path, int depth, char *err, size_t errlen)
{
	struct stat st;
	char **names;
	size_t n, i;
	int rc = 0;

	if (depth > FS_MAX_DEPTH) {
		set_err(err, errlen, "cannot remove", path, ELOOP);
		return -1;
	}
	/* A directory we own but may not write or search: make it so. */
	if (fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700)
		fchmod(fd, (st.st_mode & 07777) | 0700);
	if ((names = list_fd(fd, &n)) == NULL) {
		set_err(err, errlen, "cannot list", path, errno);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		char *sub = join(path, names[i]);
		int sfd;

		if (sub == NULL) {
			set_err(err, errlen, "cannot remove", path, ENOMEM);
			rc = -1;
			break;
		}
		if (unlinkat(fd, names[i], 0) == 0 || errno == ENOENT) {
			free(sub);
			continue;
		}
		if (errno != EISDIR) {
			set_err(err, errlen, "cannot remove", sub, errno);
			free(sub);
			rc = -1;
			break;
		}
		sfd = openat(fd, names[i],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd == -1 && errno == EACCES &&
		    fchmodat(fd, names[i], 0700, 0) == 0)
			sfd = openat(fd, names[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd == -1) {
			set_err(err, errlen, "cannot remove", sub, errno);
			rc = -1;
		} else {
			rc = rm_contents(sfd, sub, depth + 1, err, errlen);
			close(sfd);
			if (rc == 0 &&
			    unlinkat(fd, names[i], AT_REMOVEDIR) == -1 &&
			    errno != ENOENT) {
				set_err(err, errlen, "cannot remove", sub,
				    errno);
				rc = -1;
			}
		}
		free(sub);
	}
	fs_free_list(names);
	return rc;
}

int
fs_rmtree(const char *path, char *err, size_t errlen)
{
	int fd, rc;

	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR) {
		set_err(err, errlen, "cannot remove", path, errno);
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == EACCES && chmod(path, 0700) == 0)
		fd = open(path,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1) {
		set_err(err, errlen, "cannot remove", path, errno);
		return -1;
	}
	rc = rm_contents(fd, path, 0, err, errlen);
	close(fd);
	if (rc == 0 && rmdir(path) == -1 && errno != ENOENT) {
		set_err(err, errlen, "cannot remove", path, errno);
		rc = -1;
	}
	return rc;
}

int
fs_mkdir_p(const char *path, mode_t mode, char *err, size_t errlen)
{
	char *buf = strdup(path), *p;
	struct stat st;
	int rc = 0;

	if (buf == NULL) {
		set_err(err, errlen, "cannot create directory", path, ENOMEM);
		return -1;
	}
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(buf, mode) == -1 &&
			    (errno != EEXIST || stat(buf, &st) == -1 ||
				!S_ISDIR(st.st_mode))) {
				set_err(err, errlen, "cannot create directory",
				    buf, errno == EEXIST ? ENOTDIR : errno);
				rc = -1;
				break;
			}
			*p = c;
		}
		if (*p == '\0')
			break;
	}
	free(buf);
	return rc;
}

int
fs_write_file(const char *path, const void *data, size_t len, mode_t mode,
    int exclusive, char *err, size_t errlen)
{
	const char *s = data;
	ssize_t n;
	int fd, e;

	fd = open(path,
	    O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
		(exclusive ? O_EXCL : O_TRUNC),
	    mode & 07777);
	if (fd == -1) {
		set_err(err, errlen, "cannot create", path, errno);
		return -1;
	}
	if (fchmod(fd, mode & 07777) == -1)
		goto fail;
	while (len > 0) {
		n = write(fd, s, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		s += n;
		len -= (size_t)n;
	}
	if (close(fd) == -1) {
		set_err(err, errlen, "cannot write", path, errno);
		return -1;
	}
	return 0;
fail:
	e = errno ? errno : EIO;
	close(fd);
	set_err(err, errlen, "cannot write", path, e);
	return -1;
}

char *
fs_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t n = 0, size = 65536;
	char *buf = NULL, *nb;
	ssize_t r;
	int fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		set_err(err, errlen, "cannot read", path, errno);
		return NULL;
	}
	for (;;) {
		if (buf == NULL || n + 1 >= size) {
			if (buf != NULL)
				size *= 2;
			if ((nb = realloc(buf, size)) == NULL) {
				errno = ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		/* buf was allocated just above: not NULL. */
		/* cppcheck-suppress nullPointerArithmeticRedundantCheck */
		r = read(fd, buf + n, size - n - 1);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	e = errno;
	close(fd);
	free(buf);
	set_err(err, errlen, "cannot read", path, e);
	return NULL;
}

/* Not errno values: reasons of our own for fs_read_beneath's messages. */
#define FS_ENOTREG (-2)
#define FS_EDOTDOT (-3)

/* Adds the blocks below the directory open at fd; closes nothing. */
static void
du_fd(int fd, int depth, size_t max, unsigned long long *bytes, size_t *n)
{
	char **names;
	struct stat st;
	size_t i, k;
	int sfd;

	if (depth > FS_MAX_DEPTH || (names = list_fd(fd, &k)) == NULL)
		return;
	for (i = 0; i < k && *n < max; i++) {
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		(*n)++;
		*bytes += (unsigned long long)st.st_blocks * 512ULL;
		if (!S_ISDIR(st.st_mode))
			continue;
		sfd = openat(fd, names[i],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd != -1) {
			du_fd(sfd, depth + 1, max, bytes, n);
			close(sfd);
		}
	}
	fs_free_list(names);
}

int
fs_disk_usage(const char *root, const char *rel, size_t max_files,
    unsigned long long *bytes, size_t *entries)
{
	int dfd, fd;

	*bytes = 0;
	*entries = 0;
	if ((dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	fd = *rel ?
	    openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) :
	    dup(dfd);
	close(dfd);
	if (fd == -1)
		return -1;
	du_fd(fd, 0, max_files, bytes, entries);
	close(fd);
	return 0;
}

static void
set_beneath_err(char *err, size_t errlen, const char *root, const char *rel,
    int e)
{
	const char *why = e == ELOOP ? "is a symbolic link" :
	    e == FS_ENOTREG	     ? "not a regular file" :
	    e == FS_EDOTDOT	     ? "leaves its directory" :
				       strerror(e);

	snprintf(err, errlen, "cannot read '%s%s%s': %s", root, *rel ? "/" : "",
	    rel, why);
}

/*
 * Opens the directory root/dirpart-of-rel without following a link in
 * rel, and points *last at rel's last component. Returns the descriptor
 * or -1 with *e set (errno, FS_EDOTDOT).
 */
static int
open_parent_beneath(const char *root, const char *rel, const char **last,
    int *e)
{
	char comp[NAME_MAX + 1];
	const char *p = rel, *q;
	size_t n;
	int fd, nfd;

	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		*e = errno;
		return -1;
	}
	for (;;) {
		while (*p == '/')
			p++;
		q = strchr(p, '/');
		n = q ? (size_t)(q - p) : strlen(p);
		while (q && q[1] == '/')
			q++;
		if (q == NULL || q[1] == '\0')
			break; /* p is the last component */
		if (n > NAME_MAX) {
			*e = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (strcmp(comp, "..") == 0) {
			*e = FS_EDOTDOT;
			goto fail;
		}
		if (strcmp(comp, ".") != 0) {
			nfd = openat(fd, comp,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd == -1) {
				struct stat st;

				/* Linux says ENOTDIR for a link here */
				*e = errno;
				if (*e == ENOTDIR &&
				    fstatat(fd, comp, &st,
					AT_SYMLINK_NOFOLLOW) == 0)
					*e = S_ISLNK(st.st_mode) ? ELOOP :
								   ENOTDIR;
				goto fail;
			}
			close(fd);
			fd = nfd;
		}
		p = q + 1;
	}
	*last = p;
	return fd;
fail:
	close(fd);
	return -1;
}

int
fs_open_beneath(const char *root, const char *rel, char *err, size_t errlen)
{
	char name[NAME_MAX + 1];
	const char *last;
	struct stat st;
	size_t want;
	int dfd, fd = -1, e = 0;

	if ((dfd = open_parent_beneath(root, rel, &last, &e)) == -1)
		goto fail;
	want = strcspn(last, "/");
	if (want == 0 || want > NAME_MAX) {
		e = want ? ENAMETOOLONG : EISDIR;
		goto fail;
	}
	memcpy(name, last, want);
	name[want] = '\0';
	if (strcmp(name, "..") == 0) {
		e = FS_EDOTDOT;
		goto fail;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		e = errno;
		goto fail;
	}
	if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
		e = S_ISLNK(st.st_mode) ? ELOOP : FS_ENOTREG;
		goto fail;
	}
	fd = openat(dfd, name,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1) {
		e = errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		e = FS_ENOTREG; /* swapped since the fstatat */
		goto fail;
	}
	close(dfd);
	return fd;
fail:
	if (fd != -1)
		close(fd);
	if (dfd != -1)
		close(dfd);
	set_beneath_err(err, errlen, root, rel, e);
	return -1;
}

char *
fs_read_fd(int fd, size_t max, size_t *len, struct fs_read_info *info)
{
	char *buf = NULL, *nb, probe;
	size_t n = 0, size = 0;
	struct stat st;
	ssize_t r;
	int e;

	if (fstat(fd, &st) == -1)
		return NULL;
	info->size = st.st_size;
	info->mode = st.st_mode & 07777;
	info->truncated = 0;
	for (;;) {
		if (buf == NULL || n + 1 >= size) {
			size_t ns = size ? size * 2 : 65536;

			if (ns > max + 1)
				ns = max + 1;
			if (ns <= size)
				break; /* n == max: the cap */
			if ((nb = realloc(buf, ns)) == NULL) {
				e = ENOMEM;
				goto fail;
			}
			buf = nb;
			size = ns;
		}
		/* buf was allocated just above: not NULL. */
		/* cppcheck-suppress nullPointerArithmeticRedundantCheck */
		r = pread(fd, buf + n, size - n - 1, (off_t)n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			e = errno;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n == max) {
		while ((r = pread(fd, &probe, 1, (off_t)n)) == -1 &&
		    errno == EINTR)
			;
		info->truncated = r > 0;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	free(buf);
	errno = e;
	return NULL;
}

char *
fs_read_beneath(const char *root, const char *rel, size_t max, size_t *len,
    struct fs_read_info *info, char *err, size_t errlen)
{
	char *buf;
	int fd, e;

	if ((fd = fs_open_beneath(root, rel, err, errlen)) == -1)
		return NULL;
	buf = fs_read_fd(fd, max, len, info);
	e = errno;
	close(fd);
	if (buf == NULL)
		set_beneath_err(err, errlen, root, rel, e);
	return buf;
}

int
fs_set_append_only(int fd, int on)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == -1)
		return -1;
	flags = on ? flags | FS_APPEND_FL : flags & ~FS_APPEND_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}

int
fs_notify_open(void)
{
	return inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

int
fs_notify_add(int fd, const char *path)
{
	return inotify_add_watch(fd, path,
	    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE |
		IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
		IN_ONLYDIR | IN_DONT_FOLLOW);
}

int
fs_notify_wait(int fd, int also, int timeout_ms, int *also_ready)
{
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
		{ .fd = also, .events = POLLIN } };
	ssize_t r;
	int rc, n = 0;

	if (also_ready != NULL)
		*also_ready = 0;
	rc = poll(p, also >= 0 ? 2 : 1, timeout_ms);
	if (rc == -1)
		return errno == EINTR ? 0 : -1;
	if (also >= 0 && also_ready != NULL)
		*also_ready = (p[1].revents & (POLLIN | POLLHUP | POLLERR)) !=
		    0;
	for (;;) {
		const char *q;

		r = read(fd, buf, sizeof(buf));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 && errno == EAGAIN)
			return n;
		if (r <= 0)
			return r == 0 ? n : -1;
		for (q = buf; q < buf + r;) {
			const struct inotify_event
			    *ev = (const struct inotify_event *)(const void *)q;

			n++;
			q += sizeof(*ev) + ev->len;
		}
	}
}

int
fs_pidfd(int pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

struct walk {
	char **names;
	size_t n, cap, max;
	int max_depth;
	struct fs_walk_cuts cuts;
};

/* Adds the regular files below the directory open at fd (prefix/...). */
static int
walk_beneath(struct walk *w, int fd, const char *prefix, int depth)
{
	char **names, *sub, **nn;
	struct stat st;
	size_t n, i;
	int sfd, rc = 0;

	if (depth > w->max_depth) {
		w->cuts.depth++;
		return 0;
	}
	if ((names = list_fd(fd, &n)) == NULL)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		if (w->n >= w->max) {
			w->cuts.count = 1;
			break;
		}
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1) {
			w->cuts.unreadable++; /* vanished */
			continue;
		}
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			w->cuts.skipped++; /* links, devices, FIFOs, sockets */
			continue;
		}
		sub = *prefix ? join(prefix, names[i]) : strdup(names[i]);
		if (sub == NULL) {
			errno = ENOMEM;
			rc = -1;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			sfd = openat(fd, names[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sfd != -1) {
				rc = walk_beneath(w, sfd, sub, depth + 1);
				close(sfd);
				if (rc == -1 && errno != ENOMEM) {
					rc = 0; /* unreadable: skipped */
					w->cuts.unreadable++;
				}
			} else {
				w->cuts.unreadable++;
			}
			free(sub);
			continue;
		}
		if (w->n + 2 > w->cap) {
			size_t cap = w->cap ? 2 * w->cap : 32;

			if ((nn = realloc(w->names, cap * sizeof(*nn))) ==
			    NULL) {
				free(sub);
				errno = ENOMEM;
				rc = -1;
				break;
			}
			w->names = nn;
			w->cap = cap;
		}
		w->names[w->n++] = sub;
		w->names[w->n] = NULL;
	}
	fs_free_list(names);
	return rc;
}

char **
fs_files_beneath(const char *root, const char *rel, size_t max_files, size_t *n,
    char *err, size_t errlen)
{
	return fs_files_beneath_cut(root, rel, max_files, FS_MAX_DEPTH, n, NULL,
	    err, errlen);
}

char **
fs_files_beneath_cut(const char *root, const char *rel, size_t max_files,
    int max_depth, size_t *n, struct fs_walk_cuts *cuts, char *err,
    size_t errlen)
{
	struct walk w = { NULL, 0, 0, max_files, 0, { 0, 0, 0, 0 } };
	const char *last = "";
	struct stat st;
	int dfd = -1, fd, e = 0;

	if (*rel == '\0') {
		if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
			e = errno;
	} else if ((dfd = open_parent_beneath(root, rel, &last, &e)) == -1) {
		fd = -1;
	} else {
		char name[NAME_MAX + 1];
		size_t k = strcspn(last, "/");

		if (k == 0 || k > NAME_MAX ||
		    (k == 2 && last[0] == '.' && last[1] == '.')) {
			e = k > NAME_MAX ? ENAMETOOLONG : FS_EDOTDOT;
			fd = -1;
		} else {
			memcpy(name, last, k);
			name[k] = '\0';
			fd = openat(dfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd == -1) {
				e = errno;
				if (fstatat(dfd, name, &st,
					AT_SYMLINK_NOFOLLOW) == 0 &&
				    S_ISLNK(st.st_mode))
					e = ELOOP;
			}
		}
		close(dfd);
	}
	if (fd == -1)
		goto fail;
	w.max_depth = max_depth < FS_MAX_DEPTH ? max_depth : FS_MAX_DEPTH;
	if (walk_beneath(&w, fd, "", 0) == -1) {
		e = errno;
		close(fd);
		goto fail;
	}
	close(fd);
	if (w.names == NULL &&
	    (w.names = calloc(1, sizeof(*w.names))) == NULL) {
		e = ENOMEM;
		goto fail;
	}
	qsort(w.names, w.n, sizeof(*w.names), cmp_names);
	*n = w.n;
	if (cuts != NULL)
		*cuts = w.cuts;
	return w.names;
fail:
	fs_free_list(w.names);
	set_beneath_err(err, errlen, root, rel, e);
	if (strncmp(err, "cannot read", 11) == 0)
		memcpy(err, "cannot list", 11);
	return NULL;
}

static void
to_hex(const unsigned char *md, unsigned int n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * n] = '\0';
}

int
fs_sha256(const void *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n;

	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1)
		return -1;
	to_hex(md, n, hex);
	return 0;
}

int
fs_sha256_file(const char *path, char hex[65], char *err, size_t errlen)
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
	EVP_MD_CTX *ctx;
	unsigned int n;
	ssize_t r;
	int fd, e = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		set_err(err, errlen, "cannot read", path, errno);
		return -1;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		e = ENOMEM;
		goto out;
	}
	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			e = errno;
			goto out;
		}
		if (r == 0)
			break;
		if (EVP_DigestUpdate(ctx, buf, (size_t)r) != 1) {
			e = ENOMEM;
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, md, &n) != 1)
		e = ENOMEM;
	else
		to_hex(md, n, hex);
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	if (e != 0) {
		set_err(err, errlen, "cannot read", path, e);
		return -1;
	}
	return 0;
}

static int
chown_contents(int fd, const char *path, uid_t uid, gid_t gid, int depth,
    char *err, size_t errlen)
{
	char **names;
	size_t n, i;
	int rc = 0;

	if (depth > FS_MAX_DEPTH) {
		set_err(err, errlen, "cannot change owner of", path, ELOOP);
		return -1;
	}
	if ((names = list_fd(fd, &n)) == NULL) {
		set_err(err, errlen, "cannot list", path, errno);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		char *sub = join(path, names[i]);
		int sfd;

		if (sub == NULL) {
			set_err(err, errlen, "cannot change owner of", path,
			    ENOMEM);
			rc = -1;
			break;
		}
		if (fchownat(fd, names[i], uid, gid, AT_SYMLINK_NOFOLLOW) ==
		    -1) {
			set_err(err, errlen, "cannot change owner of", sub,
			    errno);
			rc = -1;
		} else if ((sfd = openat(fd, names[i],
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				    O_CLOEXEC)) != -1) {
			rc = chown_contents(sfd, sub, uid, gid, depth + 1, err,
			    errlen);
			close(sfd);
		} else if (errno != ENOTDIR && errno != ELOOP) {
			set_err(err, errlen, "cannot change owner of", sub,
			    errno);
			rc = -1;
		}
		free(sub);
	}
	fs_free_list(names);
	return rc;
}

int
fs_chown(const char *path, uid_t uid, gid_t gid, int recursive, char *err,
    size_t errlen)
{
	int fd, rc;

	if (lchown(path, uid, gid) == -1) {
		set_err(err, errlen, "cannot change owner of", path, errno);
		return -1;
	}
	if (!recursive)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOTDIR || errno == ELOOP ?
		    0 :
		    (set_err(err, errlen, "cannot change owner of", path,
			 errno),
			-1);
	rc = chown_contents(fd, path, uid, gid, 0, err, errlen);
	close(fd);
	return rc;
}
