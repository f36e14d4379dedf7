/*
 * fs: rmtree (never through links, read-only dirs, missing paths), mkdir_p,
 * write_file (exact mode, exclusive, refuses links), read_file, sha256
 * against known vectors, listdir order, chown of a tree without following
 * links; read_beneath (links, FIFOs, devices, caps, sparse files) and
 * files_beneath (links, the walk's root included).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "tap.h"

static char err[512];
static char top[] = "/tmp/lb-fs-XXXXXX";

static const char *
at(const char *rel)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", top, rel);
	return buf[k];
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void
test_write_read(void)
{
	struct stat st;
	size_t len;
	char *s;

	is_int(fs_write_file(at("a"), "hello\0world", 11, 0600, 0, err,
		   sizeof(err)),
	    0, "write: ok");
	ok(stat(at("a"), &st) == 0 && (st.st_mode & 07777) == 0600,
	    "write: exact mode 0600");
	s = fs_read_file(at("a"), &len, err, sizeof(err));
	ok(s != NULL && len == 11 && memcmp(s, "hello\0world", 11) == 0,
	    "read: bytes back, NUL included");
	free(s);
	is_int(fs_write_file(at("a"), "x", 1, 0755, 1, err, sizeof(err)), -1,
	    "write: exclusive refuses an existing file");
	ok(strstr(err, "cannot create '") == err &&
		strstr(err, "File exists") != NULL,
	    "write: message (%s)", err);
	is_int(fs_write_file(at("a"), "x", 1, 0755, 0, err, sizeof(err)), 0,
	    "write: truncates without exclusive");
	ok(stat(at("a"), &st) == 0 && (st.st_mode & 07777) == 0755 &&
		st.st_size == 1,
	    "write: mode changed to 0755, size 1");
	ok(symlink(at("a"), at("link")) == 0, "symlink made");
	is_int(fs_write_file(at("link"), "y", 1, 0644, 0, err, sizeof(err)), -1,
	    "write: refuses to write through a link");
	s = fs_read_file(at("nope"), &len, err, sizeof(err));
	ok(s == NULL, "read: missing file");
	ok(strncmp(err, "cannot read '", 13) == 0 &&
		strstr(err, "/nope': No such file or directory") != NULL,
	    "read: message (%s)", err);
}

static void
test_sha(void)
{
	char hex[65];

	fs_sha256("", 0, hex);
	is_str(hex,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b"
	    "7852b855",
	    "sha256 of empty");
	fs_sha256("abc", 3, hex);
	is_str(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61"
	    "f20015ad",
	    "sha256 of abc");
	fs_write_file(at("abc"), "abc", 3, 0644, 0, err, sizeof(err));
	is_int(fs_sha256_file(at("abc"), hex, err, sizeof(err)), 0,
	    "sha256_file ok");
	is_str(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61"
	    "f20015ad",
	    "sha256_file of abc");
	is_int(fs_sha256_file(at("nope"), hex, err, sizeof(err)), -1,
	    "sha256_file: missing file fails");
}

static void
test_mkdir_list(void)
{
	char **names;
	size_t n = 99;

	is_int(fs_mkdir_p(at("d/e/f"), 0755, err, sizeof(err)), 0, "mkdir_p");
	is_int(fs_mkdir_p(at("d/e/f/"), 0755, err, sizeof(err)), 0,
	    "mkdir_p: again, trailing slash");
	is_int(fs_mkdir_p(at("abc/x"), 0755, err, sizeof(err)), -1,
	    "mkdir_p: a file in the way");
	ok(strstr(err, "Not a directory") != NULL, "mkdir_p: says why (%s)",
	    err);
	fs_write_file(at("d/b"), "", 0, 0644, 0, err, sizeof(err));
	fs_write_file(at("d/a"), "", 0, 0644, 0, err, sizeof(err));
	names = fs_listdir(at("d"), &n, err, sizeof(err));
	ok(names != NULL && n == 3, "listdir: 3 entries");
	if (names != NULL && n == 3) {
		is_str(names[0], "a", "listdir: sorted 1");
		is_str(names[1], "b", "listdir: sorted 2");
		is_str(names[2], "e", "listdir: sorted 3");
		ok(names[3] == NULL, "listdir: NULL-terminated");
	}
	fs_free_list(names);
	ok(fs_listdir(at("nope"), &n, err, sizeof(err)) == NULL,
	    "listdir: missing dir");
}

static void
test_rmtree(void)
{
	char outside[] = "/tmp/lb-fs-out-XXXXXX";
	char victim[300];

	ok(mkdtemp(outside) != NULL, "outside dir");
	snprintf(victim, sizeof(victim), "%s/keep", outside);
	fs_write_file(victim, "keep", 4, 0644, 0, err, sizeof(err));
	fs_mkdir_p(at("t/sub/deeper"), 0755, err, sizeof(err));
	fs_write_file(at("t/sub/deeper/f"), "x", 1, 0644, 0, err, sizeof(err));
	ok(symlink(outside, at("t/sub/escape")) == 0, "link to outside");
	fs_mkdir_p(at("t/ro/inner"), 0755, err, sizeof(err));
	fs_write_file(at("t/ro/inner/f"), "x", 1, 0644, 0, err, sizeof(err));
	chmod(at("t/ro/inner"), 0500);
	chmod(at("t/ro"), 0500);
	is_int(fs_rmtree(at("t"), err, sizeof(err)), 0, "rmtree: ok (%s)", err);
	ok(!exists(at("t")), "rmtree: tree gone");
	ok(exists(victim), "rmtree: did not follow the link outside");
	is_int(fs_rmtree(at("t"), err, sizeof(err)), 0,
	    "rmtree: a missing path is success");
	ok(symlink(outside, at("top-link")) == 0, "top-level link");
	is_int(fs_rmtree(at("top-link"), err, sizeof(err)), 0,
	    "rmtree: a link is removed as a link");
	ok(exists(victim) && !exists(at("top-link")),
	    "rmtree: its target survives");
	is_int(fs_rmtree(outside, err, sizeof(err)), 0, "rmtree outside");
}

static void
test_chown(void)
{
	struct stat st;
	uid_t me = getuid();

	fs_mkdir_p(at("c/d"), 0755, err, sizeof(err));
	fs_write_file(at("c/d/f"), "x", 1, 0644, 0, err, sizeof(err));
	symlink(at("a"), at("c/l"));
	if (me != 0) {
		is_int(fs_chown(at("c"), me, getgid(), 1, err, sizeof(err)), 0,
		    "chown: to myself (not root, cannot test others)");
		return;
	}
	is_int(fs_chown(at("c"), 1000, 1000, 1, err, sizeof(err)), 0,
	    "chown: recursive (%s)", err);
	ok(stat(at("c/d/f"), &st) == 0 && st.st_uid == 1000 &&
		st.st_gid == 1000,
	    "chown: deep file is 1000:1000");
	ok(lstat(at("c/l"), &st) == 0 && st.st_uid == 1000,
	    "chown: the link itself changed");
	ok(stat(at("a"), &st) == 0 && st.st_uid == 0,
	    "chown: the link's target did not");
	is_int(fs_chown(at("nope"), 0, 0, 1, err, sizeof(err)), -1,
	    "chown: missing path fails");
}

/*
 * fs_read_beneath: the caps, links (last component and on the way), FIFOs,
 * devices, "..", a sparse 1 TB file read only up to the cap.
 */
