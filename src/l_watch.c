/*
 * Lua bindings for following files a hostile party writes, part of
 * "leakbench.core" (the transcript watcher, lua/watch.lua, is their user):
 *
 *	core.open_beneath(root, rel) -> file | nil, err
 *	file:read([max]) -> bytes, { size=, truncated= } | nil, err
 *	file:stat() -> { ino=, size=, mtime=, ctime= } | nil, err
 *	file:append_only(on) -> true | nil, err
 *	core.notify() -> notify | nil, err
 *	notify:add(dir) -> true | nil, err
 *	notify:wait(seconds [, pidfd]) -> events, ended | nil, err
 *	core.pidfd(pid) -> pidfd | nil, err
 *
 * A file handle holds the descriptor of the file found at root/rel when it
 * was opened (fs_open_beneath's rules: no link followed), so that what was
 * written to that file stays readable after someone renames another file
 * over it or deletes it; where the harness may (CAP_LINUX_IMMUTABLE), it
 * makes that file append-only. A notify handle wakes its waiter when a watched
 * directory's entries change (fs_notify_*). Both are userdata, created
 * closed before the descriptor is acquired; __gc, __close and close() are
 * one idempotent function. Misuse raises in l_args.h's grammar; failures
 * of the environment return nil, message.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "fs.h"
#include "l_args.h"
#include "l_watch.h"

#define FILE_MT	  "leakbench.file"
#define NOTIFY_MT "leakbench.notify"
#define PIDFD_MT  "leakbench.pidfd"

struct lfd {
	int fd; /* -1 when closed */
};

static struct lfd *
new_handle(lua_State *L, const char *mt)
{
	struct lfd *h = lua_newuserdatauv(L, sizeof(*h), 0);

	h->fd = -1;
	luaL_setmetatable(L, mt);
	return h;
}

/* The open handle at idx, or raise (a closed one is misuse). */
static struct lfd *
check_open(lua_State *L, const char *mt, const char *fn)
{
	struct lfd *h = luaL_checkudata(L, 1, mt);

	if (h->fd == -1)
		l_wrong(L, fn, "self", "the handle is closed");
	return h;
}

static int
l_handle_close(lua_State *L)
{
	struct lfd *h = lua_touserdata(L, 1);

	if (h != NULL && h->fd != -1) {
		close(h->fd);
		h->fd = -1;
	}
	return 0;
}

/* open_beneath(root, rel) -> file | nil, err. */
static int
l_open_beneath(lua_State *L)
{
	const char *root = l_check_string(L, 1, "core.open_beneath", "root");
	const char *rel = l_check_string(L, 2, "core.open_beneath", "rel");
	struct lfd *h = new_handle(L, FILE_MT);
	char err[512];

	if ((h->fd = fs_open_beneath(root, rel, err, sizeof(err))) == -1)
		return l_fail(L, err);
	return 1;
}

/*
 * file:read([max = 64 MiB]) -> the first max bytes of the file, from its
 * start, and { size, truncated } | nil, err.
 */
static int
l_file_read(lua_State *L)
{
	struct lfd *h = check_open(L, FILE_MT, "file:read");
	struct fs_read_info info;
	lua_Integer max = 64 << 20;
	size_t len;
	char *buf;

	if (!lua_isnoneornil(L, 2)) {
		if (!lua_isinteger(L, 2))
			l_wrong_type(L, 2, "file:read", "max", "integer");
		max = lua_tointeger(L, 2);
		if (max < 0)
			return l_wrong(L, "file:read", "max",
			    "expected a non-negative integer, got %I",
			    (lua_Integer)max);
	}
	if ((buf = fs_read_fd(h->fd, (size_t)max, &len, &info)) == NULL)
		return l_fail_errno(L, "cannot read", "file", errno);
	lua_pushlstring(L, buf, len);
	free(buf);
	lua_createtable(L, 0, 2);
	lua_pushinteger(L, (lua_Integer)info.size);
	lua_setfield(L, -2, "size");
	lua_pushboolean(L, info.truncated);
	lua_setfield(L, -2, "truncated");
	return 2;
}

