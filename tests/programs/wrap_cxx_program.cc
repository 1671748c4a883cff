/* Linked with libticktrace-wrap's flags (tests/programs/meson.build): calls each global
 * operator new and delete of wrap_cxx_steps.h, and after each one records, as the
 * counter "expected_live_bytes", what its own bookkeeping says the wrappers'
 * "heap_live_bytes" must be; then a std::vector and a throwing new, as a program
 * would. test_wrap reads the trace back. */
#include <malloc.h>
#include <stdint.h>

#include <new>
#include <vector>

#include <ticktrace.h>

#include "wrap_cxx_steps.h"

/* The compiler must assume that p is read and written. */
static void escape(void *p)
{
	__asm__ volatile("" : : "g"(p) : "memory");
}

static void *step(const wrap_cxx_step &s, void *block)
{
	const std::align_val_t al{WRAP_CXX_ALIGN};
	switch (s.op) {
	case CXX_NEW: return ::operator new(s.size);
	case CXX_NEW_ARRAY: return ::operator new[](s.size);
	case CXX_NEW_NOTHROW: return ::operator new(s.size, std::nothrow);
	case CXX_NEW_ARRAY_NOTHROW: return ::operator new[](s.size, std::nothrow);
	case CXX_NEW_ALIGNED: return ::operator new(s.size, al);
	case CXX_NEW_ARRAY_ALIGNED: return ::operator new[](s.size, al);
	case CXX_NEW_ALIGNED_NOTHROW: return ::operator new(s.size, al, std::nothrow);
	case CXX_NEW_ARRAY_ALIGNED_NOTHROW: return ::operator new[](s.size, al, std::nothrow);
	case CXX_DELETE: ::operator delete(block); break;
	case CXX_DELETE_ARRAY: ::operator delete[](block); break;
	case CXX_DELETE_SIZED: ::operator delete(block, s.size); break;
	case CXX_DELETE_ARRAY_SIZED: ::operator delete[](block, s.size); break;
	case CXX_DELETE_NOTHROW: ::operator delete(block, std::nothrow); break;
	case CXX_DELETE_ARRAY_NOTHROW: ::operator delete[](block, std::nothrow); break;
	case CXX_DELETE_ALIGNED: ::operator delete(block, al); break;
	case CXX_DELETE_ARRAY_ALIGNED: ::operator delete[](block, al); break;
	case CXX_DELETE_SIZED_ALIGNED: ::operator delete(block, s.size, al); break;
	case CXX_DELETE_ARRAY_SIZED_ALIGNED: ::operator delete[](block, s.size, al); break;
	case CXX_DELETE_ALIGNED_NOTHROW: ::operator delete(block, al, std::nothrow); break;
	case CXX_DELETE_ARRAY_ALIGNED_NOTHROW: ::operator delete[](block, al, std::nothrow); break;
	}
	return nullptr;
}

int main()
{
	void *blocks[WRAP_CXX_BLOCKS] = {};
	int64_t live = 0;
	TT_BEGIN("steps");
	for (const wrap_cxx_step &s : wrap_cxx_steps) {
		void *&b = blocks[s.block];
		if (s.op >= CXX_DELETE)
			live -= (int64_t)malloc_usable_size(b);
		b = step(s, b);
		if (s.op < CXX_DELETE) {
			if (!b || (s.op >= CXX_NEW_ALIGNED && (uintptr_t)b % WRAP_CXX_ALIGN))
				return 1;
			live += (int64_t)malloc_usable_size(b);
		}
		TT_COUNTER("expected_live_bytes", live);
	}
	TT_END();
	/* As programs allocate: a new expression and a container. */
	TT_BEGIN("ordinary");
	{
		std::vector<int> v(1000);
		int *one = new int(7);
		escape(v.data());
		escape(one); /* or clang elides the pair: C++14 lets it */
		delete one;
	}
	/* A new that throws std::bad_alloc unwinds through the wrapper and records nothing
	 * (AddressSanitizer's operator new ends the program instead of throwing). */
#ifndef TT_ASAN
	try {
		void *volatile huge = ::operator new((size_t)1 << 62);
		(void)huge;
		return 1;
	} catch (const std::bad_alloc &) {
	}
#endif
	TT_END();
	return live == 0 ? 0 : 1;
}
