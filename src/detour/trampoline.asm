; Detour trampolines: what a patched function's entry calls, and where its return
; goes. Shared by every patched function; detour.c writes the small per-function
; pieces that lead here.
;
; Entry. Two ways in, both by a call, so that [rsp] is where to go back to and
; [rsp + 8] is the patched function's return address (its slot, P):
;   tt__detour_entry_patchable: from `call thunk` written over the function's
;       -fpatchable-function-entry NOPs (the thunk is `jmp [rip]`, near the module);
;       the function is [rsp] - 5, and going back runs the rest of its NOPs.
;   tt__detour_entry_relocated: from `call [rip - 14]` at offset 16 of the function's
;       stub (offset 0 holds the function's address, 8 this entry's); going back runs
;       the function's first instructions, relocated into the stub, and a jump to the
;       rest of the function.
; Either pushes (return address, P, function) on the thread's shadow stack, replaces
; the return address with tt__detour_exit, and records FUNC_ENTER.
;
; Exit. tt__detour_exit is reached by the patched function's `ret`: it pops the
; entry whose slot is P, records FUNC_EXIT and jumps to the real return address.
; A jump, not a ret: the function's ret consumed the return-stack predictor's entry
; for its caller, so a ret here would be mispredicted and unbalance it for every
; return above; the indirect jump is predicted per call site.
;
; Why return-address replacement and not patching the returns: a ret is one byte
; (no room for a jump), a function may leave by a tail call, and finding every ret
; means decoding the whole function without knowing where jump tables go.
;
; Registers: everything the program can see is kept. A patched function's caller
; built with GCC's -fipa-ra may keep values in caller-saved registers its callee is
; known not to touch, so the trampolines save every general register they or the hot
; path touch (rax rcx rdx rsi rdi r8 r9 r10 r11), and xmm0-15 around the rare calls
; into C (the hot path's slow path does the same: tt__record_slow_preserving). Flags
; are not kept (no compiler keeps them across a call). The hot path is called with
; the stack 16-byte aligned: at a function's entry rsp is 8 off alignment, and the
; call into the trampoline makes it aligned, as the exit's ret does.
;
; Shadow stack: per thread (tt__detour_shadow, initial-exec TLS: this library is
; preloaded, or linked), entries of 24 bytes above a sentinel whose slot is ~0, so
; that the checks need no bounds test. A frame abandoned by longjmp or a C++
; exception is found stale when a later entry or exit sees a slot at or below its
; own (the stack grows down): it gets its FUNC_EXIT then, late but matched. A tail
; call from a patched function into a patched function finds its slot already
; holding tt__detour_exit: the entry is pushed above the caller's, and the exit of
; the callee jumps to tt__detour_exit again, which ends the caller: the slices nest
; as with -finstrument-functions. A push writes its slot before publishing the new
; top and the whole entry after, so a signal handler that records in between sees
; either no entry or one with the right slot.

default rel

%define ENTRY   24	; struct tt__detour_frame (detour.h pins the layout)
%define E_RET   0
%define E_SLOT  8
%define E_FN    16
%define SH_TOP  0	; struct tt__detour_shadow
%define SH_END  8
%define FRAME   96	; 9 registers, two spills, alignment
%define SPILL_FN   72
%define SPILL_RET  80
%define STUB_CALL_END 22	; the relocated stub's call ends here; its function is at 0

extern tt__detour_shadow_offset
extern tt__detour_shadow_grow
extern tt__detour_lost
extern tt__detour_func_enter
extern tt__detour_func_exit

section .text

%macro SAVE_GPRS 0
	mov	[rsp + 0], rax
	mov	[rsp + 8], rcx
	mov	[rsp + 16], rdx
	mov	[rsp + 24], rsi
	mov	[rsp + 32], rdi
	mov	[rsp + 40], r8
	mov	[rsp + 48], r9
	mov	[rsp + 56], r10
	mov	[rsp + 64], r11
%endmacro

%macro RESTORE_GPRS 0
	mov	rax, [rsp + 0]
	mov	rcx, [rsp + 8]
	mov	rdx, [rsp + 16]
	mov	rsi, [rsp + 24]
	mov	rdi, [rsp + 32]
	mov	r8, [rsp + 40]
	mov	r9, [rsp + 48]
	mov	r10, [rsp + 56]
	mov	r11, [rsp + 64]
%endmacro

; Calls C with the stack aligned, keeping xmm0-15 (C may use any of them).
%macro CALL_C_KEEPING_XMM 1
	sub	rsp, 256
%assign i 0
%rep 16
	movaps	[rsp + 16 * i], xmm %+ i
%assign i i + 1
%endrep
	call	%1 wrt ..plt
%assign i 0
%rep 16
	movaps	xmm %+ i, [rsp + 16 * i]
%assign i i + 1
%endrep
	add	rsp, 256
%endmacro

; r11 = the thread's struct tt__detour_shadow, as an offset from fs (NASM cannot
; refer to a TLS symbol: detour.c takes its offset, the same in every thread)
%macro SHADOW 0
	mov	r11, [rel tt__detour_shadow_offset]
