/*
 * Lua bindings for fs.c, part of "leakbench.core": temporary directories,
 * whole-file reads and writes, reads confined below a directory (for
 * hostile trees), listings, stat, ownership, digests and locks between
 * processes. Misuse raises in
 * l_args.h's grammar; failures of the environment return nil, message.
 */
#include <sys/file.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "fs.h"
#include "l_args.h"

/* tmpdir(prefix, [parent]) -> path | nil, err: a fresh 0700 directory. */
static int
l_tmpdir(lua_State *L)
{
	const char *prefix = l_check_string(L, 1, "core.tmpdir", "prefix");
	const char *parent = l_opt_string(L, 2, "core.tmpdir", "parent");
	char *path;

	if (strchr(prefix, '/') != NULL)
		return l_wrong(L, "core.tmpdir", "prefix", "contains a '/'");
	if (parent == NULL && (parent = getenv("TMPDIR")) == NULL)
		parent = "/tmp";
	lua_pushfstring(L, "%s/%sXXXXXX", parent, prefix);
	path = strdup(lua_tostring(L, -1));
	if (path == NULL)
		return luaL_error(L, "core.tmpdir: out of memory");
	if (mkdtemp(path) == NULL) {
		int e = errno;

		free(path);
		return l_fail_errno(L, "cannot create a directory in", parent,
		    e);
	}
	lua_pushstring(L, path);
	free(path);
	return 1;
}

static int
push_status(lua_State *L, int rc, const char *err)
{
	if (rc != 0)
		return l_fail(L, err);
	lua_pushboolean(L, 1);
	return 1;
}

/* rmtree(path) -> true | nil, err. Never follows links; refuses "/". */
static int
l_rmtree(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.rmtree", "path");
	char err[512];
	const char *s;

	for (s = path; *s == '/'; s++)
		;
	if (*s == '\0')
		return l_wrong(L, "core.rmtree", "path",
		    "refusing to remove '%s'", path);
	return push_status(L, fs_rmtree(path, err, sizeof(err)), err);
}

static mode_t
opt_mode(lua_State *L, int idx, const char *fn, mode_t def)
{
	lua_Integer m;

	if (lua_isnoneornil(L, idx))
		return def;
	if (!lua_isinteger(L, idx))
		l_wrong_type(L, idx, fn, "mode", "integer");
	m = lua_tointeger(L, idx);
	if (m < 0 || m > 07777)
		l_wrong(L, fn, "mode", "expected 0 to 07777, got %I",
		    (lua_Integer)m);
	return (mode_t)m;
}

/* mkdir_p(path, [mode = 0755]) -> true | nil, err. */
static int
l_mkdir_p(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.mkdir_p", "path");
	mode_t mode = opt_mode(L, 2, "core.mkdir_p", 0755);
	char err[512];

	return push_status(L, fs_mkdir_p(path, mode, err, sizeof(err)), err);
}

/*
 * write_file(path, bytes, [mode = 0644], [exclusive = false]) -> true |
 * nil, err. Never writes through a link; mode is exact (no umask).
 */
static int
l_write_file(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.write_file", "path");
	mode_t mode = opt_mode(L, 3, "core.write_file", 0644);
	const char *data;
	char err[512];
	size_t len;

	if (lua_type(L, 2) != LUA_TSTRING)
		l_wrong_type(L, 2, "core.write_file", "bytes", "string");
	data = lua_tolstring(L, 2, &len);
	if (!lua_isnoneornil(L, 4) && !lua_isboolean(L, 4))
		l_wrong_type(L, 4, "core.write_file", "exclusive", "boolean");
	return push_status(L,
	    fs_write_file(path, data, len, mode, lua_toboolean(L, 4), err,
		sizeof(err)),
	    err);
}

