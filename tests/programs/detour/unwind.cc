// Patched functions left by a C++ exception and by longjmp (test_detour.c): the
// program must run as without ticktrace, and every call be recorded. work_mid's
// first instructions hold its call of work_throw, which moves into the trampoline.
#include <cstdio>
#include <stdexcept>
#include <csetjmp>
#define W __attribute__((noinline))
static jmp_buf jb;
W int work_throw(int x) { if (x > 2) throw std::runtime_error("x"); return x + 1; }
W int work_mid(int x) { int r = work_throw(x); asm volatile("" : "+r"(r)); return r * 2; }
W int work_catch(int x) { try { return work_mid(x); } catch (const std::exception &) { return -1; } }
W void work_jump(int x) { if (x > 1) longjmp(jb, 1); }
W int work_jmid(int x) { work_jump(x); asm volatile(""); return x; }
W int work_top(void) {
	int s = 0;
	for (int i = 0; i < 5; i++) s += work_catch(i);
	if (!setjmp(jb)) s += work_jmid(5);
	s += work_jmid(0);
	return s;
}
int main() { printf("%d\n", work_top()); }