static void
test_read_beneath(void)
{
	struct fs_read_info info;
	struct timespec t0, t1;
	size_t len;
	char *s;
	int fd;

	fs_mkdir_p(at("rb/d"), 0755, err, sizeof(err));
	fs_write_file(at("rb/d/f"), "0123456789", 10, 0640, 0, err,
	    sizeof(err));
	s = fs_read_beneath(at("rb"), "d/f", 64, &len, &info, err, sizeof(err));
	ok(s != NULL && len == 10 && strcmp(s, "0123456789") == 0 &&
		!info.truncated && info.size == 10 && info.mode == 0640,
	    "read_beneath: a regular file, whole, with its mode");
	free(s);
	s = fs_read_beneath(at("rb"), "d/f", 4, &len, &info, err, sizeof(err));
	ok(s != NULL && len == 4 && strcmp(s, "0123") == 0 && info.truncated,
	    "read_beneath: capped at max, truncated said");
	free(s);
	s = fs_read_beneath(at("rb"), "d/f", 10, &len, &info, err, sizeof(err));
	ok(s != NULL && len == 10 && !info.truncated,
	    "read_beneath: exactly max is not truncated");
	free(s);

	if (symlink("/etc/passwd", at("rb/d/link")) == -1 ||
	    symlink("d", at("rb/dlink")) == -1)
		ok(0, "symlink: %s", strerror(errno));
	s = fs_read_beneath(at("rb"), "d/link", 64, &len, &info, err,
	    sizeof(err));
	ok(s == NULL && strstr(err, "/rb/d/link': is a symbolic link") != NULL,
	    "read_beneath: refuses a link as the last component (%s)", err);
	s = fs_read_beneath(at("rb"), "dlink/f", 64, &len, &info, err,
	    sizeof(err));
	ok(s == NULL && strstr(err, "': is a symbolic link") != NULL,
	    "read_beneath: refuses a link on the way (%s)", err);
	s = fs_read_beneath(at("rb"), "d/../d/f", 64, &len, &info, err,
	    sizeof(err));
	ok(s == NULL && strstr(err, "': leaves its directory") != NULL,
	    "read_beneath: refuses '..' (%s)", err);

	if (mkfifo(at("rb/d/fifo"), 0600) == -1)
		ok(0, "mkfifo: %s", strerror(errno));
	s = fs_read_beneath(at("rb"), "d/fifo", 64, &len, &info, err,
	    sizeof(err));
	ok(s == NULL && strstr(err, "': not a regular file") != NULL,
	    "read_beneath: refuses a FIFO without blocking (%s)", err);
	s = fs_read_beneath("/dev", "zero", 64, &len, &info, err, sizeof(err));
	ok(s == NULL && strstr(err, "'/dev/zero': not a regular file") != NULL,
	    "read_beneath: refuses a device (%s)", err);
	s = fs_read_beneath(at("rb"), "d", 64, &len, &info, err, sizeof(err));
	ok(s == NULL && strstr(err, "': not a regular file") != NULL,
	    "read_beneath: refuses a directory (%s)", err);
	s = fs_read_beneath(at("rb"), "d/nope", 64, &len, &info, err,
	    sizeof(err));
	ok(s == NULL && strstr(err, "No such file or directory") != NULL,
	    "read_beneath: a missing file (%s)", err);

	fd = open(at("rb/d/sparse"), O_WRONLY | O_CREAT, 0600);
	ok(fd != -1 && ftruncate(fd, (off_t)1 << 40) == 0,
	    "sparse: a 1 TB file");
	if (fd != -1)
		close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s = fs_read_beneath(at("rb"), "d/sparse", 1 << 20, &len, &info, err,
	    sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok(s != NULL && len == 1 << 20 && info.truncated &&
		info.size == (off_t)1 << 40,
	    "read_beneath: a sparse 1 TB file "
	    "gives the cap, truncated");
	ok(t1.tv_sec - t0.tv_sec < 2, "read_beneath: and costs only the cap");
	free(s);
}

/*
 * fs_open_beneath + fs_read_fd: a file held open stays readable whole
 * after another file is renamed over it, and after it is deleted; the
 * open refuses what read_beneath refuses. fs_notify_*: a write in a
 * watched directory wakes the wait, none lets it time out.
 */
static void
test_held_files(void)
{
	struct fs_read_info info;
	char *s;
	size_t len;
	int fd, nfd;

	fs_mkdir_p(at("hf"), 0755, err, sizeof(err));
	fs_write_file(at("hf/t"), "one\n", 4, 0644, 0, err, sizeof(err));
	fd = fs_open_beneath(at("hf"), "t", err, sizeof(err));
	ok(fd != -1, "open_beneath: a regular file (%s)", err);
	nfd = fs_notify_open();
	ok(nfd != -1 && fs_notify_add(nfd, at("hf")) != -1,
	    "notify: a watch on a directory");
	is_int(fs_notify_wait(nfd, -1, 0, NULL), 0, "notify: no event yet");
	{
		int a = open(at("hf/t"), O_WRONLY | O_APPEND);

		ok(a != -1 && write(a, "two\n", 4) == 4, "append");
		if (a != -1)
			close(a);
	}
	ok(fs_notify_wait(nfd, -1, 1000, NULL) > 0,
	    "notify: the append wakes the wait");
	fs_write_file(at("hf/t.new"), "one\n", 4, 0644, 0, err, sizeof(err));
	ok(rename(at("hf/t.new"), at("hf/t")) == 0, "rename over it");
	s = fs_read_fd(fd, 64, &len, &info);
	is_str(s, "one\ntwo\n",
	    "read_fd: the file held, whole, after a rename");
	free(s);
	ok(unlink(at("hf/t")) == 0, "delete the new one");
	s = fs_read_fd(fd, 3, &len, &info);
	ok(s != NULL && len == 3 && info.truncated,
	    "read_fd: capped at max, truncated said");
	free(s);
	close(fd);
	ok(fs_notify_wait(nfd, -1, 0, NULL) > 0,
	    "notify: the rename and delete too");
	close(nfd);
	ok(symlink("/etc/passwd", at("hf/l")) == 0, "a link");
	ok(fs_open_beneath(at("hf"), "l", err, sizeof(err)) == -1 &&
		strstr(err, "is a symbolic link") != NULL,
	    "open_beneath: refuses a link (%s)", err);
}

/*
 * fs_pidfd with fs_notify_wait: the wait wakes when the process ends (a
 * child, not yet reaped: what the harness follows is a conmon it did not
 * start, which stays a zombie until another reaps it), not before, and
 * says so; an event with the process still running says it has not ended.
 */
static void
test_pidfd_wait(void)
{
	int nfd = fs_notify_open(), pfd, ended = -1, st;
	int gate[2];
	pid_t pid;

	fs_mkdir_p(at("pw"), 0755, err, sizeof(err));
	ok(nfd != -1 && fs_notify_add(nfd, at("pw")) != -1, "pidfd: a watch");
	ok(pipe(gate) == 0, "pidfd: a pipe");
	pid = fork();
	if (pid == 0) {
		char c;

		close(gate[1]);
		(void)read(gate[0], &c, 1);
		_exit(0);
	}
	close(gate[0]);
	pfd = fs_pidfd((int)pid);
	ok(pfd != -1, "pidfd: of a running child");
	is_int(fs_notify_wait(nfd, pfd, 50, &ended), 0,
	    "pidfd: no event while it runs");
	is_int(ended, 0, "pidfd: not ended while it runs");
	fs_write_file(at("pw/f"), "x", 1, 0644, 0, err, sizeof(err));
	ok(fs_notify_wait(nfd, pfd, 1000, &ended) > 0 && ended == 0,
	    "pidfd: a file's event wakes it, the process still running");
	close(gate[1]);
	is_int(fs_notify_wait(nfd, pfd, 5000, &ended), 0,
	    "pidfd: its end wakes the wait, no file event");
	is_int(ended, 1, "pidfd: ended, said (a timeout would not say it)");
	is_int(fs_notify_wait(nfd, pfd, 0, &ended), 0,
	    "pidfd: still ended, unreaped");
	is_int(ended, 1, "pidfd: ended stays said");
	ok(waitpid(pid, &st, 0) == pid, "pidfd: reaped");
	close(pfd);
	close(nfd);
	ok(fs_pidfd(0x7ffffffe) == -1, "pidfd: no such process");
}

/* fs_files_beneath: never through a link, the root of the walk included. */
static void
test_files_beneath(void)
{
	char **names;
	size_t n = 0;

	fs_mkdir_p(at("fb/p/q"), 0755, err, sizeof(err));
	fs_write_file(at("fb/p/a"), "a", 1, 0600, 0, err, sizeof(err));
	fs_write_file(at("fb/p/q/b"), "b", 1, 0600, 0, err, sizeof(err));
	if (symlink("/etc", at("fb/p/etc")) == -1 ||
	    symlink("/etc/passwd", at("fb/p/passwd")) == -1 ||
	    symlink("/etc", at("fb/link")) == -1 ||
	    symlink("p", at("fb/plink")) == -1 ||
	    mkfifo(at("fb/p/fifo"), 0600) == -1)
		ok(0, "setup: %s", strerror(errno));
	names = fs_files_beneath(at("fb"), "p", 100, &n, err, sizeof(err));
	ok(names != NULL && n == 2 && strcmp(names[0], "a") == 0 &&
		strcmp(names[1], "q/b") == 0 && names[2] == NULL,
	    "files_beneath: regular files only, links and FIFOs skipped");
	fs_free_list(names);
	names = fs_files_beneath(at("fb"), "link", 100, &n, err, sizeof(err));
	ok(names == NULL && strstr(err, "cannot list '") == err &&
		strstr(err, "/fb/link': is a symbolic link") != NULL,
	    "files_beneath: the root of the walk is not followed (%s)", err);
	names = fs_files_beneath(at("fb"), "plink/q", 100, &n, err,
	    sizeof(err));
	ok(names == NULL && strstr(err, "': is a symbolic link") != NULL,
	    "files_beneath: nor a link on the way to it (%s)", err);
	names = fs_files_beneath(at("fb"), "p", 1, &n, err, sizeof(err));
	ok(names != NULL && n == 1, "files_beneath: at most max_files");
	fs_free_list(names);
	names = fs_files_beneath(at("fb"), "nope", 100, &n, err, sizeof(err));
	ok(names == NULL && strstr(err, "No such file or directory") != NULL,
	    "files_beneath: a missing root (%s)", err);
}

int
main(void)
{
	if (mkdtemp(top) == NULL) {
		printf("not ok 1 - mkdtemp: %s\n1..1\n", strerror(errno));
		return 1;
	}
	test_write_read();
	test_sha();
	test_mkdir_list();
	test_rmtree();
	test_chown();
	test_read_beneath();
	test_held_files();
	test_pidfd_wait();
	test_files_beneath();
	is_int(fs_rmtree(top, err, sizeof(err)), 0, "cleanup");
	return tap_done();
}
