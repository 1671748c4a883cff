/* ticktrace: an in-process event recorder whose cost per event is one RDTSC.
 *
 *   #include <ticktrace.h>
 *   void decode(void) {
 *       TT_SCOPE("decode");      // begins now, ends when the enclosing block exits
 *       ...
 *   }
 *
 * Link with libticktrace (pkg-config ticktrace). Recording starts by itself; at exit
 * the raw file goes to $TICKTRACE_OUT, or ticktrace-<pid>.ttr in the working
 * directory, and `ticktrace convert` turns it into a trace Perfetto opens.
 * Environment: TICKTRACE=0 turns recording off; TICKTRACE_BUFFER sets the events
 * kept per thread (default 1048576); TICKTRACE_MODE is stop, ring or stream (ticktrace(7));
 * TICKTRACE_REPORT=stderr|PATH writes the flat profile there at exit.
 *
 * Names are string literals: each macro declares a static call-site descriptor and
 * records only its address (the _DYN macros take names made at run time). Compile with -DTT_DISABLE and every macro still exists
 * and expands to nothing that evaluates its arguments.
 */
#ifndef TICKTRACE_H
#define TICKTRACE_H

/* Said here, not as a syntax error deep in the macros (C99's anonymous static asserts). */
#if defined(__cplusplus) ? __cplusplus < 201103L : !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "ticktrace.h is C11 or C++11: compile with -std=c11 (gnu11, c17 or later) or -std=c++11 or later"
#endif

#include <stdint.h>

#include "ticktrace/profile.h" /* the self-profiler: tt_profile_* */

#ifdef __cplusplus
extern "C" {
#endif

/* A call site, declared once per macro use with static storage. */
struct tt_callsite {
	const char *name;
	const char *file;
	const char *func;
	uint32_t line;
	uint32_t flags;
	const char *arg_name; /* with TT__SITE_ARG_NAME: the name of its events' argument */
};

/* struct tt_callsite.flags */
#define TT__SITE_PRETTY 1u /* name is a __PRETTY_FUNCTION__, shown as a qualified name */
/* arg_name is set (descriptors made by older headers end before it) */
#define TT__SITE_ARG_NAME 2u
/* its events' argument is of a signed type (shown as one): from the argument's type,
 * at compile time */
#define TT__SITE_SIGNED_ARG 4u

#define TT__CAT2(a, b) a##b
#define TT__CAT(a, b) TT__CAT2(a, b)
#define TT__INLINE static inline __attribute__((always_inline, no_instrument_function))
/* Conversions and a null pointer that a C++ user's -Wold-style-cast, -Wuseless-cast and
 * -Wzero-as-null-pointer-constant accept. TT__TO takes an integer, an enum or a pointer
 * (a value macro's argument), as C's cast does. */
#ifdef __cplusplus
extern "C++" {
template <class To, class From> TT__INLINE To tt__to(From v) { return static_cast<To>(v); }
template <class To, class From> TT__INLINE To tt__to(From *v)
{
	return static_cast<To>(reinterpret_cast<__UINTPTR_TYPE__>(v));
}
}
#define TT__CAST(type, v) static_cast<type>(v)
#define TT__TO(type, v) tt__to<type>(v)
#define TT__NULL nullptr
#else
#define TT__CAST(type, v) ((type)(v))
#define TT__TO(type, v) ((type)(v))
#define TT__NULL ((void *)0)
#endif
/* Windows: a program linked with libticktrace.dll takes each function's address from
 * its import table (dllimport), not through a stub that jumps there (a second jump per
 * event); one linked with the static library defines TT_STATIC (its meson dependency and
 * the README's command do). */
#if defined(_WIN32) && !defined(TT_STATIC)
#define TT__IMPORT __declspec(dllimport)
#else
#define TT__IMPORT
#endif
#ifdef _WIN32
#define TT_API TT__IMPORT
#else
#define TT_API __attribute__((visibility("default")))
#endif

/* The value macros take integers: a floating-point value would be cut to an integer
 * without a word (0.75 recorded as 0), so it is refused where it is written, in the
 * disabled build too. An expression that evaluates nothing. */
#define TT__INTEGER_MESSAGE                                                        \
	"ticktrace: the value must be an integer (a floating-point value would be cut: " \
	"scale it, e.g. TT_COUNTER(\"load_permille\", load * 1000))"
#ifdef __cplusplus
extern "C++" {
template <class V> struct tt__floating { enum { value = 0 }; };
template <> struct tt__floating<float> { enum { value = 1 }; };
template <> struct tt__floating<double> { enum { value = 1 }; };
template <> struct tt__floating<long double> { enum { value = 1 }; };
template <class V> struct tt__integer_check {
	static_assert(!tt__floating<V>::value, TT__INTEGER_MESSAGE);
};
}
#define TT__INTEGER_CHECK(v) ((void)sizeof(tt__integer_check<decltype(+(v))>))
#else
#define TT__INTEGER_CHECK(v)                                                       \
	((void)sizeof(struct {                                                         \
		_Static_assert(_Generic((v), float: 0, double: 0, long double: 0, default: 1), \
			       TT__INTEGER_MESSAGE);                                   \
		int tt__member;                                                        \
	}))
#endif
#define TT__INTEGER(type, v) (TT__INTEGER_CHECK(v), TT__TO(type, v))
/* TT__SITE_SIGNED_ARG when v's type (promoted) is a signed integer type, else 0: a
 * constant expression. */
#ifdef __cplusplus
extern "C++" {
template <class V> struct tt__signed { enum { value = 0 }; };
template <> struct tt__signed<int> { enum { value = 1 }; };
template <> struct tt__signed<long> { enum { value = 1 }; };
template <> struct tt__signed<long long> { enum { value = 1 }; };
}
#define TT__SIGNED_FLAG(v) (tt__signed<decltype(+(v))>::value ? TT__SITE_SIGNED_ARG : 0u)
#else
#define TT__SIGNED_FLAG(v) _Generic((v) + 0, int: TT__SITE_SIGNED_ARG, long: TT__SITE_SIGNED_ARG, \
				    long long: TT__SITE_SIGNED_ARG, default: 0u)
