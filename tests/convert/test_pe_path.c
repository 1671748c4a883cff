/* Where a Windows program's module path is here (tools/read/pe.c, tt_pe_local_path):
 * Wine's Z: is the root; a path in its \\?\ form, as Windows keeps a module loaded
 * from deeper than MAX_PATH, is the same file (it was no path at all: its functions
 * unnamed); what is no drive's path, none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "read/read_internal.h"

static void expect_local(const char *path, const char *want)
{
	char *local = tt_pe_local_path(NULL, path);
	if (!want) {
		assert_null(local);
		return;
	}
	assert_non_null(local);
	assert_string_equal(local, want);
	free(local);
}

static void test_wine_root(void **state)
{
	(void)state;
	expect_local("Z:\\tmp\\plug.dll", "/tmp/plug.dll");
	expect_local("z:\\tmp\\d\\plug.dll", "/tmp/d/plug.dll");
}

static void test_long_form(void **state)
{
	(void)state;
	expect_local("\\\\?\\Z:\\tmp\\plug.dll", "/tmp/plug.dll");
}

static void test_no_drive(void **state)
{
	(void)state;
	expect_local("plug.dll", NULL);
	expect_local("\\\\server\\share\\plug.dll", NULL);
	expect_local("\\\\?\\UNC\\server\\share\\plug.dll", NULL);
	expect_local("\\\\?\\", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wine_root),
		cmocka_unit_test(test_long_form),
		cmocka_unit_test(test_no_drive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
