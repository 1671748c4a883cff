/* A plugin that reload_prog.c loads, unloads, and then loads again as another library
 * at the same address: built twice, as alpha and as gamma (names of one length, so
 * that both builds have the same size and layout), with -finstrument-functions. */
#include <ticktrace.h>

#define RELOAD_CAT2(a, b) a##b
#define RELOAD_CAT(a, b) RELOAD_CAT2(a, b)
#define RELOAD_STR2(x) #x
#define RELOAD_STR(x) RELOAD_STR2(x)
#define RELOAD_FN(suffix) RELOAD_CAT(RELOAD_NAME, suffix)

int RELOAD_FN(_run)(int x);

__attribute__((noinline)) static int RELOAD_FN(_square)(int x)
{
	return x * x;
}

int RELOAD_FN(_run)(int x)
{
	TT_SCOPE(RELOAD_STR(RELOAD_NAME) "_scope");
	TT_INSTANT(RELOAD_STR(RELOAD_NAME) "_tick");
	return RELOAD_FN(_square)(x) + 1;
}