#endif

#ifndef TT_DISABLE

/* The hot path (asm/record.asm). Not API: use the macros, which call it through a
 * register (TT__HOT_FN). GCC's noplt has even a program built without -fpie take the
 * address from the GOT, not make a PLT stub the function's address. */
#ifdef __has_attribute
#if __has_attribute(noplt)
#define TT__NOPLT __attribute__((noplt))
#endif
#endif
#ifndef TT__NOPLT
#define TT__NOPLT
#endif
#define TT__HOT __attribute__((nothrow, leaf, no_instrument_function)) TT__NOPLT TT__IMPORT
TT__HOT void tt__begin(const struct tt_callsite *site);
TT__HOT void tt__end(void);
TT__HOT void tt__endbegin(const struct tt_callsite *site);
TT__HOT void tt__instant(const struct tt_callsite *site);
TT__HOT void tt__begin_arg(const struct tt_callsite *site, uint64_t arg);
TT__HOT void tt__instant_arg(const struct tt_callsite *site, uint64_t arg);
TT__HOT void tt__counter(const struct tt_callsite *site, int64_t value);
TT__HOT void tt__flow_out(uint64_t id);
TT__HOT void tt__flow_in(uint64_t id);
TT__HOT void tt__note(uint64_t word);
TT__HOT void tt__frame(const struct tt_callsite *site);
TT__HOT void tt__scope_value(int64_t value);
TT_API void tt__describe(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An emitter's address in a register, loaded where the compiler likes (before a
 * loop, say): called through the GOT or a PLT stub, the jump's target is loaded just
 * before it, and RDTSC waits for that load (0.03 x RDTSC per event on an Intel Xeon). */
#define TT__HOT_FN(fn)                                                             \
	(__extension__({                                                               \
		__typeof__(&fn) tt__fn = &fn;                                              \
		__asm__("" : "+r"(tt__fn));                                                \
		tt__fn;                                                                    \
	}))

/* A note's record word: the kind (format.h's TT_REC_THRESHOLD and following) in the
 * top byte, a value saturated to the 56 bits below it. */
TT__INLINE uint64_t tt__note_word(unsigned kind, uint64_t value)
{
	const uint64_t max = (UINT64_C(1) << 56) - 1;
	return TT__CAST(uint64_t, kind) << 56 | (value < max ? value : max);
}

TT__INLINE void tt__scope_end(const int *unused)
{
	(void)unused;
	TT__HOT_FN(tt__end)();
}

#ifdef __cplusplus
/* The literal macros record the name's address and read it at the dump: in C++ a
 * name that is not a string literal (a std::string's c_str(), which compiles) is
 * refused, and the message names the macros for names made at run time. */
