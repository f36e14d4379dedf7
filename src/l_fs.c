/*
 * File-system primitives for the loader: listdir and stat. Not following
 * symlinks is the caller's choice (stat follows, lstat does not).
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>

#include "lfs_core.h"

/* listdir(path) -> list of names (no "." or ".."), or nil, err. */
static int
l_listdir(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(path)) == NULL) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot list '%s': %s", path, strerror(errno));
		return 2;
	}
	lua_newtable(L);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		lua_pushstring(L, de->d_name);
		lua_rawseti(L, -2, ++n);
	}
	closedir(d);
	return 1;
}

/* stat(path) -> {type=, size=, mode=} or nil, err. Follows symlinks. */
static int
l_stat(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct stat st;
	const char *type;

	if (stat(path, &st) == -1) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot stat '%s': %s", path, strerror(errno));
		return 2;
	}
	if (S_ISDIR(st.st_mode))
		type = "directory";
	else if (S_ISREG(st.st_mode))
		type = "file";
	else
		type = "other";
	lua_createtable(L, 0, 3);
	lua_pushstring(L, type);
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, (lua_Integer)st.st_size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
	lua_setfield(L, -2, "mode");
	return 1;
}

const luaL_Reg fs_funcs[] = {
	{ "listdir", l_listdir },
	{ "stat", l_stat },
	{ NULL, NULL }
};
