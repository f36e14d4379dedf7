/*
 * The primitives of "leakbench.core" for following files a hostile party
 * writes (l_watch.c): held file descriptors and change notification.
 */
#ifndef LEAKBENCH_L_WATCH_H
#define LEAKBENCH_L_WATCH_H

#include <lua.h>

/*
 * Adds open_beneath and notify to the table on top of the stack, and
 * creates the "leakbench.file" and "leakbench.notify" metatables.
 */
void l_watch_register(lua_State *L);

#endif
