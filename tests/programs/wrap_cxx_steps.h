/* The C++ heap operations tests/programs/wrap_cxx_program.cc makes through libticktrace-wrap,
 * one of each global operator new and delete, which test_wrap expects in its trace
 * one for one (C and C++). */
#ifndef WRAP_CXX_STEPS_H
#define WRAP_CXX_STEPS_H

#include <stddef.h>

enum wrap_cxx_op {
	CXX_NEW, CXX_NEW_ARRAY, CXX_NEW_NOTHROW, CXX_NEW_ARRAY_NOTHROW, CXX_NEW_ALIGNED,
	CXX_NEW_ARRAY_ALIGNED, CXX_NEW_ALIGNED_NOTHROW, CXX_NEW_ARRAY_ALIGNED_NOTHROW,
	CXX_DELETE, CXX_DELETE_ARRAY, CXX_DELETE_SIZED, CXX_DELETE_ARRAY_SIZED,
	CXX_DELETE_NOTHROW, CXX_DELETE_ARRAY_NOTHROW, CXX_DELETE_ALIGNED,
	CXX_DELETE_ARRAY_ALIGNED, CXX_DELETE_SIZED_ALIGNED, CXX_DELETE_ARRAY_SIZED_ALIGNED,
	CXX_DELETE_ALIGNED_NOTHROW, CXX_DELETE_ARRAY_ALIGNED_NOTHROW,
};

struct wrap_cxx_step {
	enum wrap_cxx_op op;
	int block;   /* which of the program's blocks */
	size_t size; /* new: bytes asked for; sized delete: the same again */
	const char *name; /* the instant the wrapper records */
};

#define WRAP_CXX_BLOCKS 12
#define WRAP_CXX_ALIGN 64

static const struct wrap_cxx_step wrap_cxx_steps[] = {
	{CXX_NEW, 0, 24, "operator new"},
	{CXX_NEW, 1, 40, "operator new"},
	{CXX_NEW_NOTHROW, 2, 50, "operator new"},
	{CXX_NEW_ARRAY, 3, 100, "operator new[]"},
	{CXX_NEW_ARRAY, 4, 120, "operator new[]"},
	{CXX_NEW_ARRAY_NOTHROW, 5, 130, "operator new[]"},
	{CXX_NEW_ALIGNED, 6, 64, "operator new"},
	{CXX_NEW_ALIGNED_NOTHROW, 7, 200, "operator new"},
	{CXX_NEW_ALIGNED, 8, 300, "operator new"},
	{CXX_NEW_ARRAY_ALIGNED, 9, 400, "operator new[]"},
	{CXX_NEW_ARRAY_ALIGNED_NOTHROW, 10, 500, "operator new[]"},
	{CXX_NEW_ARRAY_ALIGNED, 11, 600000, "operator new[]"}, /* large: mmap'd by glibc */
	{CXX_DELETE, 0, 0, "operator delete"},
	{CXX_DELETE_SIZED, 1, 40, "operator delete"},
	{CXX_DELETE_NOTHROW, 2, 0, "operator delete"},
	{CXX_DELETE_ARRAY, 3, 0, "operator delete[]"},
	{CXX_DELETE_ARRAY_SIZED, 4, 120, "operator delete[]"},
	{CXX_DELETE_ARRAY_NOTHROW, 5, 0, "operator delete[]"},
	{CXX_DELETE_ALIGNED, 6, 0, "operator delete"},
	{CXX_DELETE_SIZED_ALIGNED, 7, 200, "operator delete"},
	{CXX_DELETE_ALIGNED_NOTHROW, 8, 0, "operator delete"},
	{CXX_DELETE_ARRAY_ALIGNED, 9, 0, "operator delete[]"},
	{CXX_DELETE_ARRAY_SIZED_ALIGNED, 10, 500, "operator delete[]"},
	{CXX_DELETE_ARRAY_ALIGNED_NOTHROW, 11, 0, "operator delete[]"},
};

#endif