/* read_file(path) -> bytes | nil, err. */
static int
l_read_file(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.read_file", "path");
	char err[512], *buf;
	size_t len;

	if ((buf = fs_read_file(path, &len, err, sizeof(err))) == NULL)
		return l_fail(L, err);
	lua_pushlstring(L, buf, len);
	free(buf);
	return 1;
}

/*
 * read_beneath(root, rel, [max = 64 MiB]) -> bytes, { size =, mode =,
 * truncated = } | nil, err. For files a hostile party made: no link in rel
 * is followed, only a regular file is read, and at most max bytes of it
 * (see fs_read_beneath). Misuse raises.
 */
static int
l_read_beneath(lua_State *L)
{
	const char *root = l_check_string(L, 1, "core.read_beneath", "root");
	const char *rel = l_check_string(L, 2, "core.read_beneath", "rel");
	struct fs_read_info info;
	lua_Integer max = 64 << 20;
	char err[512], *buf;
	size_t len;

	if (!lua_isnoneornil(L, 3)) {
		if (!lua_isinteger(L, 3))
			l_wrong_type(L, 3, "core.read_beneath", "max",
			    "integer");
		max = lua_tointeger(L, 3);
		if (max < 0)
			return l_wrong(L, "core.read_beneath", "max",
			    "expected a non-negative integer, got %I",
			    (lua_Integer)max);
	}
	buf = fs_read_beneath(root, rel, (size_t)max, &len, &info, err,
	    sizeof(err));
	if (buf == NULL)
		return l_fail(L, err);
	lua_pushlstring(L, buf, len);
	free(buf);
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, (lua_Integer)info.size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, (lua_Integer)info.mode);
	lua_setfield(L, -2, "mode");
	lua_pushboolean(L, info.truncated);
	lua_setfield(L, -2, "truncated");
	return 2;
}

/*
 * files_beneath(root, rel, [max_files = 100000, [max_depth = 256]]) ->
 * sorted list of the regular files below root/rel, relative to it, and
 * what the walk cut: { depth = directories not entered, count = stopped
 * at max_files, skipped = links, devices, FIFOs and sockets, unreadable =
 * directories that could not be listed } | nil, err. No link is followed,
 * rel included.
 */
