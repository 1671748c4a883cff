/* C++'s TT_FUNC names: __PRETTY_FUNCTION__ as GCC and clang write it, made the
 * qualified name the trace shows (src/common/pretty_name.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "writer/writer.h"

static void test_pretty_names(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"int Queue::pop()", "Queue::pop"},
		{"const char* name()", "name"},
		{"std::vector<int> Foo::bar() const", "Foo::bar"},
		{"T checksum(const T*, int) [with T = int]", "checksum<int>"},             /* gcc */
		{"T checksum(const T *, int) [T = int]", "checksum<int>"},                /* clang */
		{"T sum(const T*, size_t) [with T = double; size_t = long unsigned int]", "sum<double>"},
		{"R convert(A) [with R = long int; A = char]", "convert<long int, char>"},
		{"void Box<T>::put(T) [with T = long int]", "Box<long int>::put"},        /* gcc */
		{"void Box<long>::put(long) [T = long]", "Box<long>::put"},               /* clang */
		{"main()::<lambda(int)>", "main()::<lambda(int)>"},                       /* gcc */
		{"auto main()::(anonymous class)::operator()(int) const", "main()::<lambda>"}, /* clang */
		/* an operator's symbol is no bracket: the return type still goes (issue 24) */
		{"bool Vec::operator<(const Vec&) const", "Vec::operator<"},
		{"bool Vec::operator>(const Vec&) const", "Vec::operator>"},
		{"Vec& Vec::operator<<=(int)", "Vec::operator<<="},
		{"int* Ptr::operator->() const", "Ptr::operator->"},
		{"bool operator<(const Vec&, const Vec&)", "operator<"},
		{"double Grid::operator()(int, int)", "Grid::operator()"},
		{"bool Vec<T>::operator<(const Vec<T>&) const [with T = int]", "Vec<int>::operator<"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[256];
		size_t len = tt_pretty_name(cases[i][0], buf, sizeof buf);
		assert_string_equal(buf, cases[i][1]);
		assert_int_equal(len, strlen(cases[i][1]));
	}
	char small[8]; /* cut to fit, still terminated */
	assert_int_equal(tt_pretty_name("int Queue::pop()", small, sizeof small), 7);
	assert_string_equal(small, "Queue::");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_pretty_names)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