extern "C++" {
template <__SIZE_TYPE__ N> char (&tt__literal_check(const char (&)[N]))[1];
template <class T> char (&tt__literal_check(const T &))[2];
}
#define TT__LITERAL(name)                                                          \
	static_assert(sizeof(tt__literal_check(name)) == 1,                            \
		      "ticktrace: the name must be a string literal; for a name made at run " \
		      "time use TT_SCOPE_DYN, TT_BEGIN_DYN, TT_INSTANT_DYN or TT_COUNTER_DYN")
#else
/* C refuses a name that is not a constant in the static initializer already. */
#define TT__LITERAL(name) _Static_assert(1, "")
#endif

#define TT__SITE_FULL(var, name, flags, arg_name)                                   \
	TT__LITERAL(name);                                                             \
	static const struct tt_callsite var = {(name), __FILE__, __func__, __LINE__, (flags), \
					       (arg_name)}
#define TT__SITE_FLAGS(var, name, flags) TT__SITE_FULL(var, name, flags, TT__NULL)
#define TT__SITE(var, name) TT__SITE_FLAGS(var, name, 0)

#define TT__SITE_CALL(fn, name)                                                    \
	do {                                                                           \
		TT__SITE(tt__site, name);                                                  \
		TT__HOT_FN(fn)(&tt__site);                                                             \
	} while (0)
#define TT__SITE_CALL_VALUE(fn, name, value)                                       \
	do {                                                                           \
		TT__SITE(tt__site, name);                                                  \
		TT__HOT_FN(fn)(&tt__site, value);                                                      \
	} while (0)

#define TT__SCOPE_N(name, n) TT__SCOPE_AT(name, 0, &TT__CAT(tt__site_, n), n)
/* A scope of the site `site` (a function of the descriptor declared here, var). */
#define TT__SCOPE_AT(name, flags, site, n)                                         \
	TT__SITE_FLAGS(TT__CAT(tt__site_, n), name, flags);                            \
	const int TT__CAT(tt__scope_, n) __attribute__((cleanup(tt__scope_end), unused)) = \
		(TT__HOT_FN(tt__begin)(site), 0)

/* Begin a scope named `name` now; it ends when the enclosing block exits. */
#define TT_SCOPE(name) TT__SCOPE_N(name, __COUNTER__)
/* TT_SCOPE named after the enclosing function; in C++ qualified, with template
 * arguments (Queue::pop, checksum<int>), from __PRETTY_FUNCTION__ at the dump. */
#ifdef __cplusplus
#define TT_FUNC() TT__FUNC_N(__COUNTER__)
#define TT__FUNC_N(n)                                                              \
	TT__SCOPE_AT(__PRETTY_FUNCTION__, TT__SITE_PRETTY, &TT__CAT(tt__site_, n), n)
#else
#define TT_FUNC() TT_SCOPE(__func__)
#endif

/* Names made at run time: the name (a C string; in C++ also anything with data() and
 * size(), std::string or std::string_view) is copied once per call site and
 * distinct name, out of line, and its copy recorded like a literal's descriptor. Each
 * event costs a lookup of the name besides the event (bench: event_dynamic_name_ns). */
TT_API const struct tt_callsite *tt__name(const struct tt_callsite *site, const char *name,
					  __SIZE_TYPE__ len);
#ifdef __cplusplus
extern "C++" {
TT__INLINE const struct tt_callsite *tt__name_of(const struct tt_callsite *site, const char *name)
{
	return tt__name(site, name, TT__CAST(__SIZE_TYPE__, -1));
}
template <class S>
TT__INLINE auto tt__name_of(const struct tt_callsite *site, const S &name)
	-> decltype(tt__name(site, name.data(), name.size()))
{
	return tt__name(site, name.data(), name.size());
}
}
#else
#define tt__name_of(site, name) tt__name((site), (name), (__SIZE_TYPE__)-1)
#endif
#define TT__SCOPE_DYN_N(name, n)                                                   \
	TT__SCOPE_AT("", 0, tt__name_of(&TT__CAT(tt__site_, n), name), n)
#define TT__DYN_CALL(fn, name)                                                     \
	do {                                                                           \
		TT__SITE(tt__site, "");                                                    \
		TT__HOT_FN(fn)(tt__name_of(&tt__site, name));                                          \
	} while (0)
#define TT__DYN_CALL_VALUE(fn, name, value)                                        \
	do {                                                                           \
		TT__SITE(tt__site, "");                                                    \
		TT__HOT_FN(fn)(tt__name_of(&tt__site, name), value);                                   \
	} while (0)
