/* Uses every macro and function of the public header: compiled as C11 and as C++,
 * enabled and with -DTT_DISABLE, with -Wall -Wextra -Werror -pedantic (and by
 * strict_flags.sh with the stricter warnings). The values are of each kind a user
 * passes: int, the exact type (no useless cast), unsigned, an enum, a pointer. */
#include <stddef.h>
#include <ticktrace.h>
#ifdef __cplusplus
#define USE_NULL nullptr
#else
#define USE_NULL NULL
#endif
enum use_level { USE_LOW, USE_HIGH };
static void kinds(int64_t i, uint64_t u, unsigned small, enum use_level l, const char *p)
{
	TT_COUNTER("i", i); TT_COUNTER("u", u); TT_INSTANT_ARG("s", small); TT_BEGIN_ARG("l", l); TT_END();
	TT_INSTANT_NAMED_ARG("p", "address", p); TT_FLOW_OUT(u); TT_FLOW_IN(p); TT_SCOPE_VALUE(small);
	TT_THRESHOLD_NS(u); TT_CHILDREN_THRESHOLD_NS(i); TT_PARENTS_THRESHOLD_NS(small);
}
static int work(int x) { TT_FUNC(); TT_SCOPE("a"); TT_SCOPE("b"); return x + 1; }
int main(void) {
	int x = 0;
	TT_BEGIN("p"); TT_END(); TT_ENDBEGIN("e"); TT_INSTANT("i");
	TT_BEGIN_ARG("j", 5); TT_INSTANT_ARG("k", x); TT_COUNTER("q", x); TT_FLOW_OUT(1); TT_FLOW_IN(1);
	if (x) TT_END(); else TT_INSTANT("z");
	tt_thread_name("m"); tt_enable(); tt_disable();
	{ TT_SCOPE("s"); TT_THRESHOLD_NS(1000); TT_CHILDREN_THRESHOLD_NS(x); TT_IGNORE(); TT_IGNORE_CHILDREN();
	  TT_DESCRIBE("plain"); TT_DESCRIBE("n %d %s", x, "t"); }
	tt_pause(); tt_resume();
	{ const char *dyn = x ? "d1" : "d2"; TT_SCOPE_DYN(dyn); TT_BEGIN_DYN(dyn); TT_END();
	  TT_INSTANT_DYN(dyn); TT_COUNTER_DYN(dyn, x); }
	{ TT_SCOPE_IF(x > 0, "c"); TT_PAUSE_IF(x > 1); TT_IGNORE_IF(x); TT_SCOPE_VALUE(x);
	  TT_PARENTS_THRESHOLD_NS(10); TT_FRAME_MARK(); TT_FRAME_MARK_NAMED("f");
	  TT_BEGIN_NAMED_ARG("n", "bytes", x); TT_END(); TT_INSTANT_NAMED_ARG("m", "size", 3); }
	/* TICKTRACE_OUT=/dev/null: the dump succeeds in both modes. */
	kinds(-1, 2, 3u, USE_HIGH, "p");
	return work(x) == 1 && tt_dump(USE_NULL) == 0 ? 0 : 1;
}