/* file:stat() -> { ino, size, mtime, ctime } of the open file | nil, err. */
static int
l_file_stat(lua_State *L)
{
	struct lfd *h = check_open(L, FILE_MT, "file:stat");
	struct stat st;

	if (fstat(h->fd, &st) == -1)
		return l_fail_errno(L, "cannot stat", "file", errno);
	lua_createtable(L, 0, 4);
	lua_pushinteger(L, (lua_Integer)st.st_ino);
	lua_setfield(L, -2, "ino");
	lua_pushinteger(L, (lua_Integer)st.st_size);
	lua_setfield(L, -2, "size");
	lua_pushnumber(L,
	    (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9);
	lua_setfield(L, -2, "mtime");
	lua_pushnumber(L,
	    (double)st.st_ctim.tv_sec + (double)st.st_ctim.tv_nsec / 1e9);
	lua_setfield(L, -2, "ctime");
	return 1;
}

/*
 * file:append_only(on) -> true | nil, err: sets or clears the file's
 * append-only attribute (fs_set_append_only).
 */
static int
l_file_append_only(lua_State *L)
{
	struct lfd *h = check_open(L, FILE_MT, "file:append_only");

	if (fs_set_append_only(h->fd, lua_toboolean(L, 2)) == -1)
		return l_fail_errno(L,
		    "cannot set the append-only attribute of", "file", errno);
	lua_pushboolean(L, 1);
	return 1;
}

/* notify() -> notify | nil, err. */
static int
l_notify(lua_State *L)
{
	struct lfd *h = new_handle(L, NOTIFY_MT);

	if ((h->fd = fs_notify_open()) == -1)
		return l_fail_errno(L, "cannot watch", "files", errno);
	return 1;
}

/* notify:add(dir) -> true | nil, err. */
static int
l_notify_add(lua_State *L)
{
	struct lfd *h = check_open(L, NOTIFY_MT, "notify:add");
	const char *dir = l_check_string(L, 2, "notify:add", "dir");

	if (fs_notify_add(h->fd, dir) == -1)
		return l_fail_errno(L, "cannot watch", dir, errno);
	lua_pushboolean(L, 1);
	return 1;
}

/*
 * notify:wait(seconds [, pidfd]) -> the number of events that came (0:
 * none before the timeout or a signal), all of them drained, and whether
 * PIDFD's process has ended (it wakes the wait too) | nil, err.
 */
static int
l_notify_wait(lua_State *L)
{
	struct lfd *h = check_open(L, NOTIFY_MT, "notify:wait");
	struct lfd *p = NULL;
	double s;
	int n, ended = 0;

	if (lua_type(L, 2) != LUA_TNUMBER)
		l_wrong_type(L, 2, "notify:wait", "seconds",
		    "a number of seconds");
	s = lua_tonumber(L, 2);
	if (isnan(s) || s < 0 || s > 3600)
		return l_wrong(L, "notify:wait", "seconds",
		    "expected 0 to 3600 seconds, got %s", lua_tostring(L, 2));
	if (!lua_isnoneornil(L, 3)) {
		p = luaL_checkudata(L, 3, PIDFD_MT);
		if (p->fd == -1)
			l_wrong(L, "notify:wait", "pidfd",
			    "the handle is closed");
	}
	if ((n = fs_notify_wait(h->fd, p != NULL ? p->fd : -1,
		 (int)ceil(s * 1000), &ended)) == -1)
		return l_fail_errno(L, "cannot wait for", "file changes",
		    errno);
	lua_pushinteger(L, n);
	lua_pushboolean(L, ended);
	return 2;
}

/* pidfd(pid) -> pidfd | nil, err: process PID, to wait for its end. */
static int
l_pidfd(lua_State *L)
{
	lua_Integer pid;
	struct lfd *h;

	if (!lua_isinteger(L, 1))
		l_wrong_type(L, 1, "core.pidfd", "pid", "integer");
	pid = lua_tointeger(L, 1);
	if (pid <= 0 || pid > INT_MAX)
		return l_wrong(L, "core.pidfd", "pid",
		    "expected a process id, got %s", lua_tostring(L, 1));
	h = new_handle(L, PIDFD_MT);
	if ((h->fd = fs_pidfd((int)pid)) == -1)
		return l_fail_errno(L, "cannot follow", "the process", errno);
	return 1;
}

static const luaL_Reg watch_funcs[] = { { "open_beneath", l_open_beneath },
	{ "notify", l_notify }, { "pidfd", l_pidfd }, { NULL, NULL } };

static const luaL_Reg pidfd_methods[] = { { "close", l_handle_close },
	{ NULL, NULL } };

static const luaL_Reg file_methods[] = { { "read", l_file_read },
	{ "stat", l_file_stat }, { "append_only", l_file_append_only },
	{ "close", l_handle_close }, { NULL, NULL } };

static const luaL_Reg notify_methods[] = { { "add", l_notify_add },
	{ "wait", l_notify_wait }, { "close", l_handle_close },
	{ NULL, NULL } };

static const luaL_Reg handle_meta[] = { { "__gc", l_handle_close },
	{ "__close", l_handle_close }, { NULL, NULL } };

static void
new_metatable(lua_State *L, const char *name, const luaL_Reg *methods)
{
	if (luaL_newmetatable(L, name)) {
		luaL_setfuncs(L, handle_meta, 0);
		lua_newtable(L);
		luaL_setfuncs(L, methods, 0);
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
}

void
l_watch_register(lua_State *L)
{
	luaL_setfuncs(L, watch_funcs, 0);
	new_metatable(L, FILE_MT, file_methods);
	new_metatable(L, NOTIFY_MT, notify_methods);
	new_metatable(L, PIDFD_MT, pidfd_methods);
}
