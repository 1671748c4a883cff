/* C++'s TT_FUNC: __PRETTY_FUNCTION__ as GCC and clang write it, made the qualified
 * name the trace shows (pretty_name.h). */
#include <stdbool.h>
#include <string.h>

#include "pretty_name.h"
#include "ticktrace.h"

static bool tt_pretty_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Appends [s, s + n) to buf at *len, as far as it fits (cap includes the NUL). */
static void tt_pretty_put(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	if (*len + n >= cap)
		n = *len < cap - 1 ? cap - 1 - *len : 0;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = 0;
}

/* Where the [with T = int; ...] or [T = int, ...] of GCC and clang begins, or NULL. */
static const char *tt_pretty_template_args(const char *pretty, const char *end)
{
	const char *open = NULL;
	if (end > pretty && end[-1] == ']')
		for (const char *p = end - 1; p > pretty; p--)
			if (p[-1] == ' ' && p[0] == '[') {
				open = p;
				break;
			}
	return open;
}

/* Whether [begin, end) holds "::" (memmem, which Windows lacks). */
static bool tt_pretty_has_scope(const char *begin, const char *end)
{
	for (const char *p = begin; p + 1 < end; p++)
		if (p[0] == ':' && p[1] == ':')
			return true;
	return false;
}

/* One "T = value" of the bracket [begin, end): the parameter and its value. */
struct tt_pretty_binding {
	const char *param, *value;
	size_t param_len, value_len;
};

static size_t tt_pretty_bindings(const char *begin, const char *end, struct tt_pretty_binding *b, size_t max)
{
	size_t n = 0;
	if (end - begin > 5 && memcmp(begin, "with ", 5) == 0)
		begin += 5;
	while (begin < end && n < max) {
		int depth = 0;
		const char *stop = begin;
		while (stop < end && !(depth == 0 && (*stop == ';' || *stop == ','))) {
			depth += *stop == '<' || *stop == '(' || *stop == '[';
			depth -= *stop == '>' || *stop == ')' || *stop == ']';
			stop++;
		}
		const char *eq = memchr(begin, '=', (size_t)(stop - begin));
		/* GCC also lists the typedefs the signature uses (size_t = long unsigned
		 * int): not template parameters */
		bool typedef_name = eq && eq - begin >= 3 && (memcmp(eq - 3, "_t ", 3) == 0 ||
							   tt_pretty_has_scope(begin, eq));
		if (eq && eq > begin + 1 && eq + 2 <= stop && !typedef_name) {
			b[n] = (struct tt_pretty_binding){begin, eq + 2, (size_t)(eq - 1 - begin),
						    (size_t)(stop - eq - 2)};
			n++;
		}
		begin = stop + (stop < end);
		while (begin < end && *begin == ' ')
			begin++;
	}
	return n;
}

/* Where "operator" begins when the name [pretty, name_end) ends with an operator
 * function's name (operator<, operator<<=, operator(), operator[]); name_end if not. */
static const char *tt_pretty_operator_at(const char *pretty, const char *name_end)
{
	static const char word[] = "operator", symbols[] = "<>=!+-*/%^&|~,()[]";
	const char *p = name_end;
	while (p > pretty && strchr(symbols, p[-1]))
		p--;
	size_t n = sizeof word - 1;
	if (p == name_end || (size_t)(p - pretty) < n || memcmp(p - n, word, n) != 0 ||
	    (p - n > pretty && tt_pretty_ident_char((p - n)[-1])))
		return name_end;
	return p - n;
}

size_t tt_pretty_name(const char *pretty, char *buf, size_t cap)
{
	const char *end = pretty + strlen(pretty);
	const char *args = tt_pretty_template_args(pretty, end);
	const char *sig_end = args ? args - 1 : end;
	/* the parameter list: the parenthesis that the signature ends with, after any
	 * qualifiers (const, &, noexcept) */
	const char *close = sig_end;
	while (close > pretty && close[-1] != ')' && close[-1] != '>')
		close--;
	const char *name_end = sig_end, *name_begin = pretty;
	if (close > pretty && close[-1] == ')') {
		int depth = 0;
		for (const char *p = close - 1; p >= pretty; p--) {
			depth += *p == ')';
			depth -= *p == '(';
			if (depth == 0) {
				name_end = p;
				break;
			}
		}
	}
	/* the return type ends at the last space outside <> and () before the name; an
	 * operator's symbol (operator<, operator->, operator()) holds no bracket */
	int depth = 0;
	for (const char *p = tt_pretty_operator_at(pretty, name_end); p > pretty; p--) {
		char c = p[-1];
		depth += c == '>' || c == ')';
		depth -= c == '<' || c == '(';
		if (depth == 0 && c == ' ') {
			name_begin = p;
			break;
		}
	}
	struct tt_pretty_binding b[16];
	size_t nb = args ? tt_pretty_bindings(args + 1, end - 1, b, 16) : 0;
	size_t len = 0;
	bool substituted = false;
	buf[0] = 0;
	for (const char *p = name_begin; p < name_end;) {
		size_t word = 0;
		while (p + word < name_end && tt_pretty_ident_char(p[word]))
			word++;
		if (!word) {
			tt_pretty_put(buf, cap, &len, p++, 1);
			continue;
		}
		size_t k = 0;
		while (k < nb && !(b[k].param_len == word && memcmp(b[k].param, p, word) == 0))
			k++;
		if (k < nb) {
			tt_pretty_put(buf, cap, &len, b[k].value, b[k].value_len);
			substituted = true;
		} else {
			tt_pretty_put(buf, cap, &len, p, word);
		}
		p += word;
	}
	/* clang names a lambda's call operator after its anonymous class: say lambda,
	 * as GCC does */
	static const char anonymous[] = "(anonymous class)::operator()";
	const size_t anonymous_len = sizeof anonymous - 1;
	if (len >= anonymous_len && strcmp(buf + len - anonymous_len, anonymous) == 0) {
		len -= anonymous_len;
		buf[len] = 0;
		tt_pretty_put(buf, cap, &len, "<lambda>", 8);
	}
	/* a function template's parameters are not in its name: give their values
	 * (unless the name has arguments already: clang's Box<long>::put) */
	bool give_values = !substituted && !memchr(buf, '<', len);
	for (size_t k = 0; k < nb && give_values; k++) {
		tt_pretty_put(buf, cap, &len, k ? ", " : "<", k ? 2 : 1);
		tt_pretty_put(buf, cap, &len, b[k].value, b[k].value_len);
		if (k == nb - 1)
			tt_pretty_put(buf, cap, &len, ">", 1);
	}
	return len;
}

const char *tt_site_name(const struct tt_callsite *site, char *buf, size_t cap)
{
	if (!(site->flags & TT__SITE_PRETTY) || !site->name)
		return site->name;
	tt_pretty_name(site->name, buf, cap);
	return buf;
}
