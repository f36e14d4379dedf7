/*
 * The process primitives of "leakbench.core" (l_proc.c).
 */
#ifndef LEAKBENCH_L_PROC_H
#define LEAKBENCH_L_PROC_H

#include <lua.h>

/*
 * Adds run, start, wait_any, the signal and clock functions to the table
 * on top of the stack, and creates the "leakbench.process" metatable.
 */
void l_proc_register(lua_State *L);

#endif
