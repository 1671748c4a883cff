/* The heap operations tests/programs/wrap_program.c makes through the malloc wrappers, which
 * test_wrap expects in its trace one for one. */
#ifndef WRAP_STEPS_H
#define WRAP_STEPS_H

#include <stddef.h>

enum wrap_op { WRAP_MALLOC, WRAP_CALLOC, WRAP_REALLOC, WRAP_FREE };

struct wrap_step {
	enum wrap_op op;
	int block;    /* which of the program's blocks */
	size_t size;  /* malloc, realloc: bytes; calloc: bytes per element */
	size_t count; /* calloc: elements */
};

#define WRAP_BLOCKS 5

static const struct wrap_step wrap_steps[] = {
	{WRAP_MALLOC, 0, 24, 0},
	{WRAP_MALLOC, 1, 1000, 0},
	{WRAP_CALLOC, 2, 16, 10},
	{WRAP_REALLOC, 1, 5000, 0},   /* grows, probably moves */
	{WRAP_REALLOC, 3, 64, 0},     /* of NULL: an allocation */
	{WRAP_MALLOC, 4, 300000, 0},  /* large: mmap'd by glibc */
	{WRAP_FREE, 0, 0, 0},
	{WRAP_REALLOC, 2, 8, 0},      /* shrinks */
	{WRAP_FREE, 1, 0, 0},
	{WRAP_FREE, 2, 0, 0},
	{WRAP_REALLOC, 3, 0, 0},      /* to size 0: glibc frees it */
	{WRAP_FREE, 4, 0, 0},
};

#endif
