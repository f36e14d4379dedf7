/*
 * File-system primitives the sandbox needs to stage directories without
 * shelling out: remove a tree, make directories, write and read whole
 * files, hash bytes and files (SHA-256, OpenSSL EVP), list a directory,
 * change ownership of a tree.
 *
 * Nothing here follows a symbolic link it did not start from: rmtree and
 * chown walk with openat(O_NOFOLLOW) and act on links themselves, and
 * write_file refuses a link as its last component. Errors are written into
 * the caller's buffer as "cannot remove '/x/y': Permission denied".
 */
#ifndef LEAKBENCH_FS_H
#define LEAKBENCH_FS_H

#include <stddef.h>
#include <sys/types.h>

/* Removes path and everything below it; a missing path is success. 0 or -1. */
int fs_rmtree(const char *path, char *err, size_t errlen);

/* mkdir -p with mode for the directories it creates. 0 or -1. */
int fs_mkdir_p(const char *path, mode_t mode, char *err, size_t errlen);

/*
 * Writes len bytes to path (created with exactly mode, truncated if it
 * exists, unless exclusive: then it must not exist). Never follows a
 * symbolic link at path. 0 or -1.
 */
int fs_write_file(const char *path, const void *data, size_t len, mode_t mode,
    int exclusive, char *err, size_t errlen);

/* The whole file, malloc'd (caller frees; NUL-terminated), or NULL. */
char *fs_read_file(const char *path, size_t *len, char *err, size_t errlen);

/*
 * Reading files a hostile party made (evidence, a scenario's lb.file):
 * root is the caller's own directory and is followed; every component of
 * rel is opened with O_NOFOLLOW, ".." is refused, and the last one must be
 * a regular file (checked with fstatat before it is opened, and with fstat
 * after, O_NONBLOCK: a FIFO, device or socket is never read). At most max
 * bytes are read: a sparse 1 TB file costs max.
 */
struct fs_read_info {
	off_t size;    /* st_size */
	mode_t mode;   /* permission bits */
	int truncated; /* the file holds more than max bytes */
};

/*
 * The first max bytes of root/rel, malloc'd and NUL-terminated (caller
 * frees), *len their count, info filled; or NULL with err: "cannot read
 * 'root/rel': is a symbolic link" (also for a link on the way), "...: not
 * a regular file", "...: leaves its directory", or strerror.
 */
char *fs_read_beneath(const char *root, const char *rel, size_t max,
    size_t *len, struct fs_read_info *info, char *err, size_t errlen);

/*
 * Opens root/rel for reading under the same rules as fs_read_beneath (no
 * link followed, a regular file only, never blocking on a FIFO): the
 * descriptor (the caller closes it), or -1 with err.
 */
int fs_open_beneath(const char *root, const char *rel, char *err,
    size_t errlen);

/*
 * The first max bytes of the regular file open at fd, read with pread
 * from offset 0 (fd's own offset is not moved), info filled: malloc'd and
 * NUL-terminated (caller frees), *len their count; or NULL with errno.
 */
char *fs_read_fd(int fd, size_t max, size_t *len, struct fs_read_info *info);

/*
 * Sets (on) or clears the append-only attribute (FS_APPEND_FL, chattr +a)
 * of the file open at fd: once set, no process without
 * CAP_LINUX_IMMUTABLE can write it but by appending, truncate it, rename
 * it, delete it or rename another file over it. 0, or -1 with errno
 * (EPERM without that capability, ENOTTY or EOPNOTSUPP where the file
 * system has no such attribute).
 */
int fs_set_append_only(int fd, int on);

/*
 * Change notification on directories (inotify), to wake a watcher when a
 * file it follows may have changed; it says nothing of what changed.
 * fs_notify_open: a non-blocking descriptor (the caller closes it), or -1
 * with errno. fs_notify_add: watches the directory path (not a link, not
 * a file) for writes, creations, renames and deletions of its entries; a
 * watch descriptor, or -1 with errno. fs_notify_wait: waits up to
 * timeout_ms (-1: no limit) for events and drains them: their count (0
 * when none came, or when a signal came first), or -1 with errno. With
 * also >= 0 (a process's descriptor, fs_pidfd), it wakes too when that
 * is readable (the process ended), and *also_ready says whether it was.
 * fs_pidfd: a descriptor of process pid that polls readable once it has
 * ended (pidfd_open), or -1 with errno (ENOSYS before Linux 5.3).
 */
int fs_notify_open(void);
int fs_notify_add(int fd, const char *path);
int fs_notify_wait(int fd, int also, int timeout_ms, int *also_ready);
int fs_pidfd(int pid);

/*
 * The regular files below root/rel, as sorted paths relative to it: a
 * list for fs_free_list, or NULL with err. rel itself (the root of the
 * walk) is reached without following a link, like everything below it:
 * links, devices, FIFOs and sockets are skipped, not followed; at most
 * max_files names and FS_MAX_DEPTH levels.
 */
char **fs_files_beneath(const char *root, const char *rel, size_t max_files,
    size_t *n, char *err, size_t errlen);

/*
 * What a walk left out, so that a reader can say its list is not whole:
 * directories below max_depth not entered, whether max_files stopped it,
 * entries that are neither files nor directories (links, devices, FIFOs,
 * sockets: skipped), and directories that could not be opened or listed.
 */
struct fs_walk_cuts {
	size_t depth, skipped, unreadable;
	int count;
};

/*
 * fs_files_beneath, with a depth limit of its own (at most FS_MAX_DEPTH)
 * and what was cut in *cuts (zeroed first; may be NULL).
 */
char **fs_files_beneath_cut(const char *root, const char *rel, size_t max_files,
    int max_depth, size_t *n, struct fs_walk_cuts *cuts, char *err,
    size_t errlen);

/*
 * The disk space used below root/rel (st_blocks, so a sparse file counts
 * what it holds): at most max_files entries and FS_MAX_DEPTH levels are
 * looked at, no link followed. 0 with *bytes and *entries, or -1 (errno
 * set) when root/rel cannot be opened.
 */
int fs_disk_usage(const char *root, const char *rel, size_t max_files,
    unsigned long long *bytes, size_t *entries);

/* Lowercase hex SHA-256 of data into hex (65 bytes). 0 or -1. */
int fs_sha256(const void *data, size_t len, char hex[65]);

/* Same for a file's content. 0 or -1. */
int fs_sha256_file(const char *path, char hex[65], char *err, size_t errlen);

/*
 * The names in a directory, sorted, without "." and "..": a malloc'd
 * NULL-terminated array of malloc'd strings (free with fs_free_list), or
 * NULL on error (*n untouched).
 */
char **fs_listdir(const char *path, size_t *n, char *err, size_t errlen);
void fs_free_list(char **names);

/* lchown of path, and with recursive of everything below it. 0 or -1. */
int fs_chown(const char *path, uid_t uid, gid_t gid, int recursive, char *err,
    size_t errlen);

#endif
