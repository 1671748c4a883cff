/* The shadow stack's rare paths (trampoline.asm): a call that finds the top frame at
 * or below its own slot, and a return whose frame is not the top one.
 *
 * A thread may run on several stacks: its own, its alternate signal stack (a handler
 * installed with SA_ONSTACK), coroutines' (swapcontext and the like). On the stack a
 * call or a return runs on, a frame below its slot was abandoned (longjmp, an
 * exception) and ends now; a frame of another stack belongs to code that is only
 * suspended (the code a handler interrupted, a coroutine swapped out) and stays, and a
 * return may so find its frame under others. Whatever their addresses: an alternate
 * stack may lie above the thread's stack or below it. Two slots are known to be on one
 * stack when both lie in the thread's own stack or both in its alternate signal stack
 * (or they are the same); two coroutine stacks, which nothing describes, are taken as
 * different; a coroutine stack carved out of the thread's own (a local array) is not
 * told from it, and a call there ends the frames of the thread's stack below it, whose
 * return then aborts. A frame kept so that was abandoned gets its FUNC_EXIT late (or
 * never); one ended while live would leave its return nowhere to go (tt__detour_lost). A
 * thread learns its own stack as it starts (pthread_create, interposed below; the
 * first thread in detour.c's constructor). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "detour.h"

/* The stacks the thread is known to have, now. */
struct tt__detour_stacks {
	uintptr_t own_low, own_high; /* its own (0, 0: not known) */
	uintptr_t alt_low, alt_high; /* its alternate signal stack (0, 0: none) */
};

static struct tt__detour_stacks tt__detour_stacks_now(void)
{
	struct tt__detour_stacks s = {.own_low = tt__detour_shadow.stack_low,
				      .own_high = tt__detour_shadow.stack_high};
	stack_t alt;
	int saved = errno;
	if (sigaltstack(NULL, &alt) == 0 && !(alt.ss_flags & SS_DISABLE)) {
		s.alt_low = (uintptr_t)alt.ss_sp;
		s.alt_high = s.alt_low + alt.ss_size;
	}
	errno = saved;
	return s;
}

static int tt__detour_inside(uintptr_t at, uintptr_t low, uintptr_t high)
{
	return at >= low && at < high;
}

static int tt__detour_one_stack(const struct tt__detour_stacks *s, uintptr_t a, uintptr_t b)
{
	if (a == b)
		return 1;
	int a_alt = tt__detour_inside(a, s->alt_low, s->alt_high);
	int b_alt = tt__detour_inside(b, s->alt_low, s->alt_high);
	if (a_alt || b_alt)
		return a_alt && b_alt;
	return tt__detour_inside(a, s->own_low, s->own_high) &&
	       tt__detour_inside(b, s->own_low, s->own_high);
}

/* Ends the top frame's call while `abandoned` says so of it, up to `stop`. */
static void tt__detour_end_abandoned(const struct tt__detour_stacks *stacks, uintptr_t slot,
				     const struct tt__detour_frame *stop,
				     int (*abandoned)(const struct tt__detour_stacks *, uintptr_t,
						      uintptr_t))
{
	struct tt__detour_shadow *sh = &tt__detour_shadow;
	for (struct tt__detour_frame *top = sh->top - 1;
	     top != stop && abandoned(stacks, top->slot, slot); top = sh->top - 1) {
		uint64_t word = top->word;
		/* read before the frame is given up: a handler's call may take it then */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		sh->top = top;
		tt__detour_func_exit(word);
	}
}

/* For a call at `slot`: a frame at or below it on its stack (the sentinel's slot is
 * above all). */
static int tt__detour_below_call(const struct tt__detour_stacks *stacks, uintptr_t frame,
				 uintptr_t slot)
{
	return frame <= slot && tt__detour_one_stack(stacks, frame, slot);
}

/* For a return through `slot`: a frame below it on its stack. */
static int tt__detour_below_return(const struct tt__detour_stacks *stacks, uintptr_t frame,
				   uintptr_t slot)
{
	return frame < slot && tt__detour_one_stack(stacks, frame, slot);
}

void tt__detour_settle_entry(uintptr_t slot)
{
	struct tt__detour_stacks stacks = tt__detour_stacks_now();
	tt__detour_end_abandoned(&stacks, slot, NULL, tt__detour_below_call);
}

void tt__detour_settle_exit(uintptr_t slot)
{
	struct tt__detour_shadow *sh = &tt__detour_shadow;
	struct tt__detour_frame *found = sh->top - 1;
	while (found->slot != slot && found->slot != UINTPTR_MAX)
		found--;
	if (found->slot != slot)
		tt__detour_lost(slot);
	struct tt__detour_stacks stacks = tt__detour_stacks_now();
	/* the usual case (longjmp, an exception): only abandoned frames above ours */
	tt__detour_end_abandoned(&stacks, slot, found, tt__detour_below_return);
	if (sh->top - 1 == found)
		return;
	/* Another stack's frames too: they move down over ours, which goes on top. A
	 * handler that came in meanwhile would see frames half moved. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	struct tt__detour_frame ours = *found, *to = found;
	for (struct tt__detour_frame *f = found + 1; f < sh->top; f++) {
		if (tt__detour_below_return(&stacks, f->slot, slot))
			tt__detour_func_exit(f->word);
		else
			*to++ = *f; /* suspended */
	}
	*to++ = ours;
	sh->top = to;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tt__detour_know_own_stack(void)
{
	pthread_attr_t attr;
	void *low;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &low, &size) == 0) {
		tt__detour_shadow.stack_low = (uintptr_t)low;
		tt__detour_shadow.stack_high = (uintptr_t)low + size;
	}
	pthread_attr_destroy(&attr);
}

/* Every thread learns its stack's bounds as it starts, where asking glibc is safe (it
 * allocates: not in a signal handler, where a thread's first rare path may be). */
struct tt__detour_start {
	void *(*main)(void *);
	void *arg;
};

static void *tt__detour_thread_main(void *start_arg)
{
	struct tt__detour_start start = *(struct tt__detour_start *)start_arg;
	free(start_arg);
	tt__detour_know_own_stack();
	return start.main(start.arg);
}

typedef int (*tt__pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				     void *);
__attribute__((visibility("default"))) int pthread_create(pthread_t *thread,
							  const pthread_attr_t *attr,
							  void *(*main)(void *), void *arg)
{
	static tt__pthread_create_fn next;
	if (!next)
		next = (tt__pthread_create_fn)(uintptr_t)dlsym(RTLD_NEXT, "pthread_create");
	/* (ticktrace's own threads run no patched code; and a thread's first malloc or
	 * free would reserve it an arena of 64 MiB of address space) */
	struct tt__detour_start *start = tt__own_thread_main(main) ? NULL : malloc(sizeof(*start));
	if (!start)
		return next(thread, attr, main, arg);
	*start = (struct tt__detour_start){main, arg};
	int err = next(thread, attr, tt__detour_thread_main, start);
	if (err)
		free(start);
	return err;
}