static int
l_files_beneath(lua_State *L)
{
	const char *root = l_check_string(L, 1, "core.files_beneath", "root");
	const char *rel = l_check_string(L, 2, "core.files_beneath", "rel");
	lua_Integer max = l_opt_count(L, 3, "core.files_beneath", "max_files",
	    100000);
	lua_Integer depth = l_opt_count(L, 4, "core.files_beneath", "max_depth",
	    256);
	struct fs_walk_cuts cuts;
	char err[512], **names;
	size_t n, i;

	if (depth > 256)
		depth = 256;
	names = fs_files_beneath_cut(root, rel, (size_t)max, (int)depth, &n,
	    &cuts, err, sizeof(err));
	if (names == NULL)
		return l_fail(L, err);
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, names[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	fs_free_list(names);
	lua_createtable(L, 0, 4);
	lua_pushinteger(L, (lua_Integer)cuts.depth);
	lua_setfield(L, -2, "depth");
	lua_pushboolean(L, cuts.count);
	lua_setfield(L, -2, "count");
	lua_pushinteger(L, (lua_Integer)cuts.skipped);
	lua_setfield(L, -2, "skipped");
	lua_pushinteger(L, (lua_Integer)cuts.unreadable);
	lua_setfield(L, -2, "unreadable");
	return 2;
}

/*
 * disk_usage(root, rel, [max_files = 1000000]) -> bytes, entries | nil,
 * err: the disk space used below root/rel, no link followed (fs.h).
 */
static int
l_disk_usage(lua_State *L)
{
	const char *root = l_check_string(L, 1, "core.disk_usage", "root");
	const char *rel = l_check_string(L, 2, "core.disk_usage", "rel");
	lua_Integer max = l_opt_count(L, 3, "core.disk_usage", "max_files",
	    1000000);
	unsigned long long bytes;
	size_t n;

	if (fs_disk_usage(root, rel, (size_t)max, &bytes, &n) != 0)
		return l_fail_errno(L, "cannot measure", root, errno);
	lua_pushinteger(L, (lua_Integer)bytes);
	lua_pushinteger(L, (lua_Integer)n);
	return 2;
}

/* sha256(bytes) -> lowercase hex. */
static int
l_sha256(lua_State *L)
{
	char hex[65];
	const char *s;
	size_t len;

	if (lua_type(L, 1) != LUA_TSTRING)
		l_wrong_type(L, 1, "core.sha256", "bytes", "string");
	s = lua_tolstring(L, 1, &len);
	if (fs_sha256(s, len, hex) != 0)
		return luaL_error(L, "core.sha256: digest failed");
	lua_pushstring(L, hex);
	return 1;
}

/* sha256_file(path) -> hex | nil, err. */
static int
l_sha256_file(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.sha256_file", "path");
	char hex[65], err[512];

	if (fs_sha256_file(path, hex, err, sizeof(err)) != 0)
		return l_fail(L, err);
	lua_pushstring(L, hex);
	return 1;
}

/* listdir(path) -> sorted names | nil, err. */
static int
l_listdir(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.listdir", "path");
	char err[512], **names;
	size_t n, i;

	if ((names = fs_listdir(path, &n, err, sizeof(err))) == NULL)
		return l_fail(L, err);
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, names[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	fs_free_list(names);
	return 1;
}

/*
 * stat(path) -> { type = "file" | "dir" | "link" | "other", size, mode,
 * uid, gid, mtime, ino } | nil, err. Does not follow a final link.
 */
static int
l_stat(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.stat", "path");
	struct stat st;
	const char *type;

	if (lstat(path, &st) == -1) {
		return l_fail_errno(L, "cannot stat", path, errno);
	}
	type = S_ISREG(st.st_mode) ? "file" :
	    S_ISDIR(st.st_mode)	   ? "dir" :
	    S_ISLNK(st.st_mode)	   ? "link" :
				     "other";
	lua_createtable(L, 0, 7);
	lua_pushstring(L, type);
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, (lua_Integer)st.st_size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
	lua_setfield(L, -2, "mode");
	lua_pushinteger(L, (lua_Integer)st.st_uid);
	lua_setfield(L, -2, "uid");
	lua_pushinteger(L, (lua_Integer)st.st_gid);
	lua_setfield(L, -2, "gid");
	lua_pushinteger(L, (lua_Integer)st.st_ino);
	lua_setfield(L, -2, "ino");
	lua_pushnumber(L,
	    (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9);
	lua_setfield(L, -2, "mtime");
	return 1;
}

static lua_Integer
check_id(lua_State *L, int idx, const char *fn, const char *what)
{
	lua_Integer v;

	if (!lua_isinteger(L, idx))
		l_wrong_type(L, idx, fn, what, "integer");
	v = lua_tointeger(L, idx);
	if (v < 0 || v > UINT32_MAX - 1)
		l_wrong(L, fn, what, "expected 0 to %I, got %I",
		    (lua_Integer)(UINT32_MAX - 1), (lua_Integer)v);
	return v;
}

/* chown(path, uid, gid, [recursive]) -> true | nil, err. lchown semantics. */
static int
l_chown(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.chown", "path");
	uid_t uid = (uid_t)check_id(L, 2, "core.chown", "uid");
	gid_t gid = (gid_t)check_id(L, 3, "core.chown", "gid");
	char err[512];

	if (!lua_isnoneornil(L, 4) && !lua_isboolean(L, 4))
		l_wrong_type(L, 4, "core.chown", "recursive", "boolean");
	return push_status(L,
	    fs_chown(path, uid, gid, lua_toboolean(L, 4), err, sizeof(err)),
	    err);
}

/* chmod(path, mode) -> true | nil, err. */
static int
l_chmod(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.chmod", "path");
	mode_t mode;

	if (lua_isnoneornil(L, 2))
		l_wrong_type(L, 2, "core.chmod", "mode", "integer");
	mode = opt_mode(L, 2, "core.chmod", 0);
	if (chmod(path, mode) == -1) {
		return l_fail_errno(L, "cannot change mode of", path, errno);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* realpath(path) -> absolute path | nil, err. */
static int
l_realpath(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.realpath", "path");
	char *r = realpath(path, NULL);

	if (r == NULL) {
		return l_fail_errno(L, "cannot resolve", path, errno);
	}
	lua_pushstring(L, r);
	free(r);
	return 1;
}

/* exe_path() -> the running binary's absolute path | nil, err. */
static int
l_exe_path(lua_State *L)
{
	lua_settop(L, 0);
	lua_pushliteral(L, "/proc/self/exe");
	return l_realpath(L);
}

/* symlink(target, path) -> true | nil, err: a link at path to target. */
static int
l_symlink(lua_State *L)
{
	const char *target = l_check_string(L, 1, "core.symlink", "target");
	const char *path = l_check_string(L, 2, "core.symlink", "path");

	if (symlink(target, path) == -1)
		return l_fail_errno(L, "cannot make the link", path, errno);
	lua_pushboolean(L, 1);
	return 1;
}

#define LOCK_MT "leakbench.lock"

/* lock:unlock(), __close, __gc: releases it; harmless twice. */
static int
l_unlock(lua_State *L)
{
	int *fd = luaL_checkudata(L, 1, LOCK_MT);

	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return 0;
}

static const luaL_Reg lock_meta[] = { { "__gc", l_unlock },
	{ "__close", l_unlock }, { NULL, NULL } };
static const luaL_Reg lock_methods[] = { { "unlock", l_unlock },
	{ NULL, NULL } };

/*
 * lock(path) -> lock | nil, err: an exclusive flock(2) on PATH (a regular
 * file, created 0600 when missing, never through a link), waited for as
 * long as another holds it. lock:unlock(), __close and __gc release it; so
 * does the end of the process that holds it, however it ends.
 */
static int
l_lock(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.lock", "path");
	struct stat st;
	int *fd, e;

	fd = lua_newuserdatauv(L, sizeof(*fd), 0);
	*fd = -1;
	if (luaL_newmetatable(L, LOCK_MT)) {
		luaL_setfuncs(L, lock_meta, 0);
		luaL_newlib(L, lock_methods);
		lua_setfield(L, -2, "__index");
	}
	lua_setmetatable(L, -2);
	*fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	    0600);
	if (*fd == -1)
		return l_fail_errno(L, "cannot open the lock file", path,
		    errno);
	e = fstat(*fd, &st) == -1 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
	if (e != 0) {
		close(*fd);
		*fd = -1;
		return l_fail_errno(L, "cannot lock", path, e);
	}
	while (flock(*fd, LOCK_EX) == -1) {
		if ((e = errno) == EINTR)
			continue;
		close(*fd);
		*fd = -1;
		return l_fail_errno(L, "cannot lock", path, e);
	}
	return 1;
}

const luaL_Reg fs_funcs[] = { { "tmpdir", l_tmpdir }, { "rmtree", l_rmtree },
	{ "mkdir_p", l_mkdir_p }, { "write_file", l_write_file },
	{ "read_file", l_read_file }, { "read_beneath", l_read_beneath },
	{ "files_beneath", l_files_beneath }, { "sha256", l_sha256 },
	{ "disk_usage", l_disk_usage }, { "sha256_file", l_sha256_file },
	{ "listdir", l_listdir }, { "stat", l_stat }, { "chown", l_chown },
	{ "chmod", l_chmod }, { "realpath", l_realpath },
	{ "exe_path", l_exe_path }, { "symlink", l_symlink },
	{ "lock", l_lock }, { NULL, NULL } };