#define TT_SCOPE_DYN(name) TT__SCOPE_DYN_N(name, __COUNTER__)
#define TT_BEGIN_DYN(name) TT__DYN_CALL(tt__begin, name)
#define TT_INSTANT_DYN(name) TT__DYN_CALL(tt__instant, name)
#define TT_COUNTER_DYN(name, value) TT__DYN_CALL_VALUE(tt__counter, name, TT__INTEGER(int64_t, value))
/* Begin a scope; TT_END() closes the innermost open scope of this thread. */
#define TT_BEGIN(name) TT__SITE_CALL(tt__begin, name)
#define TT_END() TT__HOT_FN(tt__end)()
/* Close the innermost scope and begin `name`, with one clock read. */
#define TT_ENDBEGIN(name) TT__SITE_CALL(tt__endbegin, name)
/* A point in time on this thread. */
#define TT_INSTANT(name) TT__SITE_CALL(tt__instant, name)
/* TT_BEGIN and TT_INSTANT with an integer argument (recorded as 64 bits) shown in the
 * trace's args: as a signed integer when its type is signed, else unsigned. */
#define TT_BEGIN_ARG(name, arg) TT__ARG_CALL(tt__begin_arg, name, arg)
#define TT_INSTANT_ARG(name, arg) TT__ARG_CALL(tt__instant_arg, name, arg)
#define TT__ARG_CALL(fn, name, arg)                                                \
	do {                                                                           \
		TT__SITE_FLAGS(tt__site, name, TT__SIGNED_FLAG(arg));                      \
		TT__HOT_FN(fn)(&tt__site, TT__INTEGER(uint64_t, arg));                     \
	} while (0)
/* The same, the argument shown under the name `arg_name` (a literal) instead of "arg". */
#define TT_BEGIN_NAMED_ARG(name, arg_name, arg)                                    \
	TT__NAMED_ARG_CALL(tt__begin_arg, name, arg_name, arg)
#define TT_INSTANT_NAMED_ARG(name, arg_name, arg)                                  \
	TT__NAMED_ARG_CALL(tt__instant_arg, name, arg_name, arg)
#define TT__NAMED_ARG_CALL(fn, name, arg_name, arg)                                \
	do {                                                                           \
		TT__LITERAL(arg_name);                                                     \
		TT__SITE_FULL(tt__site, name, TT__SITE_ARG_NAME | TT__SIGNED_FLAG(arg), arg_name); \
		TT__HOT_FN(fn)(&tt__site, TT__INTEGER(uint64_t, arg));                     \
	} while (0)
/* An integer sample (int64_t) of the counter track `name` (per process). */
#define TT_COUNTER(name, value) TT__SITE_CALL_VALUE(tt__counter, name, TT__INTEGER(int64_t, value))
/* An arrow from the current scope of this thread to the scope, on any thread, that
 * records TT_FLOW_IN with the same id. */
#define TT_FLOW_OUT(id) TT__HOT_FN(tt__flow_out)(TT__TO(uint64_t, id))
#define TT_FLOW_IN(id) TT__HOT_FN(tt__flow_in)(TT__TO(uint64_t, id))

/* For the spike detector (`ticktrace spikes`), about the innermost open scope: it
 * spikes when it lasts more than `ns` nanoseconds; every scope nested in it does;
 * it never spikes; no scope nested in it spikes. One record each, like TT_END. */
#define TT_THRESHOLD_NS(ns) TT__HOT_FN(tt__note)(tt__note_word(16, TT__TO(uint64_t, ns)))
#define TT_CHILDREN_THRESHOLD_NS(ns) TT__HOT_FN(tt__note)(tt__note_word(17, TT__TO(uint64_t, ns)))
#define TT_IGNORE() TT__HOT_FN(tt__note)(tt__note_word(18, 0))
#define TT_IGNORE_CHILDREN() TT__HOT_FN(tt__note)(tt__note_word(19, 0))
/* Describes the innermost open scope, shown only if it spikes: printf-style text,
 * formatted out of line and copied into the trace (at most 240 bytes are kept). A
 * function call that costs nothing where it is not used. */
#define TT_DESCRIBE(...) tt__describe(__VA_ARGS__)
/* Every scope open around this point spikes when it lasts more than `ns` (PET's
 * SetAllParentsThreshold): a slow inner step names the whole path to it. */
#define TT_PARENTS_THRESHOLD_NS(ns) TT__HOT_FN(tt__note)(tt__note_word(25, TT__TO(uint64_t, ns)))

