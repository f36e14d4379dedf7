/*
 * The Lua host: one fresh state with the standard libraries, cjson, the
 * embedded leakbench modules (package.preload) and the C primitives
 * ("leakbench.core"). Every call from C into Lua goes through lhost_pcall,
 * which adds a traceback to errors.
 */
#ifndef LEAKBENCH_LHOST_H
#define LEAKBENCH_LHOST_H

#include <lua.h>

/* A new state, or NULL when out of memory. The caller closes it. */
lua_State *lhost_new(void);

/*
 * Calls the function below nargs arguments on the stack, like lua_pcall,
 * with a message handler that appends a traceback unless the error is
 * a table or the message starts with no traceback marker.
 */
int lhost_pcall(lua_State *L, int nargs, int nresults);

struct embedded_file;

/*
 * Pushes the chunk of an embedded module (embedded.h), from its bytecode
 * where this Lua takes it, else from its text; like luaL_loadbufferx's,
 * the status, and on failure the message on the stack.
 */
int lhost_load_embedded(lua_State *L, const struct embedded_file *f);

/* Opens "leakbench.core": the table of C primitives. */
int luaopen_leakbench_core(lua_State *L);

#endif