%endmacro

global tt__detour_entry_patchable:function (tt__detour_entry_patchable.end - tt__detour_entry_patchable) hidden
align 16
tt__detour_entry_patchable:
	sub	rsp, FRAME
	SAVE_GPRS
	mov	rdi, [rsp + FRAME]
	sub	rdi, 5				; the call written over the NOPs
	jmp	entry
.end:

global tt__detour_entry_relocated:function (tt__detour_entry_relocated.end - tt__detour_entry_relocated) hidden
align 16
tt__detour_entry_relocated:
	sub	rsp, FRAME
	SAVE_GPRS
	mov	rdi, [rsp + FRAME]
	mov	rdi, [rdi - STUB_CALL_END]	; the stub's function
	jmp	entry
.end:

; rdi = the patched function; the saved registers and the frame are in place.
align 16
entry:
	lea	r8, [rsp + FRAME + 8]		; P: the function's return address
	SHADOW
	mov	rcx, [fs:r11 + SH_TOP]
	cmp	rcx, [fs:r11 + SH_END]		; both 0 before the thread's first call
	jae	.grow
	cmp	[rcx - ENTRY + E_SLOT], r8
	jbe	.stale				; the top frame is not above ours
.push:
	mov	[rcx + E_SLOT], r8
	lea	rdx, [rcx + ENTRY]
	mov	[fs:r11 + SH_TOP], rdx
	mov	[rcx + E_SLOT], r8
	mov	rax, [r8]
	mov	[rcx + E_RET], rax
	mov	[rcx + E_FN], rdi
	lea	rax, [tt__detour_exit]
	mov	[r8], rax
	call	[rel tt__detour_func_enter wrt ..got]
.done:
	RESTORE_GPRS
	add	rsp, FRAME
	ret
.stale:
	jb	.pop				; below us: abandoned
	lea	rax, [tt__detour_exit]
	cmp	[r8], rax
	je	.push				; our slot, already ours: a tail call
.pop:
	sub	rcx, ENTRY
	mov	[fs:r11 + SH_TOP], rcx
	mov	[rsp + SPILL_FN], rdi
	mov	rdi, [rcx + E_FN]
	call	[rel tt__detour_func_exit wrt ..got]
	mov	rdi, [rsp + SPILL_FN]
	jmp	entry
.grow:
	; the thread's first call (its shadow stack is made), or a full one: rax = 0,
	; and this call is not recorded (detour.c counts it)
	mov	[rsp + SPILL_FN], rdi
	CALL_C_KEEPING_XMM tt__detour_shadow_grow
	mov	rdi, [rsp + SPILL_FN]
	test	rax, rax
	jz	.done
	jmp	entry

global tt__detour_exit:function (tt__detour_exit.end - tt__detour_exit) hidden
align 16
tt__detour_exit:
	sub	rsp, FRAME
	SAVE_GPRS
.again:
	lea	r8, [rsp + FRAME - 8]		; P: where the return address was
	SHADOW
	mov	rcx, [fs:r11 + SH_TOP]
	cmp	[rcx - ENTRY + E_SLOT], r8
	jne	.unwound
	sub	rcx, ENTRY
	mov	rax, [rcx + E_RET]
	mov	rdi, [rcx + E_FN]
	mov	[fs:r11 + SH_TOP], rcx
	mov	[rsp + SPILL_RET], rax
	call	[rel tt__detour_func_exit wrt ..got]
	RESTORE_GPRS
	add	rsp, FRAME
	; the real return address, 16 bytes below rsp: inside the red zone, which a
	; signal handler's frame leaves alone
	jmp	[rsp - FRAME + SPILL_RET]
.unwound:
	ja	.lost				; no frame of ours: the stack was switched
	sub	rcx, ENTRY			; a frame abandoned below ours ends now
	mov	[fs:r11 + SH_TOP], rcx
	mov	rdi, [rcx + E_FN]
	call	[rel tt__detour_func_exit wrt ..got]
	jmp	.again
.lost:
	mov	rdi, r8
	call	tt__detour_lost wrt ..plt	; says so and aborts
.end:

section .note.GNU-stack noalloc noexec nowrite progbits