/* A frame boundary: the frame before it ends and the next begins (call it once per
 * frame, on any thread). Frames are numbered from 1, shown as slices on a thread of
 * their own in the trace, and spikes say which frame they happened in.
 * TT_FRAME_MARK_NAMED("render") counts frames of its own. */
#define TT_FRAME_MARK() TT__SITE_CALL(tt__frame, "frame")
#define TT_FRAME_MARK_NAMED(name) TT__SITE_CALL(tt__frame, name)
/* A value of the innermost open scope, shown in its args ("value"; Tracy's ZoneValue).
 * One event, like TT_COUNTER. */
#define TT_SCOPE_VALUE(value) TT__HOT_FN(tt__scope_value)(TT__INTEGER(int64_t, value))

/* A scope, as TT_SCOPE, recorded only when `cond` holds (evaluated once): when it does
 * not, the test is all it costs. */
#define TT_SCOPE_IF(cond, name) TT__SCOPE_IF_N(cond, name, __COUNTER__)
TT__INLINE void tt__scope_end_if(const int *began)
{
	if (*began)
		TT__HOT_FN(tt__end)();
}
#define TT__SCOPE_IF_N(cond, name, n)                                              \
	TT__SITE(TT__CAT(tt__site_, n), name);                                         \
	const int TT__CAT(tt__scope_, n) __attribute__((cleanup(tt__scope_end_if), unused)) = \
		(cond) ? (TT__HOT_FN(tt__begin)(&TT__CAT(tt__site_, n)), 1) : 0
/* TT_IGNORE, only when `cond` holds. */
#define TT_IGNORE_IF(cond)                                                          \
	do {                                                                           \
		if (cond)                                                                  \
			TT_IGNORE();                                                           \
	} while (0)
/* Name the calling thread in the trace (copied; at most 63 bytes are kept). Without
 * it, the name the thread has at dump or exit (pthread_setname_np) is used. */
TT_API void tt_thread_name(const char *name);

/* Write everything recorded so far to `path` (NULL: the default path). The file is
 * written beside it under a temporary name and renamed, mode 0600. In
 * TICKTRACE_MODE=stream, everything recorded so far reaches the streamed file, and
 * a `path` gets a copy of that file ended as a complete run (the streamed file itself
 * goes on). Returns 0 or a negative errno (-ECANCELED when TICKTRACE=0). Not
 * async-signal-safe: see TICKTRACE_DUMP_SIGNAL. */
TT_API int tt_dump(const char *path);

/* Keep the trace around now: with TICKTRACE_SNAPSHOTS=DIR, a snapshot of every
 * thread's records from TICKTRACE_SNAPSHOT_BEFORE before this call to
 * TICKTRACE_SNAPSHOT_AFTER after it is written into DIR as trigger-PID-N-WHY.ttr, by
 * ticktrace's own thread: the caller never waits for it. `why` (copied; at most 63
 * bytes are kept) names it: a missed deadline, a failed check. Returns 0 when a
 * snapshot will be written, -ENOTCONN without TICKTRACE_SNAPSHOTS (or in mode
 * stream, whose file keeps everything), -EDQUOT once TICKTRACE_SNAPSHOT_MAX triggers
 * were taken (spikes have their own, the worst kept), -EBUSY when 64 snapshots are
 * waiting for their window to end or 32 triggers came within 20 ms (each counted and
 * said at exit), -ESHUTDOWN once the exit's last snapshots are being written,
 * -ECANCELED when TICKTRACE=0. Async-signal-safe. */
TT_API int tt_trigger(const char *why);

/* Turn recording on or off for every thread (on at start unless TICKTRACE=0, which
 * turns ticktrace off for the whole run). Events while off are not recorded and not
 * counted as dropped. */
TT_API void tt_enable(void);
TT_API void tt_disable(void);

/* Stop and resume recording on the calling thread only (not nested: one tt_resume
 * undoes any number of tt_pause). Events in between are not recorded and not counted
 * as dropped. A scope that begins before tt_pause should end after tt_resume: its
 * end is not recorded otherwise. */
TT_API void tt_pause(void);
TT_API void tt_resume(void);
/* When `cond` holds, the calling thread records nothing until the enclosing block
 * exits (tt_pause, then tt_resume). */
#define TT_PAUSE_IF(cond) TT__PAUSE_IF_N(cond, __COUNTER__)
TT__INLINE void tt__resume_if(const int *paused)
{
	if (*paused)
		tt_resume();
}
#define TT__PAUSE_IF_N(cond, n)                                                    \
	const int TT__CAT(tt__paused_, n) __attribute__((cleanup(tt__resume_if), unused)) = \
		(cond) ? (tt_pause(), 1) : 0

