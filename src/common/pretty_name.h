/* A C++ function's name as ticktrace shows it, from its __PRETTY_FUNCTION__ (TT_FUNC's
 * descriptors, TT__SITE_PRETTY): the qualified name, with the values of its template
 * parameters ("int Queue<T>::pop() [with T = long]" is "Queue<long>::pop"). The
 * runtime's writer (writer/names.c) names sites by it. Below src/ (its include path is tt_record_protocol_inc's). Not installed. */
#ifndef TT_PRETTY_NAME_H
#define TT_PRETTY_NAME_H

#include <stddef.h>

/* The name made from `pretty` into buf (cut to cap - 1 bytes, NUL-ended): its length. */
size_t tt_pretty_name(const char *pretty, char *buf, size_t cap);

/* The name a call site is shown by: its own, or (TT_FUNC in C++) the name made from the
 * __PRETTY_FUNCTION__ it holds, in buf. */
struct tt_callsite;
const char *tt_site_name(const struct tt_callsite *site, char *buf, size_t cap);

#endif /* TT_PRETTY_NAME_H */
