/*
 * lb-conmon: conmon without podman's exit command (see ../conmon.h), as a
 * program of its own: libc only, so that podman's exec of it, once for
 * every container of every run, costs about what conmon's own does.
 * leakbench carries its bytes (gen/conmon_bin.c) and writes it where the
 * suite's podman service finds it (podman.lua, M.conmon_dir).
 */
#include "conmon.h"

int
main(int argc, char **argv)
{
	return conmon_main(argc, argv);
}
