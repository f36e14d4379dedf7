/* Registration tables of the binding files, gathered into leakbench.core. */
#ifndef LEAKBENCH_LFS_CORE_H
#define LEAKBENCH_LFS_CORE_H

#include <lauxlib.h>

extern const luaL_Reg fs_funcs[];

#endif
