/*
 * The two file chores every server's records need, once: writing a whole
 * buffer to a file descriptor, and making a directory with its parents.
 * No Lua; nothing allocated that outlives a call.
 */
#ifndef LEAKBENCH_COMMON_FILES_H
#define LEAKBENCH_COMMON_FILES_H

#include <stddef.h>

/* Writes all len bytes, again after EINTR and short writes. 0, or -1
 * (errno set). */
int file_write_all(int fd, const void *buf, size_t len);

/*
 * mkdir -p, mode 0755: an existing directory is fine, an existing file in
 * the way is ENOTDIR. 0, or -1 (errno set).
 */
int file_mkdirs(const char *path);

#endif
