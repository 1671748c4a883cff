; Detour trampolines: what a patched function's entry jumps to, and where its
; return goes. Shared by every patched function; detour.c writes each one's stub:
;   +0 the stub's address, +8 the function's, +16 where the function goes on (its
;   instructions relocated at +44, or after its NOPs), +24 tt__detour_entry's;
;   +32 `push qword [rip - 38]` (the stub's address), +38 `jmp [rip - 20]` (the entry).
; The function's first bytes become a jump to +32: its relocated first instructions
; (relocate.c), or its -fpatchable-function-entry NOPs.
;
; Entry: [rsp] is the stub, [rsp + 8] the function's return address (its slot, P).
; It pushes (return address, P, function) on the thread's shadow stack, records
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
; known not to touch, so the trampolines save every general register they or the hot
; path touch (rax rcx rdx rsi rdi r8 r9 r10 r11), and xmm0-15 around the rare calls
; into C (the hot path's slow path does the same: tt__record_slow_preserving). Flags
; are not kept (no compiler keeps them across a call). The hot path is called with
; the stack 16-byte aligned: at a function's entry rsp is 8 off alignment, and the
; stub's push makes it aligned, as the exit's arrival by ret does.
;
; Shadow stack: per thread (tt__detour_shadow, initial-exec TLS), entries of 24 bytes
; above a sentinel whose slot is ~0, so that the checks need no bounds test. A frame
; abandoned by longjmp or a C++ exception is found stale when a later entry or exit
; sees a slot at or below its own (the stack grows down): it gets its FUNC_EXIT then,
; late but matched. A tail call from a patched function into a patched function finds
; its slot already holding tt__detour_exit: the entry is pushed above the caller's,
; and the callee's exit returns to tt__detour_exit again, which ends the caller: the
; slices nest as with -finstrument-functions. A push writes its slot before
; publishing the new top and the whole entry after, so a signal handler that records
; in between sees either no entry or one with the right slot.

default rel

%define ENTRY   24	; struct tt__detour_frame (detour.h pins the layout)
%define E_RET   0
%define E_SLOT  8
%define E_FN    16
%define SH_TOP  0	; struct tt__detour_shadow
%define SH_END  8
%define FRAME   96	; 9 registers, a spill, the return address, alignment
%define SPILL_FN   72
%define STUB_FN    8	; struct of a stub (detour.h)
%define STUB_GO_ON 16

%include "keep_xmm.inc"

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
	KEEP_XMM store, 0
	call	%1 wrt ..plt
	KEEP_XMM load, 0
	add	rsp, 256
%endmacro

; rdx = the thread's struct tt__detour_shadow, as an offset from fs (NASM cannot
; refer to a TLS symbol: detour.c takes its offset, the same in every thread)
%macro SHADOW 0
	mov	rdx, [rel tt__detour_shadow_offset]
%endmacro

global tt__detour_entry:function (tt__detour_entry.end - tt__detour_entry) hidden
align 16
tt__detour_entry:
	sub	rsp, FRAME
	SAVE_GPRS
	mov	rdi, [rsp + FRAME]
	mov	rdi, [rdi + STUB_FN]
.again:
	; rdi = the patched function
	lea	r8, [rsp + FRAME + 8]		; P: the function's return address
	SHADOW
	mov	rcx, [fs:rdx + SH_TOP]
	cmp	rcx, [fs:rdx + SH_END]		; both 0 before the thread's first call
	jae	.grow
	cmp	[rcx - ENTRY + E_SLOT], r8
	jbe	.stale				; the top frame is not above ours
.push:
	mov	[rcx + E_SLOT], r8
	lea	rax, [rcx + ENTRY]
	mov	[fs:rdx + SH_TOP], rax
	mov	[rcx + E_SLOT], r8
	mov	rax, [r8]
	mov	[rcx + E_RET], rax
	mov	[rcx + E_FN], rdi
	call	[rel tt__detour_func_enter wrt ..got]
	mov	rax, [rsp + FRAME]
	mov	rax, [rax + STUB_GO_ON]
	mov	[rsp + FRAME], rax		; where the call below goes (below P)
	RESTORE_GPRS
	add	rsp, FRAME + 16			; as at the function's entry, less its return address
	call	[rsp - 16]			; 16 bytes below rsp: inside the red zone, which a
						; signal handler's frame leaves alone
global tt__detour_exit:function hidden
tt__detour_exit:
	; reached by the patched function's ret: rsp = P + 8 (aligned)
	sub	rsp, FRAME
	SAVE_GPRS
.again:
	lea	r8, [rsp + FRAME - 8]		; P: where the return address was
	SHADOW
	mov	rcx, [fs:rdx + SH_TOP]
	cmp	[rcx - ENTRY + E_SLOT], r8
	jne	.unwound
	sub	rcx, ENTRY
	mov	rax, [rcx + E_RET]
	mov	rdi, [rcx + E_FN]
	mov	[fs:rdx + SH_TOP], rcx
	mov	[r8], rax			; the real return address, back in P
	call	[rel tt__detour_func_exit wrt ..got]
	RESTORE_GPRS
	add	rsp, FRAME - 8
	ret
.unwound:
	ja	.lost				; no frame of ours: the stack was switched
	sub	rcx, ENTRY			; a frame abandoned below ours ends now
	mov	[fs:rdx + SH_TOP], rcx
	mov	rdi, [rcx + E_FN]
	call	[rel tt__detour_func_exit wrt ..got]
	jmp	.again
.lost:
	mov	rdi, r8
	call	tt__detour_lost wrt ..plt	; says so and aborts

; (tt__detour_entry, continued: the rare paths)
tt__detour_entry.stale:
	jb	.pop				; below us: abandoned
	lea	rax, [tt__detour_exit]
	cmp	[r8], rax
	je	tt__detour_entry.push		; our slot, already ours: a tail call
.pop:
	sub	rcx, ENTRY
	mov	[fs:rdx + SH_TOP], rcx
	mov	[rsp + SPILL_FN], rdi
	mov	rdi, [rcx + E_FN]
	call	[rel tt__detour_func_exit wrt ..got]
	mov	rdi, [rsp + SPILL_FN]
	jmp	tt__detour_entry.again
tt__detour_entry.grow:
	; the thread's first call (its shadow stack is made), or a full one: rax = 0,
	; and this call is not recorded (detour.c counts it)
	mov	[rsp + SPILL_FN], rdi
	CALL_C_KEEPING_XMM tt__detour_shadow_grow
	mov	rdi, [rsp + SPILL_FN]
	test	rax, rax
	jnz	tt__detour_entry.again
	mov	rax, [rsp + FRAME]
	mov	rax, [rax + STUB_GO_ON]
	mov	[rsp + FRAME], rax
	RESTORE_GPRS
	add	rsp, FRAME + 8			; the function's entry, its return address kept
	jmp	[rsp - 8]
tt__detour_entry.end:

section .note.GNU-stack noalloc noexec nowrite progbits
