/* A function's name as ticktrace shows it, from its symbol: the converter's (tools/read/
 * symbols.c) and the patcher's, which hands the runtime the names of the functions it
 * patches (detour/detour.c), so that the running program names them as the converter
 * will. Below src/ and tools/ (its include path is tt_record_protocol_inc's).
 * Not installed. */
#ifndef TT_SYMBOL_NAME_H
#define TT_SYMBOL_NAME_H

#include <stdlib.h>
#include <string.h>

/* The C++ ABI's demangler: libstdc++'s for the tools, libsupc++'s linked into the
 * patcher. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* `symbol` demangled, and without the suffix of a copy GCC specializes or splits off
 * a function (foo.constprop.0, foo.isra.0, foo.part.0; C++: "foo(int) [clone
 * .constprop.0]"), which is foo; malloc'd, or NULL without memory. */
static inline char *tt__symbol_name(const char *symbol)
{
	static const char *const suffixes[] = {
		" [clone ", ".constprop.", ".isra.", ".part.", ".lto_priv.", ".cold", ".localalias",
	};
	int status;
	char *name = symbol[0] == '_' && symbol[1] == 'Z' ?
			     __cxa_demangle(symbol, NULL, NULL, &status) : NULL;
	if (!name)
		name = strdup(symbol);
	for (size_t i = 0; name && i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *at = strstr(name, suffixes[i]);
		if (at)
			*at = 0;
	}
	return name;
}

#endif /* TT_SYMBOL_NAME_H */