#else /* TT_DISABLE: the same names, doing nothing, evaluating nothing */

#define TT__UNUSED(x) ((void)sizeof(x))
#ifdef __cplusplus
#define TT__DECLARE_NOTHING(cond) static_assert(cond, "ticktrace")
#else
#define TT__DECLARE_NOTHING(cond) _Static_assert(cond, "ticktrace")
#endif
/* Declarations, as in the enabled build, so they stand where TT_SCOPE stands. */
#define TT_SCOPE(name) TT__DECLARE_NOTHING(sizeof(name) > 0)
#define TT_FUNC() TT__DECLARE_NOTHING(1)
#define TT_SCOPE_DYN(name) TT__DECLARE_NOTHING(sizeof(name) > 0)
#define TT_BEGIN_DYN(name) do { TT__UNUSED(name); } while (0)
#define TT_INSTANT_DYN(name) do { TT__UNUSED(name); } while (0)
#define TT_COUNTER_DYN(name, value) do { TT__UNUSED(name); TT__INTEGER_CHECK(value); } while (0)
#define TT_BEGIN(name) do { TT__UNUSED(name); } while (0)
#define TT_END() do { } while (0)
#define TT_ENDBEGIN(name) do { TT__UNUSED(name); } while (0)
#define TT_INSTANT(name) do { TT__UNUSED(name); } while (0)
#define TT_BEGIN_ARG(name, arg) do { TT__UNUSED(name); TT__INTEGER_CHECK(arg); } while (0)
#define TT_INSTANT_ARG(name, arg) do { TT__UNUSED(name); TT__INTEGER_CHECK(arg); } while (0)
#define TT_BEGIN_NAMED_ARG(name, arg_name, arg)                                    \
	do { TT__UNUSED(name); TT__UNUSED(arg_name); TT__INTEGER_CHECK(arg); } while (0)
#define TT_INSTANT_NAMED_ARG(name, arg_name, arg)                                  \
	do { TT__UNUSED(name); TT__UNUSED(arg_name); TT__INTEGER_CHECK(arg); } while (0)
#define TT_COUNTER(name, value) do { TT__UNUSED(name); TT__INTEGER_CHECK(value); } while (0)
#define TT_FLOW_OUT(id) do { TT__UNUSED(id); } while (0)
#define TT_FLOW_IN(id) do { TT__UNUSED(id); } while (0)
#define TT_THRESHOLD_NS(ns) do { TT__UNUSED(ns); } while (0)
#define TT_CHILDREN_THRESHOLD_NS(ns) do { TT__UNUSED(ns); } while (0)
#define TT_IGNORE() do { } while (0)
#define TT_IGNORE_CHILDREN() do { } while (0)
#define TT_PARENTS_THRESHOLD_NS(ns) do { TT__UNUSED(ns); } while (0)
#define TT_FRAME_MARK() do { } while (0)
#define TT_FRAME_MARK_NAMED(name) do { TT__UNUSED(name); } while (0)
#define TT_SCOPE_VALUE(value) do { TT__INTEGER_CHECK(value); } while (0)
#define TT_SCOPE_IF(cond, name) TT__DECLARE_NOTHING(sizeof(cond) > 0 && sizeof(name) > 0)
#define TT_IGNORE_IF(cond) do { TT__UNUSED(cond); } while (0)
#define TT_PAUSE_IF(cond) TT__DECLARE_NOTHING(sizeof(cond) > 0)
/* Checks the format against its arguments, evaluating none (sizeof does not call). */
#define TT_DESCRIBE(...) do { TT__UNUSED(tt__describe_check(__VA_ARGS__)); } while (0)
TT__INLINE __attribute__((format(printf, 1, 2))) int tt__describe_check(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

TT__INLINE void tt_thread_name(const char *name) { (void)name; }
/* Nothing was recorded, so there is nothing to write: succeeds without a file. */
TT__INLINE int tt_dump(const char *path) { (void)path; return 0; }
TT__INLINE int tt_trigger(const char *why) { (void)why; return 0; }
TT__INLINE void tt_enable(void) {}
TT__INLINE void tt_disable(void) {}
TT__INLINE void tt_pause(void) {}
TT__INLINE void tt_resume(void) {}

#endif /* TT_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* TICKTRACE_H */
