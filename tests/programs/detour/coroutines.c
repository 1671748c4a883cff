/* Two coroutines (swapcontext, stacks from malloc) that yield to the main stack from
 * inside patched functions, so that each resumes with the other's frames above its
 * own on the thread's shadow stack (test_detour.c: -f 'work_*'); one of them also
 * leaves patched functions by longjmp, inside its own stack. The output is the same
 * as without ticktrace. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define ROUNDS 50
#define STACK_SIZE (128 * 1024)

static ucontext_t main_context, co_context[2];
static long shared;

__attribute__((noinline)) void work_yield(int id)
{
	shared += id + 1;
	swapcontext(&co_context[id], &main_context);
}

__attribute__((noinline)) long work_step(int id, long round)
{
	work_yield(id);
	__asm__ volatile("" : "+r"(round));
	return round * (id + 2);
}

__attribute__((noinline)) void work_jump(jmp_buf *back)
{
	longjmp(*back, 1);
}

static void co_main(int id)
{
	long sum = 0;
	for (long round = 0; round < ROUNDS; round++) {
		sum += work_step(id, round);
		jmp_buf back;
		if (id == 1 && setjmp(back) == 0)
			work_jump(&back); /* abandoned on this coroutine's stack */
	}
	shared += sum;
}

__attribute__((noinline)) long work_drive(void)
{
	for (int round = 0; round < ROUNDS + 1; round++)
		for (int id = 0; id < 2; id++)
			swapcontext(&main_context, &co_context[id]);
	return shared;
}

int main(void)
{
	for (int id = 0; id < 2; id++) {
		getcontext(&co_context[id]);
		co_context[id].uc_stack.ss_sp = malloc(STACK_SIZE);
		co_context[id].uc_stack.ss_size = STACK_SIZE;
		co_context[id].uc_link = &main_context;
		if (!co_context[id].uc_stack.ss_sp)
			return 1;
		makecontext(&co_context[id], (void (*)(void))co_main, 1, id);
	}
	printf("shared %ld\n", work_drive());
	return 0;
}
