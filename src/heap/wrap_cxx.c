/* libticktrace-wrap for C++: every replaceable global operator new and delete
 * (C++17: plain, array, nothrow, aligned, sized), wrapped like malloc and free in
 * wrap.c with -Wl,--wrap=_Znwm,... (the mangled names below), on the same
 * "heap_live_bytes" counter. Each call is an instant: "operator new" / "operator
 * new[]" with the requested size, "operator delete" / "operator delete[]" with the
 * block's malloc_usable_size(), what the counter loses (libstdc++'s operators use
 * malloc and aligned_alloc, whose blocks it measures).
 *
 * Written in C on the mangled names, so that the wrappers need no C++ compiler; built
 * with -fexceptions, so that std::bad_alloc thrown by a real operator new unwinds
 * through them. Its own object in the archive: a C program never links it. */
#include <malloc.h>
#include <stddef.h>

#include "ticktrace.h"
#include "heap.h"

/* std::align_val_t is an enum of size_t; std::nothrow_t an empty struct passed by
 * reference. */
typedef size_t tt__align_val;
struct tt__nothrow;

/* The new operators: mangled name, event name, parameters after the size. */
#define TT__CXX_NEWS(X)                                                                \
	X(_Znwm, "operator new", (size_t size), (size))                                   \
	X(_Znam, "operator new[]", (size_t size), (size))                                 \
	X(_ZnwmRKSt9nothrow_t, "operator new", (size_t size, const struct tt__nothrow *nt), \
	  (size, nt))                                                                     \
	X(_ZnamRKSt9nothrow_t, "operator new[]", (size_t size, const struct tt__nothrow *nt), \
	  (size, nt))                                                                     \
	X(_ZnwmSt11align_val_t, "operator new", (size_t size, tt__align_val al), (size, al)) \
	X(_ZnamSt11align_val_t, "operator new[]", (size_t size, tt__align_val al), (size, al)) \
	X(_ZnwmSt11align_val_tRKSt9nothrow_t, "operator new",                             \
	  (size_t size, tt__align_val al, const struct tt__nothrow *nt), (size, al, nt))    \
	X(_ZnamSt11align_val_tRKSt9nothrow_t, "operator new[]",                           \
	  (size_t size, tt__align_val al, const struct tt__nothrow *nt), (size, al, nt))

/* The delete operators: mangled name, event name, parameters after the pointer. */
#define TT__CXX_DELETES(X)                                                             \
	X(_ZdlPv, "operator delete", (void *ptr), (ptr))                                  \
	X(_ZdaPv, "operator delete[]", (void *ptr), (ptr))                                \
	X(_ZdlPvm, "operator delete", (void *ptr, size_t size), (ptr, size))              \
	X(_ZdaPvm, "operator delete[]", (void *ptr, size_t size), (ptr, size))            \
	X(_ZdlPvRKSt9nothrow_t, "operator delete", (void *ptr, const struct tt__nothrow *nt), \
	  (ptr, nt))                                                                      \
	X(_ZdaPvRKSt9nothrow_t, "operator delete[]", (void *ptr, const struct tt__nothrow *nt), \
	  (ptr, nt))                                                                      \
	X(_ZdlPvSt11align_val_t, "operator delete", (void *ptr, tt__align_val al), (ptr, al)) \
	X(_ZdaPvSt11align_val_t, "operator delete[]", (void *ptr, tt__align_val al), (ptr, al)) \
	X(_ZdlPvmSt11align_val_t, "operator delete", (void *ptr, size_t size, tt__align_val al), \
	  (ptr, size, al))                                                                \
	X(_ZdaPvmSt11align_val_t, "operator delete[]", (void *ptr, size_t size, tt__align_val al), \
	  (ptr, size, al))                                                                \
	X(_ZdlPvSt11align_val_tRKSt9nothrow_t, "operator delete",                         \
	  (void *ptr, tt__align_val al, const struct tt__nothrow *nt), (ptr, al, nt))       \
	X(_ZdaPvSt11align_val_tRKSt9nothrow_t, "operator delete[]",                       \
	  (void *ptr, tt__align_val al, const struct tt__nothrow *nt), (ptr, al, nt))

/* Visible, as in wrap.c: the linker binds the program's calls to them. The real
 * operators weak: the link takes these in for a C program too (src/meson.build), where
 * no libstdc++ defines them and nothing calls them. */
#define TT__CXX_NEW(sym, name, params, args)                                           \
	void *__real_##sym params __attribute__((weak));                                   \
	TT_API void *__wrap_##sym params;                                                  \
	void *__wrap_##sym params                                                          \
	{                                                                                  \
		void *p = __real_##sym args;                                               \
		if (p) {                                                                   \
			TT_INSTANT_NAMED_ARG(name, "size", size);                       \
			tt__heap_changed((int64_t)malloc_usable_size(p));                  \
		}                                                                          \
		return p;                                                                  \
	}
#define TT__CXX_DELETE(sym, name, params, args)                                        \
	void __real_##sym params __attribute__((weak));                                    \
	TT_API void __wrap_##sym params;                                                   \
	void __wrap_##sym params                                                           \
	{                                                                                  \
		if (!ptr)                                                                  \
			return;                                                            \
		int64_t usable = (int64_t)malloc_usable_size(ptr);                         \
		__real_##sym args;                                                         \
		TT_INSTANT_NAMED_ARG(name, "size", (uint64_t)usable);                   \
		tt__heap_changed(-usable);                                                 \
	}

TT__CXX_NEWS(TT__CXX_NEW)
TT__CXX_DELETES(TT__CXX_DELETE)
