; Detour trampolines: what a patched function's entry jumps to, and where its
; return goes. Shared by every patched function; detour.c writes each one's stub:
;   +0 the stub's address, +8 its FUNC_ENTER record's word (the function's address
;   and the kind, made once: the exit sets the kind's low bit), +16 where the
;   function goes on (its instructions relocated at +44, or after its NOPs), +24
;   tt__detour_entry's;
;   +32 `push qword [rip - 38]` (the stub's address), +38 `jmp [rip - 20]` (the entry).
; The function's first bytes become a jump to +32: its relocated first instructions
; (relocate.c), or its -fpatchable-function-entry NOPs.
;
; Entry: [rsp] is the stub, [rsp + 8] the function's return address (its slot, P).
; It pushes (return address, P, word) on the thread's shadow stack, records
; FUNC_ENTER, and goes on into the function with a call that sits just before
; tt__detour_exit: the call's return address, which it leaves in P, is the exit, so
; the return-stack predictor foresees the function's ret to the exit. The exit records
; FUNC_EXIT and returns with a ret to the real return address, which consumes the
; caller's own entry in the predictor: no return is mispredicted, and the predictor
; stays balanced for the returns above. (The jumps into the stub and the entry are
; not calls for the same reason.)
;
; Why return-address replacement and not patching the returns: a ret is one byte
; (no room for a jump), a function may leave by a tail call, and finding every ret
; means decoding the whole function without knowing where jump tables go.
;
; Registers: everything the program can see is kept. A patched function's caller
; built with GCC's -fipa-ra may keep values in caller-saved registers its callee is
; known not to touch, so neither the entry nor the exit may change any general
; register. They record their event with their own copy of the emitters' common path
; (asm/record.asm; hot.inc has the layout they share), which needs five registers (rax
; rcx rdx rsi rdi): these are kept below rsp, in the red zone, which a signal handler's
; frame leaves alone and which is free at a function's entry and after its return, so
; the common path moves rsp only as the call and the ret need. When it cannot write
; the event (another thread's table entry, dropping) it calls the emitter
; (tt__detour_func_enter/exit), and after a reservation that did not fit
; tt__record_slow_preserving, in a frame that also keeps r8-r11 and aligns the stack
; itself, as every path into C does: rsp may be 8 bytes off at a function's entry
; (GCC's -fipa-stack-alignment calls a leaf so); the calls into C keep xmm0-15 too.
; Flags are not kept (no compiler keeps them across a call). Against the emitters' common path, the copy finds the thread's table
; entry in its shadow stack (`hot`, set with the stack, where the emitters compute
; it from the thread pointer each time), takes the record's word from the stub, and
; does not read tt__hot_global: tt_disable tags every registered thread's limit off, and
; a thread not registered is not the entry's owner, which sends it to the emitter,
; which does. Measured (Intel Xeon Sapphire Rapids, KVM, 2026-11, ticktrace-bench
; --hot, medians of 7): a patched call 3.01-3.04 x rdtsc_ns when the trampolines
; saved nine registers and called the emitters; 2.92 with the copy; 2.69-2.74 with
; the entry and the word found once; 2.63-2.72 without the off test; -finstrument-functions'
; cyg_call_overhead_ns, the floor for two events, 2.39-2.43 x.
;
; Shadow stack: per thread (tt__detour_shadow, initial-exec TLS), entries of 24 bytes
; above a sentinel whose slot is ~0, so that the checks need no bounds test. The common
; path assumes one stack: an entry pushes when the top frame's slot is above its own,
; an exit pops the top frame when its slot is its own. Anything else goes to C
; (shadow.c), which tells the thread's stacks apart (its own, its signal stack, the
; coroutines' it may switch between): a frame abandoned by longjmp or a C++ exception,
; below the slot of a later entry or exit on its stack, gets its FUNC_EXIT then, late
; but matched; a frame of another stack (the code a handler on the signal stack
; interrupted, a coroutine swapped out) stays, and a return finds its own frame under
; such frames. A tail call from a patched function into a patched function finds
; its slot already holding tt__detour_exit: the entry is pushed above the caller's,
; and the callee's exit returns to tt__detour_exit again, which ends the caller: the
; slices nest as with -finstrument-functions. A push writes its slot before
; publishing the new top and the whole entry after, so a signal handler that records
; in between sees either no entry or one with the right slot.

default rel

%include "hot.inc"
%include "keep_xmm.inc"

%define ENTRY   24	; struct tt__detour_frame (detour.h pins the layout)
%define E_RET   0
%define E_SLOT  8
%define E_WORD  16
%define SH_TOP  0	; struct tt__detour_shadow
%define SH_END  8
%define SH_HOT  16
%define STUB_WORD  8	; struct of a stub (detour.h)
%define STUB_GO_ON 16
%define AT_ENTRY   0	; where the registers are kept: below rsp at the entry (P - 8),
%define AT_EXIT    16	; 16 bytes further below at the exit (P + 8), so at the same place
%define SLOW_FRAME 72	; the five kept registers, r8-r11
%define AT_FILTER  56	; below the kept registers at the exit: r8-r10 while filtering

extern tt__detour_shadow_offset
extern tt__tls_table_address
extern tt__detour_shadow_grow
extern tt__detour_settle_entry
extern tt__detour_settle_exit
extern tt__detour_turn_off
extern tt__detour_turn_off_mask
extern tt__detour_func_enter
extern tt__detour_func_exit
extern tt__record_slow_preserving

section .text

; KEEP op, at: stores (op = store) or loads (op = load) rax rcx rdx rsi rdi below rsp
%macro KEEP 2
%assign i 0
%rep 5
%if i == 0
%define REG rax
%elif i == 1
%define REG rcx
%elif i == 2
%define REG rdx
%elif i == 3
%define REG rsi
%else
%define REG rdi
%endif
%ifidn %1, store
	mov	[rsp - %2 - 8 - 8 * i], REG
%else
	mov	REG, [rsp - %2 - 8 - 8 * i]
%endif
%assign i i + 1
%endrep
%undef REG
%endmacro

; SLOW enter|leave, at: a frame around a call on a rare path, over the kept registers,
; that keeps r8-r11 and aligns the stack to 16 bytes itself: a patched function may be
; entered with rsp 8 bytes off (GCC's -fipa-stack-alignment calls a leaf it knows needs
; no alignment so), and C, the emitters' slow path and KEEP_XMM's movaps need it.
%macro SLOW 2
%ifidn %1, enter
	sub	rsp, SLOW_FRAME + %2
	mov	[rsp + 0], r8
	mov	[rsp + 8], r9
	mov	[rsp + 16], r10
	mov	[rsp + 24], r11
	mov	r11, rsp
	and	rsp, -16
	sub	rsp, 16
	mov	[rsp + 8], r11			; the frame, found again by `leave`
%else
	mov	rsp, [rsp + 8]
	mov	r8, [rsp + 0]
	mov	r9, [rsp + 8]
	mov	r10, [rsp + 16]
	mov	r11, [rsp + 24]
	add	rsp, SLOW_FRAME + %2
%endif
%endmacro

; Calls C, keeping xmm0-15 (C may use any of them); inside SLOW, which aligned the stack.
%macro CALL_C_KEEPING_XMM 1
	sub	rsp, 256
	KEEP_XMM store, 0
	call	%1 wrt ..plt
	KEEP_XMM load, 0
	add	rsp, 256
%endmacro

; RECORD done, by_emitter, failed[, erased]: writes the event whose word is rdi into the
; thread's entry rsi (the shadow stack's `hot`), as the emitters' common path does
; (asm/record.asm says why each step is where it is), with rax rcx rdx rsi rdi, and
; goes to `done`. Goes to `by_emitter`, rdi unchanged, when the emitter must write it
; (not this thread's entry, or dropping), and to `failed` with rdi = the word, rax =
; the time, rsi = the entry and rdx = the reservation when it does not fit its chunk.
; With `erased` (the exit), TICKTRACE_MIN_DUR's short calls are erased there instead
; (hot.inc TT_FILTER_SHORT), with r8-r10 kept below the kept registers meanwhile; and
; each K-th call of a function the thread erased goes to `turn_off` instead, with
; rdi = the FUNC_EXIT word and rsi = the time (turn_off.c: the function may be turned
; off; tt__detour_turn_off_mask is K - 1, or all ones: never).
%macro RECORD 3-5

	mov	rcx, [rsi + HOT_LIMIT]		; the chunk we may write into
	test	cl, TT_LIMIT_TAGS
	jnz	%%tagged			; (off: tt_disable tags every limit, as tt_pause)
	rdtsc
	shl	rdx, 32
	or	rax, rdx			; rax = tsc
	mov	rdx, [fs:0x10]			; the thread pointer: the owner
	cmp	[rsi + HOT_OWNER], rdx
	jne	%2
%if %0 >= 4
	cmp	qword [rsi + HOT_FILTERS], 0
	je	%%kept
	mov	[rsp - AT_FILTER - 8], r8
	mov	[rsp - AT_FILTER - 16], r9
	mov	[rsp - AT_FILTER - 24], r10
	mov	r10, rcx
	TT_FILTER_SHORT rsi, r8, r9, %%keep, %%erased
%%erased:
	mov	r9, [rel tt__detour_turn_off_mask]
	test	[r8 + 8], r9			; the function's erased calls (struct tt__filtered_fn)
	jz	%%turn_off
	mov	r8, [rsp - AT_FILTER - 8]
	mov	r9, [rsp - AT_FILTER - 16]
	mov	r10, [rsp - AT_FILTER - 24]
	jmp	%4
%%turn_off:
	mov	rdi, [r8]			; (its entry's word: the FUNC_EXIT's)
	mov	rsi, rax
	mov	r8, [rsp - AT_FILTER - 8]
	mov	r9, [rsp - AT_FILTER - 16]
	mov	r10, [rsp - AT_FILTER - 24]
	jmp	%5
%%keep:
	mov	rcx, r10
	mov	r8, [rsp - AT_FILTER - 8]
	mov	r9, [rsp - AT_FILTER - 16]
	mov	r10, [rsp - AT_FILTER - 24]
%%kept:
%endif
	mov	edx, 16
	sub	rcx, 16
	xadd	[rsi + HOT_CURSOR], rdx		; rdx = where this event goes
	sub	rcx, rdx			; room left after it; wraps if it is not inside
	cmp	rcx, TT_CHUNK_SIZE - TT_CHUNK_HEADER - 16
	ja	%3
	mov	[rdx], rax
	mov	[rdx + 8], rdi
	jmp	%1
%%tagged:
	test	cl, TT_LIMIT_OFF
	jz	%2				; dropping: the emitter writes it without a time
	mov	rdx, [fs:0x10]
	cmp	[rsi + HOT_OWNER], rdx
	jne	%2				; another thread's "off": the emitter finds ours
	jmp	%1				; tt_pause, tt_disable
%endmacro

%if TT_REC_FUNC_EXIT != (TT_REC_FUNC_ENTER | 1)
%error "the trampolines make a FUNC_EXIT word by setting the low bit of the kind"
%endif

global tt__detour_entry:function (tt__detour_entry.end - tt__detour_entry) hidden
align 16
tt__detour_entry:
	; rsp = P - 8, [rsp] = the stub (rsp is 16-byte aligned only if the caller kept the ABI)
	KEEP	store, AT_ENTRY
.again:
	mov	rsi, [rsp]			; the stub
	lea	rax, [rsp + 8]			; P: the function's return address
	mov	rdx, [rel tt__detour_shadow_offset]
	mov	rcx, [fs:rdx + SH_TOP]
	cmp	rcx, [fs:rdx + SH_END]		; both 0 before the thread's first call
	jae	.grow
	cmp	[rcx - ENTRY + E_SLOT], rax
	jbe	.stale				; the top frame is not above ours
.push:
	mov	[rcx + E_SLOT], rax
	lea	rdi, [rcx + ENTRY]
	mov	[fs:rdx + SH_TOP], rdi
	mov	[rcx + E_SLOT], rax
	mov	rax, [rax]
	mov	[rcx + E_RET], rax
	mov	rdi, [rsi + STUB_WORD]
	mov	[rcx + E_WORD], rdi
	mov	rax, [rsi + STUB_GO_ON]
	mov	[rsp], rax			; where the call below goes (below P)
	mov	rsi, [fs:rdx + SH_HOT]
	RECORD	.go_on, .by_emitter, .failed
.go_on:
	KEEP	load, AT_ENTRY
	add	rsp, 16				; as at the function's entry, less its return address
	call	[rsp - 16]			; 16 bytes below rsp: inside the red zone
global tt__detour_exit:function hidden
tt__detour_exit:
	; reached by the patched function's ret: rsp = P + 8
	KEEP	store, AT_EXIT
.again:
	lea	rax, [rsp - 8]			; P: where the return address was
	mov	rdx, [rel tt__detour_shadow_offset]
	mov	rcx, [fs:rdx + SH_TOP]
	cmp	[rcx - ENTRY + E_SLOT], rax
	jne	.unwound
	sub	rcx, ENTRY
	mov	rsi, [rcx + E_RET]
	mov	rdi, [rcx + E_WORD]
	mov	[fs:rdx + SH_TOP], rcx
	mov	[rax], rsi			; the real return address, back in P
	mov	rsi, [fs:rdx + SH_HOT]
	bts	rdi, TT_KIND_SHIFT		; FUNC_ENTER's word made FUNC_EXIT's
	RECORD	.done, .by_emitter, .failed, .done, .turn_off
.done:
	KEEP	load, AT_EXIT
	sub	rsp, 8
	ret
.turn_off:
	SLOW	enter, AT_EXIT
	CALL_C_KEEPING_XMM tt__detour_turn_off
	SLOW	leave, AT_EXIT
	jmp	.done
.by_emitter:
	SLOW	enter, AT_EXIT
	call	[rel tt__detour_func_exit wrt ..got]
	SLOW	leave, AT_EXIT
	jmp	.done
.failed:
	SLOW	enter, AT_EXIT
	call	.slow_path
	SLOW	leave, AT_EXIT
	jmp	.done
.unwound:
	; frames abandoned below ours, or ours under another stack's (shadow.c)
	SLOW	enter, AT_EXIT
	mov	rdi, rax
	CALL_C_KEEPING_XMM tt__detour_settle_exit
	SLOW	leave, AT_EXIT
	jmp	.again				; ours is on top now
.slow_path:
	; tt__record_slow(word, value, tsc, entry, where), from RECORD's `failed`
	mov	r8, rdx
	mov	rcx, rsi
	mov	rdx, rax
	jmp	tt__record_slow_preserving wrt ..plt

; (tt__detour_entry, continued: the rare paths)
tt__detour_entry.by_emitter:
	SLOW	enter, AT_ENTRY
	call	[rel tt__detour_func_enter wrt ..got]
	SLOW	leave, AT_ENTRY
	jmp	tt__detour_entry.go_on
tt__detour_entry.failed:
	SLOW	enter, AT_ENTRY
	call	tt__detour_exit.slow_path
	SLOW	leave, AT_ENTRY
	jmp	tt__detour_entry.go_on
tt__detour_entry.stale:
	jb	.settle
	lea	rdi, [tt__detour_exit]
	cmp	[rax], rdi
	je	tt__detour_entry.push		; our slot, already ours: a tail call
.settle:
	; abandoned frames below ours end; another stack's stay, ours goes above (shadow.c)
	SLOW	enter, AT_ENTRY
	mov	rdi, rax
	CALL_C_KEEPING_XMM tt__detour_settle_entry
	SLOW	leave, AT_ENTRY
	mov	rsi, [rsp]
	lea	rax, [rsp + 8]
	mov	rdx, [rel tt__detour_shadow_offset]
	mov	rcx, [fs:rdx + SH_TOP]		; (it only went down: not full)
	jmp	tt__detour_entry.push
tt__detour_entry.grow:
	; the thread's first call (its shadow stack is made), or a full one: rax = 0,
	; and this call is not recorded (detour.c counts it)
	SLOW	enter, AT_ENTRY
	CALL_C_KEEPING_XMM tt__detour_shadow_grow
	SLOW	leave, AT_ENTRY
	test	rax, rax
	jz	.not_recorded
	mov	rcx, [fs:0x10]			; the thread's entry, found once
	TT_TABLE_OFFSET esi, ecx
	mov	rdx, [rel tt__tls_table_address wrt ..got]
	add	rsi, [rdx]
	mov	rdx, [rel tt__detour_shadow_offset]
	mov	[fs:rdx + SH_HOT], rsi
	jmp	tt__detour_entry.again
.not_recorded:
	mov	rax, [rsp]
	mov	rax, [rax + STUB_GO_ON]
	mov	[rsp], rax
	KEEP	load, AT_ENTRY
	add	rsp, 8				; the function's entry, its return address kept
	jmp	[rsp - 8]
tt__detour_entry.end:

section .note.GNU-stack noalloc noexec nowrite progbits
